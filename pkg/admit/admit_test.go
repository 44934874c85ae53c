package admit

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// now is the clock of every calendar case: the default calWindow is then
// 1996-06-14 12:00 (30 years of 365.25 days back, over 7 leap days) ..
// 2027-06-15.
var now = time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)

// calWindow is the calendar calWindow the calendar cases run with: 30 years of
// 365.25 days back, one year ahead.
var calWindow = Config{CalendarPast: 262980 * time.Hour, CalendarFuture: 365 * 24 * time.Hour}

var reasons = []string{
	ReasonInvalidURL, ReasonOutOfScope, ReasonMaxDepth, ReasonTrapPathDepth,
	ReasonTrapRepeatedSegment, ReasonTrapCalendar, ReasonTrapQueryParams, ReasonHostBudget,
}

func newRules(cfg Config, seeds ...string) *Rules {
	r := New(cfg)
	for _, s := range seeds {
		r.AddSeedHost(s)
	}
	return r
}

// path returns a path of n distinct segments.
func path(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "/s%d", i)
	}
	return b.String()
}

// query returns a query of n parameters.
func query(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("p%d=%d", i, i)
	}
	return strings.Join(parts, "&")
}

func TestCheckReasons(t *testing.T) {
	host := Config{Scope: ScopeHost}
	tests := []struct {
		name  string
		cfg   Config
		seeds []string
		c     Candidate
		want  string
	}{
		{"admitted", Config{}, nil, Candidate{URL: "http://example.com/", Now: now}, ""},

		{"invalid: empty", Config{}, nil, Candidate{URL: ""}, ReasonInvalidURL},
		{"invalid: no scheme", Config{}, nil, Candidate{URL: "example.com/x"}, ReasonInvalidURL},
		{"invalid: empty scheme", Config{}, nil, Candidate{URL: "://example.com/"}, ReasonInvalidURL},
		{"invalid: no host", Config{}, nil, Candidate{URL: "http:///x"}, ReasonInvalidURL},
		{"invalid: only userinfo", Config{}, nil, Candidate{URL: "http://user@/x"}, ReasonInvalidURL},
		{"invalid: ftp", Config{}, nil, Candidate{URL: "ftp://example.com/"}, ReasonInvalidURL},
		{"invalid: mailto", Config{}, nil, Candidate{URL: "mailto:a@example.com"}, ReasonInvalidURL},

		{"host scope: seed host", host, []string{"example.com"}, Candidate{URL: "https://example.com/a"}, ""},
		{"host scope: seed given in any case", host, []string{" Example.COM "}, Candidate{URL: "http://example.com/"}, ""},
		{"host scope: default port is the same host", host, []string{"example.com"}, Candidate{URL: "https://example.com:443/"}, ""},
		{"host scope: other port", host, []string{"example.com"}, Candidate{URL: "http://example.com:8080/"}, ReasonOutOfScope},
		{"host scope: subdomain", host, []string{"example.com"}, Candidate{URL: "http://www.example.com/"}, ReasonOutOfScope},
		{"host scope: no seeds", host, nil, Candidate{URL: "http://example.com/"}, ReasonOutOfScope},
		{"host scope: empty seed ignored", host, []string{"", "  "}, Candidate{URL: "http://example.com/"}, ReasonOutOfScope},
		{"all scope", Config{}, []string{"example.com"}, Candidate{URL: "http://elsewhere.example/"}, ""},

		{"max depth: at the limit", Config{MaxDepth: 3}, nil, Candidate{URL: "http://example.com/", Depth: 3}, ""},
		{"max depth: over", Config{MaxDepth: 3}, nil, Candidate{URL: "http://example.com/", Depth: 4}, ReasonMaxDepth},
		{"max depth: 0 is unlimited", Config{}, nil, Candidate{URL: "http://example.com/", Depth: 1000}, ""},

		{"path depth: at the default", Config{}, nil, Candidate{URL: "http://example.com" + path(16)}, ""},
		{"path depth: over the default", Config{}, nil, Candidate{URL: "http://example.com" + path(17)}, ReasonTrapPathDepth},
		{"path depth: empty segments do not count", Config{}, nil, Candidate{URL: "http://example.com" + strings.Repeat("/", 40) + "a"}, ""},
		{"path depth: configured", Config{MaxPathDepth: 2}, nil, Candidate{URL: "http://example.com/a/b/c"}, ReasonTrapPathDepth},
		{"path depth: off", Config{MaxPathDepth: -1}, nil, Candidate{URL: "http://example.com" + path(100)}, ""},

		{"repeated segment: twice", Config{}, nil, Candidate{URL: "http://example.com/a/b/a/c"}, ""},
		{"repeated segment: three times", Config{}, nil, Candidate{URL: "http://example.com/a/b/a/b/a"}, ReasonTrapRepeatedSegment},
		{"repeated segment: in a long path", Config{MaxPathDepth: -1}, nil, Candidate{URL: "http://example.com" + path(20) + "/x/x/x"}, ReasonTrapRepeatedSegment},
		{"repeated segment: long path without repeats", Config{MaxPathDepth: -1}, nil, Candidate{URL: "http://example.com" + path(40)}, ""},
		{"repeated segment: the query is not the path", Config{}, nil, Candidate{URL: "http://example.com/a?x=/a/a/a"}, ""},
		{"repeated segment: off", Config{MaxRepeatedSegment: -1}, nil, Candidate{URL: "http://example.com/a/a/a/a"}, ""},

		{"query params: at the default", Config{}, nil, Candidate{URL: "http://example.com/?" + query(16)}, ""},
		{"query params: over the default", Config{}, nil, Candidate{URL: "http://example.com/?" + query(17)}, ReasonTrapQueryParams},
		{"query params: empty ones do not count", Config{}, nil, Candidate{URL: "http://example.com/?" + query(16) + strings.Repeat("&", 30)}, ""},
		{"query params: the fragment is not the query", Config{}, nil, Candidate{URL: "http://example.com/#?" + query(30)}, ""},
		{"query params: off", Config{MaxQueryParams: -1}, nil, Candidate{URL: "http://example.com/?" + query(100)}, ""},

		{"calendar", calWindow, nil, Candidate{URL: "http://example.com/cal/2040/01/", Now: now}, ReasonTrapCalendar},
		{"calendar: off by default", Config{}, nil, Candidate{URL: "http://example.com/cal/2040/01/", Now: now}, ""},

		{"host budget: under", Config{MaxHostPages: 100}, nil, Candidate{URL: "http://example.com/", HostPages: 99}, ""},
		{"host budget: spent", Config{MaxHostPages: 100}, nil, Candidate{URL: "http://example.com/", HostPages: 100}, ReasonHostBudget},
		{"host budget: 0 is unlimited", Config{}, nil, Candidate{URL: "http://example.com/", HostPages: 1 << 30}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newRules(tt.cfg, tt.seeds...).Check(tt.c)
			if v.Reason != tt.want || v.Admit != (tt.want == "") {
				t.Errorf("Check(%q) = %+v, want reason %q", tt.c.URL, v, tt.want)
			}
		})
	}
}

