package synthweb

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/simhash"
)

// Trap classes of Config.Traps, as in Request.Trap. A host has at most one
// instance of each.
const (
	trapPathCalendar  = "path_calendar"  // /events/2024/06/: previous and next month, next year
	trapQueryCalendar = "query_calendar" // /agenda?date=2024-06-15: previous and next day, next week
	trapPagination    = "pagination"     // /list?page=N: N+1, N+2 and N-1, no last page
	trapFacets        = "facets"         // /shop?color=red&size=m: each link changes one filter
	trapSoft404       = "soft404"        // /wiki/<anything>: 200, relative links "a/", "b/"
	trapSessionPath   = "session_path"   // /s/<id>/p/K.html or /p/K.html;sessid=<id>: a fresh id per link
	trapSessionQuery  = "session_query"  // /p/K.html?sessid=<id>: a fresh id per link
)

var trapClasses = []string{
	trapPathCalendar, trapQueryCalendar, trapPagination, trapFacets,
	trapSoft404, trapSessionPath, trapSessionQuery,
}

// entryText is the text of a link into an instance: what a site would
// write, never the class, which a crawler must not be able to read off.
var entryText = map[string]string{
	trapPathCalendar: "Calendar", trapQueryCalendar: "Agenda", trapPagination: "All items",
	trapFacets: "Catalogue", trapSoft404: "Knowledge base",
	trapSessionPath: "Continue browsing", trapSessionQuery: "Continue browsing",
}

// TrapClasses returns the names of the trap classes Config.Traps spreads
// over the hosts, as they appear in Request.Trap and Report.TrapRequests.
func TrapClasses() []string { return append([]string(nil), trapClasses...) }

const (
	// trapTextBytes is the fixed prose of a trap instance or a hub: about
	// 450 words, which a one-word label changes by well under 1% of the
	// word pairs SimHash votes with.
	trapTextBytes = 3000

	// Pages of one instance must stay within the crawler's near-duplicate
	// distance of each other. chooseText asks one bit less of a sample,
	// which may have missed a rare flip.
	maxNearBits = simhash.MaxDistance
	textBits    = maxNearBits - 1

	// textProbes and textAttempts bound the search for an instance's text;
	// see chooseText.
	textProbes   = 128
	textAttempts = 400
)

// trapSpace is one trap instance's URL space in its host's spelling.
type trapSpace interface {
	// entry is the target the site links to.
	entry() string
	// page returns what varies on target's page, or ok false when target
	// is not in the space. target is canonical (see CanonicalTarget).
	page(target string) (v trapView, ok bool)
	// sample returns a member of the space, for choosing the text.
	sample(rng *rand.Rand) string
}

// trapView is what varies between the pages of a trap instance.
type trapView struct {
	title string // added to the <title>, which is not visible text
	label string // the varying line, possibly "": a word or two, or chooseText cannot keep the pages near-duplicates
	links []link
}

// trapInstance is one endless URL space of a host. Its pages share title and
// prose; only the label line and the links differ.
type trapInstance struct {
	class string
	id    string // Request.TrapInstance: host key + "#" + class
	space trapSpace
	text  pageSpec // title, description and paragraphs; no links
	onto  int      // ordinary page that links the entry, besides "/"
}

// page renders target if it belongs to the instance.
func (t *trapInstance) page(target string) *resource {
	v, ok := t.space.page(target)
	if !ok {
		return nil
	}
	res := newResource(http.StatusOK, "trap", ctHTML, renderPage(t.spec(v)))
	res.trap = t.class
	return res
}

func (t *trapInstance) spec(v trapView) pageSpec {
	s := withLabel(t.text, v.label, append(v.links, link{href: "/", text: "Home"}))
	if v.title != "" {
		s.docTitle = t.text.title + ": " + v.title
	}
	return s
}

// withLabel puts a short varying line before text's paragraphs.
func withLabel(text pageSpec, label string, links []link) pageSpec {
	s := text
	if label != "" {
		s.paragraphs = append([]string{label}, text.paragraphs...)
	}
	s.links = links
	return s
}

