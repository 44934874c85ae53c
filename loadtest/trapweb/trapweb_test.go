package trapweb

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Tests here draw many webs and check properties of whatever was drawn:
// none names a URL shape, a parameter name or a trap kind.

// forSeeds runs f for n seeds from base as parallel subtests and returns
// when all are done. Under the race detector, which makes rendering pages
// about 8 times slower, a quarter as many seeds.
func forSeeds(t *testing.T, n int, base int64, f func(t *testing.T, seed int64)) {
	if raceEnabled {
		n = max(1, n/4)
	}
	t.Run("seeds", func(t *testing.T) {
		for k := range int64(n) {
			seed := base + k
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				f(t, seed)
			})
		}
	})
}

func sampleURLs(w *Web, rng *rand.Rand, n int) []string {
	var out []string
	real := w.RealPages()
	for range n {
		out = append(out, real[rng.IntN(len(real))])
	}
	for _, in := range w.Instances() {
		p := w.Get(in.Entry)
		out = append(out, in.Entry)
		for _, l := range p.Links {
			if rng.IntN(3) == 0 {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	forSeeds(t, 4, 0, func(t *testing.T, seed int64) {
		cfg := Config{Seed: seed, Hosts: 12, Pages: 20, Big: 100}
		a, b := Generate(cfg), Generate(cfg)
		if !slices.Equal(a.RealPages(), b.RealPages()) {
			t.Fatalf("seed %d: RealPages differ", seed)
		}
		if fmt.Sprint(a.Instances()) != fmt.Sprint(b.Instances()) {
			t.Fatalf("seed %d: Instances differ", seed)
		}
		urls := sampleURLs(a, rand.New(rand.NewPCG(uint64(seed), 1)), 60)
		// Ask b in another order: answers must not depend on call order.
		for i := len(urls) - 1; i >= 0; i-- {
			b.Get(urls[i])
		}
		for _, u := range urls {
			pa, pb := a.Get(u), b.Get(u)
			if pa.Status != pb.Status || !bytes.Equal(pa.Body, pb.Body) || !slices.Equal(pa.Links, pb.Links) || pa.Class != pb.Class || pa.Instance != pb.Instance {
				t.Fatalf("seed %d: %s answered differently", seed, u)
			}
			c, inst := a.Classify(u)
			if c != pa.Class || inst != pa.Instance {
				t.Fatalf("%s: Classify %v %q, Get %v %q", u, c, inst, pa.Class, pa.Instance)
			}
			if again := a.Get(u); !bytes.Equal(again.Body, pa.Body) {
				t.Fatalf("%s: second Get differs", u)
			}
		}
	})
}

// respell writes u differently but equivalently for a crawler: upper-case
// host, explicit default port, query parameters reversed, a fragment.
func respell(u string) string {
	l, _ := parseLoc(u)
	s := "http://" + strings.ToUpper(l.host) + ":80" + l.path
	if l.auth != l.host {
		s = "http://" + strings.ToUpper(l.auth) + l.path
	}
	if l.query != "" {
		ps := strings.Split(l.query, "&")
		slices.Reverse(ps)
		s += "?" + strings.Join(ps, "&")
	}
	return s + "#frag"
}

func TestSpellings(t *testing.T) {
	t.Parallel()
	w := Generate(Config{Seed: 7, Hosts: 10, Pages: 15})
	for _, u := range sampleURLs(w, rand.New(rand.NewPCG(7, 7)), 30) {
		a, b := w.Get(u), w.Get(respell(u))
		if a.URL != u || b.URL != u {
			t.Fatalf("URL %q / %q, want %q", a.URL, b.URL, u)
		}
		if !bytes.Equal(a.Body, b.Body) || a.Class != b.Class {
			t.Fatalf("%s and %s differ", u, respell(u))
		}
	}
}

// TestLinksAsParsed checks Links and Text against what an HTML parser finds
// in Body, with links resolved and normalized by the crawler's urlnorm.
func TestLinksAsParsed(t *testing.T) {
	t.Parallel()
	norm := urlnorm.New(urlnorm.DefaultPolicy())
	forSeeds(t, 4, 100, func(t *testing.T, seed int64) {
		cfg := Config{Seed: seed, Hosts: 10, Pages: 20, Big: 100}
		if seed%2 == 1 {
			cfg.Port = 8123
		}
		w := Generate(cfg)
		urls := sampleURLs(w, rand.New(rand.NewPCG(uint64(seed), 2)), 80)
		for _, u := range urls {
			p := w.Get(u)
			if p.Status != 200 || p.ContentType != htmlType {
				continue
			}
			ps := parseHTML(t, p.Body)
			if len(ps.hrefs) != len(p.Links) {
				t.Fatalf("%s: %d hrefs, %d Links", u, len(ps.hrefs), len(p.Links))
			}
			for i, h := range ps.hrefs {
				got, err := norm.Resolve(p.URL, h)
				if err != nil {
					if len(p.Links[i]) > urlnorm.DefaultMaxLength {
						continue
					}
					t.Fatalf("%s: resolve %q: %v", u, h, err)
				}
				if got != p.Links[i] {
					t.Fatalf("%s: href %q resolves to %s, Links has %s", u, h, got, p.Links[i])
				}
			}
			if ps.text != p.Text {
				t.Fatalf("%s: Text differs from the parsed body text:\n%.200s\n%.200s", u, p.Text, ps.text)
			}
			if ps.title != p.Title {
				t.Fatalf("%s: Title %q, parsed %q", u, p.Title, ps.title)
			}
		}
	})
}

// TestRealReachable: every real page is reached from its host's "/" by a
// BFS over links through real pages only, or is listed in the host's
// sitemap (read from /robots.txt and the sitemap files as served).
func TestRealReachable(t *testing.T) {
	t.Parallel()
	forSeeds(t, 4, 200, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 12, Pages: 30, Big: 150})
		reached := map[string]bool{}
		for _, s := range w.Seeds() {
			queue := []string{s}
			reached[s] = true
			for len(queue) > 0 {
				p := w.Get(queue[0])
				queue = queue[1:]
				if p.Class != Real || p.Status != 200 {
					t.Fatalf("seed %d: BFS met %s: %v %d", seed, p.URL, p.Class, p.Status)
				}
				for _, l := range p.Links {
					if hostOf(l) != hostOf(s) || reached[l] {
						continue
					}
					if c, _ := w.Classify(l); c == Real {
						reached[l] = true
						queue = append(queue, l)
					}
				}
			}
			for _, u := range sitemapLocs(t, w, s) {
				if c, _ := w.Classify(u); c == Real {
					reached[u] = true
				}
			}
		}
		real := w.RealPages()
		for _, u := range real {
			if !reached[u] {
				t.Fatalf("seed %d: real page %s not reachable", seed, u)
			}
			if c, _ := w.Classify(u); c != Real {
				t.Fatalf("seed %d: %s in RealPages is %v", seed, u, c)
			}
		}
		if len(reached) != len(real) {
			t.Fatalf("seed %d: reached %d real pages, RealPages has %d", seed, len(reached), len(real))
		}
	})
}

