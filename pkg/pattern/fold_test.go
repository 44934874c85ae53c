package pattern

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestStemsFold: names a host makes up under one word of its first path
// position ("results-blue_fox"), which takes a site's few dozen sections
// before it folds, fold to that word once it has taken more than foldValues
// of them, whatever the word, the separator and the path below; a site's
// few named parts under one word do not, and the fold survives a restart.
func TestStemsFold(t *testing.T) {
	cfg := DefaultConfig()
	rng := rand.New(rand.NewPCG(7, 11))
	word := func(n int) string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		var b strings.Builder
		for range n {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		return b.String()
	}
	for trial := range 50 {
		seps := "-_.~"
		sep := string(seps[rng.IntN(len(seps))])
		stem := word(3+rng.IntN(6)) + sep
		prefix, below := "", []string{"index.html", word(6) + "/", word(4) + ".php"}[trial%3]
		h := NewHost[string]()
		few := 2 + rng.IntN(foldValues-2)
		for i := range few {
			h.Describe(cfg, Found{URL: fmt.Sprintf("http://a%s/%s%s/%s", prefix, stem, word(4+i%3), below), Parent: "http://a/"})
		}
		probe := fmt.Sprintf("http://a%s/%s%s/%s", prefix, stem, word(9), below)
		if sp := h.space(cfg, probe, false); strings.Contains(sp, stem+"{*}") {
			t.Fatalf("trial %d: %d names under %q folded: %s", trial, few, stem, sp)
		}
		for i := range foldValues + 1 {
			h.Describe(cfg, Found{URL: fmt.Sprintf("http://a%s/%s%s%d/%s", prefix, stem, word(5), i, below), Parent: "http://a/"})
		}
		want := prefix + "/" + stem + "{*}/" + below
		if sp := h.space(cfg, probe, false); sp != want {
			t.Fatalf("trial %d: space %s after %d names under %q, want %s", trial, sp, few+foldValues+1, stem, want)
		}
		state, _ := h.Snapshot()
		next := NewHost[string]()
		if err := next.Restore(state); err != nil {
			t.Fatal(err)
		}
		if sp := next.space(cfg, probe, false); sp != want {
			t.Fatalf("trial %d: space %s after a restart, want %s", trial, sp, want)
		}
	}
}