// buildTraps picks the host's trap instances and, on some hosts, the hubs,
// and returns the links to them from "/" and from ordinary pages.
func (h *host) buildTraps() (home []link, perPage map[int][]link) {
	cfg := h.web.cfg
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(h.idx)<<20|0x7a9))
	perPage = map[int][]link{}
	// Host i takes 1-3 consecutive classes from position 2i of a seeded
	// order: 2 is the mean count, so every class comes about as often.
	order := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x7a90)).Perm(len(trapClasses))
	n := 1 + rng.IntN(3)
	used := map[string]bool{} // first path segments taken on this host
	for j := range n {
		t := h.newTrap(trapClasses[order[(2*h.idx+j)%len(order)]], used)
		h.traps = append(h.traps, t)
		l := link{href: t.space.entry(), text: entryText[t.class]}
		home = append(home, l)
		perPage[t.onto] = append(perPage[t.onto], l)
	}
	if hubHost(cfg.Seed, h.idx) {
		home = append(home, h.buildHubs(rng))
	}
	return home, perPage
}

// newTrap builds one instance of class, its shape drawn from per-host
// choices so that no single URL rule fits every instance of a class.
func (h *host) newTrap(class string, used map[string]bool) *trapInstance {
	cfg := h.web.cfg
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), hash64(h.idx, class)))
	pick := func(choices ...string) string { return choices[rng.IntN(len(choices))] }
	// A name already taken on this host would make two spaces overlap.
	name := func(choices ...string) string {
		off := rng.IntN(len(choices))
		for i := range choices {
			if c := choices[(off+i)%len(choices)]; !used[c] {
				used[c] = true
				return c
			}
		}
		panic("synthweb: trap names exhausted") // cannot happen: more names than classes
	}
	t := &trapInstance{class: class, id: trapInstanceID(h.key, class), onto: rng.IntN(cfg.PagesPerHost)}
	day := time.Date(cfg.Now.Year(), cfg.Now.Month(), cfg.Now.Day(), 0, 0, 0, 0, time.UTC)
	switch class {
	case trapPathCalendar:
		t.space = pathCalendar{
			prefix: "/" + name("events", "calendar", "archive", "diary", "schedule", "happenings") + "/",
			layout: pick("2006/01/", "2006-01/", "01-2006/", "2006/1/"),
			label:  pick("January", "Jan", "01"),
			start:  time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC),
		}
	case trapQueryCalendar:
		t.space = queryCalendar{
			path:   "/" + name("agenda", "planner", "bookings", "dates", "whatson", "timetable") + pick("", ".php", ".html", "/"),
			key:    pick("date", "day", "d", "when"),
			layout: pick("2006-01-02", "20060102", "02.01.2006", "2006-1-2"),
			label:  pick("Monday", "Mon"),
			start:  day,
		}
	case trapPagination:
		p := pagination{
			path:  "/" + name("list", "items", "results", "browse", "latest", "entries") + pick("", ".php", "/"),
			key:   pick("page", "p", "pg", "offset"),
			first: 1, step: 1,
		}
		if p.key == "offset" {
			p.first, p.step = 0, []int{10, 20, 25}[rng.IntN(3)]
		} else if rng.IntN(3) == 0 {
			p.first = 0 // zero-based page numbers
		}
		t.space = p
	case trapFacets:
		set := facetSets[rng.IntN(len(facetSets))]
		keys := 3 + rng.IntN(len(set)-2)
		t.space = facets{
			path:   "/" + name("shop", "products", "store", "search", "gallery", "market") + pick("", ".php", "/"),
			keys:   set[:keys],
			values: facetValues,
			rng:    hash64(h.idx, class, "count"),
		}
	case trapSoft404:
		steps := [][]string{{"a/", "b/"}, {"a/", "b/", "c/"}, {"more/", "next/"}, {"x/", "y/", "z/"}, {"intro/", "details/"}}
		t.space = soft404{
			prefix: "/" + name("wiki", "docs", "kb", "help", "pages", "content") + "/",
			start:  pick("Main_Page/", "start/", "index/", "home/"),
			steps:  steps[rng.IntN(len(steps))],
		}
	case trapSessionPath, trapSessionQuery:
		// Two session instances of a host wrap different pages, or they
		// would be duplicates of each other.
		k := rng.IntN(cfg.PagesPerHost)
		for i := 0; i < cfg.PagesPerHost && used[fmt.Sprintf("/p/%d.html", k)]; i++ {
			k = (k + 1) % cfg.PagesPerHost
		}
		page := fmt.Sprintf("/p/%d.html", k)
		used[page] = true
		ids := idFormats[rng.IntN(len(idFormats))]
		s := session{id: ids, seed: hash64(h.idx, class, "id")}
		switch {
		case class == trapSessionQuery:
			s.before = page + "?" + pick("sessid", "visitor", "token", "vid", "sess", "visit_id") + "="
		case rng.IntN(2) == 0:
			s.before, s.after = "/"+name("s", "sess", "visit", "u", "session", "t")+"/", page
		default:
			s.before = page + ";" + pick("sessid", "visit", "vsid", "token") + "="
		}
		t.space = s
		t.onto = k // the page links its own session spelling
		// Behind the id is the real page's content, as on a real site.
		g := newTextGen(h.vocab, pathRNG(cfg.Seed, h.idx, page))
		t.text = textPage(g, plainTextBytes(cfg), nil)
		return t
	default:
		panic("synthweb: unknown trap class " + class)
	}
	srng := rand.New(rand.NewPCG(uint64(cfg.Seed), hash64(h.idx, class, "probe")))
	pages := make([]pageSpec, 0, textProbes+1)
	for i := range textProbes + 1 {
		target := t.space.entry()
		if i > 0 {
			target = t.space.sample(srng)
		}
		v, ok := t.space.page(target)
		if !ok {
			panic(fmt.Sprintf("synthweb: %s sampled %q outside its space", t.id, target))
		}
		pages = append(pages, t.spec(v)) // t.text is still empty
	}
	t.text = h.chooseText("#"+class, pages)
	return t
}

