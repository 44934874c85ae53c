package robots

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// entryBody is the robots.txt most entry tests fetch.
const entryBody = "User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://example.com/sitemap.xml\n"

var errRefused = errors.New("dial tcp 192.0.2.1:443: connect: connection refused")

// TestEvaluateStatus covers RFC 9309 section 2.3.1 for each class of outcome.
func TestEvaluateStatus(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		err      error
		kind     Kind
		public   bool // Allowed("/public")
		private  bool // Allowed("/private")
		failures int
		expires  time.Duration // after now
	}{
		{"200 rules apply", 200, nil, KindRules, true, false, 0, MaxTTL},
		{"203 is 2xx too", 203, nil, KindRules, true, false, 0, MaxTTL},
		{"301 redirects exhausted", 301, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"308 redirects exhausted", 308, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"304 unexpected 3xx", 304, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"400", 400, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"401 is unavailable, not forbidden", 401, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"403 is unavailable, not forbidden", 403, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"404", 404, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"410", 410, nil, KindAllowAll, true, true, 0, MaxTTL},
		{"429 is unreachable", 429, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"500", 500, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"503", 503, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"599", 599, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"network error", 0, errRefused, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"error wins over a status", 200, errRefused, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"1xx is no answer", 100, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"status above 599", 600, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
		{"no status and no error", 0, nil, KindDisallowAll, false, false, 1, DefaultRetryFailure},
	}
	p := Policy{Agent: testAgent}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Evaluate(p, tc.status, []byte(entryBody), tc.err, testNow, nil)
			if e.Kind != tc.kind {
				t.Fatalf("Kind = %v, want %v", e.Kind, tc.kind)
			}
			if got := e.Allowed("/public"); got != tc.public {
				t.Errorf("Allowed(/public) = %v, want %v", got, tc.public)
			}
			if got := e.Allowed("/private"); got != tc.private {
				t.Errorf("Allowed(/private) = %v, want %v", got, tc.private)
			}
			if !e.Allowed("/robots.txt") {
				t.Errorf("Allowed(/robots.txt) = false, want true")
			}
			if e.Failures != tc.failures {
				t.Errorf("Failures = %d, want %d", e.Failures, tc.failures)
			}
			if got := e.Expires.Sub(testNow); got != tc.expires {
				t.Errorf("Expires = now+%v, want now+%v", got, tc.expires)
			}
			if e.Status != tc.status || !e.FetchedAt.Equal(testNow) {
				t.Errorf("Status, FetchedAt = %d, %v; want %d, %v", e.Status, e.FetchedAt, tc.status, testNow)
			}
			wantErr := ""
			if tc.err != nil {
				wantErr = tc.err.Error()
			}
			if e.Error != wantErr {
				t.Errorf("Error = %q, want %q", e.Error, wantErr)
			}
			_, hasDelay := e.Delay(p)
			if rules := tc.kind == KindRules; hasDelay != rules || (len(e.Sitemaps()) == 1) != rules {
				t.Errorf("Delay ok = %v, Sitemaps = %q; want the file's only for KindRules", hasDelay, e.Sitemaps())
			}
		})
	}
}

func TestEvaluateErrorTruncated(t *testing.T) {
	long := errors.New(strings.Repeat("x", 3*maxErrorLen))
	e := Evaluate(Policy{Agent: testAgent}, 0, nil, long, testNow, nil)
	if len(e.Error) != maxErrorLen {
		t.Errorf("len(Error) = %d, want %d", len(e.Error), maxErrorLen)
	}
}