// TestGeneratedNamesKeepSectionsApart: a space that makes up a new first
// path segment on every page, however many, does not fold the host's first
// position: its names are one family, and the site's sections stay
// families of their own, also after a restart. First segments the site
// grounds (a flat documentation tree's files, linked from its index) still
// fold past foldSections.
func TestGeneratedNamesKeepSectionsApart(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	h.Describe(cfg, Found{URL: "http://a/", Parent: ""})
	for _, s := range []string{"news", "docs"} {
		h.Describe(cfg, Found{URL: "http://a/" + s + "/", Parent: "http://a/"})
		h.Describe(cfg, Found{URL: "http://a/" + s + "/first.html", Parent: "http://a/" + s + "/"})
	}
	// The trap's entry, on a real page, then each page links a new name.
	parent := "http://a/zq/s"
	c := h.Describe(cfg, Found{URL: parent, Parent: "http://a/news/first.html"})
	if !c.Grounded {
		t.Fatal("the trap's entry, found on a real page, is not grounded")
	}
	hops, origin := 0, Key(0)
	for i := range 4 * foldSections {
		u := "http://a/" + word(i) + "/s"
		c := h.Describe(cfg, Found{URL: u, Parent: parent, ParentHops: hops, ParentOrigin: origin})
		parent, hops, origin = u, c.Hops, c.Origin
	}
	if sp := h.space(cfg, "http://a/news/later.html", false); sp != "/news/later.html" {
		t.Errorf("a section's page after %d made-up names: space %s, want /news/later.html", 4*foldSections, sp)
	}
	trap := Family(h.space(cfg, "http://a/"+word(9999)+"/s", false))
	if a := Family(h.space(cfg, "http://a/news/later.html", false)); a == trap {
		t.Errorf("the site's section and the trap's names are one family, %s", a)
	}
	if b := Family(h.space(cfg, "http://a/"+word(7)+"/s", false)); b != trap {
		t.Errorf("two made-up names are families %s and %s, want one", trap, b)
	}
	state, _ := h.Snapshot()
	next := NewHost[string]()
	if err := next.Restore(state); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://a/news/later.html", "http://a/docs/first.html", "http://a/zq/s"} {
		if a, b := h.space(cfg, u, false), next.space(cfg, u, false); a != b {
			t.Errorf("%s: space %s, after a restart %s", u, a, b)
		}
	}
	// A state saved before the sections were takes every name for the
	// site's, as it did then.
	old := NewHost[string]()
	if err := old.Restore(append([]byte{stateVersion}, `{"real":3}`...)); err != nil {
		t.Fatal(err)
	}
	if sp := old.space(cfg, "http://a/news/story.html", false); sp != "/news/story.html" {
		t.Errorf("after restoring an older state: space %s, want /news/story.html", sp)
	}
	// A flat tree: its index links every file.
	flat := NewHost[string]()
	flat.Describe(cfg, Found{URL: "http://a/index.html", Parent: ""})
	for i := range foldSections + 1 {
		flat.Describe(cfg, Found{URL: "http://a/" + word(i) + ".html", Parent: "http://a/index.html"})
	}
	if sp := flat.space(cfg, "http://a/another.html", false); sp != "/{*}" {
		t.Errorf("a flat tree's %d files, linked from its index, did not fold: space %s", foldSections+1, sp)
	}
}

// TestFoldKeepsExtension: a folder whose names fold keeps its files' kinds
// apart (Doxygen's pages and the class graphs they link, one folder, one
// near-duplicate graph after another), and only what names a kind of file
// is kept: a version or a date after the dot is not.
func TestFoldKeepsExtension(t *testing.T) {
	cfg := DefaultConfig().WithDefaults()
	h := NewHost[string]()
	h.Describe(cfg, Found{URL: "http://a/user/index.html"})
	for i := range foldValues + 1 {
		for _, ext := range []string{".html", ".svg"} {
			h.Describe(cfg, Found{URL: "http://a/user/" + word(i) + ext, Parent: "http://a/user/index.html"})
		}
	}
	for u, want := range map[string]string{
		"http://a/user/other.html":         "/user/{*}.html",
		"http://a/user/graph.svg":          "/user/{*}.svg",
		"http://a/user/notes":              "/user/{*}",
		"http://a/user/release.2024":       "/user/{*}",
		"http://a/user/archive.tar.gz":     "/user/{*}.gz",
		"http://a/user/odd.x-y":            "/user/{*}",
		"http://a/user/long.extension":     "/user/{*}",
		"http://a/user/sub/page.html":      "/user/{*}/page.html",
		"http://a/user/index.html?query=1": "/user/{*}.html?query",
		"http://a/user/folder/":            "/user/{*}/",
	} {
		if got := h.space(cfg, u, false); got != want {
			t.Errorf("%s: space %s, want %s", u, got, want)
		}
	}
}

// TestFoldedRootIsOneFamily: once a host's root has taken more names than
// a site has sections (a catch-all answering any name), its files and
// folders are one family. Split in two, a file linking a new folder and a
// folder linking a new file were each another family's grounded page
// pointing in: every page an independent web's soft 404 made up was
// grounded, and it took 5,597 requests.
func TestFoldedRootIsOneFamily(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	for i := range foldSections + 1 {
		// Names the site links from its home page: sections, then too many.
		offer(h, cfg, fmt.Sprintf("http://a/%s/", word(i)), "", 0, 0)
	}
	file, _ := offer(h, cfg, "http://a/kiocet-nisiofla.html", "", 0, 0)
	if !file.Grounded || file.Space != "/{*}" {
		t.Fatalf("a seeded root file past the fold: %+v, want grounded in /{*}", file)
	}
	h.Observe(cfg, Verdict{URL: file.URL, Hash: int64(KeyOf(file.URL)), Grounded: true})
	folder := h.Describe(cfg, Found{URL: "http://a/hioshe/", Parent: file.URL})
	if folder.Grounded || Family(folder.Space) != Family(file.Space) {
		t.Errorf("%s found on %s: space %s (family %s), grounded %v; want generated, in the file's family %s",
			folder.URL, folder.Parent, folder.Space, Family(folder.Space), folder.Grounded, Family(file.Space))
	}
}

