package admit

import (
	"slices"
	"testing"
)

// FuzzCheck feeds arbitrary URLs, depths and host page counts to Check: it
// must not panic, must be deterministic, and must give a documented reason
// and a score and level in range.
func FuzzCheck(f *testing.F) {
	for _, u := range []string{
		"http://example.com/",
		"https://www.example.co.uk:8443/a/b/a/b/a?x=1#f",
		"http://[2001:db8::1]:80/2040/01/15/",
		"http://192.0.2.1/?y=2031&m=4&d=31",
		"http://example.com/?date=2031%2F04%2F01&" + query(20),
		"http://user:pw@example.com" + path(20),
		"http://example.com/x.pdf;jsessionid=1",
		"://", "http://", "http://@", "http://[", "http://a?", "http://a#?b", "",
	} {
		f.Add(u, 1, false, 3)
	}
	f.Add("http://bob.github.io/1999/12/31", -1, true, -5)

	r := newRules(Config{Scope: ScopeDomain, MaxDepth: 5, MaxHostPages: 100, Levels: 5},
		"example.com", "www.example.co.uk", "192.0.2.1", "[2001:db8::1]")
	f.Fuzz(func(t *testing.T, url string, depth int, seed bool, hostPages int) {
		c := Candidate{URL: url, Depth: depth, Seed: seed, HostPages: hostPages, Now: now}
		v := r.Check(c)
		if v.Reason != "" && !slices.Contains(reasons, v.Reason) {
			t.Fatalf("Check(%q): undocumented reason %q", url, v.Reason)
		}
		if v.Admit != (v.Reason == "") {
			t.Fatalf("Check(%q) = %+v: Admit and Reason disagree", url, v)
		}
		if v.Score < 0 || v.Score > 100 || v.Level < 0 || v.Level >= 5 {
			t.Fatalf("Check(%q) = %+v: score or level out of range", url, v)
		}
		if v.Reason == ReasonInvalidURL && (v.Score != 0 || v.Level != 4) {
			t.Fatalf("Check(%q) = %+v: invalid URL not at the last level", url, v)
		}
		if again := r.Check(c); again != v {
			t.Fatalf("Check(%q) = %+v, then %+v", url, v, again)
		}
		if seed && (v.Reason == ReasonOutOfScope || v.Reason == ReasonMaxDepth) {
			t.Fatalf("seed %q rejected for %s", url, v.Reason)
		}
	})
}
