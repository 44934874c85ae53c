package pattern

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
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
	if us == nil || ps == nil || len(us) != len(ps)+1 || us[0] != ps[0] {
		return "", false // or another host
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
		{"http://g/a/b", "http://h/a", "", false},
		{"http://h2/h/a", "http://h/a", "", false}, // another host: a rewrite drops no host
		{"http://h/x", "http://h", "x", true},      // a parent with no path
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

func TestInsertedRun(t *testing.T) {
	for _, tc := range []struct {
		u, parent, want string
		ok              bool
	}{
		{"http://h/view/http/h/p/a.html", "http://h/p/a.html", "view/http/h", true},
		{"http://h/p/x/y/a.html", "http://h/p/a.html", "x/y", true},
		{"http://h/a/b/", "http://h/", "", false},           // a page two levels under its parent
		{"http://h/a/b/c", "http://h/c", "a/b", true},       // the parent's last segment after the run
		{"http://h/a/b/c/d/e/f", "http://h/f", "", false},   // a run longer than maxRun
		{"http://h/amp/story", "http://h/story", "", false}, // one segment: insertedSegment's
		{"http://h/a//b/c", "http://h/c", "", false},        // an empty segment
		{"http://g/x/y/p/a.html", "http://h/p/a.html", "", false},
		{"http://h/x/y/p/b.html", "http://h/p/a.html", "", false},
	} {
		got, ok := insertedRun(tc.u, tc.parent)
		if got != tc.want || ok != tc.ok {
			t.Errorf("insertedRun(%q, %q) = %q, %v; want %q, %v", tc.u, tc.parent, got, ok, tc.want, tc.ok)
		}
		if !ok {
			continue
		}
		if back, applied := (Rewrite{Segment: got}).Apply(tc.u); !applied || back != tc.parent {
			t.Errorf("drop path segments %s of %q = %q, %v; want %q", got, tc.u, back, applied, tc.parent)
		}
	}
	for _, tc := range []struct {
		segs []string
		run  string
		want bool
	}{
		{[]string{"view", "http", "h"}, "view/http/h", true},
		{[]string{"view", "http", "hh"}, "view/http/h", false},
		{[]string{"view", "http"}, "view/http/h", false},
		{[]string{"view/http", "h"}, "view/http/h", true}, // what Join would say
		{[]string{"vie", "w"}, "view", false},
	} {
		if got := runAt(tc.segs, tc.run); got != tc.want || got != (strings.Join(tc.segs, "/") == tc.run) {
			t.Errorf("runAt(%q, %q) = %v, want %v", tc.segs, tc.run, got, tc.want)
		}
	}
	// A run drops only where it starts and ends at a segment.
	for u, want := range map[string]string{
		"http://h/xview/http/h/a":    "",
		"http://h/view/http/hh/a":    "",
		"http://h/q/view/http/h/a?b": "http://h/q/a?b",
		"http://h/view/http/h":       "http://h/",
		// A nested mirror's page maps onto the site's.
		"http://h/view/http/h/view/http/h/p/a.html": "http://h/p/a.html",
	} {
		got, ok := (Rewrite{Segment: "view/http/h"}).Apply(u)
		if (want == "") == ok || ok && got != want {
			t.Errorf("drop path segments view/http/h of %q = %q, %v; want %q", u, got, ok, want)
		}
	}
}

func FuzzInsertedSegment(f *testing.F) {
	f.Add("http://h/amp/story", "http://h/story")
	f.Add("http://h/a/print/b/", "http://h/a/b/")
	f.Add("http://h/a//b", "http://h/a/b")
	f.Add("http://h2/h/a", "http://h/a")
	f.Add("http://h#/", "http://h/") // a host that is not what urlnorm.Authority reads
	fuzzAgainst(f, "insertedSegment", insertedSegment, splitInsertedSegment, nil)
}

// fuzzAgainst holds fn to its reference ref on the fuzzer's pairs of a URL
// and a parent, and what fn found to then, if not nil.
func fuzzAgainst(f *testing.F, name string, fn, ref func(u, parent string) (string, bool), then func(t *testing.T, u, got string)) {
	f.Fuzz(func(t *testing.T, u, parent string) {
		got, ok := fn(u, parent)
		want, wok := ref(u, parent)
		if got != want || ok != wok {
			t.Fatalf("%s(%q, %q) = %q, %v; the reference says %q, %v", name, u, parent, got, ok, want, wok)
		}
		if ok && then != nil {
			then(t, u, got)
		}
	})
}

// splitInsertedRun is insertedRun by segments: the reference its fuzz
// target holds it to. The run goes after the longest common start that
// leaves parent its last segment.
func splitInsertedRun(u, parent string) (string, bool) {
	_, ur, uok := strings.Cut(u, "://")
	_, pr, pok := strings.Cut(parent, "://")
	if !uok || !pok {
		return "", false
	}
	us, ps := strings.Split(ur, "/"), strings.Split(pr, "/")
	k := len(us) - len(ps)
	if k < 2 || k > maxRun || len(ps) < 2 || us[0] != ps[0] {
		return "", false
	}
	i := 0
	for i < len(ps)-1 && us[i] == ps[i] {
		i++
	}
	if strings.Join(ps[i:], "/") == "" || !slices.Equal(us[i+k:], ps[i:]) || slices.Contains(us[i:i+k], "") {
		return "", false
	}
	return strings.Join(us[i:i+k], "/"), true
}

func FuzzInsertedRun(f *testing.F) {
	f.Add("http://h/view/http/h/p/a.html", "http://h/p/a.html")
	f.Add("http://h/view/http/h/view/http/h/p/a.html", "http://h/view/http/h/p/a.html")
	f.Add("http://h/a/b/", "http://h/")
	f.Add("http://h/a//b/c", "http://h/c")
	f.Add("http://g/x/y/p/a.html", "http://h/p/a.html")
	fuzzAgainst(f, "insertedRun", insertedRun, splitInsertedRun, func(t *testing.T, u, run string) {
		// deriveRewrite asks it of URLs without their query.
		if _, applied := (Rewrite{Segment: run}).Apply(u); !applied && !strings.Contains(u, "?") {
			t.Fatalf("drop path segments %s does not apply to %q", run, u)
		}
	})
}

// FuzzDeriveRewrite: a rewrite learned from a variant and its page applies
// to the variant, and one by parameters maps it onto the page.
func FuzzDeriveRewrite(f *testing.F) {
	f.Add("http://h/x?id=3&print=1", "http://h/x?id=3")
	f.Add("http://h/x?amp=1&amp_js_v=a&z=2", "http://h/x?z=2")
	f.Add("http://h/x?a=1&a=2", "http://h/x?a=1")
	f.Add("http://h/amp/story", "http://h/story")
	f.Add("http://h/p/3-print.html", "http://h/p/3.html")
	f.Fuzz(func(t *testing.T, u, parent string) {
		// Pages of one host, as admission compares them: a URL with no
		// path ("http://x") is no normalized one.
		_, ur, uok := strings.Cut(u, "://")
		_, pr, pok := strings.Cut(parent, "://")
		if !uok || !pok || !strings.Contains(ur, "/") || !strings.Contains(pr, "/") || urlnorm.Authority(u) != urlnorm.Authority(parent) {
			return
		}
		r, ok := deriveRewrite(u, parent)
		if !ok {
			return
		}
		got, applied := r.Apply(u)
		if !applied {
			t.Fatalf("%s, learned from %q and %q, does not apply to %q", r, u, parent, u)
		}
		if r.Param != "" && got != strings.TrimSuffix(parent, "?") { // a normalized URL has no empty query
			t.Fatalf("%s maps %q onto %q, want %q", r, u, got, parent)
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
// for each path of its targets: the orders of a listing's pages are held
// after one probe a page (a rule made by relistings holds the listings it
// saw), and those of its first page wait for one of another page. Variants of one page alone (the pages of a
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
				h = restarted(t, h)
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
					if r.Relisted != r.Duplicate || r.Relisted < 2 {
						t.Errorf("active rule %+v: want its duplicates, two or more, all counted as relisted", r)
					}
				}
			}
			if got := len(active) > 0; got != tc.wantActive {
				t.Fatalf("rules %+v after %d variants fetched; want one active: %v", h.Rules(), len(probes), tc.wantActive)
			}
			paths := map[string]bool{}
			for _, u := range tc.variants {
				p, _, _ := strings.Cut(u, "?")
				paths[p] = true
			}
			if tc.wantActive && len(probes) > len(paths)+maxSeries || tc.wantActive && len(probes) == len(tc.variants) {
				t.Errorf("%d of %d variants fetched (%v), want one a listing page and at most %d more onto the first one's path", len(probes), len(tc.variants), probes, maxSeries)
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

// TestRelistingHoldsItsListings: two categories' second pages whose articles
// the host's pages had linked (a section index lists them all) relist, and
// make "drop parameter pg" active; the second page of a third category
// lists articles nothing linked, and is its probe, not held: it comes back
// distinct, and opens its category (its third page is admitted) while the
// first two stay held. A rule made by copies still holds the host's every
// variant.
func TestRelistingHoldsItsListings(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	for _, copies := range []bool{false, true} {
		h := NewHost[string]()
		article := func(cat string, page, j int) string { return fmt.Sprintf("http://a/post/%s-%d-%d.html", cat, page, j) }
		for _, cat := range []string{"x", "y", "z"} {
			list := "http://a/cat/" + cat + "/"
			if _, d := offer(h, cfg, list, "http://a/", 0, 0); !d.Admit {
				t.Fatalf("%s held: %+v", list, d)
			}
			h.Observe(cfg, Verdict{URL: list, Hash: int64(KeyOf(list)), Grounded: true})
			for j := range 8 {
				offer(h, cfg, article(cat, 1, j), list, 0, 0)
			}
		}
		// The section index links the articles of x's and y's second
		// pages; nothing links z's.
		if _, d := offer(h, cfg, "http://a/all/", "http://a/", 0, 0); !d.Admit {
			t.Fatal("the section index held")
		}
		for _, cat := range []string{"x", "y"} {
			for j := range 8 {
				offer(h, cfg, article(cat, 2, j), "http://a/all/", 0, 0)
			}
		}
		verdict := func(u, cat string, fresh bool) Verdict {
			links := []string{"http://a/cat/" + cat + "/", "http://a/cat/" + cat + "/?pg=c"}
			for j := range 8 {
				links = append(links, article(cat, 2, j))
			}
			v := Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: !copies, Duplicate: copies, Relinks: links}
			if fresh {
				v.Duplicate, v.Unlike = false, true
			}
			return v
		}
		for _, cat := range []string{"x", "y"} {
			u := "http://a/cat/" + cat + "/?pg=b"
			if _, d := offer(h, cfg, u, "http://a/cat/"+cat+"/", 0, 0); !d.Admit {
				t.Fatalf("copies=%v: %s, the rule's probe, held: %+v", copies, u, d)
			}
			h.Observe(cfg, verdict(u, cat, false))
		}
		if r, ok := ruleOf(h, "drop parameter pg"); !ok || !r.Active {
			t.Fatalf("copies=%v: rules %+v after two second pages came back %s, want drop parameter pg active", copies, h.Rules(), map[bool]string{false: "relisting", true: "copies"}[copies])
		}
		third := "http://a/cat/z/?pg=b"
		_, d := offer(h, cfg, third, "http://a/cat/z/", 0, 0)
		if copies {
			if d.Admit || d.Reason != ReasonRewrite {
				t.Fatalf("%s admitted under a rule made by copies: %+v", third, d)
			}
			continue
		}
		if !d.Admit {
			t.Fatalf("%s, the second page of a listing the rule never saw, held: %+v", third, d)
		}
		if _, d := offer(h, cfg, "http://a/cat/x/?pg=c", "http://a/cat/x/?pg=b", 0, 0); d.Admit {
			t.Fatalf("the third page of a relisted listing admitted before the probe's verdict: %+v", d)
		}
		// z's second page lists articles nothing linked: no relisting,
		// and distinct in its text.
		v := verdict(third, "z", true)
		v.Relinks = v.Relinks[:2]
		for j := range 8 {
			v.Fresh = append(v.Fresh, article("z", 2, j))
		}
		h.Observe(cfg, v)
		h.Release(cfg, func(string, Candidate, Decision) {})
		if r, ok := ruleOf(h, "drop parameter pg"); !ok || !r.Active || r.Open != 1 || r.Distinct != 0 {
			t.Fatalf("rules %+v after a second page that leads to new articles came back distinct, want drop parameter pg active with one listing open", h.Rules())
		}
		// What the rule holds and lets through goes on after a restart.
		h = restarted(t, h)
		if r, ok := ruleOf(h, "drop parameter pg"); !ok || !r.Active || r.Open != 1 || r.Relisted != 2 {
			t.Fatalf("rules %+v after a restart, want drop parameter pg active, two listings relisted and one open", h.Rules())
		}
		if _, d := offer(h, cfg, "http://a/cat/z/?pg=c", third, 0, 0); !d.Admit && d.Reason == ReasonRewrite {
			t.Errorf("the third page of the open listing held by the rule: %+v", d)
		}
		// Another listing's second page is the rule's probe now; the open
		// listing's variants do not wait for its verdict.
		if _, d := offer(h, cfg, "http://a/cat/w/?pg=b", "http://a/cat/w/", 0, 0); !d.Admit {
			t.Fatalf("the second page of a fourth listing, the rule's probe, held: %+v", d)
		}
		if _, d := offer(h, cfg, "http://a/cat/z/?pg=d", "http://a/cat/z/", 0, 0); !d.Admit && d.Reason == ReasonRewrite {
			t.Errorf("a page of the open listing found on its first page held by the rule while another listing is probed: %+v", d)
		}
		if _, d := offer(h, cfg, "http://a/cat/y/?pg=c", "http://a/cat/y/?pg=b", 0, 0); d.Admit {
			t.Errorf("the third page of a relisted listing admitted: %+v", d)
		}
	}
}

// TestRelistedRuleProbesHeldListings: the variants of other listings held
// while a rewrite was judged are decided again once relistings made it
// active, and one of them is its probe, even when a variant of a listing
// that relisted, which the rule holds, was held before them. Skipped after
// that one as a spent budget's are, they stayed held: an independent web's
// forum threads' later pages, never fetched.
func TestRelistedRuleProbesHeldListings(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	h := NewHost[string]()
	article := func(cat string, page, j int) string { return fmt.Sprintf("http://a/post/%s-%d-%d.html", cat, page, j) }
	for _, cat := range []string{"x", "y", "z"} {
		list := "http://a/cat/" + cat + "/"
		offer(h, cfg, list, "http://a/", 0, 0)
		h.Observe(cfg, Verdict{URL: list, Hash: int64(KeyOf(list)), Grounded: true})
		for j := range 8 {
			offer(h, cfg, article(cat, 1, j), list, 0, 0)
		}
	}
	// The section index links the articles of x's and y's second pages.
	offer(h, cfg, "http://a/all/", "http://a/", 0, 0)
	for _, cat := range []string{"x", "y"} {
		for j := range 8 {
			offer(h, cfg, article(cat, 2, j), "http://a/all/", 0, 0)
		}
	}
	relisting := func(cat string) Verdict {
		u := "http://a/cat/" + cat + "/?pg=b"
		links := []string{"http://a/cat/" + cat + "/"}
		for j := range 8 {
			links = append(links, article(cat, 2, j))
		}
		return Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: true, Relinks: links}
	}
	var released []string
	release := func() {
		released = nil
		h.Release(cfg, func(u string, _ Candidate, _ Decision) { released = append(released, u) })
	}
	if _, d := offer(h, cfg, "http://a/cat/x/?pg=b", "http://a/cat/x/", 0, 0); !d.Admit {
		t.Fatalf("the rule's first probe held: %+v", d)
	}
	for _, u := range []string{"http://a/cat/y/?pg=b", "http://a/cat/x/?pg=c", "http://a/cat/z/?pg=b"} {
		if _, d := offer(h, cfg, u, strings.Split(u, "?")[0], 0, 0); d.Admit {
			t.Fatalf("%s admitted while the rule's probe is out: %+v", u, d)
		}
	}
	h.Observe(cfg, relisting("x"))
	release()
	if !slices.Equal(released, []string{"http://a/cat/y/?pg=b"}) {
		t.Fatalf("after the first relisting: released %v, want y's second page, the next probe", released)
	}
	h.Observe(cfg, relisting("y"))
	release()
	if r, ok := ruleOf(h, "drop parameter pg"); !ok || !r.Active {
		t.Fatalf("rules %+v after two relistings, want drop parameter pg active", h.Rules())
	}
	if !slices.Equal(released, []string{"http://a/cat/z/?pg=b"}) {
		t.Errorf("after the rule turned active: released %v, want z's second page, its probe (x's third page stays held)", released)
	}
}

// TestRelistingLeadsNowhere: a second page that links URLs the crawl did not
// know (queue.Verdict.Fresh) leads somewhere, whatever else it links: it is
// no relisting, and its text judges its rewrite. Known links alone, all
// linked before, make it one, and so do several new variants of its target
// at once (another order linking the other orders). One new variant of its
// target says neither (the next page of a chain, or the one other order of
// a page): the verdict is left pending, counted neither way.
func TestRelistingLeadsNowhere(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	for _, tc := range []struct {
		name    string
		fresh   []string
		want    string // relisted, distinct or pending
		restart bool
	}{
		{"known links only", nil, "relisted", false},
		{"an article nobody linked", []string{"http://a/post/new.html"}, "distinct", false},
		{"its listing's next page", []string{"http://a/cat/x/?pg=c"}, "pending", false},
		{"its listing's next page and an article", []string{"http://a/cat/x/?pg=c", "http://a/post/new.html"}, "distinct", false},
		{"the other orders of its page", []string{"http://a/cat/x/?pg=c", "http://a/cat/x/?pg=d"}, "relisted", false},
		{"another listing's variant", []string{"http://a/cat/w/?pg=b"}, "relisted", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, known := twoListings(t, cfg)
			u := "http://a/cat/x/?pg=b"
			if _, d := offer(h, cfg, u, "http://a/cat/x/", 0, 0); !d.Admit {
				t.Fatalf("%s, the rule's first probe, held: %+v", u, d)
			}
			if tc.restart {
				h = restarted(t, h)
			}
			h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: true, Relinks: append([]string{"http://a/cat/x/"}, known...), Fresh: tc.fresh})
			r, ok := ruleOf(h, "drop parameter pg")
			if !ok {
				t.Fatalf("no rule: %+v", h.Rules())
			}
			got := map[bool]string{true: "relisted", false: "distinct"}[r.Relisted == 1]
			if r.Relisted == 0 && r.Distinct == 0 {
				got = "pending"
			}
			if got != tc.want || r.Relisted+r.Distinct > 1 {
				t.Errorf("rule %+v: %s, want %s", r, got, tc.want)
			}
		})
	}
}