// TestEvaluateBackoff covers the retry schedule of consecutive failures.
func TestEvaluateBackoff(t *testing.T) {
	h := time.Hour
	tests := []struct {
		name   string
		policy Policy
		want   []time.Duration // Expires-now after 1, 2, ... failures
	}{
		{
			name:   "doubles up to the TTL",
			policy: Policy{Agent: testAgent, RetryFailure: time.Minute, TTL: h},
			want:   []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, h, h},
		},
		{
			name:   "default first retry and MaxTTL",
			policy: Policy{Agent: testAgent},
			want:   []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute},
		},
		{
			name:   "TTL above MaxTTL caps at MaxTTL",
			policy: Policy{Agent: testAgent, RetryFailure: h, TTL: 100 * h},
			want:   []time.Duration{h, 2 * h, 4 * h, 8 * h, 16 * h, MaxTTL, MaxTTL},
		},
		{
			name:   "first retry above the TTL",
			policy: Policy{Agent: testAgent, RetryFailure: 2 * h, TTL: h},
			want:   []time.Duration{h, h},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var prev *Entry
			now := testNow
			for i, want := range tc.want {
				e := Evaluate(tc.policy, 503, nil, nil, now, prev)
				if e.Failures != i+1 || e.Kind != KindDisallowAll {
					t.Fatalf("failure %d: Failures = %d, Kind = %v", i+1, e.Failures, e.Kind)
				}
				if got := e.Expires.Sub(now); got != want {
					t.Errorf("failure %d: retry after %v, want %v", i+1, got, want)
				}
				// The frontier may have cached the entry in between.
				prev, now = roundTrip(t, e), e.Expires
			}
			ok := Evaluate(tc.policy, 200, []byte(entryBody), nil, now, prev)
			if ok.Failures != 0 || ok.Expires.Sub(now) != tc.policy.ttl() {
				t.Errorf("success after failures: Failures = %d, Expires = now+%v", ok.Failures, ok.Expires.Sub(now))
			}
			again := Evaluate(tc.policy, 500, nil, nil, now, ok)
			if again.Failures != 1 || again.Expires.Sub(now) != tc.want[0] {
				t.Errorf("failure after success: Failures = %d, retry after %v, want 1, %v", again.Failures, again.Expires.Sub(now), tc.want[0])
			}
		})
	}
}

// TestEvaluateKeepsRules covers RFC 9309 section 2.4: rules from the last
// success stay in force while robots.txt is unreachable.
func TestEvaluateKeepsRules(t *testing.T) {
	p := Policy{Agent: testAgent, RetryFailure: time.Minute, MinDelay: time.Second}
	now := testNow
	ok := Evaluate(p, 200, []byte(entryBody), nil, now, nil)

	steps := []struct {
		name   string
		status int
		err    error
	}{
		{"503", 503, nil},
		{"network error", 0, errRefused},
		{"429", 429, nil},
	}
	prev := ok
	for i, s := range steps {
		now = now.Add(time.Hour)
		e := Evaluate(p, s.status, nil, s.err, now, prev)
		if e.Kind != KindRules || e.Failures != i+1 || e.Status != s.status {
			t.Fatalf("%s: Kind, Failures, Status = %v, %d, %d; want rules, %d, %d", s.name, e.Kind, e.Failures, e.Status, i+1, s.status)
		}
		if e.Allowed("/private") || !e.Allowed("/public") {
			t.Errorf("%s: the earlier rules no longer apply", s.name)
		}
		if d, ok := e.Delay(p); !ok || d != 2*time.Second {
			t.Errorf("%s: Delay = %v, %v; want 2s, true", s.name, d, ok)
		}
		if got := e.Sitemaps(); !slices.Equal(got, ok.Sitemaps()) {
			t.Errorf("%s: Sitemaps = %q, want %q", s.name, got, ok.Sitemaps())
		}
		if got, want := e.Expires.Sub(now), p.backoff(i+1); got != want {
			t.Errorf("%s: Expires = now+%v, want the retry at now+%v", s.name, got, want)
		}
		prev = roundTrip(t, e)
	}

	gone := Evaluate(p, 404, nil, nil, now, prev)
	if gone.Kind != KindAllowAll || gone.Failures != 0 || !gone.Allowed("/private") {
		t.Errorf("404 after failures: Kind %v, Failures %d", gone.Kind, gone.Failures)
	}
	down := Evaluate(p, 500, nil, nil, now, gone)
	if down.Kind != KindDisallowAll || down.Allowed("/public") {
		t.Errorf("500 after a 404: Kind %v, want disallow-all (no rules to keep)", down.Kind)
	}
}

