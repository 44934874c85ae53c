package trapweb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Web is a generated web: read-only after Generate, so safe for concurrent
// use. Nothing is rendered before it is asked for.
type Web struct {
	cfg    Config
	v      *vocabulary
	hosts  []*host // ordinary hosts, then the big host if any
	byName map[string]*host
	big    *host
}

// pageKind is the role of a real page in its host.
type pageKind uint8

const (
	pRoot pageKind = iota
	pIndex
	pArticle
	pList
)

type rpage struct {
	path string // canonical target: path, "?query" for some listing pages
	kind pageKind
	sec  int16 // section of an index page or article
	n    int32 // listing page number
}

type host struct {
	idx      int
	name     string // without port
	auth     string // name[:port]
	seed     uint64
	pages    []rpage
	byPath   map[string]int32
	sections []section
	articles []int32 // indices of the articles in pages
	list     *listing
	sitemap  bool
	disallow string
	traps    []*trapSpace
	variant  *variantFamily
	caseless *caseless
	big      *bigSpace
}

// Generate draws a web from cfg. It is cheap: real page paths are drawn
// here, everything else (text, links) when a URL is asked for.
func Generate(cfg Config) *Web {
	cfg = cfg.withDefaults()
	w := &Web{cfg: cfg, v: newVocabulary(cfg.Seed), byName: make(map[string]*host)}
	// Which hosts get traps and variants: exact shares, chosen by seeded
	// permutations.
	top := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x746f70))
	trapHost := pickShare(top, cfg.Hosts, cfg.TrapHosts)
	variantHost := pickShare(top, cfg.Hosts, cfg.VariantHosts)
	// Drawn after the others, so that they are as they were before.
	caselessHost := pickShare(top, cfg.Hosts, cfg.CaselessHosts)
	for i := range cfg.Hosts {
		h := w.newHost(i)
		w.genReal(h)
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
	}
	// Traps and variants link to real pages of their host only, but real
	// pages of other hosts must exist first for cross links: draw them in
	// a second pass.
	for i, h := range w.hosts {
		rng := rand.New(rand.NewPCG(uint64(cfg.Seed), h.seed^0x7472617073))
		names := h.names(w.v, rng)
		if trapHost[i] {
			n := 1 + rng.IntN(3)
			for k := range n {
				h.traps = append(h.traps, w.newTrap(h, k+1, rng, names))
			}
		}
		if variantHost[i] && len(h.articles) > 0 {
			h.variant = w.newVariant(h, rng, names)
			if !slices.ContainsFunc(h.articles, func(a int32) bool { return h.variant.covers(int(a)) }) {
				h.variant = nil // every article by a query parameter: none has a variant
			}
		}
		h.disallow = "/" + names.word() + "/" + names.word() + "/"
		if caselessHost[i] && len(h.sections) > 0 {
			// A generator of its own, as the views' below.
			h.caseless = w.newCaseless(h, rand.New(rand.NewPCG(uint64(cfg.Seed), h.seed^0x63617365)))
		}
		if h.list != nil {
			// A generator of its own, so that the draws above are those
			// of webs drawn before listings had views.
			vrng := rand.New(rand.NewPCG(uint64(cfg.Seed), h.seed^0x7669657773))
			if vrng.Float64() < cfg.ListViews {
				h.list.views = w.newViews(h, vrng, h.names(w.v, vrng))
			}
		}
	}
	if cfg.Big > 0 {
		h := w.newHost(cfg.Hosts)
		w.genBig(h)
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
		w.big = h
	}
	return w
}

// pickShare marks round(share*n) of n items (at least one for a positive
// share), chosen at random.
func pickShare(rng *rand.Rand, n int, share float64) []bool {
	k := int(math.Round(share * float64(n)))
	if share > 0 && k == 0 {
		k = 1
	}
	out := make([]bool, n)
	for i, j := range rng.Perm(n) {
		out[j] = i < k
	}
	return out
}

func (w *Web) newHost(i int) *host {
	name := fmt.Sprintf("h%03d.%s", i, strings.ToLower(w.cfg.Domain))
	auth := name
	if w.cfg.Port != 0 && w.cfg.Port != 80 {
		auth = name + ":" + strconv.Itoa(w.cfg.Port)
	}
	return &host{
		idx:    i,
		name:   name,
		auth:   auth,
		seed:   mix(uint64(w.cfg.Seed)*0x9e3779b97f4a7c15 + uint64(i) + 1),
		byPath: make(map[string]int32),
	}
}

// names is the host's name draw after the real pages: a fresh generator,
// but words already used by sections and listings stay used.
func (h *host) names(v *vocabulary, rng *rand.Rand) *nameDraw {
	d := newNameDraw(rng, v)
	for _, s := range h.sections {
		for _, seg := range strings.Split(strings.Trim(s.dir, "/"), "/") {
			for _, p := range strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '_' }) {
				d.used[p] = true
			}
		}
		if s.word != "" {
			d.used[s.word] = true
		}
	}
	if h.list != nil {
		d.used[h.list.word] = true
		d.used[h.list.key] = true
	}
	return d
}