// sitemapLocs reads the host's robots.txt and the sitemaps it names.
func sitemapLocs(t testing.TB, w *Web, seed string) []string {
	t.Helper()
	r := w.Get(strings.TrimSuffix(seed, "/") + "/robots.txt")
	if r.Status != 200 || r.Class != Meta || !strings.HasPrefix(string(r.Body), "User-agent: *\nDisallow: /") {
		t.Fatalf("%s robots.txt: %d %v %q", seed, r.Status, r.Class, r.Body)
	}
	var out []string
	for line := range strings.SplitSeq(string(r.Body), "\n") {
		if sm, ok := strings.CutPrefix(line, "Sitemap: "); ok {
			out = append(out, readSitemap(t, w, sm)...)
		}
	}
	return out
}

func readSitemap(t testing.TB, w *Web, u string) []string {
	t.Helper()
	p := w.Get(u)
	if p.Status != 200 || p.ContentType != xmlType || p.Class != Meta {
		t.Fatalf("sitemap %s: %d %q %v", u, p.Status, p.ContentType, p.Class)
	}
	var doc struct {
		XMLName xml.Name
		URLs    []string `xml:"url>loc"`
		Maps    []string `xml:"sitemap>loc"`
	}
	if err := xml.Unmarshal(p.Body, &doc); err != nil {
		t.Fatalf("sitemap %s: %v", u, err)
	}
	if len(doc.URLs) > sitemapPerFile {
		t.Fatalf("sitemap %s: %d entries", u, len(doc.URLs))
	}
	out := doc.URLs
	for _, m := range doc.Maps {
		out = append(out, readSitemap(t, w, m)...)
	}
	return out
}

