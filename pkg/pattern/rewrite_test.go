package pattern

import (
	"fmt"
	"strings"
	"testing"
)

// splitInsertedSegment is insertedSegment as it was written before it
// walked the strings: the reference the fuzz target holds it to.
func splitInsertedSegment(u, parent string) (string, bool) {
	segments := func(base string) []string {
		_, rest, ok := strings.Cut(base, "://")
		if !ok {
			return nil
		}
		return strings.Split(rest, "/")
	}
	us, ps := segments(u), segments(parent)
	if us == nil || ps == nil || len(us) != len(ps)+1 {
		return "", false
	}
	i := 0
	for i < len(ps) && us[i] == ps[i] {
		i++
	}
	extra := us[i]
	if extra == "" || strings.Join(us[i+1:], "/") != strings.Join(ps[i:], "/") {
		return "", false
	}
	return extra, true
}

func TestInsertedSegment(t *testing.T) {
	for _, tc := range []struct {
		u, parent, want string
		ok              bool
	}{
		{"http://h/amp/story", "http://h/story", "amp", true},
		{"http://h/story/amp", "http://h/story", "amp", true},
		{"http://h/a/print/b/", "http://h/a/b/", "print", true},
		{"http://h/a//b", "http://h/a/b", "", false}, // an empty segment added
		{"http://h/x/a/b", "http://h/a/c", "", false},
		{"http://h/a/b", "http://h/a/b", "", false},
		{"http://g/a/b", "http://h/a", "", false}, // another host is the added segment only if the rest follows
		{"http://h2/h/a", "http://h/a", "h2", true},
		{"h/a/b", "http://h/a", "", false},
	} {
		got, ok := insertedSegment(tc.u, tc.parent)
		if got != tc.want || ok != tc.ok {
			t.Errorf("insertedSegment(%q, %q) = %q, %v; want %q, %v", tc.u, tc.parent, got, ok, tc.want, tc.ok)
		}
		if rg, rok := splitInsertedSegment(tc.u, tc.parent); rg != got || rok != ok {
			t.Errorf("insertedSegment(%q, %q) = %q, %v; the reference says %q, %v", tc.u, tc.parent, got, ok, rg, rok)
		}
	}
}

func FuzzInsertedSegment(f *testing.F) {
	f.Add("http://h/amp/story", "http://h/story")
	f.Add("http://h/a/print/b/", "http://h/a/b/")
	f.Add("http://h/a//b", "http://h/a/b")
	f.Add("http://h2/h/a", "http://h/a")
	f.Fuzz(func(t *testing.T, u, parent string) {
		got, ok := insertedSegment(u, parent)
		want, wok := splitInsertedSegment(u, parent)
		if got != want || ok != wok {
			t.Fatalf("insertedSegment(%q, %q) = %q, %v; the reference says %q, %v", u, parent, got, ok, want, wok)
		}
	})
}

