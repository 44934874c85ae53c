package robots

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary robots.txt bodies, crawler names and request
// targets through Parse, Group, Allowed and CrawlDelay, and through the
// cached Entry form. Nothing may panic, /robots.txt is always allowed, the
// result is deterministic, and caching changes no decision.
func FuzzParse(f *testing.F) {
	for _, body := range []string{
		rfc9309Example,
		googleGroups,
		entryBody,
		"\xEF\xBB\xBFuser-agent FooBot\rdisallow /x:y\r\nallow: /x:y/*.php$\n",
		star("Disallow: /*/private/*.pdf$", "Allow: /%7Euser/ツ", "Disallow: /a%2fb%", "Crawl-delay: .5"),
		star("Disallow: /", "Allow: /$", "Allow: /robots.txt$", "Sitemap: https://example.com/s.xml"),
		"User-agent: * junk\nDisallow: *$\nDisallow: $\nDisallow: **\nCrawl-delay: 1e400\n",
	} {
		for _, path := range []string{"/", "/robots.txt", "/x:y/a.php", "/%7euser/%E3%83%84", "a/b?c#d", "/price$*"} {
			f.Add([]byte(body), testAgent, path)
		}
	}
	f.Add([]byte("User-agent: barbot\nDisallow: /example/page.html\n"), "BarBot/1.0 (+https://x)", "/example/page.html?q")
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		file := Parse(body)
		g := file.Group(agent)
		allowed := g.Allowed(path)
		if !g.Allowed("/robots.txt") {
			t.Fatalf("/robots.txt disallowed")
		}
		if want := refAllowed(g.rules, path); allowed != want {
			t.Fatalf("Allowed(%q) = %v, the reference decides %v", path, allowed, want)
		}
		delay, hasDelay := g.CrawlDelay()
		if delay < 0 || delay > maxCrawlDelay || (!hasDelay && delay != 0) {
			t.Fatalf("CrawlDelay() = %v, %v", delay, hasDelay)
		}

		again := Parse(body)
		g2 := again.Group(agent)
		if g2.Allowed(path) != allowed || !slices.Equal(again.Sitemaps(), file.Sitemaps()) {
			t.Fatalf("Parse is not deterministic")
		}
		if d, ok := g2.CrawlDelay(); d != delay || ok != hasDelay {
			t.Fatalf("CrawlDelay is not deterministic")
		}
		if canonicalPath(canonicalPath(path)) != canonicalPath(path) {
			t.Fatalf("canonicalPath(%q) is not idempotent", path)
		}
		// MarshalBinary stores rule patterns and relies on compiling a
		// canonical pattern again giving the same rule.
		for _, r := range g.rules {
			if r2, ok := newRule(r.pattern, r.allow); !ok || r2.pattern != r.pattern {
				t.Fatalf("pattern %q recompiles to %q, %v", r.pattern, r2.pattern, ok)
			}
		}

		p := Policy{Agent: agent}
		e := Evaluate(p, 200, body, nil, testNow, nil)
		cached := roundTrip(t, e)
		for _, e := range []*Entry{e, cached} {
			if e.Allowed(path) != allowed {
				t.Fatalf("Entry.Allowed(%q) = %v, Group says %v", path, !allowed, allowed)
			}
			if d, ok := e.Delay(p); d != delay || ok != hasDelay {
				t.Fatalf("Entry.Delay() = %v, %v; Group says %v, %v", d, ok, delay, hasDelay)
			}
			if !slices.Equal(e.Sitemaps(), file.Sitemaps()) {
				t.Fatalf("Entry.Sitemaps() = %q, File says %q", e.Sitemaps(), file.Sitemaps())
			}
		}
	})
}