func TestRobots(t *testing.T) {
	w := Generate(Config{Seed: 3, Hosts: 30, Pages: 20})
	real := w.RealPages()
	for _, s := range w.Seeds() {
		body := string(w.Get(s + "robots.txt").Body)
		line := strings.Split(body, "\n")[1]
		dis := strings.TrimPrefix(line, "Disallow: ")
		for _, u := range real {
			l, _ := parseLoc(u)
			if strings.HasPrefix(l.path, dis) {
				t.Fatalf("robots.txt of %s disallows real page %s", s, u)
			}
		}
		h := w.byName[hostOf(s)]
		if strings.Contains(body, "Sitemap: ") != h.sitemap {
			t.Fatalf("%s: robots.txt %q, sitemap %v", s, body, h.sitemap)
		}
		if c, _ := w.Classify(s + strings.TrimPrefix(dis, "/") + "x"); c != Missing {
			t.Fatalf("%s: disallowed path is %v", s, c)
		}
	}
}

func fingerprints(w *Web, urls []string) []uint64 {
	out := make([]uint64, len(urls))
	for i, u := range urls {
		out[i] = simhash.Fingerprint(w.Get(u).Text)
	}
	return out
}

func TestRealPagesDistinct(t *testing.T) {
	t.Parallel()
	w := Generate(Config{Seed: 11, Hosts: 30, Pages: 25, Big: 200})
	real := w.RealPages()
	rng := rand.New(rand.NewPCG(11, 11))
	var sample []string
	for range 250 {
		sample = append(sample, real[rng.IntN(len(real))])
	}
	slices.Sort(sample)
	sample = slices.Compact(sample)
	fps := fingerprints(w, sample)
	for i := range fps {
		for j := range i {
			if d := simhash.Distance(fps[i], fps[j]); d <= 10 {
				t.Errorf("real pages %s and %s: distance %d", sample[i], sample[j], d)
			}
		}
	}
}

// TestContentModes checks each trap instance and variant family by what its
// pages are, for the mode it says it drew.
func TestContentModes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	counts := map[string]int{}
	count := func(k string) {
		mu.Lock()
		defer mu.Unlock()
		counts[k]++
	}
	forSeeds(t, 8, 300, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 16, Pages: 15, CaselessHosts: 0.1})
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		for _, in := range w.Instances() {
			if in.Class == Variant {
				checkVariants(t, w, in)
				count("variant-" + in.Mode)
				if strings.Contains(in.Kind, "growing") {
					count("variant-growing")
				}
				continue
			}
			urls := walkInstance(w, in.Entry, 25, rng)
			pages := make([]Page, len(urls))
			for i, u := range urls {
				pages[i] = w.Get(u)
				if pages[i].Class != Trap || pages[i].Instance != in.ID || pages[i].Status != 200 {
					t.Fatalf("%s: %s is %v %q %d", in.ID, u, pages[i].Class, pages[i].Instance, pages[i].Status)
				}
				nav := 0
				for _, l := range pages[i].Links {
					if c, _ := w.Classify(l); c == Real {
						nav++
					}
				}
				if nav == 0 {
					t.Fatalf("%s: %s links no real page", in.ID, u)
				}
			}
			count(in.Mode)
			eachPair(pages, func(i, j, d int) {
				switch in.Mode {
				case "identical":
					if !bytes.Equal(pages[i].Body, pages[j].Body) {
						t.Fatalf("%s (%s): %s and %s differ", in.ID, in.Mode, urls[i], urls[j])
					}
				case "near":
					if d > simhash.MaxDistance {
						t.Fatalf("%s (%s): %s and %s at distance %d", in.ID, in.Kind, urls[i], urls[j], d)
					}
				case "distinct":
					// The same text is the same page under
					// another URL (parameters the server ignores).
					if d <= 10 && pages[i].Text != pages[j].Text {
						t.Fatalf("%s (%s): %s and %s at distance %d", in.ID, in.Kind, urls[i], urls[j], d)
					}
				}
			})
		}
	})
	for _, m := range []string{"identical", "near", "distinct", "mixed", "variant-identical", "variant-near", "variant-growing"} {
		if counts[m] == 0 {
			t.Errorf("no %s instance checked", m)
		}
	}
	t.Logf("instances checked: %v", counts)
}