// TestNumberedPagesNoRelistings: a listing's or a document's page by number
// (?pg=2) that links nothing new, distinct in its text, is no relisting: its
// rewrite is judged distinct, as any variant whose text differs from its
// target's. A forum thread's later pages link only what its first page
// linked. The relisting tests here name their pages by letters (?pg=b),
// as a view names its order.
func TestNumberedPagesNoRelistings(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	h, known := twoListings(t, cfg)
	u := "http://a/cat/x/?pg=2"
	if _, d := offer(h, cfg, u, "http://a/cat/x/", 0, 0); !d.Admit {
		t.Fatalf("%s, the rule's first probe, held: %+v", u, d)
	}
	h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: true, Relinks: append([]string{"http://a/cat/x/"}, known...)})
	r, ok := ruleOf(h, "drop parameter pg")
	if !ok || r.Relisted != 0 || r.Distinct != 1 {
		t.Fatalf("rule %+v after a numbered page that links nothing new, want it distinct", r)
	}
	for _, n := range []int{3, 4, 5} {
		if _, d := offer(h, cfg, fmt.Sprintf("http://a/cat/x/?pg=%d", n), "http://a/cat/x/", 0, 0); !d.Admit && d.Reason == ReasonRewrite {
			t.Errorf("page %d held by the rule: %+v", n, d)
		}
	}
}