// plainTextBytes is the prose of an ordinary page (see buildPlain).
func plainTextBytes(cfg Config) int {
	return max(cfg.PageBytes-400-70*cfg.Fanout, 200)
}

// chooseText draws the shared prose of a set of near-identical pages, given
// as withLabel would build them from an empty text. The crawler's SimHash
// votes bit by bit, and a label can only flip the bits whose vote the prose
// leaves close to a tie; so draws are tried until the pages differ from each
// other in at most textBits bits altogether. For an endless space pages are
// a sample, which can miss a rare flip: hence textBits, one below
// maxNearBits. After textAttempts draws it keeps the best one; the tests
// measure the result.
//
// name says which text of the host it is ("#hub", "#" and a trap's class),
// without the host's address: the host's index picks its texts (pathRNG),
// the port its listener got must not. Drawn by "127.0.1.4:43747#hub", one
// hub's index pages were 4-6 bits apart, not near copies, and the
// simulated admission held its chain at its fifth page: a CI run failed
// on the port the kernel gave it.
func (h *host) chooseText(name string, pages []pageSpec) pageSpec {
	// Pages that differ only in hrefs have the same fingerprint.
	var variants []pageSpec
	seen := map[string]bool{}
	for _, p := range pages {
		if v := visibleText(p); !seen[v] {
			seen[v] = true
			variants = append(variants, p)
		}
	}
	var best pageSpec
	bestBits := 65
	for attempt := range textAttempts {
		g := newTextGen(h.vocab, pathRNG(h.web.cfg.Seed, h.idx, name+"#"+strconv.Itoa(attempt)))
		text := textPage(g, trapTextBytes, nil)
		prose := strings.Join(text.paragraphs, " ")
		var first, diff uint64
		for i, v := range variants {
			fp := simhash.Fingerprint(text.title + " " + strings.Join(v.paragraphs, " ") + " " + prose + " " + linkTexts(v.links))
			if i == 0 {
				first = fp
			}
			if diff |= fp ^ first; bits.OnesCount64(diff) >= bestBits {
				break
			}
		}
		if n := bits.OnesCount64(diff); n < bestBits {
			best, bestBits = text, n
		}
		if bestBits <= textBits {
			break
		}
	}
	return best
}