// TestFreshExpires covers the cache lifetime: the policy TTL, capped at
// MaxTTL (RFC 9309 section 2.4).
func TestFreshExpires(t *testing.T) {
	tests := []struct {
		name   string
		ttl    time.Duration
		status int
		want   time.Duration
	}{
		{"default TTL", 0, 200, MaxTTL},
		{"short TTL", time.Hour, 200, time.Hour},
		{"TTL equal to the cap", MaxTTL, 200, MaxTTL},
		{"TTL above the cap", 7 * MaxTTL, 200, MaxTTL},
		{"allow-all uses the TTL", time.Hour, 404, time.Hour},
		{"allow-all capped", 7 * MaxTTL, 404, MaxTTL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Evaluate(Policy{Agent: testAgent, TTL: tc.ttl}, tc.status, []byte(entryBody), nil, testNow, nil)
			if got := e.Expires.Sub(testNow); got != tc.want {
				t.Errorf("Expires = now+%v, want now+%v", got, tc.want)
			}
			for _, c := range []struct {
				at   time.Time
				want bool
			}{
				{testNow, true},
				{e.Expires.Add(-time.Nanosecond), true},
				{e.Expires, false},
				{e.Expires.Add(time.Second), false},
			} {
				if got := e.Fresh(c.at); got != c.want {
					t.Errorf("Fresh(now+%v) = %v, want %v", c.at.Sub(testNow), got, c.want)
				}
			}
		})
	}
	var nilEntry *Entry
	if nilEntry.Fresh(testNow) || (&Entry{}).Fresh(testNow) {
		t.Errorf("a nil or zero Entry is fresh")
	}
}

// TestDelay covers the clamp of Crawl-delay to the policy's bounds.
func TestDelay(t *testing.T) {
	tests := []struct {
		name     string
		delay    string // Crawl-delay value; "" for none
		min, max time.Duration
		want     time.Duration
		ok       bool
	}{
		{"no Crawl-delay", "", time.Second, 0, 0, false},
		{"no clamp", "5", 0, 0, 5 * time.Second, true},
		{"within bounds", "5", time.Second, 10 * time.Second, 5 * time.Second, true},
		{"raised to MinDelay", "0.5", time.Second, 10 * time.Second, time.Second, true},
		{"zero raised to MinDelay", "0", 2 * time.Second, 0, 2 * time.Second, true},
		{"zero without MinDelay", "0", 0, 0, 0, true},
		{"lowered to MaxDelay", "60", time.Second, 10 * time.Second, 10 * time.Second, true},
		{"MaxDelay zero is no upper clamp", "86400000", time.Second, 0, maxCrawlDelay, true},
		{"MinDelay equal to MaxDelay", "30", 3 * time.Second, 3 * time.Second, 3 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := "User-agent: *\nDisallow: /x\n"
			if tc.delay != "" {
				body += "Crawl-delay: " + tc.delay + "\n"
			}
			p := Policy{Agent: testAgent, MinDelay: tc.min, MaxDelay: tc.max}
			e := Evaluate(p, 200, []byte(body), nil, testNow, nil)
			for _, e := range []*Entry{e, roundTrip(t, e)} {
				if d, ok := e.Delay(p); d != tc.want || ok != tc.ok {
					t.Errorf("Delay = (%v, %v), want (%v, %v)", d, ok, tc.want, tc.ok)
				}
			}
		})
	}
	p := Policy{Agent: testAgent, MinDelay: time.Second}
	for _, e := range []*Entry{
		nil,
		{},
		Evaluate(p, 404, nil, nil, testNow, nil),
		Evaluate(p, 503, nil, nil, testNow, nil),
	} {
		if d, ok := e.Delay(p); ok {
			t.Errorf("Delay of an entry without rules = (%v, true), want ok false", d)
		}
	}
}