// Config returns the configuration with defaults filled in.
func (w *Web) Config() Config { return w.cfg }

// Hosts returns every host name, ordinary hosts in order, then the big host.
func (w *Web) Hosts() []string {
	out := make([]string, len(w.hosts))
	for i, h := range w.hosts {
		out[i] = h.name
	}
	return out
}

// Seeds returns "http://<host>/" (with :Port when set) for every host.
func (w *Web) Seeds() []string {
	out := make([]string, len(w.hosts))
	for i, h := range w.hosts {
		out[i] = "http://" + h.auth + "/"
	}
	return out
}

// BigHost returns the name of the big host, "" when Config.Big is 0.
func (w *Web) BigHost() string {
	if w.big == nil {
		return ""
	}
	return w.big.name
}

// RealPages returns every real page URL in its canonical spelling: "/",
// section indexes, articles and listing pages of every host, and the big
// host's root, hub, listing pages and articles.
func (w *Web) RealPages() []string {
	var out []string
	for _, h := range w.hosts {
		if h.big != nil {
			out = h.big.appendReal(out, h)
			continue
		}
		for _, p := range h.pages {
			out = append(out, "http://"+h.auth+p.path)
		}
	}
	return out
}

// Instances returns every trap instance and variant family.
func (w *Web) Instances() []Instance {
	var out []Instance
	for _, h := range w.hosts {
		for _, t := range h.traps {
			out = append(out, t.describe())
		}
		if h.variant != nil {
			out = append(out, h.variant.describe())
		}
		if h.caseless != nil {
			out = append(out, h.caseless.describe(w))
		}
		if h.list != nil && h.list.views != nil {
			out = append(out, h.list.views.describe(h))
		}
	}
	return out
}

// hit is what a URL is: the result of classify, enough to render it.
type hit struct {
	h    *host
	cls  Class
	what hitKind
	n    int // real page index, sitemap part, big article, listing number or leaf index
	t    *trapSpace
	st   tstate
	vs   viewState
	hub  loc // hLeaf: the URL of the leaf's hub; n is the leaf's index
}

type hitKind uint8

const (
	hMissing hitKind = iota
	hRobots
	hSitemap
	hReal
	hTrap
	hVariant
	hView
	hBigRoot
	hBigHub
	hBigList
	hBigArticle
	hLeaf
	hCaseless
)

// Classify returns the Class and Instance that Get would give, without
// rendering.
func (w *Web) Classify(rawURL string) (Class, string) {
	l, ok := parseLoc(rawURL)
	if !ok {
		return Missing, ""
	}
	x := w.classify(l)
	return x.cls, x.instance()
}

func (x hit) instance() string {
	switch x.cls {
	case Trap:
		if x.what == hView {
			return x.h.list.views.id
		}
		if x.what == hCaseless {
			return x.h.caseless.id
		}
		return x.t.id
	case Variant:
		return x.h.variant.id
	}
	return ""
}

func (w *Web) classify(l loc) hit {
	h := w.byName[l.host]
	if h == nil {
		return hit{cls: Missing}
	}
	if l.query == "" {
		if l.path == "/robots.txt" {
			return hit{h: h, cls: Meta, what: hRobots}
		}
		if part, ok := h.sitemapPart(l.path); ok {
			return hit{h: h, cls: Meta, what: hSitemap, n: part}
		}
	}
	if h.big != nil {
		return h.big.classify(h, l)
	}
	if i, ok := h.byPath[l.target()]; ok {
		return hit{h: h, cls: Real, what: hReal, n: int(i)}
	}
	if h.list != nil && h.list.views != nil {
		if vs, ok := h.list.views.match(h, l); ok {
			return hit{h: h, cls: Trap, what: hView, vs: vs}
		}
	}
	for _, t := range h.traps {
		if st, ok := t.match(l); ok {
			// A leaf its space's grammar takes as well is a leaf.
			if t.leaves != nil {
				if hub, hst, k, ok := t.matchLeaf(l); ok {
					return hit{h: h, cls: Trap, what: hLeaf, t: t, st: hst, hub: hub, n: k}
				}
			}
			return hit{h: h, cls: Trap, what: hTrap, t: t, st: st}
		}
	}
	// Leaves after every space's own URLs: a space with leaves takes no
	// URL from another.
	for _, t := range h.traps {
		if t.leaves != nil {
			if hub, hst, k, ok := t.matchLeaf(l); ok {
				return hit{h: h, cls: Trap, what: hLeaf, t: t, st: hst, hub: hub, n: k}
			}
		}
	}
	if h.variant != nil {
		if i, _, ok := h.variant.match(l); ok {
			return hit{h: h, cls: Variant, what: hVariant, n: i}
		}
	}
	if h.caseless != nil {
		if i, ok := h.caseless.match(l); ok {
			return hit{h: h, cls: Trap, what: hCaseless, n: i}
		}
	}
	return hit{h: h, cls: Missing}
}