// checkGrowing follows a growing family's variant v (URL l) of real page u
// a few steps: each step's page links 2-3 variants of u, each its own value
// with one id more after the family's separator, and links its article's
// other links; its text is the article's with a few words changed.
func checkGrowing(t *testing.T, w *Web, in Instance, l, u string, v, real Page) {
	t.Helper()
	sep := in.Kind[strings.LastIndex(in.Kind, "sep=")+len("sep="):]
	others := func(p Page) (rest []string, grown []string) {
		for _, x := range p.Links {
			switch c, i := w.Classify(x); {
			case c == Variant && i == in.ID:
				grown = append(grown, x)
			case c == Trap && strings.HasSuffix(i, "#c"):
				// A caseless host's spellings: drawn by the page's URL.
			default:
				rest = append(rest, x)
			}
		}
		return rest, grown
	}
	realRest, _ := others(real)
	for step := range 4 {
		rest, grown := others(v)
		if !slices.Equal(rest, realRest) {
			t.Fatalf("%s: variant %s of %s links %v besides its variants, the article %v", in.ID, l, u, rest, realRest)
		}
		if len(grown) < 2 || len(grown) > 3 {
			t.Fatalf("%s: variant %s links %d variants, want 2-3", in.ID, l, len(grown))
		}
		for _, g := range grown {
			if !strings.HasPrefix(g, l+sep) || strings.Contains(g[len(l+sep):], sep) {
				t.Fatalf("%s: variant %s links %s, not itself with one id more", in.ID, l, g)
			}
		}
		if d := simhash.Distance(simhash.Fingerprint(v.Text), simhash.Fingerprint(real.Text)); d > simhash.CloseDistance {
			t.Fatalf("%s: variant %s (step %d) of %s at distance %d", in.ID, l, step, u, d)
		}
		l = grown[0]
		if v = w.Get(l); v.Status != 200 || v.Class != Variant || v.Instance != in.ID {
			t.Fatalf("%s: %s: %d %v %q", in.ID, l, v.Status, v.Class, v.Instance)
		}
	}
}

// checkVariants compares the variants real pages link to with the pages.
func checkVariants(t *testing.T, w *Web, in Instance) {
	t.Helper()
	n := 0
	for _, u := range w.RealPages() {
		if hostOf(u) != in.Host {
			continue
		}
		real := w.Get(u)
		for _, l := range real.Links {
			if c, i := w.Classify(l); c != Variant || i != in.ID {
				continue
			}
			v := w.Get(l)
			if v.Status != 200 || v.Class != Variant {
				t.Fatalf("%s: %s: %d %v", in.ID, l, v.Status, v.Class)
			}
			// A real page links only variants of itself, which name it
			// canonical in the families drawn to.
			if want := strings.Contains(in.Links, "canonical"); want != (v.Canonical == u) {
				t.Fatalf("%s: variant %s of %s names %q canonical (family's %q)", in.ID, l, u, v.Canonical, in.Links)
			}
			if strings.Contains(in.Kind, "growing") {
				checkGrowing(t, w, in, l, u, v, real)
				n++
				continue
			}
			body := bytes.Replace(v.Body, []byte(`<link rel="canonical" href="`+u+"\">\n"), nil, 1)
			if in.Mode == "identical" && !bytes.Equal(body, real.Body) {
				t.Fatalf("%s: variant %s of %s: bodies differ", in.ID, l, u)
			}
			if d := simhash.Distance(simhash.Fingerprint(v.Text), simhash.Fingerprint(real.Text)); d > simhash.MaxDistance {
				t.Fatalf("%s: variant %s of %s at distance %d", in.ID, l, u, d)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%s: no variant linked", in.ID)
	}
}

func TestTrapsInfinite(t *testing.T) {
	t.Parallel()
	forSeeds(t, 4, 400, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 10, Pages: 10, CaselessHosts: 0.1})
		rng := rand.New(rand.NewPCG(uint64(seed), 4))
		for _, in := range w.Instances() {
			if in.Class != Trap || in.Finite {
				continue
			}
			if got := walkInstance(w, in.Entry, 500, rng); len(got) < 500 {
				t.Fatalf("seed %d %s (%s, %s): walk ran out after %d pages", seed, in.ID, in.Kind, in.Mode, len(got))
			}
		}
	})
}

