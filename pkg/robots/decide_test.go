package robots

import (
	"testing"
	"time"
)

func TestDecideNamesTheRule(t *testing.T) {
	body := "User-agent: other\nDisallow: /\n\nUser-agent: testbot\nDisallow: /private\nAllow: /private/open$\nDisallow: /*.pdf$\nCrawl-delay: 2\n"
	e := Evaluate(Policy{Agent: "testbot"}, 200, []byte(body), nil, time.Now(), nil)
	cases := []struct {
		path    string
		allowed bool
		why     string
		pattern string
	}{
		{"/private/x", false, "rule", "/private"},
		{"/private/open", true, "rule", "/private/open$"},
		{"/doc.pdf", false, "rule", "/*.pdf$"},
		{"/public", true, "no_rule", ""},
		{"/robots.txt", true, "robots_txt", ""},
	}
	for _, c := range cases {
		d := e.Decide(c.path)
		if d.Allowed != c.allowed || d.Why != c.why {
			t.Errorf("%s: %+v, want allowed %v why %s", c.path, d, c.allowed, c.why)
		}
		if d.Allowed != e.Allowed(c.path) {
			t.Errorf("%s: Decide %v, Allowed %v", c.path, d.Allowed, e.Allowed(c.path))
		}
		got := ""
		if d.Rule != nil {
			got = d.Rule.Pattern
			if d.Rule.Allow != d.Allowed {
				t.Errorf("%s: rule %+v decided %v", c.path, d.Rule, d.Allowed)
			}
		}
		if got != c.pattern {
			t.Errorf("%s: rule %q, want %q", c.path, got, c.pattern)
		}
	}
	if rs := e.Rules(); len(rs) != 3 || rs[0].Pattern != "/private/open$" {
		t.Errorf("rules %+v: want the three lines of testbot's group, longest first", rs)
	}
	if d, ok := e.CrawlDelay(); !ok || d != 2*time.Second {
		t.Errorf("crawl-delay %v %v", d, ok)
	}

	down := Evaluate(Policy{Agent: "testbot"}, 503, nil, nil, time.Now(), nil)
	if d := down.Decide("/a"); d.Allowed || d.Why != "disallow_all" || d.Rule != nil {
		t.Errorf("5xx: %+v", d)
	}
	gone := Evaluate(Policy{Agent: "testbot"}, 404, nil, nil, time.Now(), nil)
	if d := gone.Decide("/a"); !d.Allowed || d.Why != "allow_all" || gone.Rules() != nil {
		t.Errorf("404: %+v", d)
	}
	var none *Entry
	if d := none.Decide("/a"); d.Allowed || d.Why != "not_fetched" {
		t.Errorf("nil entry: %+v", d)
	}
}

// FuzzDecide checks that Decide agrees with Allowed on any file and path.
func FuzzDecide(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /a*b$\nAllow: /a\n", "/axb")
	f.Add("User-agent: bot\nDisallow: /\n", "/x?y=1")
	f.Fuzz(func(t *testing.T, body, path string) {
		e := Evaluate(Policy{Agent: "bot"}, 200, []byte(body), nil, time.Now(), nil)
		d := e.Decide(path)
		if d.Allowed != e.Allowed(path) {
			t.Fatalf("Decide %+v, Allowed %v", d, e.Allowed(path))
		}
		if d.Rule != nil && d.Rule.Allow != d.Allowed {
			t.Fatalf("rule %+v decided %v", d.Rule, d.Allowed)
		}
	})
}