// TestNumbered: a number names a page when the values of its parameter
// that the page links onto the same target are a pager's, one stride
// apart; the sizes a listing is shown in (?n=10, 25, 50) are not, and their
// views relist the listing as its orders do.
func TestNumbered(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		links     []string
		want      bool
	}{
		{"a page number", "http://a/cat/x/?a=1&pg=12", nil, true},
		{"a letter", "http://a/cat/x/?pg=b", nil, false},
		{"an identifier", "http://a/topic?t=204817", nil, false},
		{"a pager", "http://a/cat/x/?pg=3", []string{"http://a/cat/x/?pg=2", "http://a/cat/x/?pg=4", "http://a/cat/x/?pg=17"}, true},
		{"an offset", "http://a/cat/x/?pg=40", []string{"http://a/cat/x/?pg=0", "http://a/cat/x/?pg=20", "http://a/cat/x/?pg=60", "http://a/cat/x/?pg=980"}, true},
		{"the last page", "http://a/cat/x/?pg=9", []string{"http://a/cat/x/?pg=8"}, true},
		{"a size among sizes", "http://a/cat/x/?pg=25", []string{"http://a/cat/x/?pg=10", "http://a/cat/x/?pg=50"}, false},
		{"the largest size", "http://a/cat/x/?pg=50", []string{"http://a/cat/x/?pg=10", "http://a/cat/x/?pg=25", "http://a/cat/x/?pg=100"}, false},
		{"sizes of another listing", "http://a/cat/x/?pg=25", []string{"http://a/cat/y/?pg=10", "http://a/cat/y/?pg=50"}, true},
	} {
		v := Verdict{URL: tc.url, Fresh: tc.links}
		if got := numbered(Rewrite{Param: "pg"}, v, nil); got != tc.want {
			t.Errorf("%s: numbered(%s, links %v) = %v, want %v", tc.name, tc.url, tc.links, got, tc.want)
		}
	}

	cfg := Config{Probe: 2}.WithDefaults()
	h, known := twoListings(t, cfg)
	u := "http://a/cat/x/?pg=25"
	if _, d := offer(h, cfg, u, "http://a/cat/x/", 0, 0); !d.Admit {
		t.Fatalf("%s, the rule's first probe, held: %+v", u, d)
	}
	h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: true, Relinks: append([]string{"http://a/cat/x/"}, known...), Fresh: []string{"http://a/cat/x/?pg=10", "http://a/cat/x/?pg=50"}})
	if r, ok := ruleOf(h, "drop parameter pg"); !ok || r.Relisted != 1 || r.Distinct != 0 {
		t.Fatalf("rule %+v (found %v) after a size of a listing that links its other sizes and the listing's links, want it relisted", r, ok)
	}

	// Items of two listings by number, each linking a few others of its
	// listing and what the host linked: as many numbers as pages, so
	// pages, whatever their spacing.
	h, known = twoListings(t, cfg)
	for _, item := range []struct {
		url   string
		links []string
	}{
		{"http://a/cat/x/?pg=12", []string{"http://a/cat/x/?pg=7", "http://a/cat/x/?pg=30", "http://a/cat/x/?pg=44"}},
		{"http://a/cat/y/?pg=51", []string{"http://a/cat/y/?pg=53", "http://a/cat/y/?pg=60", "http://a/cat/y/?pg=75"}},
		{"http://a/cat/x/?pg=30", []string{"http://a/cat/x/?pg=12", "http://a/cat/x/?pg=81", "http://a/cat/x/?pg=97"}},
	} {
		if _, d := offer(h, cfg, item.url, strings.TrimSuffix(item.url[:strings.Index(item.url, "?")], "?"), 0, 0); !d.Admit {
			t.Fatalf("item %s held: %+v (rules %+v)", item.url, d, h.Rules())
		}
		h.Observe(cfg, Verdict{URL: item.url, Hash: int64(KeyOf(item.url)), Judged: true, Unlike: true, Relinks: append([]string{item.url[:strings.Index(item.url, "?")]}, known...), Fresh: item.links})
	}
	if r, ok := ruleOf(h, "drop parameter pg"); ok && r.Active {
		t.Errorf("rule %+v active after items by number", r)
	}
	// What the numbers were is kept with the rule.
	h = restarted(t, h)
	if st := h.rules[Rewrite{Param: "pg"}]; st == nil || len(st.values) <= maxViewValues {
		t.Errorf("after a restart the rule's values are %v, want more than %d", st, maxViewValues)
	}
	for _, u := range []string{"http://a/cat/x/?pg=99", "http://a/cat/y/?pg=88"} {
		if _, d := offer(h, cfg, u, u[:strings.Index(u, "?")], 0, 0); !d.Admit && d.Reason == ReasonRewrite {
			t.Errorf("item %s held by the rule: %+v", u, d)
		}
	}
}