// TestCheckOrder pins which reason is reported when several rules reject a
// candidate: scope, depth, path depth, repeated segment, query parameters,
// calendar, host budget.
func TestCheckOrder(t *testing.T) {
	cfg := calWindow
	cfg.Scope, cfg.MaxDepth, cfg.MaxHostPages = ScopeHost, 2, 10
	r := newRules(cfg, "example.com")
	long := path(17)
	repeated := "/x/x/x"
	params := "?" + query(17)
	calendar := "/2040/01"
	tests := []struct {
		url       string
		depth     int
		hostPages int
		want      string
	}{
		{"http://other.example" + calendar + long + params, 5, 10, ReasonOutOfScope},
		{"http://example.com" + repeated + long + params, 5, 10, ReasonMaxDepth},
		{"http://example.com" + calendar + repeated + long + params, 1, 10, ReasonTrapPathDepth},
		{"http://example.com" + calendar + repeated + params, 1, 10, ReasonTrapRepeatedSegment},
		{"http://example.com" + calendar + params, 1, 10, ReasonTrapQueryParams},
		{"http://example.com" + calendar, 1, 10, ReasonTrapCalendar},
		{"http://example.com/", 1, 10, ReasonHostBudget},
		{"http://example.com/", 1, 9, ""},
	}
	for _, tt := range tests {
		v := r.Check(Candidate{URL: tt.url, Depth: tt.depth, HostPages: tt.hostPages, Now: now})
		if v.Reason != tt.want {
			t.Errorf("Check(%q, depth %d, host pages %d) = %q, want %q", tt.url, tt.depth, tt.hostPages, v.Reason, tt.want)
		}
	}
}