// TestEntriesLinked: every trap instance is linked from a real page of its
// host, and its sitemap entries (if any) are its own URLs.
func TestEntriesLinked(t *testing.T) {
	t.Parallel()
	forSeeds(t, 4, 500, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 16, Pages: 15, CaselessHosts: 0.1})
		checkLinked(t, w)
		for _, s := range w.Seeds() {
			for _, u := range sitemapLocs(t, w, s) {
				if c, _ := w.Classify(u); c != Real && c != Trap {
					t.Fatalf("sitemap entry %s is %v", u, c)
				}
			}
		}
	})
}

// checkLinked: every instance is linked from a real page.
func checkLinked(t *testing.T, w *Web) {
	t.Helper()
	linked := map[string]bool{}
	for _, u := range w.RealPages() {
		for _, l := range w.Get(u).Links {
			if c, i := w.Classify(l); c == Trap || c == Variant {
				linked[i] = true
				linked[l] = true
			}
		}
	}
	for _, in := range w.Instances() {
		if !linked[in.ID] {
			t.Fatalf("seed %d: %s linked from no real page", w.Config().Seed, in.ID)
		}
		if in.Class == Trap && !linked[in.Entry] {
			t.Fatalf("seed %d: %s: entry %s linked from no real page", w.Config().Seed, in.ID, in.Entry)
		}
	}
}

func firstSegment(u string) string {
	l, _ := parseLoc(u)
	s := strings.TrimPrefix(l.path, "/")
	if i := strings.IndexAny(s, "/-_."); i >= 0 {
		s = s[:i]
	}
	return s
}

func TestSeedsDiffer(t *testing.T) {
	shapes := map[string]bool{}
	for seed := range int64(5) {
		w := Generate(Config{Seed: seed, Hosts: 20, Pages: 10})
		var segs []string
		for _, in := range w.Instances() {
			segs = append(segs, firstSegment(in.Entry))
		}
		slices.Sort(segs)
		key := strings.Join(segs, " ")
		if shapes[key] {
			t.Fatalf("seed %d: same trap first segments as an earlier seed: %s", seed, key)
		}
		shapes[key] = true
	}
}

// TestDrawsEverything: across 20 seeds the generator draws every content
// mode, every trap grammar kind and link structure, every alphabet and
// every variant rule.
func TestDrawsEverything(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for seed := range int64(20) {
		w := Generate(Config{Seed: seed, CaselessHosts: 0.1})
		for _, h := range w.hosts {
			if h.list != nil {
				seen["real-listing"] = true
			}
			if h.sitemap {
				seen["sitemap-host"] = true
			}
			for _, tr := range h.traps {
				seen["mode:"+modeNames[tr.mode]] = true
				seen["kind:"+trapKindNames[tr.kind]] = true
				if tr.entryOne >= 0 {
					seen["entry-one"] = true
				} else {
					seen["entry-many"] = true
				}
				if tr.entryVaries {
					seen["entry-varies"] = true
				}
				if tr.entryN > 1 {
					seen["entry-widget"] = true
				}
				if tr.sample > 0 {
					seen["sample-real"] = true
				}
				if len(tr.sitemap) > 0 {
					seen["sitemap-listed"] = true
				}
				if tr.token != nil {
					seen["token"] = true
				}
				if len(tr.ignored) > 0 {
					seen["ignored-params"] = true
				}
				if tr.leaves != nil {
					seen["leaves"] = true
				}
				if tr.fanout > 10 {
					seen["self-many"] = true
				} else if tr.fanout <= 3 {
					seen["self-few"] = true
				}
				for _, p := range tr.parts {
					if p.a != nil {
						seen["alphabet:"+fmt.Sprint(p.a.kind)] = true
						seen["path-slots"] = true
					}
				}
				for _, q := range tr.qkeys {
					seen["alphabet:"+fmt.Sprint(q.a.kind)] = true
					seen["query-slots"] = true
				}
			}
			if c := h.caseless; c != nil {
				seen[fmt.Sprintf("caseless-near:%v", c.near)] = true
			}
			if v := h.variant; v != nil {
				seen["variant:"+variantRuleNames[v.rule]] = true
				seen[fmt.Sprintf("variant-near:%v", v.near)] = true
				seen[fmt.Sprintf("variant-half:%v", v.half)] = true
				if v.rule == vQueryVarying {
					seen[fmt.Sprintf("variant-grow:%v", v.grow)] = true
				}
			}
		}
	}
	want := []string{"real-listing", "sitemap-host", "entry-one", "entry-many", "entry-varies", "entry-widget", "sample-real", "sitemap-listed",
		"token", "ignored-params", "leaves", "self-many", "self-few", "path-slots", "query-slots",
		"variant-near:true", "variant-near:false", "variant-half:true", "variant-half:false", "variant-grow:true", "variant-grow:false", "caseless-near:true", "caseless-near:false"}
	for _, m := range modeNames {
		want = append(want, "mode:"+m)
	}
	for _, k := range trapKindNames {
		want = append(want, "kind:"+k)
	}
	for k := range alphaKinds {
		want = append(want, "alphabet:"+fmt.Sprint(k))
	}
	for _, r := range variantRuleNames {
		want = append(want, "variant:"+r)
	}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("20 seeds never drew %s", k)
		}
	}
}