// BenchmarkDeriveRewrite: a link and the page it was found on, as admission
// compares most links with a parent (an added segment, and a plain sibling).
func BenchmarkDeriveRewrite(b *testing.B) {
	pairs := [][2]string{
		{"http://host12.example/section/amp/page-341.html", "http://host12.example/section/page-341.html"},
		{"http://host12.example/section/a/page-342.html", "http://host12.example/section/b/page-341.html"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pairs {
			deriveRewrite(p[0], p[1])
		}
	}
}

// TestRewriteRelisting: a variant by a parameter whose text differs from its
// target's but that links only what the host's fetched pages linked before
// (a listing in another order) counts for its rewrite as a duplicate, once
// for its first target and again for a target of another path: the orders
// of a listing's pages are held after two, and those of its first page
// wait for one of another page. Variants of one page alone (the pages of a
// listing by a parameter), and variants that link articles no page linked
// yet (a sitemap's entries only), are judged by their text and their rule
// reverted, the former after maxSeries.
func TestRewriteRelisting(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	for _, tc := range []struct {
		name       string
		pages      []string // listing pages fetched first
		variants   []string // each found on its page without the parameter
		sitemap    bool     // the articles are a sitemap's entries, linked from no page
		restart    bool     // the host is restored from its snapshot before the variants
		wantActive bool
	}{
		{"orders of a listing's pages", []string{"http://a/list/", "http://a/list/2/", "http://a/list/3/"},
			[]string{"http://a/list/?order=title", "http://a/list/2/?order=title", "http://a/list/3/?order=title", "http://a/list/?order=date", "http://a/list/2/?order=date", "http://a/list/3/?order=date"}, false, false, true},
		{"orders after a restart", []string{"http://a/list/", "http://a/list/2/", "http://a/list/3/"},
			[]string{"http://a/list/?order=title", "http://a/list/2/?order=title", "http://a/list/3/?order=title", "http://a/list/?order=date"}, false, true, true},
		{"orders of a listing's first page, then of its second", []string{"http://a/list/", "http://a/list/2/", "http://a/list/3/"},
			[]string{"http://a/list/?order=title", "http://a/list/?order=date", "http://a/list/?order=price", "http://a/list/2/?order=title", "http://a/list/3/?order=title", "http://a/list/3/?order=date"}, false, false, true},
		{"pages of one listing", []string{"http://a/list"},
			[]string{"http://a/list?page=2", "http://a/list?page=3", "http://a/list?page=4", "http://a/list?page=5", "http://a/list?page=6", "http://a/list?page=7", "http://a/list?page=8"}, false, false, false},
		{"orders listing what no page linked", []string{"http://a/list/", "http://a/list/2/", "http://a/list/3/"},
			[]string{"http://a/list/?order=title", "http://a/list/2/?order=title", "http://a/list/3/?order=title", "http://a/list/?order=date"}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHost[string]()
			var articles []string
			for i, p := range tc.pages {
				c, d := offer(h, cfg, p, "http://a/", 0, 0)
				if !d.Admit {
					t.Fatalf("listing page %s held: %+v", p, d)
				}
				h.Observe(cfg, Verdict{URL: p, Hash: int64(KeyOf(p)), Grounded: c.Grounded, Origin: c.Origin})
				for j := range 8 {
					a := fmt.Sprintf("http://a/post/%d.html", 8*i+j)
					articles = append(articles, a)
					found := Found{URL: a, Parent: p}
					if tc.sitemap {
						found = Found{URL: a, Parent: "http://a/sitemap.xml", Listed: true}
					}
					c := h.Describe(cfg, found)
					h.Admit(cfg, int64(KeyOf(a)), c)
				}
			}
			if tc.restart {
				b, ok := h.Snapshot()
				if !ok {
					t.Fatal("no snapshot")
				}
				h = NewHost[string]()
				if err := h.Restore(b); err != nil {
					t.Fatal(err)
				}
			}
			// A variant's links: eight articles of the listing (another
			// order's), its target, and the other variants.
			relinks := func(n int, target string) []string {
				out := []string{target}
				for j := range 8 {
					out = append(out, articles[(5*n+3*j)%len(articles)])
				}
				return append(out, tc.variants...)
			}
			probes := map[string]bool{}
			var fetch []Candidate
			for _, u := range tc.variants {
				target, _, _ := strings.Cut(u, "?")
				if strings.Contains(u, "?page=") {
					target = tc.pages[0]
				}
				c, d := offer(h, cfg, u, target, 0, 0)
				if d.Admit {
					fetch = append(fetch, c)
				}
			}
			for n := 0; len(fetch) > 0 && n < 50; n++ {
				c := fetch[0]
				fetch = fetch[1:]
				probes[c.URL] = true
				target, _ := Rewrite{Param: paramOf(c.URL)}.Apply(c.URL)
				h.Observe(cfg, Verdict{URL: c.URL, Hash: int64(KeyOf(c.URL)), Grounded: c.Grounded, Origin: c.Origin, Judged: true, Unlike: true, Relinks: relinks(n, target)})
				h.Release(cfg, func(_ string, c Candidate, _ Decision) { fetch = append(fetch, c) })
			}
			var active []string
			for _, r := range h.Rules() {
				if r.Active {
					active = append(active, r.Rule)
					if r.Relisted != 2 {
						t.Errorf("active rule %+v: want its two duplicates counted as relisted", r)
					}
				}
			}
			if got := len(active) > 0; got != tc.wantActive {
				t.Fatalf("rules %+v after %d variants fetched; want one active: %v", h.Rules(), len(probes), tc.wantActive)
			}
			if tc.wantActive && len(probes) > 2+maxSeries || tc.wantActive && len(probes) == len(tc.variants) {
				t.Errorf("%d of %d variants fetched (%v), want the two that taught the rule and at most %d onto the first one's path", len(probes), len(tc.variants), probes, maxSeries)
			}
			if !tc.wantActive && len(probes) != len(tc.variants) {
				t.Errorf("%d of %d variants fetched (%v), want all: the rule was judged distinct", len(probes), len(tc.variants), probes)
			}
		})
	}
}

// paramOf returns the name of a URL's last query parameter.
func paramOf(u string) string {
	_, q, _ := strings.Cut(u, "?")
	ps := strings.Split(q, "&")
	k, _, _ := strings.Cut(ps[len(ps)-1], "=")
	return k
}