// twoListings is a host whose listings /cat/x/ and /cat/y/ were fetched
// and whose six articles each are known (returned).
func twoListings(t *testing.T, cfg Config) (*Host[string], []string) {
	t.Helper()
	h := NewHost[string]()
	var known []string
	for _, cat := range []string{"x", "y"} {
		list := "http://a/cat/" + cat + "/"
		if _, d := offer(h, cfg, list, "http://a/", 0, 0); !d.Admit {
			t.Fatalf("%s held: %+v", list, d)
		}
		h.Observe(cfg, Verdict{URL: list, Hash: int64(KeyOf(list)), Grounded: true})
		for j := range 6 {
			a := fmt.Sprintf("http://a/post/%s-%d.html", cat, j)
			offer(h, cfg, a, list, 0, 0)
			known = append(known, a)
		}
	}
	return h, known
}

// TestOrdersOfTwoValues: a listing's order parameter takes two values besides
// none, so each order's page links one other order, new to the crawl, as a
// listing's page links its next. The first order of each listing is left
// pending; the second, which links nothing new, relists, and two listings
// that relisted make the rule active: it holds the next order of either. The
// next page of a chain (pending too) that comes back with articles nobody
// linked judges the rule distinct.
func TestOrdersOfTwoValues(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	h, known := twoListings(t, cfg)
	fetch := func(u, parent string, fresh ...string) {
		t.Helper()
		list, _, _ := strings.Cut(u, "?")
		fetchVariant(t, h, cfg, u, parent, append([]string{list}, known...), fresh)
	}
	for i, cat := range []string{"x", "y"} {
		list := "http://a/cat/" + cat + "/"
		fetch(list+"?sort=a", list, list+"?sort=b")
		if r, _ := ruleOf(h, "drop parameter sort"); r.Relisted != i || r.Distinct != 0 {
			t.Fatalf("rule %+v after %s?sort=a, want it pending", r, list)
		}
		fetch(list+"?sort=b", list+"?sort=a")
	}
	r, ok := ruleOf(h, "drop parameter sort")
	if !ok || !r.Active || r.Relisted != 2 || r.Distinct != 0 {
		t.Fatalf("rules %+v after both orders of two listings, want drop parameter sort active by two relistings", h.Rules())
	}
	if _, d := offer(h, cfg, "http://a/cat/x/?sort=c", "http://a/cat/x/", 0, 0); d.Admit {
		t.Errorf("a third order of a listing that relisted admitted: %+v", d)
	}
	// What the site's sitemap lists, a rule made by relistings alone does
	// not hold.
	listed := "http://a/cat/y/?sort=d"
	if d := h.Admit(cfg, int64(KeyOf(listed)), h.Describe(cfg, Found{URL: listed, Parent: "http://a/sitemap.xml", Listed: true})); !d.Admit && d.Reason == ReasonRewrite {
		t.Errorf("an order listed in the sitemap held by the rewrite: %+v", d)
	}

	// A chain: ?pg=b links ?pg=c alone (pending); ?pg=c lists new articles.
	h, known = twoListings(t, cfg)
	fetch("http://a/cat/x/?pg=b", "http://a/cat/x/", "http://a/cat/x/?pg=c")
	fetch("http://a/cat/x/?pg=c", "http://a/cat/x/?pg=b", "http://a/post/x-new.html", "http://a/cat/x/?pg=d")
	if r, ok := ruleOf(h, "drop parameter pg"); !ok || r.Active || r.Distinct != 1 || r.Relisted != 0 {
		t.Fatalf("rules %+v after a chain whose third page led to a new article, want drop parameter pg judged distinct once", h.Rules())
	}
}

// ruleOf returns the host's rewrite that String names.
func ruleOf(h *Host[string], name string) (RuleUsage, bool) {
	for _, r := range h.Rules() {
		if r.Rule == name {
			return r, true
		}
	}
	return RuleUsage{}, false
}

// fetchVariant offers variant u found on parent, fails if it is held, and
// observes it distinct in its text, linking relinks (known) and fresh (new).
func fetchVariant(t *testing.T, h *Host[string], cfg Config, u, parent string, relinks, fresh []string) {
	t.Helper()
	if _, d := offer(h, cfg, u, parent, 0, 0); !d.Admit {
		t.Fatalf("%s held: %+v (rules %+v)", u, d, h.Rules())
	}
	h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: true, Relinks: relinks, Fresh: fresh})
}