// TestEntryWithoutRobots covers what an entry allows before any fetch.
func TestEntryWithoutRobots(t *testing.T) {
	var nilEntry *Entry
	for _, e := range []*Entry{nilEntry, {}, {Kind: 99}} {
		if e.Allowed("/") || e.Allowed("/a") || !e.Allowed("/robots.txt") {
			t.Errorf("Entry %+v must allow /robots.txt and nothing else", e)
		}
		if e.Sitemaps() != nil {
			t.Errorf("Entry %+v has sitemaps", e)
		}
	}
	// A hand-made KindRules entry has no group, which allows everything.
	if e := (&Entry{Kind: KindRules}); !e.Allowed("/a") {
		t.Errorf("Entry{Kind: KindRules}.Allowed(/a) = false, want true")
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		KindRules:       "rules",
		KindAllowAll:    "allow-all",
		KindDisallowAll: "disallow-all",
		0:               "Kind(0)",
		7:               "Kind(7)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name    string
		policy  Policy
		wantErr bool
	}{
		{"minimal", Policy{Agent: "FooBot"}, false},
		{"full", Policy{Agent: "FooBot", MinDelay: time.Second, MaxDelay: time.Minute, TTL: time.Hour, RetryFailure: time.Minute}, false},
		{"user-agent string", Policy{Agent: "FooBot/1.2 (+https://example.com/bot)"}, false},
		{"no upper clamp", Policy{Agent: "FooBot", MinDelay: 5 * time.Second}, false},
		{"equal clamps", Policy{Agent: "FooBot", MinDelay: time.Second, MaxDelay: time.Second}, false},
		{"TTL above MaxTTL is capped, not refused", Policy{Agent: "FooBot", TTL: 48 * time.Hour}, false},
		{"negative MinDelay", Policy{Agent: "FooBot", MinDelay: -1}, true},
		{"negative MaxDelay", Policy{Agent: "FooBot", MaxDelay: -1}, true},
		{"negative TTL", Policy{Agent: "FooBot", TTL: -time.Hour}, true},
		{"negative RetryFailure", Policy{Agent: "FooBot", RetryFailure: -time.Second}, true},
		{"MaxDelay below MinDelay", Policy{Agent: "FooBot", MinDelay: 2 * time.Second, MaxDelay: time.Second}, true},
		{"no agent", Policy{}, true},
		{"agent without a token", Policy{Agent: "2bot/1.0"}, true},
		{"agent *", Policy{Agent: "*"}, true},
		{"browser-style user-agent", Policy{Agent: "Mozilla/5.0 (compatible; FooBot/1.2; +http://x)"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("Validate() = %v, does not wrap ErrInvalidPolicy", err)
			}
		})
	}
}

func TestProductToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"FooBot", "FooBot"},
		{"FooBot/1.2", "FooBot"},
		{"MyBot/1.0 (+https://x)", "MyBot"},
		{"Googlebot-Image/1.0", "Googlebot-Image"},
		{"Foo_Bar-Baz/2", "Foo_Bar-Baz"},
		{" \tFooBot", "FooBot"},
		{"Foo Bot", "Foo"},
		// Digits are not token characters (RFC 9309 section 2.2.1).
		{"Bot2/1.0", "Bot"},
		{"2bot", ""},
		// A browser-compatible string gives its first token, not the
		// crawler's: Policy.Validate refuses such an agent.
		{"Mozilla/5.0 (compatible; FooBot/1.2; +http://x)", "Mozilla"},
		{"*", ""},
		{"", ""},
		{"ツbot", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := ProductToken(tc.in); got != tc.want {
				t.Errorf("ProductToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestEntryBinaryRoundTrip covers MarshalBinary and UnmarshalBinary on every
// kind of entry Evaluate makes.
func TestEntryBinaryRoundTrip(t *testing.T) {
	p := Policy{Agent: testAgent, MinDelay: 100 * time.Millisecond}
	rich := "Sitemap: https://example.com/a.xml\nUser-agent: foobot\nDisallow: /\nAllow: /$\nAllow: /pub*.html$\n" +
		"Disallow: /a%2Fb\nAllow: /ツ\nDisallow: /price%24\nCrawl-delay: 1.5\nSitemap: https://example.com/b.xml\n"
	ok := Evaluate(p, 200, []byte(rich), nil, testNow, nil)
	named := Evaluate(p, 0, nil, errRefused, testNow, nil)
	named.Reason, named.Permanent = "connect_error", true
	tests := []struct {
		name  string
		entry *Entry
	}{
		{"rules", ok},
		{"empty rules", Evaluate(p, 200, nil, nil, testNow, nil)},
		{"allow-all", Evaluate(p, 404, nil, nil, testNow, nil)},
		{"disallow-all", Evaluate(p, 0, nil, errRefused, testNow, nil)},
		{"named failure", named},
		{"failure keeping rules", Evaluate(p, 503, nil, nil, testNow.Add(time.Hour), ok)},
		{"zero times", &Entry{Kind: KindAllowAll, Status: 404}},
		{"distant times", &Entry{Kind: KindDisallowAll, Status: 500, Failures: 1 << 40,
			FetchedAt: time.Date(1, 1, 1, 0, 0, 1, 1, time.UTC), Expires: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
		{"before 1970", &Entry{Kind: KindAllowAll, Status: 410, FetchedAt: time.Unix(-1, 5), Expires: time.Unix(-1e9, 0)}},
	}
	paths := []string{"/", "/x", "/pub/a.html", "/pub/a.html?x", "/a/b", "/a%2fb", "/%E3%83%84", "/price$", "/robots.txt"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.entry
			b, err := e.MarshalBinary()
			if err != nil {
				t.Fatalf("MarshalBinary: %v", err)
			}
			var got Entry
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if got.Kind != e.Kind || got.Status != e.Status || got.Error != e.Error || got.Failures != e.Failures ||
				got.Reason != e.Reason || got.Permanent != e.Permanent {
				t.Errorf("got %v/%d/%q/%d/%q/%v, want %v/%d/%q/%d/%q/%v", got.Kind, got.Status, got.Error, got.Failures, got.Reason, got.Permanent,
					e.Kind, e.Status, e.Error, e.Failures, e.Reason, e.Permanent)
			}
			if !got.FetchedAt.Equal(e.FetchedAt) || !got.Expires.Equal(e.Expires) {
				t.Errorf("times %v, %v; want %v, %v", got.FetchedAt, got.Expires, e.FetchedAt, e.Expires)
			}
			if got.FetchedAt.IsZero() != e.FetchedAt.IsZero() {
				t.Errorf("FetchedAt.IsZero() changed")
			}
			if !slices.Equal(got.Sitemaps(), e.Sitemaps()) {
				t.Errorf("Sitemaps = %q, want %q", got.Sitemaps(), e.Sitemaps())
			}
			gd, gok := got.Delay(p)
			wd, wok := e.Delay(p)
			if gd != wd || gok != wok {
				t.Errorf("Delay = %v, %v; want %v, %v", gd, gok, wd, wok)
			}
			for _, path := range paths {
				if g, w := got.Allowed(path), e.Allowed(path); g != w {
					t.Errorf("Allowed(%q) = %v, want %v", path, g, w)
				}
			}
			again, err := got.MarshalBinary()
			if err != nil || string(again) != string(b) {
				t.Errorf("re-encoding differs: %x, want %x (err %v)", again, b, err)
			}
		})
	}
}

// rawEntry writes an encoded entry field by field, so tests can write what
// MarshalBinary never would. validRaw decodes without error.
type rawEntry struct {
	version   byte
	permFlag  byte // version 2 on
	kind      uint64
	timeFlag  byte
	nsec      uint64
	delayFlag byte
	ruleCount uint64 // one rule follows whatever the count says
	ruleFlag  byte
	rule      string
	mapCount  uint64 // one sitemap follows whatever the count says
	trailing  []byte
}

func validRaw() rawEntry {
	return rawEntry{version: entryVersion, kind: uint64(KindRules), timeFlag: 1, nsec: 7, delayFlag: 1, ruleCount: 1, rule: "/x", mapCount: 1}
}

func (r rawEntry) encode() []byte {
	b := []byte{r.version}
	b = binary.AppendUvarint(b, r.kind)
	b = binary.AppendVarint(b, 200)
	b = appendString(b, "")
	if r.version >= 2 {
		b = appendString(b, "dns_error")
		b = append(b, r.permFlag)
	}
	b = append(b, r.timeFlag)
	if r.timeFlag == 1 {
		b = binary.AppendVarint(b, 1_700_000_000)
		b = binary.AppendUvarint(b, r.nsec)
	}
	b = append(b, 0) // Expires: zero time
	b = binary.AppendVarint(b, 0)
	b = append(b, r.delayFlag)
	if r.delayFlag == 1 {
		b = binary.AppendVarint(b, int64(time.Second))
	}
	b = binary.AppendUvarint(b, r.ruleCount)
	b = append(b, r.ruleFlag)
	b = appendString(b, r.rule)
	b = binary.AppendUvarint(b, r.mapCount)
	b = appendString(b, "https://example.com/sitemap.xml")
	return append(b, r.trailing...)
}

func TestEntryUnmarshalRejects(t *testing.T) {
	var valid Entry
	if err := valid.UnmarshalBinary(validRaw().encode()); err != nil {
		t.Fatalf("validRaw does not decode: %v", err)
	}
	if valid.Allowed("/x") || valid.Sitemaps()[0] != "https://example.com/sitemap.xml" || valid.Reason != "dns_error" || valid.Permanent {
		t.Fatalf("validRaw decodes to %+v", valid)
	}
	// Entries written before Reason and Permanent, in Redis or SQL, still read.
	v1 := validRaw()
	v1.version = 1
	var old Entry
	if err := old.UnmarshalBinary(v1.encode()); err != nil || old.Allowed("/x") || old.Reason != "" {
		t.Fatalf("a version 1 entry decodes to %+v, %v", old, err)
	}

	mod := func(f func(*rawEntry)) []byte {
		r := validRaw()
		f(&r)
		return r.encode()
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"version 0", mod(func(r *rawEntry) { r.version = 0 })},
		{"version 3", mod(func(r *rawEntry) { r.version = 3 })},
		{"permanent flag 2", mod(func(r *rawEntry) { r.permFlag = 2 })},
		{"kind 0", mod(func(r *rawEntry) { r.kind = 0 })},
		{"kind 4", mod(func(r *rawEntry) { r.kind = 4 })},
		{"kind beyond int", mod(func(r *rawEntry) { r.kind = 1 << 63 })},
		{"time flag 2", mod(func(r *rawEntry) { r.timeFlag = 2 })},
		{"nanoseconds of a whole second", mod(func(r *rawEntry) { r.nsec = uint64(time.Second) })},
		{"delay flag 2", mod(func(r *rawEntry) { r.delayFlag = 2 })},
		{"rule flag 2", mod(func(r *rawEntry) { r.ruleFlag = 2 })},
		{"empty rule", mod(func(r *rawEntry) { r.rule = "" })},
		{"rule count beyond the data", mod(func(r *rawEntry) { r.ruleCount = 1000 })},
		{"huge rule count", mod(func(r *rawEntry) { r.ruleCount = 1<<64 - 1 })},
		{"sitemap count beyond the data", mod(func(r *rawEntry) { r.mapCount = 1000 })},
		{"trailing bytes", mod(func(r *rawEntry) { r.trailing = []byte{0} })},
		{"overlong varint", append([]byte{entryVersion, 1}, slices.Repeat([]byte{0xFF}, 11)...)},
		{"string longer than the data", append([]byte{entryVersion, 1, 0}, binary.AppendUvarint(nil, 1<<40)...)},
	}
	valid2, err := Evaluate(Policy{Agent: testAgent}, 200, []byte(entryBody), nil, testNow, nil).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(valid2) {
		tests = append(tests, struct {
			name string
			data []byte
		}{fmt.Sprintf("truncated to %d bytes", n), valid2[:n]})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := Entry{Kind: KindAllowAll, Status: 404, Error: "kept"}
			e := before
			err := e.UnmarshalBinary(tc.data)
			if err == nil {
				t.Fatalf("UnmarshalBinary(%x) = nil, want an error", tc.data)
			}
			if !errors.Is(err, ErrInvalidEntry) {
				t.Errorf("UnmarshalBinary error %v does not wrap ErrInvalidEntry", err)
			}
			if !reflect.DeepEqual(e, before) {
				t.Errorf("failed UnmarshalBinary changed the entry to %+v", e)
			}
		})
	}
}