func TestCheckSeeds(t *testing.T) {
	cfg := calWindow
	cfg.Scope, cfg.MaxDepth, cfg.MaxHostPages = ScopeHost, 1, 5
	r := New(cfg) // no seed hosts added
	tests := []struct {
		name string
		c    Candidate
		want string
	}{
		{"bypasses scope", Candidate{URL: "http://anywhere.example/"}, ""},
		{"bypasses depth", Candidate{URL: "http://anywhere.example/", Depth: 7}, ""},
		{"not path depth", Candidate{URL: "http://anywhere.example" + path(17)}, ReasonTrapPathDepth},
		{"not repeated segments", Candidate{URL: "http://anywhere.example/a/a/a"}, ReasonTrapRepeatedSegment},
		{"not query parameters", Candidate{URL: "http://anywhere.example/?" + query(17)}, ReasonTrapQueryParams},
		{"not calendars", Candidate{URL: "http://anywhere.example/1900/01/", Now: now}, ReasonTrapCalendar},
		{"not the host budget", Candidate{URL: "http://anywhere.example/", HostPages: 5}, ReasonHostBudget},
		{"not validity", Candidate{URL: "anywhere.example"}, ReasonInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Seed = true
			if v := r.Check(tt.c); v.Reason != tt.want {
				t.Errorf("Check(seed %q) = %+v, want %q", tt.c.URL, v, tt.want)
			}
			tt.c.Seed = false
			if v := r.Check(tt.c); v.Admit {
				t.Errorf("Check(non-seed %q) admitted", tt.c.URL)
			}
		})
	}
}

func TestScopeDomain(t *testing.T) {
	r := newRules(Config{Scope: ScopeDomain},
		"www.example.co.uk", "alice.github.io", "192.0.2.1:8080", "[2001:db8::1]:8443", "localhost:3000", "intranet.internal", "Example.COM")
	tests := []struct {
		url  string
		want bool
	}{
		{"http://www.example.co.uk/", true},
		{"http://shop.example.co.uk/", true},
		{"http://example.co.uk/", true},
		{"http://a.b.c.example.co.uk:8080/", true},
		{"http://other.co.uk/", false},
		{"http://co.uk/", false},
		{"http://example.uk/", false},
		{"http://alice.github.io/", true}, // a private suffix of the list counts
		{"http://bob.github.io/", false},
		{"http://github.io/", false},
		{"http://192.0.2.1/", true}, // ports are ignored
		{"http://192.0.2.1:9999/", true},
		{"http://192.0.2.10/", false},
		{"http://2.1/", false}, // not the IP's "domain"
		{"http://[2001:db8::1]/", true},
		{"http://[2001:db8::2]/", false},
		{"http://localhost/", true},
		{"http://a.intranet.internal/", true},
		{"http://other.internal/", false},
		{"https://www.example.com/", true},
		{"https://example.org/", false},
	}
	for _, tt := range tests {
		v := r.Check(Candidate{URL: tt.url})
		if v.Admit != tt.want || (!v.Admit && v.Reason != ReasonOutOfScope) {
			t.Errorf("Check(%q) = %+v, want admitted %v", tt.url, v, tt.want)
		}
	}
}