// TestRewriteFromKnownURL: a session parameter of one value rides on every
// link of a page once the page's URL has it, so no page links a variant
// from its target, and no two links differ in its value. A variant whose
// URL without the parameter is one the host's pages linked teaches "drop
// parameter sid": it is the rule's probe, and the next variant waits for
// its verdict; two copies make the rule hold the rest.
func TestRewriteFromKnownURL(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	for _, p := range []string{"a", "b", "c", "d"} {
		offer(h, cfg, "http://h/p/"+p+".html", "http://h/", 0, 0)
	}
	const sid = "?sid=f00d"
	probe := "http://h/p/a.html" + sid
	if _, d := offer(h, cfg, probe, "http://h/"+sid, 0, 0); !d.Admit {
		t.Fatalf("%s held: %+v", probe, d)
	}
	if _, ok := ruleOf(h, "drop parameter sid"); !ok {
		t.Fatalf("rules %+v, want drop parameter sid", h.Rules())
	}
	if _, d := offer(h, cfg, "http://h/p/b.html"+sid, probe, 0, 0); d.Admit || d.Reason != ReasonRewrite {
		t.Fatalf("the second variant while the first is out: %+v, want held by the rewrite", d)
	}
	h.Observe(cfg, Verdict{URL: probe, Hash: int64(KeyOf(probe)), Judged: true, Duplicate: true})
	var released []string
	h.Release(cfg, func(u string, _ Candidate, _ Decision) { released = append(released, u) })
	next := "http://h/p/c.html" + sid
	if _, d := offer(h, cfg, next, probe, 0, 0); d.Admit {
		h.Observe(cfg, Verdict{URL: next, Hash: int64(KeyOf(next)), Judged: true, Duplicate: true})
	} else if len(released) == 1 {
		h.Observe(cfg, Verdict{URL: released[0], Hash: int64(KeyOf(released[0])), Judged: true, Duplicate: true})
	}
	if r, _ := ruleOf(h, "drop parameter sid"); !r.Active {
		t.Fatalf("rules %+v after two copies, want drop parameter sid active", h.Rules())
	}
	if _, d := offer(h, cfg, "http://h/p/d.html"+sid, probe, 0, 0); d.Admit {
		t.Errorf("a variant admitted under the active rule: %+v", d)
	}
	// A parameter whose URL without it nobody linked teaches nothing.
	if _, d := offer(h, cfg, "http://h/q/e.html?page=2", "http://h/p/d.html", 0, 0); !d.Admit {
		t.Errorf("a URL whose page without the parameter is unknown held: %+v", d)
	}
	if _, ok := ruleOf(h, "drop parameter page"); ok {
		t.Errorf("rules %+v, want none for page", h.Rules())
	}
}

// TestNoRelistingOntoAnUnknownPage: a forum's topics (?t=N) and their second
// pages (?start=12&t=N) link nothing but what the forum's pages linked
// before, and are variants of pages nobody linked (/viewtopic.php,
// /viewtopic.php?start=12) by "drop parameter t": no relistings, and the
// rule does not hold the topics.
func TestNoRelistingOntoAnUnknownPage(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	h, known := twoListings(t, cfg)
	const topic = "http://a/viewtopic.php"
	fetch := func(u string, fresh ...string) {
		t.Helper()
		fetchVariant(t, h, cfg, u, "http://a/cat/x/", append([]string{"http://a/cat/x/"}, known...), fresh)
	}
	fetch(topic+"?t=1", topic+"?start=12&t=1")
	fetch(topic + "?start=12&t=1")
	fetch(topic+"?t=2", topic+"?start=12&t=2")
	if r, ok := ruleOf(h, "drop parameter t"); ok && (r.Active || r.Relisted > 0) {
		t.Fatalf("rules %+v after two topics, want drop parameter t neither active nor relisted", h.Rules())
	}
	if _, d := offer(h, cfg, topic+"?t=3", "http://a/cat/x/", 0, 0); !d.Admit && d.Reason == ReasonRewrite {
		t.Errorf("a third topic held by the rewrite: %+v", d)
	}
}

// TestMirrorBySegment: a copy of a site under an inserted path segment (a
// language's /el/) whose pages are translations, distinct in their text,
// each linking only more of the copy, makes its rewrite active after two
// pages of two targets, and the rule holds the rest of the copy. A page
// under the same kind of segment that links the site's navigation as it
// is, or pages of its own, is no mirror.
func TestMirrorBySegment(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	h, known := twoListings(t, cfg)
	under := func(seg string, urls []string) []string {
		var out []string
		for _, u := range urls {
			out = append(out, strings.Replace(u, "http://a/", "http://a/"+seg+"/", 1))
		}
		return out
	}
	for i, cat := range []string{"x", "y"} {
		list := "http://a/cat/" + cat + "/"
		// The second links a page of the site not found yet.
		links := under("el", append(known[6*i:6*i+6:6*i+6], fmt.Sprintf("http://a/post/new-%d.html", i)))
		if i == 0 {
			links = links[:6]
		}
		fetchVariant(t, h, cfg, "http://a/el"+strings.TrimPrefix(list, "http://a"), list, nil, links)
	}
	r, ok := ruleOf(h, "drop path segment el")
	if !ok || !r.Active || r.Relisted != 2 {
		t.Fatalf("rules %+v after two translated listings, want drop path segment el active by relisting", h.Rules())
	}
	if _, d := offer(h, cfg, "http://a/el/post/x-3.html", "http://a/el/cat/x/", 0, 0); d.Admit || d.Reason != ReasonRewrite {
		t.Errorf("a page of the copy: %+v, want it held by the rewrite", d)
	}

	// Once the host linked more URLs than its filter holds, a probe's
	// links cannot be judged, and its text reverts no rule its links are
	// making.
	h, known = twoListings(t, cfg)
	fetchVariant(t, h, cfg, "http://a/el/cat/x/", "http://a/cat/x/", nil, under("el", known[:6]))
	for i := 0; !h.onPages.full(); i++ {
		h.linkedOnPage(fmt.Sprintf("http://a/more/%d.html", i), "http://a/")
	}
	fetchVariant(t, h, cfg, "http://a/el/cat/y/", "http://a/cat/y/", nil, under("el", known[6:]))
	if r, _ := ruleOf(h, "drop path segment el"); r.Distinct != 0 || r.Relisted != 1 {
		t.Errorf("rules %+v after a probe past the filter's bound, want drop path segment el neither reverted nor judged", h.Rules())
	}

	// A section named like a segment: the site's navigation as it is, or
	// new pages of its own.
	h, known = twoListings(t, cfg)
	fetchVariant(t, h, cfg, "http://a/api/cat/x/", "http://a/cat/x/", known, nil)
	fetchVariant(t, h, cfg, "http://a/api/cat/y/", "http://a/cat/y/", known[:4], under("api", []string{"http://a/intro.html", "http://a/setup.html"}))
	if r, ok := ruleOf(h, "drop path segment api"); ok && (r.Active || r.Relisted > 0) {
		t.Errorf("rules %+v, want drop path segment api neither active nor relisted", h.Rules())
	}

	// A section's index that links the site's navigation, its own pages
	// in other languages (each carrying the section's name, and mapped
	// without it onto a page the site links) and its new pages (apache2-
	// doc's /da/ssl/index.html, whose "drop path segment ssl" held the
	// section's pages in every language for good): what carries the
	// segment leads somewhere new.
	h, known = twoListings(t, cfg)
	fetchVariant(t, h, cfg, "http://a/api/cat/x/", "http://a/cat/x/", known[:4],
		append(under("api", known[6:11]), under("api", []string{"http://a/intro.html", "http://a/setup.html", "http://a/faq.html"})...))
	if r, ok := ruleOf(h, "drop path segment api"); ok && (r.Active || r.Relisted > 0) {
		t.Errorf("rules %+v, want drop path segment api neither active nor relisted", h.Rules())
	}
}

