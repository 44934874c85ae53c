package pattern

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// crawlLinked is crawlTree with the verdicts a parser gives: what each page
// linked that the crawl knew (Relinks) and what it did not (Fresh), and,
// for pages judge says so of, a page compared with its rewrite's target and
// found unlike it in its text, or one whose target has no copy (noTarget).
// It returns the fetched URLs in order, and the host.
func crawlLinked(t *testing.T, cfg Config, links func(u string) []string, judge func(u string) (unlike, noTarget bool), limit int) ([]string, *Host[string]) {
	t.Helper()
	return crawlCanonical(t, cfg, links, judge, nil, limit)
}

// crawlCanonical is crawlLinked with the URL each page names canonical
// (canon, nil for none), which the page's verdict carries as the parser's
// does: when it is another URL of the host.
func crawlCanonical(t *testing.T, cfg Config, links func(u string) []string, judge func(u string) (unlike, noTarget bool), canon func(u string) string, limit int) ([]string, *Host[string]) {
	t.Helper()
	h := NewHost[string]()
	type item struct {
		u string
		c Candidate
	}
	home := "http://a/"
	var fetched []string
	known := map[string]bool{home: true}
	queue := []item{{home, h.Describe(cfg, Found{URL: home})}}
	h.Admit(cfg, int64(KeyOf(home)), queue[0].c)
	for len(queue) > 0 && len(fetched) < limit {
		it := queue[0]
		queue = queue[1:]
		// At its turn, as the fetcher asks (Take): held, it is decided
		// again as a held URL.
		hash := int64(KeyOf(it.u))
		if d := h.Take(cfg, hash, it.u); !d.Admit && d.Reason != "" {
			it.c.Held = true
			if d := h.Admit(cfg, hash, it.c); !d.Admit {
				h.Park(cfg, d, hash, it.c, it.u)
				continue
			}
		}
		fetched = append(fetched, it.u)
		var relinks, fresh []string
		for _, l := range links(it.u) {
			if known[l] {
				relinks = append(relinks, l)
			} else {
				fresh = append(fresh, l)
			}
		}
		unlike, noTarget := judge(it.u)
		var c string
		if canon != nil {
			if c = canon(it.u); c == it.u {
				c = ""
			}
		}
		h.Observe(cfg, Verdict{URL: it.u, Hash: int64(KeyOf(it.u)), Grounded: it.c.Grounded, Hops: it.c.Hops, Origin: it.c.Origin, ParentSpace: it.c.ParentSpace,
			Judged: unlike || noTarget, Unlike: unlike, NoTarget: noTarget, Relinks: relinks, Fresh: fresh, Canonical: c})
		for _, l := range links(it.u) {
			if known[l] {
				h.linkedOnPage(l, it.u)
				continue
			}
			known[l] = true
			c := h.Describe(cfg, Found{URL: l, Parent: it.u, ParentHops: it.c.Hops, ParentOrigin: it.c.Origin})
			if d := h.Admit(cfg, int64(KeyOf(l)), c); d.Admit {
				queue = append(queue, item{l, c})
			} else {
				h.Park(cfg, d, int64(KeyOf(l)), c, l)
			}
		}
		h.Release(cfg, func(u string, c Candidate, d Decision) {
			queue = append(queue, item{u, c})
		})
	}
	return fetched, h
}

// TestMirrorUnderItself: a proxy or cache view of the site under itself
// (/view/http/a/<page>) rewrites every link of the page it shows through
// itself and offers the page through the mirror again. Its pages differ in
// their text from the pages they show (a banner, a counter), but where
// they lead, with the mirror's prefix dropped, is where the site's pages
// lead: "drop path segments view/http/a" holds the mirror after a few of
// its pages. A section of the site under a prefix of two segments, linked
// from a page of the same name, whose pages lead to pages of their own, is
// fetched whole.
func TestMirrorUnderItself(t *testing.T) {
	cfg := DefaultConfig()
	const pages = 60
	page := func(i int) string { return fmt.Sprintf("http://a/p/%d.html", i%pages) }
	const mirror = "/view/http/a"
	// The site's box of navigation, which the mirror leaves as it is.
	nav := []string{"http://a/", "http://a/about.html", "http://a/news.html", "http://a/contact.html"}
	site := func(u string) []string {
		if u == "http://a/" {
			var out []string
			for i := range pages {
				out = append(out, page(i))
			}
			return append(out, nav[1:]...)
		}
		var i int
		if _, err := fmt.Sscanf(u[strings.LastIndexByte(u, '/')+1:], "%d.html", &i); err != nil {
			return nil
		}
		return []string{page(i + 1), page(i + 7), page(i * 3)}
	}
	links := func(u string) []string {
		rest, ok := strings.CutPrefix(u, "http://a"+mirror)
		if !ok {
			out := append(site(u), nav...)
			if u == page(pages-1) {
				// The deepest page shows one of its links through the mirror.
				out = append(out, "http://a"+mirror+"/p/0.html")
			}
			return out
		}
		depth := 1
		for strings.HasPrefix(rest, mirror+"/") {
			rest, depth = rest[len(mirror):], depth+1
		}
		prefix := strings.Repeat(mirror, depth)
		out := slices.Clone(nav)
		for _, l := range site("http://a" + rest) {
			out = append(out, "http://a"+prefix+strings.TrimPrefix(l, "http://a"))
		}
		return append(out, "http://a"+rest, "http://a"+prefix+mirror+rest)
	}
	isMirror := func(u string) bool { return strings.HasPrefix(u, "http://a"+mirror+"/") }
	fetched, h := crawlLinked(t, cfg, links, func(u string) (bool, bool) { return isMirror(u), false }, 5000)
	n := 0
	for _, u := range fetched {
		if isMirror(u) {
			n++
		}
	}
	if len(fetched)-n != pages+len(nav) {
		t.Errorf("%d of the site's %d pages fetched", len(fetched)-n, pages+len(nav))
	}
	if n > 8 {
		t.Errorf("%d pages of the mirror fetched, want a few", n)
	}
	t.Logf("mirror pages fetched: %d; rules %+v", n, h.Rules())
}