// visibleText is the words of a rendered page in the order the crawler's
// parser reads them: the heading, the paragraphs, the link texts. The
// <title> and the description are not visible text.
func visibleText(s pageSpec) string {
	return s.title + " " + strings.Join(s.paragraphs, " ") + " " + linkTexts(s.links)
}

func linkTexts(links []link) string {
	var b strings.Builder
	for _, l := range links {
		b.WriteString(l.text)
		b.WriteByte(' ')
	}
	return b.String()
}

// trapInstanceID names the instance of trap on a host. A host has at most one
// of each trap, host 1's and host 0's included.
func trapInstanceID(hostKey, trap string) string { return hostKey + "#" + trap }

// hash64 mixes a host index and names into a generator stream id.
func hash64(idx int, names ...string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", idx)
	for _, n := range names {
		fmt.Fprintf(h, "|%s", n)
	}
	return h.Sum64()
}

// instancePage renders a page of one of the host's trap instances, or
// returns nil if target is in none.
func (h *host) instancePage(target string) *resource {
	for _, t := range h.traps {
		if res := t.page(target); res != nil {
			return res
		}
	}
	return nil
}

// pathCalendar: a month per path, e.g. /events/2024/06/.
type pathCalendar struct {
	prefix string
	layout string // time layout of the path after prefix, ending in "/"
	label  string // time layout of the label: the month only, see trapView
	start  time.Time
}

func (c pathCalendar) entry() string { return c.prefix + c.start.Format(c.layout) }

func (c pathCalendar) page(target string) (trapView, bool) {
	rest, ok := strings.CutPrefix(target, c.prefix)
	if !ok {
		return trapView{}, false
	}
	t, err := time.Parse(c.layout, rest)
	if err != nil || t.Format(c.layout) != rest {
		return trapView{}, false
	}
	return trapView{title: t.Format("January 2006"), label: t.Format(c.label), links: []link{
		{href: c.prefix + t.AddDate(0, -1, 0).Format(c.layout), text: "Previous month"},
		{href: c.prefix + t.AddDate(0, 1, 0).Format(c.layout), text: "Next month"},
		{href: c.prefix + t.AddDate(1, 0, 0).Format(c.layout), text: "Next year"},
	}}, true
}

func (c pathCalendar) sample(rng *rand.Rand) string {
	return c.prefix + c.start.AddDate(0, rng.IntN(240)-120, 0).Format(c.layout)
}

// queryCalendar: a day per query, e.g. /agenda?date=2024-06-15.
type queryCalendar struct {
	path   string
	key    string
	layout string // of the value
	label  string // time layout of the label: the weekday only, see trapView
	start  time.Time
}

func (c queryCalendar) at(t time.Time) string { return c.path + "?" + c.key + "=" + t.Format(c.layout) }

func (c queryCalendar) entry() string { return c.at(c.start) }

func (c queryCalendar) page(target string) (trapView, bool) {
	v, ok := strings.CutPrefix(target, c.path+"?"+c.key+"=")
	if !ok {
		return trapView{}, false
	}
	t, err := time.Parse(c.layout, v)
	if err != nil || t.Format(c.layout) != v {
		return trapView{}, false
	}
	return trapView{title: v, label: t.Format(c.label), links: []link{
		{href: c.at(t.AddDate(0, 0, -1)), text: "Previous day"},
		{href: c.at(t.AddDate(0, 0, 1)), text: "Next day"},
		{href: c.at(t.AddDate(0, 0, 7)), text: "Next week"},
	}}, true
}