// TestCopyExplainedByAnotherRewrite: a variant fetched before its target
// that copies a page says nothing of its rewrite when another rewrite maps
// it onto that page (a topic's second page copies its first), or maps both
// onto one page (its third copies its second); a copy of another variant
// of its own target (a session id's) or of an unrelated page does.
func TestCopyExplainedByAnotherRewrite(t *testing.T) {
	h := NewHost[string]()
	h.addRule(Rewrite{Param: "start"}, &ruleStats{})
	dropT, dropSID := Rewrite{Param: "t"}, Rewrite{Param: "sid"}
	const topic = "http://a/viewtopic.php"
	for _, tc := range []struct {
		r        Rewrite
		url, of  string
		explains bool
	}{
		{dropT, topic + "?start=12&t=1", topic + "?t=1", true},
		{dropT, topic + "?start=24&t=1", topic + "?start=12&t=1", true},
		{dropT, topic + "?start=12&t=1", "http://a/print/1", false},
		{dropSID, "http://a/p/1?sid=b", "http://a/p/1?sid=a", false},
	} {
		if got := h.copiesByOther(tc.r, Verdict{URL: tc.url, DupOf: tc.of, Duplicate: true, NoTarget: true}); got != tc.explains {
			t.Errorf("%s copying %s, judged for %s: explained by another rewrite %v, want %v", tc.url, tc.of, tc.r, got, tc.explains)
		}
	}

	// Before any rule for the parameter that differs: a copy between two
	// URLs that carry r's parameter at one value says nothing of r, one
	// between its values does.
	h = NewHost[string]()
	for _, tc := range []struct {
		url, of  string
		explains bool
	}{
		{topic + "?start=24&t=1", topic + "?start=12&t=1", true},
		{topic + "?start=24&t=1", topic + "?start=24&t=2", false},
		{topic + "?t=1", topic + "?start=12&t=1", true},
		{"http://a/other.php?start=24&t=1", topic + "?start=12&t=1", false},
	} {
		if got := h.copiesByOther(dropT, Verdict{URL: tc.url, DupOf: tc.of, Duplicate: true, NoTarget: true}); got != tc.explains {
			t.Errorf("no rules: %s copying %s, judged for %s: explained elsewhere %v, want %v", tc.url, tc.of, dropT, got, tc.explains)
		}
	}
}

// TestStalledRewriteProbe: a rewrite being judged whose probe a budget
// holds sends its next variant found outside its family past the budgets,
// as its probe: a forum's topics were held by "drop parameter t" for good
// while its probe, one topic, waited on its family's probing. A variant
// the family made up waits, and a host sends a bounded number of them.
func TestStalledRewriteProbe(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	r := Rewrite{Param: "t"}
	st := h.addRule(r, &ruleStats{})
	topic := func(i int) string { return fmt.Sprintf("http://a/viewtopic.php?t=%d", i) }
	hash := func(u string) int64 { return int64(KeyOf(u)) }
	listed := func(u string) Candidate {
		return h.Describe(cfg, Found{URL: u, Parent: "http://a/"})
	}
	made := func(u string) Candidate {
		return h.Describe(cfg, Found{URL: u, Parent: topic(99), ParentHops: 1})
	}
	if c := listed(topic(0)); !c.Grounded {
		t.Fatalf("a topic a forum lists: %+v, want it grounded", c)
	} else if c := made(topic(0)); c.Grounded {
		t.Fatalf("a topic a topic links: %+v, want it generated", c)
	}
	h.watchURL(hash(topic(0)), r, st)
	if d := h.Admit(cfg, hash(topic(1)), listed(topic(1))); d.Admit || d.Reason != ReasonRewrite {
		t.Fatalf("a topic while the probe is out: %+v, want it held by the rule", d)
	}
	held := Decision{Reason: ReasonPatternBudget, key: parkKey{parkFamily, KeyOf("viewtopic")}}
	h.Park(cfg, held, hash(topic(0)), listed(topic(0)), topic(0))

	if d := h.Admit(cfg, hash(topic(2)), made(topic(2))); d.Admit || d.Reason != ReasonRewrite {
		t.Errorf("a topic a topic made up, the probe held by a budget: %+v, want it held by the rule", d)
	}
	d := h.Admit(cfg, hash(topic(3)), listed(topic(3)))
	if !d.Admit || d.Funds != FundRewrite || d.Target != "http://a/viewtopic.php" {
		t.Fatalf("a topic a forum lists, the probe held by a budget: %+v, want it admitted as the rule's probe", d)
	}
	if h.watch[hash(topic(3))] != r || h.watch[hash(topic(0))] == r || st.watched != 1 {
		t.Errorf("watched %v (%d for the rule), want the new probe alone", h.watch, st.watched)
	}
	if d := h.Admit(cfg, hash(topic(4)), listed(topic(4))); d.Admit {
		t.Errorf("a topic while the new probe is out: %+v, want it held", d)
	}

	// Made up, however much the rule holds.
	h.Park(cfg, held, hash(topic(3)), listed(topic(3)), topic(3))
	for i := 10; i < 20; i++ {
		c := made(topic(i))
		if d := h.Admit(cfg, hash(topic(i)), c); d.Admit {
			t.Fatalf("a topic a topic made up, %d held: %+v, want it held", i-10, d)
		} else {
			h.Park(cfg, d, hash(topic(i)), c, topic(i))
		}
	}

	// Held before and read back (a restart): it waits where it was.
	back := listed(topic(30))
	back.Held = true
	if d := h.Admit(cfg, hash(topic(30)), back); d.Admit {
		t.Errorf("a topic held before and decided again: %+v, want it held", d)
	}

	// At the host's bound, the rule waits for its held probe.
	h.reprobes = maxReprobes + h.real
	if d := h.Admit(cfg, hash(topic(5)), listed(topic(5))); d.Admit || d.Reason != ReasonRewrite {
		t.Errorf("a topic past the host's reprobes: %+v, want it held by the rule", d)
	}
	// The bound is the host's crawl's, not a process's.
	b, _ := h.Snapshot()
	r2 := NewHost[string]()
	if err := r2.Restore(b); err != nil || r2.reprobes != h.reprobes {
		t.Errorf("reprobes %d saved, %d restored (%v)", h.reprobes, r2.reprobes, err)
	}
}