// TestSectionUnderARunIsNoMirror: a page linked from the page whose path it
// extends by a run of two segments before its last (/p/3.html links
// /notes/2019/p/3.html), in a section whose pages lead to pages of its own,
// is no mirror: "drop path segments notes/2019" is judged distinct by its
// first probe, and the section is fetched whole.
func TestSectionUnderARunIsNoMirror(t *testing.T) {
	cfg := DefaultConfig()
	const pages, notes = 40, 30
	note := func(i int) string { return fmt.Sprintf("http://a/notes/2019/n/%d.html", i%notes) }
	links := func(u string) []string {
		switch {
		case u == "http://a/":
			var out []string
			for i := range pages {
				out = append(out, fmt.Sprintf("http://a/p/%d.html", i))
			}
			return out
		case u == "http://a/p/3.html":
			return []string{"http://a/", "http://a/notes/2019/p/3.html"}
		case strings.HasPrefix(u, "http://a/notes/2019/"):
			var i int
			fmt.Sscanf(u[strings.LastIndexByte(u, '/')+1:], "%d.html", &i)
			return []string{"http://a/", note(i + 1), note(i + 2), note(i * 5)}
		}
		return []string{"http://a/"}
	}
	fetched, _ := crawlLinked(t, cfg, links, func(u string) (bool, bool) { return strings.HasPrefix(u, "http://a/notes/"), false }, 5000)
	n := 0
	for _, u := range fetched {
		if strings.HasPrefix(u, "http://a/notes/") {
			n++
		}
	}
	if n != notes+1 {
		t.Errorf("%d of the section's %d pages fetched", n, notes+1)
	}
}

// TestMirrorByParameter: a print view (?print=1) that every page links, whose
// links stay in the view and which offers larger type (&zoom=N), is the
// site again under a parameter: its pages differ from theirs in a few
// words, but where they lead, with the parameter dropped, is where the
// site's pages lead, and "drop parameter print" holds the view after a few
// of them. A tab of each page (?tab=reviews) that lists pages of its own is
// fetched whole.
func TestMirrorByParameter(t *testing.T) {
	cfg := DefaultConfig()
	const pages = 60
	page := func(i int) string { return fmt.Sprintf("http://a/q/%d", i%pages) }
	site := func(i int) []string {
		return []string{"http://a/", page(i + 1), page(i + 7), page(i * 3), page(i + 11), page(i * 5)}
	}
	num := func(u string) int {
		var i int
		fmt.Sscanf(strings.TrimPrefix(u, "http://a/q/"), "%d", &i)
		return i
	}
	links := func(u string) []string {
		if u == "http://a/" {
			var out []string
			for i := range pages {
				out = append(out, page(i))
			}
			return append(out, "http://a/?print=1")
		}
		base, q, _ := strings.Cut(u, "?")
		i := num(base)
		switch {
		case strings.HasPrefix(u, "http://a/review/"):
			return []string{"http://a/", page(i)}
		case q == "":
			return append(site(i), u+"?print=1", u+"?tab=reviews")
		case strings.HasPrefix(q, "print=1"):
			zoom := 0
			fmt.Sscanf(strings.TrimPrefix(q, "print=1"), "&zoom=%d", &zoom)
			var out []string
			for _, l := range site(i) {
				out = append(out, l+"?print=1")
			}
			return append(out, fmt.Sprintf("%s?print=1&zoom=%d", base, zoom+1))
		case q == "tab=reviews":
			var out []string
			for j := range 3 {
				out = append(out, fmt.Sprintf("http://a/review/%d-%d", i, j))
			}
			return append(out, "http://a/", base)
		}
		return []string{"http://a/", base}
	}
	isView := func(u string) bool { return strings.Contains(u, "print=1") }
	// A larger type's view (&zoom=N) is a variant of a page nobody
	// fetched (?zoom=N): no copy to compare it with.
	judge := func(u string) (bool, bool) {
		zoom := strings.Contains(u, "zoom=")
		return strings.Contains(u, "?") && !zoom, zoom
	}
	fetched, h := crawlLinked(t, cfg, links, judge, 5000)
	views, tabs, reviews := 0, 0, 0
	for _, u := range fetched {
		switch {
		case isView(u):
			views++
		case strings.HasSuffix(u, "?tab=reviews"):
			tabs++
		case strings.HasPrefix(u, "http://a/review/"):
			reviews++
		}
	}
	if views > 8 {
		t.Errorf("%d print views fetched, want a few (rules %+v)", views, h.Rules())
	}
	if tabs != pages || reviews != 3*pages {
		t.Errorf("%d of %d tabs and %d of %d reviews fetched (rules %+v)", tabs, pages, reviews, 3*pages, h.Rules())
	}
	t.Logf("print views fetched: %d; rules %+v", views, h.Rules())
}