func TestBig(t *testing.T) {
	t.Parallel()
	const big = 12_345
	w := Generate(Config{Seed: 9, Hosts: 3, Pages: 5, Big: big})
	bh := w.BigHost()
	if bh == "" || !slices.Contains(w.Hosts(), bh) || !slices.Contains(w.Seeds(), "http://"+bh+"/") {
		t.Fatalf("big host %q not in Hosts/Seeds", bh)
	}
	real := map[string]bool{}
	for _, u := range w.RealPages() {
		if hostOf(u) == bh {
			real[u] = true
		}
	}
	// Articles: the real pages linked from listing pages, found by
	// following the listing from the root.
	root := w.Get("http://" + bh + "/")
	var listing string
	for _, l := range root.Links {
		if p := w.Get(l); strings.Contains(string(p.Body), ">Next</a>") {
			listing = l
			break
		}
	}
	if listing == "" {
		t.Fatal("no listing linked from the big host's root")
	}
	var lists []Page
	inList := map[string]bool{}
	for u := listing; u != ""; {
		p := w.Get(u)
		if p.Class != Real || inList[u] {
			t.Fatalf("listing page %s is %v (or seen before)", u, p.Class)
		}
		lists = append(lists, p)
		inList[u] = true
		u = ""
		for i, l := range p.Links {
			if linkText(p.Body, i) == "Next" {
				u = l
			}
		}
	}
	articles := map[string]bool{}
	for _, p := range lists {
		for _, l := range p.Links {
			if !inList[l] && l != root.URL {
				articles[l] = true
			}
		}
	}
	pages := len(lists)
	if len(articles) != big {
		t.Fatalf("listing reached %d articles in %d pages, want %d", len(articles), pages, big)
	}
	for a := range articles {
		if !real[a] {
			t.Fatalf("article %s not in RealPages", a)
		}
	}
	sm := map[string]bool{}
	for _, u := range sitemapLocs(t, w, "http://"+bh+"/") {
		sm[u] = true
	}
	for u := range real {
		if !sm[u] {
			t.Fatalf("%s not in the big host's sitemap", u)
		}
	}
	if len(sm) != len(real) {
		t.Fatalf("sitemap %d entries, %d real pages", len(sm), len(real))
	}
	// One URL pattern: all articles share their first path segment.
	first := map[string]bool{}
	for a := range articles {
		l, _ := parseLoc(a)
		first[strings.Split(l.path, "/")[1]] = true
	}
	if len(first) != 1 {
		t.Fatalf("articles under %d first segments", len(first))
	}
	// The hub links min(Big, 5000) distinct articles.
	hubs := 0
	for _, l := range root.Links {
		p := w.Get(l)
		n := 0
		for _, x := range p.Links {
			if articles[x] {
				n++
			}
		}
		if n == bigHubMax {
			hubs++
		}
	}
	if hubs != 1 {
		t.Fatalf("%d hub pages linking %d articles", hubs, bigHubMax)
	}
	// Distinct articles.
	var sample []string
	for a := range articles {
		if len(sample) == 40 {
			break
		}
		sample = append(sample, a)
	}
	fps := fingerprints(w, sample)
	for i := range fps {
		for j := range i {
			if d := simhash.Distance(fps[i], fps[j]); d <= 10 {
				t.Errorf("articles %s and %s at distance %d", sample[i], sample[j], d)
			}
		}
	}
}