// TestForgottenRuleStaysDead: a rewrite that a variant proved distinct,
// forgotten to make room in a full table, is not learned again, before or
// after a restart, when that variant led somewhere new (it linked a URL
// nobody linked that the rule does not map): learned again, it held its
// variants until another probe proved it distinct once more. One proved
// distinct by its text alone, its variant linking only more variants, is
// learned again and holds its next variants while one is probed.
func TestForgottenRuleStaysDead(t *testing.T) {
	cfg := DefaultConfig()
	const sid = "?sid=f00d"
	for _, tc := range []struct {
		name    string
		fresh   string // what the probe linked that no page had
		restart bool
		dead    bool
	}{
		{"led on", "http://h/p/new.html", false, true},
		{"led on, restarted", "http://h/p/new.html", true, true},
		{"variants alone", "http://h/p/new.html" + sid, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHost[string]()
			for _, p := range []string{"a", "b", "c", "d"} {
				offer(h, cfg, "http://h/p/"+p+".html", "http://h/", 0, 0)
			}
			probe := "http://h/p/a.html" + sid
			if _, d := offer(h, cfg, probe, "http://h/"+sid, 0, 0); !d.Admit {
				t.Fatalf("%s held: %+v", probe, d)
			}
			h.Observe(cfg, Verdict{URL: probe, Hash: int64(KeyOf(probe)), Judged: true, Unlike: true, Fresh: []string{tc.fresh}})
			if r, ok := ruleOf(h, "drop parameter sid"); !ok || r.Distinct != 1 {
				t.Fatalf("rules %+v, want drop parameter sid proved distinct", h.Rules())
			}
			for i := 1; i < maxRules; i++ {
				h.addRule(Rewrite{Tail: fmt.Sprintf("t%d/", i)}, &ruleStats{distinct: 1})
			}
			if !h.dropDeadRule() {
				t.Fatal("a full table of dead rules dropped none")
			}
			if _, ok := ruleOf(h, "drop parameter sid"); ok {
				t.Fatalf("rules %+v, want drop parameter sid, the oldest dead, forgotten", h.Rules())
			}
			if tc.restart {
				b, _ := h.Snapshot()
				h = NewHost[string]()
				if err := h.Restore(b); err != nil {
					t.Fatal(err)
				}
			}
			held := 0
			for _, p := range []string{"b", "c", "d"} {
				if _, d := offer(h, cfg, "http://h/p/"+p+".html"+sid, "http://h/"+sid, 0, 0); d.Reason == ReasonRewrite {
					held++
				}
			}
			_, learned := ruleOf(h, "drop parameter sid")
			if tc.dead && (held > 0 || learned) {
				t.Errorf("%d variants held, rule learned again %v: want none held by a rule proved distinct", held, learned)
			}
			if !tc.dead && (held == 0 || !learned) {
				t.Errorf("%d variants held, rule learned again %v: want it learned again and holding the variants after its probe", held, learned)
			}
		})
	}
}

// TestRewriteOnParole: a rewrite by a parameter whose first probe came back
// a few words from its target (Close), and led nowhere new, is judged
// again: its next variants are probed one at a time, the others held
// meanwhile, and paroleCopies copies of their targets in a row make it
// active (a timestamp parameter whose first probe met a page that had
// changed). A second verdict of anything but a copy reverts it for good,
// and what it held is released; so does a first verdict far from its
// target.
func TestRewriteOnParole(t *testing.T) {
	cfg := Config{Probe: 2}.WithDefaults()
	far := NewHost[string]()
	c, _ := offer(far, cfg, "http://a/story/1", "http://a/", 0, 0)
	c, _ = offer(far, cfg, "http://a/story/1?rnd=7", "http://a/", 0, 0)
	offer(far, cfg, "http://a/story/2", "http://a/", 0, 0)
	offer(far, cfg, "http://a/story/2?rnd=8", "http://a/", 0, 0)
	far.Observe(cfg, Verdict{URL: c.URL, Hash: int64(KeyOf(c.URL)), Grounded: c.Grounded, Origin: c.Origin, Judged: true, Unlike: true})
	released := 0
	far.Release(cfg, func(string, Candidate, Decision) { released++ })
	if r := far.Rules(); released != 1 || r[0].Distinct != 1 || r[0].Parked != 0 {
		t.Errorf("a first probe far from its target: %d released, rule %+v; want the rule distinct, holding nothing", released, r[0])
	}
	for _, copies := range []bool{true, false} {
		h := NewHost[string]()
		n := 0
		// Each story and its variant linked from the front page: found
		// outside their family, no budget holds them.
		next := func() (Candidate, Decision) {
			n++
			offer(h, cfg, fmt.Sprintf("http://a/story/%d", n), "http://a/", 0, 0)
			return offer(h, cfg, fmt.Sprintf("http://a/story/%d?rnd=%d", n, 1000+n), "http://a/", 0, 0)
		}
		judge := func(c Candidate, copy bool) {
			h.Observe(cfg, Verdict{URL: c.URL, Hash: int64(KeyOf(c.URL)), Grounded: c.Grounded, Origin: c.Origin, Judged: true, Duplicate: copy, Unlike: !copy, Close: !copy})
		}
		c, d := next()
		if !d.Admit || d.Target == "" {
			t.Fatalf("first variant %+v, want it probed against its target", d)
		}
		judge(c, false) // changed since its target was fetched
		var probe Candidate
		for range 5 {
			if c, d := next(); d.Admit {
				if probe.URL != "" || d.Target == "" {
					t.Fatalf("on parole: %s admitted as %+v with probe %s out; want one probe at a time", c.URL, d, probe.URL)
				}
				probe = c
			}
		}
		if probe.URL == "" || h.Parked() != 4 {
			t.Fatalf("on parole: probe %q, %d parked; want one probe and 4 held", probe.URL, h.Parked())
		}
		if !copies {
			judge(probe, false)
			released := 0
			h.Release(cfg, func(string, Candidate, Decision) { released++ })
			if r := h.Rules(); r[0].Active || r[0].Distinct != 2 || released == 0 || r[0].Parked != 0 {
				t.Errorf("a second distinct verdict: rule %+v, %d released; want it distinct, holding nothing", r[0], released)
			}
			if c, d := next(); !d.Admit || d.Target != "" {
				t.Errorf("a variant after the parole ended: %s %+v, want it admitted as any URL", c.URL, d)
			}
			continue
		}
		for i := range paroleCopies {
			judge(probe, true)
			probe = Candidate{}
			h.Release(cfg, func(u string, c Candidate, _ Decision) {
				if probe.URL != "" {
					t.Errorf("copy %d: %s released besides the probe %s", i+1, u, probe.URL)
				}
				probe = c
			})
			if i < paroleCopies-1 && probe.URL == "" {
				t.Fatalf("copy %d: no next probe released", i+1)
			}
		}
		if r := h.Rules(); !r[0].Active {
			t.Errorf("after %d copies on parole: rule %+v, want it active", paroleCopies, r[0])
		}
		held := 0
		for range rewriteProbeEvery - 1 {
			if _, d := next(); !d.Admit {
				held++
			}
		}
		if held < rewriteProbeEvery-2 {
			t.Errorf("active again: %d of %d variants held", held, rewriteProbeEvery-1)
		}
	}
}