// refAllowed is the decision of RFC 9309 section 2.2.2 written the slow,
// obvious way: every rule as a regular expression over the canonical path,
// the longest matching pattern wins, and Allow wins a tie.
func refAllowed(rules []rule, path string) bool {
	p := canonicalPath(path)
	if p == "/robots.txt" {
		return true
	}
	best, allow := -1, true
	for _, r := range rules {
		parts := strings.Split(strings.TrimSuffix(r.pattern, "$"), "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		expr := "^" + strings.Join(parts, ".*")
		if strings.HasSuffix(r.pattern, "$") {
			expr += "$"
		}
		if !regexp.MustCompile("(?s)" + expr).MatchString(p) {
			continue
		}
		switch n := len(r.pattern); {
		case n > best:
			best, allow = n, r.allow
		case n == best:
			allow = allow || r.allow
		}
	}
	return allow
}

// FuzzMatch checks that a Disallow rule without wildcards denies the request
// target spelled like the rule, and everything in the folder below it. (The
// folder, not any suffix: "/%4" followed by "1" is "/A", a different path.)
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"/a", "private/", "/a:b", "/%7e", "/%", "/%4", "/ツ", "/a%2Fb", "/?q=1", "/robots.txt.bak"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, rule, below string) {
		if rule == "" || len(rule) > 1000 || rule != strings.TrimSpace(rule) ||
			strings.ContainsAny(rule, "#*$\r\n") || strings.Contains(below, "#") {
			t.Skip()
		}
		g := Parse([]byte("User-agent: *\nDisallow: " + rule + "\n")).Group(testAgent)
		for _, path := range []string{rule, rule + "/" + below} {
			if g.Allowed(path) && canonicalPath(path) != "/robots.txt" {
				t.Fatalf("Disallow: %s allows %q", rule, path)
			}
		}
	})
}

// FuzzEntryUnmarshal feeds arbitrary bytes to UnmarshalBinary: it must not
// panic, must fail with ErrInvalidEntry, or must give an entry that encodes
// and decodes to itself and that the rest of the package can use.
func FuzzEntryUnmarshal(f *testing.F) {
	p := Policy{Agent: testAgent}
	ok := Evaluate(p, 200, []byte(rfc9309Example+entryBody), nil, testNow, nil)
	for _, e := range []*Entry{
		ok,
		Evaluate(p, 404, nil, nil, testNow, nil),
		Evaluate(p, 0, nil, errRefused, testNow, nil),
		Evaluate(p, 503, nil, nil, testNow, ok),
		{Kind: KindAllowAll},
	} {
		b, err := e.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(validRaw().encode())
	v1 := validRaw()
	v1.version = 1
	f.Add(v1.encode())
	named := Evaluate(p, 0, nil, errRefused, testNow, nil)
	named.Reason, named.Permanent = "tls_error", true
	if b, err := named.MarshalBinary(); err == nil {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{entryVersion, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Entry
		if err := e.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrInvalidEntry) {
				t.Fatalf("UnmarshalBinary error %v does not wrap ErrInvalidEntry", err)
			}
			return
		}
		b, err := e.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of a decoded entry: %v", err)
		}
		var e2 Entry
		if err := e2.UnmarshalBinary(b); err != nil {
			t.Fatalf("UnmarshalBinary(MarshalBinary()) = %v", err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("round trip changed the entry:\n%+v\n%+v", e, e2)
		}
		if b2, _ := e2.MarshalBinary(); string(b2) != string(b) {
			t.Fatalf("encoding is not stable: %x, then %x", b, b2)
		}
		for _, path := range []string{"/", "/robots.txt", "/a?b"} {
			if got := e.Allowed(path); path == "/robots.txt" && !got {
				t.Fatalf("decoded entry disallows /robots.txt")
			}
		}
		e.Delay(Policy{Agent: testAgent, MinDelay: time.Second, MaxDelay: time.Minute})
		e.Fresh(testNow)
		next := Evaluate(p, 503, nil, nil, testNow, &e)
		if !next.Expires.After(testNow) {
			t.Fatalf("retry after a decoded entry at %v, not after now", next.Expires)
		}
	})
}