func TestRegistrableDomain(t *testing.T) {
	tests := map[string]string{
		"www.example.co.uk":     "example.co.uk",
		"www.example.co.uk:81":  "example.co.uk",
		"WWW.Example.COM":       "example.com",
		"co.uk":                 "co.uk",
		"127.0.0.1:8080":        "127.0.0.1",
		"[::1]:80":              "[::1]",
		"[::1]":                 "[::1]",
		"[::1":                  "[::1",
		"localhost":             "localhost",
		"xn--bcher-kva.example": "xn--bcher-kva.example",
		"a.b.xn--p1ai":          "b.xn--p1ai",
		"":                      "",
	}
	for in, want := range tests {
		if got := registrableDomain(in); got != want {
			t.Errorf("registrableDomain(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCalendar(t *testing.T) {
	tests := []struct {
		path string // path and query
		trap bool
	}{
		// Plausible dates.
		{"/2026/06/", false},
		{"/blog/2026/06/15/post.html", false},
		{"/1999/01/", false},
		{"/1996/06/", false},    // its month reaches past 1996-06-14 12:00
		{"/1996/06/14/", false}, // and so does its day
		{"/2027/06/", false},    // starts before 2027-06-15
		{"/2027/06/15/", false},
		{"/news/2026-06-15-title", false},
		{"/?date=2026-06", false},
		{"/?y=2026&m=6", false},
		{"/?year=2026&month=06&day=15", false},

		// Dates outside the calWindow.
		{"/2040/01/", true},
		{"/cal/1900/01/", true},
		{"/1996/05/", true},
		{"/1996/06/13/", true},
		{"/2027/07/", true},
		{"/2027/06/16/", true},
		{"/2031/04/99/", true}, // no day: the month decides
		{"/archive/2031-04", true},
		{"/archive/2031_04_01.html", true},
		{"/x/cal-2031-04-01", true},
		{"/events/2031-04x", true},
		{"/?date=2031-04", true},
		{"/?when=2031/04", true},
		{"/?d=2031%2F04", true}, // values are unescaped
		{"/?y=2031&m=4", true},
		{"/?m=04&yr=2031", true},
		{"/?calendarYear=2031&calendarMonth=4", true},
		{"/?Y=2031&M=4", true},
		{"/?year=2031&month=6&day=99", true},
		{"/?year=1900&year=2026&month=1", true}, // the first year wins
		{"/ok/2026/06/?next=2040-01", true},

		// Not dates.
		{"/2031/", false},
		{"/?year=2031", false},
		{"/?m=4", false},
		{"/2031/4/", false}, // a path month has two digits
		{"/2031/13/", false},
		{"/2031/00/", false},
		{"/12031-04", false},
		{"/2031-4", false},
		{"/2031-044", false},
		{"/20310401", false},
		{"/v/3031/01", false},
		{"/v/0999/01", false},
		{"/2031--04", false},
		{"/?y=2031&m=13", false},
		{"/?y=2031&m=99", false}, // not a month, not years ahead
		{"/?y=2031&m=0", false},
		{"/?y=31&m=4", false},
		{"/?y=2031&m=4x", false},
		{"/?year=2031&mode=4", false},
		{"/#/2040/01", false}, // the fragment is not looked at
	}
	r := New(calWindow)
	for _, tt := range tests {
		v := r.Check(Candidate{URL: "http://example.com" + tt.path, Now: now})
		if got := v.Reason == ReasonTrapCalendar; got != tt.trap {
			t.Errorf("Check(%q) = %+v, want calendar trap %v", tt.path, v, tt.trap)
		}
	}
}

func TestCalendarWindow(t *testing.T) {
	past, future := "http://example.com/1900/01/", "http://example.com/2040/01/"
	tests := []struct {
		name              string
		cfg               Config
		now               time.Time
		pastTrap, futTrap bool
	}{
		{"30 years back, 1 ahead", calWindow, now, true, true},
		{"off by default", Config{}, now, false, false},
		{"zero Now turns it off", calWindow, time.Time{}, false, false},
		{"past open", Config{CalendarPast: -1, CalendarFuture: calWindow.CalendarFuture}, now, false, true},
		{"future open", Config{CalendarPast: calWindow.CalendarPast, CalendarFuture: -1}, now, true, false},
		{"both open", Config{CalendarPast: -1, CalendarFuture: -1}, now, false, false},
		{"wide", Config{CalendarPast: 200 * 365 * 24 * time.Hour, CalendarFuture: 20 * 365 * 24 * time.Hour}, now, false, false},
		{"narrow", Config{CalendarPast: time.Hour, CalendarFuture: time.Hour}, now, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.cfg)
			if got := r.Check(Candidate{URL: past, Now: tt.now}).Reason == ReasonTrapCalendar; got != tt.pastTrap {
				t.Errorf("%s: trap %v, want %v", past, got, tt.pastTrap)
			}
			if got := r.Check(Candidate{URL: future, Now: tt.now}).Reason == ReasonTrapCalendar; got != tt.futTrap {
				t.Errorf("%s: trap %v, want %v", future, got, tt.futTrap)
			}
		})
	}
	t.Run("narrow calWindow keeps this month", func(t *testing.T) {
		r := New(Config{CalendarPast: time.Hour, CalendarFuture: time.Hour})
		for _, u := range []string{"http://example.com/2026/06/", "http://example.com/2026/06/15/", "http://example.com/?y=2026&m=6"} {
			if v := r.Check(Candidate{URL: u, Now: now}); !v.Admit {
				t.Errorf("Check(%q) = %+v", u, v)
			}
		}
	})
}

func TestScore(t *testing.T) {
	r := New(Config{})
	score := func(url string, depth, hostPages int) Verdict {
		t.Helper()
		v := r.Check(Candidate{URL: url, Depth: depth, HostPages: hostPages})
		if v.Score < 0 || v.Score > 100 || v.Level < 0 || v.Level >= DefaultLevels {
			t.Fatalf("Check(%q) = %+v: out of range", url, v)
		}
		return v
	}

	t.Run("deeper is never more urgent", func(t *testing.T) {
		prev := score("http://example.com/page", 0, 50)
		for d := 1; d <= 15; d++ {
			v := score("http://example.com/page", d, 50)
			if v.Score > prev.Score || v.Level < prev.Level {
				t.Errorf("depth %d: %+v after %+v", d, v, prev)
			}
			if prev.Score > 0 && v.Score == prev.Score {
				t.Errorf("depth %d: score %d did not drop", d, v.Score)
			}
			prev = v
		}
		if prev.Score != 0 || prev.Level != DefaultLevels-1 {
			t.Errorf("depth 15: %+v, want score 0 at the last level", prev)
		}
	})
	t.Run("negative depth counts as a seed", func(t *testing.T) {
		if a, b := score("http://example.com/", -3, 50), score("http://example.com/", 0, 50); a != b {
			t.Errorf("depth -3: %+v, depth 0: %+v", a, b)
		}
	})
	t.Run("media later than pages", func(t *testing.T) {
		page := score("http://example.com/a/report.html", 2, 50)
		for _, u := range []string{
			"http://example.com/a/photo.JPG",
			"http://example.com/a/report.pdf?download=1",
			"http://example.com/a/report.pdf;jsessionid=1",
			"http://example.com/a/archive.tar.gz",
		} {
			if v := score(u, 2, 50); v.Score >= page.Score {
				t.Errorf("%s: score %d, page %d", u, v.Score, page.Score)
			}
		}
		for _, u := range []string{
			"http://example.com/a.pdf/",
			"http://example.com/pdf",
			"http://example.com/a.jpgx",
			"http://example.com/a?file=x.jpg",
			"http://example.com/a.verylongext",
		} {
			if v := score(u, 2, 50); v.Score != page.Score {
				t.Errorf("%s: score %d, want the page's %d", u, v.Score, page.Score)
			}
		}
	})
	t.Run("long queries later", func(t *testing.T) {
		short := score("http://example.com/?"+query(5), 2, 50)
		for _, u := range []string{
			"http://example.com/?" + query(6),
			"http://example.com/?q=" + strings.Repeat("x", 99),
		} {
			if v := score(u, 2, 50); v.Score >= short.Score {
				t.Errorf("%s: score %d, short query %d", u, v.Score, short.Score)
			}
		}
	})
	t.Run("new hosts first", func(t *testing.T) {
		for d := range 12 {
			fresh, known := score("http://example.com/p", d, 0), score("http://example.com/p", d, 10)
			if fresh.Score < known.Score || fresh.Level > known.Level {
				t.Errorf("depth %d: fresh host %+v, known host %+v", d, fresh, known)
			}
		}
	})
	t.Run("rejected candidates keep their score", func(t *testing.T) {
		v := newRules(Config{Scope: ScopeHost}).Check(Candidate{URL: "http://example.com/", Depth: 1})
		if v.Admit || v.Score == 0 {
			t.Errorf("%+v", v)
		}
		v = New(Config{Levels: 6}).Check(Candidate{URL: "not a URL"})
		if v.Score != 0 || v.Level != 5 {
			t.Errorf("invalid URL: %+v, want score 0 at level 5", v)
		}
	})
}

func TestLevel(t *testing.T) {
	for levels := 1; levels <= 120; levels++ {
		if got := level(100, levels); got != 0 {
			t.Errorf("level(100, %d) = %d", levels, got)
		}
		if got := level(0, levels); levels <= 101 && got != levels-1 {
			t.Errorf("level(0, %d) = %d", levels, got)
		}
		seen := map[int]bool{}
		prev := 0
		for s := 100; s >= 0; s-- {
			l := level(s, levels)
			if l < prev || l >= levels {
				t.Fatalf("level(%d, %d) = %d after %d", s, levels, l, prev)
			}
			seen[l], prev = true, l
		}
		if levels <= 101 && len(seen) != levels {
			t.Errorf("%d levels: only %d used", levels, len(seen))
		}
	}
	if level(-5, 4) != 3 || level(500, 4) != 0 {
		t.Error("level does not clamp its score")
	}
}

func TestParseScope(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Scope
	}{{"all", ScopeAll}, {"host", ScopeHost}, {"domain", ScopeDomain}, {" Domain ", ScopeDomain}, {"HOST", ScopeHost}} {
		got, err := ParseScope(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseScope(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if back, err := ParseScope(got.String()); err != nil || back != got {
			t.Errorf("ParseScope(%v.String()) = %v, %v", got, back, err)
		}
	}
	for _, in := range []string{"", "hosts", "subdomain", "all,host"} {
		if got, err := ParseScope(in); !errors.Is(err, ErrScope) || got != ScopeAll {
			t.Errorf("ParseScope(%q) = %v, %v; want ErrScope", in, got, err)
		}
	}
	if got := Scope(7).String(); got != "Scope(7)" {
		t.Errorf("Scope(7).String() = %q", got)
	}

	var _ flag.Value = (*Scope)(nil)
	s := ScopeHost
	if err := s.Set("galaxy"); !errors.Is(err, ErrScope) || s != ScopeHost {
		t.Errorf("Set(galaxy) = %v, scope now %v", err, s)
	}
	if err := s.Set("domain"); err != nil || s != ScopeDomain {
		t.Errorf("Set(domain) = %v, scope now %v", err, s)
	}
}

func TestRegisterFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	var a, b Config
	a.RegisterFlags(fs, "admit.")
	b.RegisterFlags(fs, "other.") // two prefixes share a flag set

	want := Config{
		MaxPathDepth: DefaultMaxPathDepth, MaxRepeatedSegment: DefaultMaxRepeatedSegment,
		MaxQueryParams: DefaultMaxQueryParams, Levels: DefaultLevels,
	}
	if a != want {
		t.Errorf("defaults after RegisterFlags: %+v, want %+v", a, want)
	}
	if err := a.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	for _, name := range []string{"scope", "max-depth", "max-path-depth", "max-repeated-segment", "max-host-pages", "max-query-params", "calendar-past", "calendar-future", "levels"} {
		if fs.Lookup("admit."+name) == nil || fs.Lookup("other."+name) == nil {
			t.Errorf("flag %s not registered under both prefixes", name)
		}
	}
	if got := fs.Lookup("admit.scope").DefValue; got != "all" {
		t.Errorf("scope default %q", got)
	}

	err := fs.Parse([]string{
		"-admit.scope=domain", "-admit.max-depth=3", "-admit.max-path-depth=-1",
		"-admit.max-repeated-segment=5", "-admit.max-host-pages=1000", "-admit.max-query-params=8",
		"-admit.calendar-past=87600h", "-admit.calendar-future=-1s", "-admit.levels=8",
		"-other.scope=host",
	})
	if err != nil {
		t.Fatal(err)
	}
	want = Config{
		Scope: ScopeDomain, MaxDepth: 3, MaxPathDepth: -1, MaxRepeatedSegment: 5, MaxHostPages: 1000,
		MaxQueryParams: 8, CalendarPast: 87600 * time.Hour, CalendarFuture: -time.Second, Levels: 8,
	}
	if a != want {
		t.Errorf("parsed: %+v, want %+v", a, want)
	}
	if b.Scope != ScopeHost || b.MaxDepth != 0 {
		t.Errorf("other prefix: %+v", b)
	}

	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	var c Config
	c.RegisterFlags(fs, "")
	if err := fs.Parse([]string{"-scope=galaxy"}); err == nil || !strings.Contains(err.Error(), "galaxy") {
		t.Errorf("bad scope: %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want bool
	}{
		{Config{}, true},
		{Config{Scope: ScopeDomain, MaxDepth: 5, MaxHostPages: 10, Levels: 101, MaxPathDepth: -1, CalendarPast: -1}, true},
		{Config{Scope: Scope(7)}, false},
		{Config{Scope: -1}, false},
		{Config{MaxDepth: -1}, false},
		{Config{MaxHostPages: -1}, false},
		{Config{Levels: -1}, false},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if (err == nil) != tt.want {
			t.Errorf("Validate(%+v) = %v, want ok %v", tt.cfg, err, tt.want)
		}
	}
	if err := (&Config{Scope: 9}).Validate(); !errors.Is(err, ErrScope) {
		t.Errorf("unknown scope: %v, want ErrScope", err)
	}
}

func TestNewDefaults(t *testing.T) {
	r := New(Config{Levels: -2})
	want := Config{
		MaxPathDepth: DefaultMaxPathDepth, MaxRepeatedSegment: DefaultMaxRepeatedSegment,
		MaxQueryParams: DefaultMaxQueryParams, Levels: DefaultLevels,
	}
	if r.cfg != want {
		t.Errorf("New(zero).cfg = %+v, want %+v", r.cfg, want)
	}
}

// TestConcurrentSeeds runs Check against AddSeedHost; run with -race.
func TestConcurrentSeeds(t *testing.T) {
	for _, scope := range []Scope{ScopeHost, ScopeDomain} {
		t.Run(scope.String(), func(t *testing.T) {
			r := New(Config{Scope: scope})
			const hosts = 200
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < hosts; i += 4 {
						r.AddSeedHost(fmt.Sprintf("h%d.example.com", i))
					}
				})
				wg.Go(func() {
					for i := range hosts {
						v := r.Check(Candidate{URL: fmt.Sprintf("http://h%d.example.com/p%d", (i*7+w)%hosts, i), Depth: 1, Now: now})
						if !v.Admit && v.Reason != ReasonOutOfScope {
							t.Errorf("%+v", v)
						}
					}
				})
			}
			wg.Wait()
			for i := range hosts {
				if v := r.Check(Candidate{URL: fmt.Sprintf("http://h%d.example.com/", i)}); !v.Admit {
					t.Errorf("host %d: %+v after all seeds were added", i, v)
				}
			}
		})
	}
}