// TestAccumulatingVariants: a control that adds a value to a parameter
// (?show=a, whose page links ?show=a,b and ?show=a,c) makes variants that are
// their page with a few words changed (Close) and lead nowhere but to more
// of themselves: they prove "drop parameter show" as copies do. A close
// variant whose new links are other values (an item's page linking other
// items) is judged distinct, as before.
func TestAccumulatingVariants(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name   string
		fresh  func(own string) []string
		active bool
	}{
		{"values added", func(own string) []string {
			return []string{"http://h/p/x.html?show=" + own + "%7Cq1", "http://h/p/x.html?show=" + own + "%7Cq2"}
		}, true},
		{"other values", func(own string) []string {
			return []string{"http://h/p/x.html?show=q1", "http://h/p/x.html?show=q2"}
		}, false},
		{"values added and an article", func(own string) []string {
			return []string{"http://h/p/x.html?show=" + own + ",q1", "http://h/post/new.html"}
		}, false},
		{"a longer word, not a value added", func(own string) []string {
			return []string{"http://h/p/x.html?show=" + own + "q1"}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHost[string]()
			for _, p := range []string{"a", "b", "c", "x"} {
				offer(h, cfg, "http://h/p/"+p+".html", "http://h/", 0, 0)
			}
			observe := func(u string) {
				_, q, _ := strings.Cut(u, "?")
				own, _ := paramValue(q, "show")
				fresh := tc.fresh(own)
				for i, f := range fresh { // on the variant's own page
					fresh[i] = strings.Replace(f, "/p/x.html", u[len("http://h"):strings.IndexByte(u, '?')], 1)
				}
				h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Judged: true, Unlike: true, Close: true, Fresh: fresh})
			}
			for _, p := range []string{"a", "b", "c"} {
				u := "http://h/p/" + p + ".html?show=w" + p
				_, d := offer(h, cfg, u, "http://h/p/"+p+".html", 0, 0)
				if d.Admit {
					observe(u)
				}
				h.Release(cfg, func(u string, _ Candidate, _ Decision) { observe(u) })
			}
			r, ok := ruleOf(h, "drop parameter show")
			if !ok {
				t.Fatalf("rules %+v, want drop parameter show", h.Rules())
			}
			if r.Active != tc.active || !tc.active && r.Distinct == 0 {
				t.Errorf("rule %+v, want active %v", r, tc.active)
			}
		})
	}
}

func TestFoldPath(t *testing.T) {
	for u, want := range map[string]string{
		"http://h/A/bC.html":          "http://h/a/bc.html",
		"http://h/A%2Fb?Q=X":          "http://h/a%2Fb?Q=X", // escapes and the query keep their spelling
		"http://h/a/b":                "",
		"http://h/%C3%A9":             "",
		"http://h":                    "",
		"http://h/?Q=X":               "",
		"http://h/Wiki/Main_Page#Top": "http://h/wiki/main_page#top",
	} {
		got, ok := foldPath(u)
		if ok != (want != "") || ok && got != want {
			t.Errorf("foldPath(%q) = %q, %v; want %q", u, got, ok, want)
		}
	}
}

func FuzzFoldPath(f *testing.F) {
	f.Add("http://h/A/bC.html?Q=1")
	f.Add("http://h/A%2Fb%")
	f.Fuzz(func(t *testing.T, u string) {
		got, ok := foldPath(u)
		if !ok {
			if got != u {
				t.Fatalf("foldPath(%q) = %q, not folded", u, got)
			}
			return
		}
		if len(got) != len(u) || !strings.EqualFold(got, u) || got == u {
			t.Fatalf("foldPath(%q) = %q", u, got)
		}
		if again, ok := foldPath(got); ok {
			t.Fatalf("foldPath(%q) = %q, folded again to %q", u, got, again)
		}
		if _, q, _ := strings.Cut(u, "?"); !strings.HasSuffix(got, q) {
			t.Fatalf("foldPath(%q) = %q: query changed", u, got)
		}
	})
}

// TestFoldRewrite: a case-insensitive server answers every spelling of a
// path with its page. A link whose path in lower case is one the host's
// pages linked teaches "lower the case of the path"; copies (or pages a few
// words from their target) make it active, and it holds the spellings of
// linked paths, not a path with capitals the host links only so. An active
// fold's probe that comes back distinct reverts it only when such probes
// are a third of them or more.
func TestFoldRewrite(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	for _, p := range []string{"a", "b", "c", "d", "e", "f"} {
		offer(h, cfg, "http://h/p/"+p+".html", "http://h/", 0, 0)
	}
	const fold = "lower the case of the path"
	observe := func(u string, v Verdict) {
		v.URL, v.Hash, v.Judged = u, int64(KeyOf(u)), true
		h.Observe(cfg, v)
	}
	first := "http://h/P/A.html"
	if _, d := offer(h, cfg, first, "http://h/p/b.html", 0, 0); !d.Admit || d.Target != "http://h/p/a.html" {
		t.Fatalf("%s: %+v, want the rule's probe onto http://h/p/a.html", first, d)
	}
	if _, ok := ruleOf(h, fold); !ok {
		t.Fatalf("rules %+v, want %q", h.Rules(), fold)
	}
	if _, d := offer(h, cfg, "http://h/p/B.html", "http://h/p/c.html", 0, 0); d.Admit || d.Reason != ReasonRewrite {
		t.Fatalf("the second spelling while the first is out: %+v, want it held", d)
	}
	observe(first, Verdict{Unlike: true, Close: true})
	var released []string
	h.Release(cfg, func(u string, _ Candidate, _ Decision) { released = append(released, u) })
	if len(released) != 1 {
		t.Fatalf("released %v after the first verdict, want the held spelling", released)
	}
	observe(released[0], Verdict{Duplicate: true})
	if r, _ := ruleOf(h, fold); !r.Active {
		t.Fatalf("rule %+v after a close page and a copy, want it active", r)
	}
	if _, d := offer(h, cfg, "http://h/p/C.HTML", "http://h/p/d.html", 0, 0); d.Admit {
		t.Errorf("a spelling of a linked path under the active rule: %+v, want it held", d)
	}
	if _, d := offer(h, cfg, "http://h/Wiki/Main_Page", "http://h/p/d.html", 0, 0); !d.Admit {
		t.Errorf("a path with capitals the host links only so: %+v, want it admitted", d)
	}
	// A page its host links only in spellings: once one was fetched, the
	// next is held as a spelling of the same page.
	observe("http://h/r/Xy.html", Verdict{Grounded: true})
	if _, d := offer(h, cfg, "http://h/R/xY.html", "http://h/p/d.html", 0, 0); d.Admit {
		t.Errorf("a second spelling of a path linked only in spellings: %+v, want it held", d)
	}
	// Its probes: one distinct in three is a page of the moment; more
	// revert the rule.
	probe := func() string {
		t.Helper()
		for i := range 4 * rewriteProbeEvery {
			p := fmt.Sprintf("http://h/q/%d.html", i)
			offer(h, cfg, p, "http://h/", 0, 0)
			u := fmt.Sprintf("http://h/Q/%d.html", i)
			if _, d := offer(h, cfg, u, "http://h/p/e.html", 0, 0); d.Admit {
				return u
			}
		}
		t.Fatal("no probe of the active fold")
		return ""
	}
	observe(probe(), Verdict{Unlike: true})
	if r, _ := ruleOf(h, fold); !r.Active {
		t.Fatalf("rule %+v after one distinct probe of three verdicts, want it active", r)
	}
	// The distinct probes it kept are saved with the host: after a
	// restart the next one reverts it as before.
	h = restarted(t, h)
	observe(probe(), Verdict{Unlike: true})
	if r, _ := ruleOf(h, fold); r.Active {
		t.Errorf("rule %+v after two distinct probes of four verdicts, want it reverted", r)
	}
}