// TestFailureReason: a failed fetch is named by the caller's reason, or by
// ReasonUnavailable; an entry that answered names none.
func TestFailureReason(t *testing.T) {
	p := Policy{Agent: testAgent}
	named := Evaluate(p, 0, nil, errRefused, testNow, nil)
	named.Reason = "connect_error"
	for _, tc := range []struct {
		name string
		e    *Entry
		want string
	}{
		{"named error", named, "connect_error"},
		{"unnamed error", Evaluate(p, 0, nil, errRefused, testNow, nil), ReasonUnavailable},
		{"5xx answer", Evaluate(p, 503, nil, nil, testNow, nil), ReasonUnavailable},
		{"answered", Evaluate(p, 200, nil, nil, testNow, nil), ""},
		{"answered after a named failure", Evaluate(p, 404, nil, nil, testNow, named), ""},
		{"none", nil, ""},
	} {
		if got := tc.e.FailureReason(); got != tc.want {
			t.Errorf("%s: FailureReason = %q, want %q", tc.name, got, tc.want)
		}
	}
	if e := Evaluate(p, 0, nil, errRefused, testNow, named); e.Reason != "" || e.Permanent {
		t.Errorf("Evaluate carried the previous entry's reason over: %q, %v", e.Reason, e.Permanent)
	}
}