// TestMadeUpNamesAfterRestoreWithNoSection: a host whose first path
// segments were all made up so far (none grounded yet) keeps taking them
// for made up after a restart. A state with no section was once read as
// one saved before sections were kept, every name taken for the site's:
// the made-up family's URLs got new spaces after the restart, and the held
// ones, charged to the family they were held by, were held for good.
func TestMadeUpNamesAfterRestoreWithNoSection(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	parent, hops, origin := "http://a/start/s", 1, KeyOf("/{*}/")
	for i := range 3 {
		u := "http://a/" + word(i) + "/s"
		c := h.Describe(cfg, Found{URL: u, Parent: parent, ParentHops: hops, ParentOrigin: origin})
		h.Admit(cfg, int64(i+1), c)
		parent, hops, origin = u, c.Hops, c.Origin
	}
	u := "http://a/" + word(1) + "/s"
	before := h.space(cfg, u, false)
	if !strings.HasPrefix(before, "/{*}/") {
		t.Fatalf("a name made up down a generated chain: space %s, want it under /{*}/", before)
	}
	next := restarted(t, h)
	if after := next.space(cfg, u, false); after != before {
		t.Errorf("after a restart the made-up name's space is %s, was %s", after, before)
	}
	c := next.Describe(cfg, Found{URL: "http://a/" + word(7) + "/s", Parent: u, ParentHops: 1, ParentOrigin: KeyOf("/{*}/")})
	if c.Space != before {
		t.Errorf("a new name made up after a restart: space %s, want %s", c.Space, before)
	}
}

// TestHeldUnderMadeUpRootReleasedWhenNamed: a URL whose first path segment
// was first met down a generated chain is held with the names the host's
// pages made up (/{*}/), whose budget is spent; once the site links that
// segment from a page of its own (grounding the name), the URL is its
// section's and is decided by its section's budget. Held with the made-up
// names, an independent web's dated archive kept 17 of its 43 pages held
// after its name was grounded.
func TestHeldUnderMadeUpRootReleasedWhenNamed(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	offer(h, cfg, "http://a/", "", 0, 0)
	// A catch-all's chain of made-up names spends their family's budget.
	parent, hops, origin := "http://a/", 0, Key(0)
	for i := range 40 {
		u := "http://a/" + word(i) + "-" + word(i+1) + ".html"
		c, d := offer(h, cfg, u, parent, hops, origin)
		if d.Admit {
			parent, hops, origin = u, c.Hops, c.Origin
		}
	}
	archive := "http://a/archive/2025/09/03/"
	c, d := offer(h, cfg, archive, parent, hops, origin)
	if d.Admit || !strings.HasPrefix(c.Space, "/{*}/") {
		t.Fatalf("%s found down the chain: space %s, admitted %v; want held under /{*}/", archive, c.Space, d.Admit)
	}
	var released []string
	h.Release(cfg, func(u string, _ Candidate, _ Decision) { released = append(released, u) })
	// The site's home page links its archive.
	if _, d := offer(h, cfg, "http://a/archive/", "http://a/", 0, 0); !d.Admit {
		t.Fatal("the archive's index, linked from the home page, was held")
	}
	h.Release(cfg, func(u string, _ Candidate, _ Decision) { released = append(released, u) })
	if !slices.Contains(released, archive) {
		t.Errorf("%s still held once its section was grounded (released %v)", archive, released)
	}
}