// Get answers any URL deterministically: the same URL (in any spelling a
// crawler normalizes away) always gets the same Page.
func (w *Web) Get(rawURL string) Page {
	l, ok := parseLoc(rawURL)
	if !ok {
		return notFound(rawURL)
	}
	x := w.classify(l)
	var p Page
	switch x.what {
	case hRobots:
		p = Page{Status: 200, ContentType: plainType, Body: x.h.robots()}
	case hSitemap:
		p = Page{Status: 200, ContentType: xmlType, Body: w.sitemap(x.h, x.n)}
	case hReal:
		p = w.renderReal(x.h, x.n, l)
	case hTrap:
		p = w.renderTrap(x.t, x.st, l)
	case hLeaf:
		p = w.renderLeaf(x.t, x.st, x.hub, x.n, l)
	case hVariant:
		p = w.renderVariant(x.h, x.n, l)
	case hCaseless:
		p = w.renderCaseless(x.h, x.n, l)
	case hView:
		p = w.renderView(x.h, x.vs, l)
	case hBigRoot, hBigHub, hBigList, hBigArticle:
		p = w.renderBig(x, l)
	default:
		p = notFound(l.String())
	}
	p.URL = l.String()
	p.Class = x.cls
	p.Instance = x.instance()
	return p
}

func notFound(u string) Page {
	const body = "<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>\n"
	return Page{URL: u, Status: 404, ContentType: htmlType, Body: []byte(body), Title: "Not found", Text: "Not found", Class: Missing}
}

// finish renders s for the page at self, resolving its hrefs.
func finish(s *spec, self loc) Page {
	p := Page{Status: 200, ContentType: htmlType, Body: s.render(), Title: s.title, Text: s.text(), Canonical: s.canonical}
	p.Links = make([]string, 0, len(s.links))
	for _, l := range s.links {
		if t, ok := resolve(self, l.href); ok {
			p.Links = append(p.Links, t.String())
		}
	}
	return p
}

// robots is the host's robots.txt: a harmless Disallow of a path nobody
// links, and the sitemap when there is one.
func (h *host) robots() []byte {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: ")
	b.WriteString(h.disallow)
	b.WriteString("\n")
	if h.sitemap {
		b.WriteString("\nSitemap: http://" + h.auth + "/sitemap.xml\n")
	}
	return []byte(b.String())
}

// sitemapPerFile is the most entries a sitemap file holds; longer lists go
// through a sitemap index at /sitemap.xml naming /sitemap-N.xml.
const sitemapPerFile = 10_000

// sitemapPart maps a sitemap path to its part: 0 for /sitemap.xml, N for
// /sitemap-N.xml.
func (h *host) sitemapPart(path string) (int, bool) {
	if !h.sitemap {
		return 0, false
	}
	if path == "/sitemap.xml" {
		return 0, true
	}
	s, ok := strings.CutPrefix(path, "/sitemap-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".xml")
	n, err := strconv.Atoi(s)
	if !ok || err != nil || n < 1 || strconv.Itoa(n) != s || n > h.sitemapParts() {
		return 0, false
	}
	return n, true
}

func (h *host) sitemapCount() int {
	if h.big != nil {
		return h.big.count()
	}
	n := len(h.pages)
	for _, t := range h.traps {
		n += len(t.sitemap)
	}
	return n
}

func (h *host) sitemapParts() int {
	n := h.sitemapCount()
	if n <= sitemapPerFile {
		return 0
	}
	return (n + sitemapPerFile - 1) / sitemapPerFile
}

// sitemapEntry is entry i of the host's sitemap, a target.
func (h *host) sitemapEntry(i int) string {
	if h.big != nil {
		return h.big.target(i)
	}
	if i < len(h.pages) {
		return h.pages[i].path
	}
	i -= len(h.pages)
	for _, t := range h.traps {
		if i < len(t.sitemap) {
			return t.sitemap[i]
		}
		i -= len(t.sitemap)
	}
	panic("sitemap entry out of range")
}

func (w *Web) sitemap(h *host, part int) []byte {
	parts := h.sitemapParts()
	if part == 0 && parts > 0 {
		locs := make([]string, parts)
		for k := range locs {
			locs[k] = fmt.Sprintf("http://%s/sitemap-%d.xml", h.auth, k+1)
		}
		return sitemapIndex(locs)
	}
	lo, hi := 0, h.sitemapCount()
	if part > 0 {
		lo = (part - 1) * sitemapPerFile
		hi = min(hi, lo+sitemapPerFile)
	}
	locs := make([]string, 0, hi-lo)
	for i := lo; i < hi; i++ {
		locs = append(locs, "http://"+h.auth+h.sitemapEntry(i))
	}
	return sitemapURLSet(locs)
}

// SitemapURLs returns every page URL listed in the host's sitemap (through
// the index when there is one), nil when the host has none.
func (w *Web) SitemapURLs(hostName string) []string {
	h := w.byName[strings.ToLower(hostName)]
	if h == nil || !h.sitemap {
		return nil
	}
	out := make([]string, h.sitemapCount())
	for i := range out {
		out[i] = "http://" + h.auth + h.sitemapEntry(i)
	}
	return out
}