// linkText is the text of the i-th <a> of body.
func linkText(body []byte, i int) string {
	s := string(body)
	for range i + 1 {
		k := strings.Index(s, "<a href=")
		if k < 0 {
			return ""
		}
		s = s[k+1:]
	}
	s = s[strings.IndexByte(s, '>')+1:]
	return s[:strings.Index(s, "</a>")]
}

// TestWidgets: a widget's linking pages each link entryN entry URLs of
// their own, and the pages of a space that samples the site link real
// pages of its host that are not the same on every page.
func TestWidgets(t *testing.T) {
	t.Parallel()
	var widgets, samplers int
	for seed := range int64(20) {
		w := Generate(Config{Seed: seed})
		for _, h := range w.hosts {
			for _, tr := range h.traps {
				if tr.entryN > 1 {
					widgets++
					for i := range h.pages {
						if !tr.linked(i) || i == tr.entryMust {
							continue
						}
						p := w.Get("http://" + h.name + h.pages[i].path)
						n := 0
						for _, l := range p.Links {
							if _, in := w.Classify(l); in == tr.id {
								n++
							}
						}
						if n < tr.entryN-1 { // two draws may fall on one URL
							t.Errorf("%s: %s links %d URLs of its widget of %d", tr.id, h.pages[i].path, n, tr.entryN)
						}
						break
					}
				}
				if tr.sample == 0 {
					continue
				}
				samplers++
				reals := map[string]bool{}
				first := 0
				st := tr.entry
				for k := range 4 {
					u := tr.build(st, nil)
					for _, l := range w.Get(u.String()).Links {
						if c, _ := w.Classify(l); c == Real {
							reals[l] = true
						}
					}
					if k == 0 {
						first = len(reals)
					}
					st = tr.next(st, 0, rngFor(tr.seed, u.String()))
				}
				if len(reals) == first {
					t.Errorf("%s (sample %d): four pages link the same %d real pages", tr.id, tr.sample, first)
				}
			}
		}
	}
	if widgets == 0 || samplers == 0 {
		t.Fatalf("20 seeds drew %d widgets and %d samplers", widgets, samplers)
	}
}

// TestCaseless: a caseless host answers a spelling of a real page's path in
// other cases with that page (a few words changed, in near hosts), and the
// spelling's page links the host's pages in other spellings, each leading
// back to its own page.
func TestCaseless(t *testing.T) {
	t.Parallel()
	n := 0
	forSeeds(t, 6, 600, func(t *testing.T, seed int64) {
		w := Generate(Config{Seed: seed, Hosts: 20, Pages: 15, CaselessHosts: 0.2})
		for _, in := range w.Instances() {
			if in.Kind != "caseless" {
				continue
			}
			n++
			u := in.Entry
			for step := range 5 {
				p := w.Get(u)
				if p.Status != 200 || p.Class != Trap || p.Instance != in.ID {
					t.Fatalf("%s: %s: %d %v %q", in.ID, u, p.Status, p.Class, p.Instance)
				}
				l, _ := parseLoc(u)
				real := w.Get("http://" + l.auth + strings.ToLower(l.path) + map[bool]string{true: "?" + l.query}[l.query != ""])
				if real.Class != Real || real.Title != p.Title {
					t.Fatalf("%s: %s is %q, its lower case %v %q", in.ID, u, p.Title, real.Class, real.Title)
				}
				if d := simhash.Distance(simhash.Fingerprint(p.Text), simhash.Fingerprint(real.Text)); d > simhash.CloseDistance || !strings.Contains(in.Links, "near") && p.Text != real.Text {
					t.Fatalf("%s (%s): %s at distance %d from its page", in.ID, in.Links, u, d)
				}
				var next []string
				for _, x := range p.Links {
					if c, i := w.Classify(x); c == Trap && i == in.ID {
						next = append(next, x)
					}
				}
				if len(next) == 0 {
					t.Fatalf("%s: %s (step %d) links no other spelling", in.ID, u, step)
				}
				u = next[len(next)-1]
			}
		}
	})
	if n == 0 {
		t.Error("no caseless host drawn")
	}
}