// TestSpellingsKeepNames: a position's names are counted in lower case, so
// that a server answering any spelling of its paths, whose pages spell
// their links afresh, does not fold a site's few names into {*}; each
// spelling keeps its own space.
func TestSpellingsKeepNames(t *testing.T) {
	cfg := DefaultConfig()
	rng := rand.New(rand.NewPCG(3, 5))
	spell := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if c >= 'a' && c <= 'z' && rng.IntN(2) == 0 {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	}
	h := NewHost[string]()
	names := []string{"intro", "install", "usage"}
	for _, n := range names {
		h.Describe(cfg, Found{URL: "http://a/docs/" + n + ".html", Parent: "http://a/"})
	}
	for i := range 4 * foldValues {
		n := names[i%len(names)]
		h.Describe(cfg, Found{URL: "http://a/docs/" + spell(n) + ".html", Parent: "http://a/docs/" + n + ".html"})
	}
	if sp := h.space(cfg, "http://a/docs/intro.html", false); sp != "/docs/intro.html" {
		t.Errorf("after %d spellings of %d names, /docs/intro.html is in space %s", 4*foldValues, len(names), sp)
	}
	if sp := h.space(cfg, "http://a/docs/inTRo.html", false); sp != "/docs/inTRo.html" {
		t.Errorf("a spelling is in space %s, want its own", sp)
	}
	if got := lowerASCII("A%C3Bz-Ü"); got != "a%c3bz-Ü" {
		t.Errorf("lowerASCII = %q", got)
	}
}

// TestCaseCopies: a copy of a page spelt in other cases counts in no space
// that it shares with the page, whichever of the two spellings was fetched
// first; in a space of spellings of its own it counts, as other copies do.
func TestCaseCopies(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[string]()
	dup := func(u string) int {
		if sp := h.existing(h.space(cfg, u, false)); sp != nil {
			return sp.dup
		}
		return 0
	}
	// A folded position: the site's pages and their spellings share it.
	for i := range foldValues + 1 {
		h.Describe(cfg, Found{URL: "http://a/docs/page" + string(rune('a'+i)) + ".html", Parent: "http://a/"})
	}
	const shared = "http://a/docs/intro.html"
	if sp := h.space(cfg, shared, false); sp != "/docs/{*}.html" {
		t.Fatalf("space %s, want /docs/{*}.html", sp)
	}
	h.Observe(cfg, Verdict{URL: "http://a/", Grounded: true, Relinks: []string{shared}})
	// The lower-case spelling linked, a spelling of it fetched after it.
	h.Observe(cfg, Verdict{URL: "http://a/docs/INTRO.html", Grounded: true, Duplicate: true})
	if n := dup(shared); n != 0 {
		t.Errorf("a spelling of a linked page: %d copies counted in the space it shares with it", n)
	}
	// A spelling fetched first (distinct), its lower case after it.
	h.Observe(cfg, Verdict{URL: "http://a/docs/Guide.html", Grounded: true})
	h.Observe(cfg, Verdict{URL: "http://a/docs/guide.html", Grounded: true, Duplicate: true})
	if n := dup(shared); n != 0 {
		t.Errorf("a page fetched after its spelling: %d copies counted in its space", n)
	}
	// Copies that no spelling explains count; so does a spelling in a
	// space of its own.
	h.Observe(cfg, Verdict{URL: "http://a/docs/other.html", Grounded: true, Duplicate: true})
	h.Observe(cfg, Verdict{URL: "http://a/DOCS/intro.html", Grounded: true, Duplicate: true})
	if a, b := dup(shared), dup("http://a/DOCS/intro.html"); a != 1 || b != 1 {
		t.Errorf("another copy and a spelling in its own space: %d and %d counted, want 1 and 1", a, b)
	}
}