func (c queryCalendar) sample(rng *rand.Rand) string {
	return c.at(c.start.AddDate(0, 0, rng.IntN(4000)-2000))
}

// pagination: /list?page=N with no last page.
type pagination struct {
	path, key   string
	first, step int // value of page 1, and between pages
}

func (p pagination) at(n int) string {
	return p.path + "?" + p.key + "=" + strconv.Itoa(p.first+(n-1)*p.step)
}

func (p pagination) entry() string { return p.at(1) }

func (p pagination) page(target string) (trapView, bool) {
	s, ok := strings.CutPrefix(target, p.path+"?"+p.key+"=")
	if !ok {
		return trapView{}, false
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil || strconv.FormatInt(v, 10) != s || int(v) < p.first || (int(v)-p.first)%p.step != 0 {
		return trapView{}, false
	}
	n := (int(v)-p.first)/p.step + 1
	links := []link{
		{href: p.at(n + 1), text: "Next page"},
		{href: p.at(n + 2), text: "Skip ahead"},
	}
	if n > 1 {
		links = append(links, link{href: p.at(n - 1), text: "Previous page"})
	}
	return trapView{label: "Page " + strconv.Itoa(n), links: links}, true
}

func (p pagination) sample(rng *rand.Rand) string {
	if rng.IntN(4) == 0 {
		return p.at(1 + rng.IntN(3))
	}
	return p.at(1 + rng.IntN(100000))
}

// Facet keys, in the order links spell them, and their values. A host uses
// the first 3 or 4 keys of one set.
var (
	facetSets = [][]string{
		{"color", "size", "sort", "brand"},
		{"colour", "fit", "order", "material"},
		{"f_type", "f_lang", "sort_by", "view"},
		{"c", "s", "o", "r"},
	}
	facetValues = map[string][]string{
		"color": {"red", "blue", "green", "black", "white", "grey"}, "size": {"xs", "s", "m", "l", "xl"},
		"sort": {"price", "name", "new", "rating"}, "brand": {"acme", "zenith", "nova", "orbit", "apex"},
		"colour": {"navy", "olive", "cream", "rust", "teal", "sand", "plum"}, "fit": {"slim", "regular", "loose", "relaxed"},
		"order": {"asc", "desc", "popular", "recent"}, "material": {"cotton", "wool", "linen", "denim", "silk"},
		"f_type": {"book", "ebook", "audio", "video", "map"}, "f_lang": {"en", "de", "fr", "es", "it", "nl"},
		"sort_by": {"date", "title", "author", "relevance"}, "view": {"grid", "list", "compact"},
		"c": {"1", "2", "3", "4", "5", "6", "7", "8"}, "s": {"1", "2", "3", "4", "5", "6"},
		"o": {"a", "d", "p"}, "r": {"1", "2", "3", "4", "5"},
	}
)

// facets: filters combined in the query; each page links the combinations
// that change one filter.
type facets struct {
	path   string
	keys   []string
	values map[string][]string
	rng    uint64 // seeds the product counts
}

// state holds, per key, 0 for absent or 1 + the value's index.
func (f facets) at(state []int) string {
	var b strings.Builder
	b.WriteString(f.path)
	sep := byte('?')
	for i, k := range f.keys {
		if state[i] == 0 {
			continue
		}
		b.WriteByte(sep)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(f.values[k][state[i]-1])
		sep = '&'
	}
	return b.String()
}

func (f facets) entry() string { return f.path }

func (f facets) page(target string) (trapView, bool) {
	p, q, _ := strings.Cut(target, "?")
	if p != f.path {
		return trapView{}, false
	}
	state := make([]int, len(f.keys))
	if q != "" {
		for part := range strings.SplitSeq(q, "&") {
			k, v, _ := strings.Cut(part, "=")
			i := indexOf(f.keys, k)
			if i < 0 || state[i] != 0 {
				return trapView{}, false
			}
			j := indexOf(f.values[k], v)
			if j < 0 {
				return trapView{}, false
			}
			state[i] = j + 1
		}
	}
	links := make([]link, len(f.keys))
	for i, k := range f.keys {
		next := append([]int(nil), state...)
		next[i] = (next[i] + 1) % (len(f.values[k]) + 1)
		links[i] = link{href: f.at(next), text: "Refine by " + k}
	}
	var filters []string
	for i, k := range f.keys {
		if state[i] != 0 {
			filters = append(filters, k+" "+f.values[k][state[i]-1])
		}
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d%v", f.rng, state)
	return trapView{
		title: strings.Join(filters, ", "),
		label: strconv.Itoa(1+int(h.Sum64()%480)) + " products match",
		links: links,
	}, true
}

func (f facets) sample(rng *rand.Rand) string {
	state := make([]int, len(f.keys))
	for i, k := range f.keys {
		state[i] = rng.IntN(len(f.values[k]) + 1)
	}
	return f.at(state)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// soft404: every path under the prefix answers 200 and links relatively, so
// paths grow without end.
type soft404 struct {
	prefix string
	start  string
	steps  []string // relative hrefs
}

func (s soft404) entry() string { return s.prefix + s.start }

func (s soft404) page(target string) (trapView, bool) {
	p, _, _ := strings.Cut(target, "?")
	if !strings.HasPrefix(p, s.prefix) {
		return trapView{}, false
	}
	segs := strings.Split(strings.Trim(p[len(s.prefix):], "/"), "/")
	label := segs[len(segs)-1]
	if len(label) > 40 {
		label = label[:40]
	}
	links := make([]link, len(s.steps))
	for i, st := range s.steps {
		links[i] = link{href: st, text: "See also " + strconv.Itoa(i+1)}
	}
	return trapView{title: label, label: label, links: links}, true
}

func (s soft404) sample(rng *rand.Rand) string {
	p := s.entry()
	for range rng.IntN(12) {
		p += s.steps[rng.IntN(len(s.steps))]
	}
	return p
}

// idFormat is how a host spells session ids.
type idFormat struct {
	alphabet string
	n        int
}

var idFormats = []idFormat{
	{"0123456789abcdef", 16},
	{"0123456789abcdef", 32},
	{"0123456789ABCDEF", 24},
	{"0123456789abcdefghijklmnopqrstuvwxyz", 20},
	{"0123456789", 12},
}

// session: one real page behind any id; every link carries a fresh one.
type session struct {
	before, after string // target = before + id + after
	id            idFormat
	seed          uint64
}

// fresh returns the id that link i of the page with id from carries.
func (s session) fresh(from string, i int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%d", s.seed, from, i)
	rng := rand.New(rand.NewPCG(s.seed, h.Sum64()))
	b := make([]byte, s.id.n)
	for j := range b {
		b[j] = s.id.alphabet[rng.IntN(len(s.id.alphabet))]
	}
	return string(b)
}

func (s session) entry() string { return s.before + s.fresh("", 0) + s.after }

func (s session) page(target string) (trapView, bool) {
	rest, ok := strings.CutPrefix(target, s.before)
	if !ok {
		return trapView{}, false
	}
	id, ok := strings.CutSuffix(rest, s.after)
	if !ok || len(id) != s.id.n {
		return trapView{}, false
	}
	for i := range len(id) {
		if strings.IndexByte(s.id.alphabet, id[i]) < 0 {
			return trapView{}, false
		}
	}
	return trapView{links: []link{
		{href: s.before + s.fresh(id, 1) + s.after, text: "Continue"},
		{href: s.before + s.fresh(id, 2) + s.after, text: "Reload"},
	}}, true
}

func (s session) sample(rng *rand.Rand) string {
	return s.before + s.fresh(strconv.Itoa(rng.Int()), 0) + s.after
}
