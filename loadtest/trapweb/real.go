package trapweb

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// section is a directory of articles with an index page.
type section struct {
	dir    string // "/a/b", no trailing slash
	index  int32  // page index of the section index
	word   string // the word of "word-123" names, if drawn
	style  string // naming drawn, for logs
	first  int32  // first article in pages
	count  int32
	indexP string
}

// listing is a host's real paginated index of its articles: finite, the
// last page links no next page.
type listing struct {
	word, key string
	style     int
	per       int
	n         int   // pages
	first     int32 // page index of listing page 1
	order     []int32
	views     *listViews // other orders and layouts of it, or nil
}

func (l *listing) path(n int) string {
	switch l.style {
	case 0:
		if n == 1 {
			return "/" + l.word
		}
		return "/" + l.word + "?" + l.key + "=" + strconv.Itoa(n)
	case 1:
		if n == 1 {
			return "/" + l.word + "/"
		}
		return "/" + l.word + "/" + l.key + "/" + strconv.Itoa(n)
	case 2:
		if n == 1 {
			return "/" + l.word + "/"
		}
		return "/" + l.word + "/" + strconv.Itoa(n) + "/"
	default:
		if n == 1 {
			return "/" + l.word + ".html"
		}
		return "/" + l.word + "-" + l.key + "-" + strconv.Itoa(n) + ".html"
	}
}

var articleExts = []string{".html", ".htm", ".php", "", "/", ".aspx", ".shtml"}

// genReal draws the real pages of an ordinary host: "/", 1-4 sections with
// an index page and articles named by a drawn scheme, and maybe a listing.
func (w *Web) genReal(h *host) {
	rng := rand.New(rand.NewPCG(uint64(w.cfg.Seed), h.seed))
	names := newNameDraw(rng, w.v)
	h.sitemap = rng.Float64() < 0.4
	hasList := rng.Float64() < 0.3
	h.pages = append(h.pages, rpage{path: "/", kind: pRoot})
	h.byPath["/"] = 0
	rest := w.cfg.Pages - 1
	nsec := min(1+rng.IntN(4), rest/2)
	if nsec == 0 && rest > 0 {
		nsec = 1
	}
	nart := rest - nsec
	counts := make([]int, nsec)
	for i := range nart {
		if i < nsec {
			counts[i]++
		} else {
			counts[rng.IntN(nsec)]++
		}
	}
	for s := range nsec {
		depth := 1 + rng.IntN(3)
		segs := make([]string, depth)
		for i := range segs {
			segs[i] = names.name()
		}
		sec := section{dir: "/" + strings.Join(segs, "/")}
		sec.indexP = sec.dir
		if rng.IntN(2) == 0 {
			sec.indexP += "/"
		}
		sec.index = int32(len(h.pages))
		h.pages = append(h.pages, rpage{path: sec.indexP, kind: pIndex, sec: int16(s)})
		h.byPath[sec.indexP] = sec.index
		h.sections = append(h.sections, sec)
	}
	for s := range nsec {
		sec := &h.sections[s]
		sec.first = int32(len(h.pages))
		sec.count = int32(counts[s])
		style := rng.IntN(5)
		ext := articleExts[rng.IntN(len(articleExts))]
		sep := []string{"-", "_"}[rng.IntN(2)]
		id := 1 + rng.IntN(100_000)
		stride := 1 + rng.IntN(20)
		date := time.Date(2005+rng.IntN(18), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
		dateLayout := []string{"2006/01/", "2006/01/02/", "2006-01-02/", "2006/"}[rng.IntN(4)]
		if style == 2 {
			sec.word = names.word()
		}
		sec.style = []string{"slug", "number", "word-number", "date/slug", "number-slug"}[style] + sep + ext
		// A third of the sections by number address their articles by a
		// query parameter on the index's path (/blog/?p=123), their
		// numbers apart by steps of their own: drawn apart from the
		// host's stream, so that the rest of the web is as it was.
		qrng := rngFor(h.seed^uint64(s+1)*0x9e3779b97f4a7c15, "query")
		qkey := ""
		if style == 1 && qrng.IntN(3) == 0 {
			qkey = w.v.names[qrng.IntN(len(w.v.names))]
			sec.style = "number?" + qkey
		}
		slug := func() string {
			ws := make([]string, 2+rng.IntN(4))
			for i := range ws {
				ws[i] = w.v.text[rng.IntN(len(w.v.text))]
			}
			return strings.Join(ws, sep)
		}
		for range counts[s] {
			var p string
			for {
				var name string
				switch style {
				case 0:
					name = slug()
				case 1:
					name = strconv.Itoa(id)
				case 2:
					name = sec.word + sep + strconv.Itoa(id)
				case 3:
					date = date.AddDate(0, 0, rng.IntN(6))
					name = date.Format(dateLayout) + slug()
				case 4:
					name = strconv.Itoa(id) + sep + slug()
				}
				id += stride
				p = sec.dir + "/" + name + ext
				if qkey != "" {
					id += qrng.IntN(2*stride + 5)
					p = sec.indexP + "?" + qkey + "=" + name
				}
				if _, dup := h.byPath[p]; !dup {
					break
				}
			}
			i := int32(len(h.pages))
			h.pages = append(h.pages, rpage{path: p, kind: pArticle, sec: int16(s)})
			h.byPath[p] = i
			h.articles = append(h.articles, i)
		}
	}
	if hasList && len(h.articles) >= 10 {
		l := &listing{word: names.word(), key: names.word(), style: rng.IntN(4), per: 8 + rng.IntN(5)}
		l.order = make([]int32, len(h.articles))
		for i, k := range rng.Perm(len(h.articles)) {
			l.order[i] = h.articles[k]
		}
		l.n = (len(l.order) + l.per - 1) / l.per
		l.first = int32(len(h.pages))
		for n := 1; n <= l.n; n++ {
			p := l.path(n)
			h.byPath[p] = int32(len(h.pages))
			h.pages = append(h.pages, rpage{path: p, kind: pList, n: int32(n)})
		}
		h.list = l
	}
}

const titleSalt = 0x7469746c65

// titleOf is the title of real page i of h.
func (w *Web) titleOf(h *host, i int) string {
	p := h.pages[i]
	if p.kind == pList {
		return capitalize(h.list.word) + " page " + strconv.Itoa(int(p.n))
	}
	g := newTextGen(w.v, rngFor(h.seed^titleSalt, p.path))
	return g.title(3 + g.rng.IntN(5))
}

// ltarget is a link before it is written: where it goes and its text.
type ltarget struct {
	to   loc
	text string
}

func (h *host) at(self loc, target string) loc {
	path, q, _ := strings.Cut(target, "?")
	return loc{host: h.name, auth: self.auth, path: path, query: q}
}

// otherAt is target on host o as linked from self: same authority as self
// when o is self's host, else o's canonical one.
func otherAt(o *host, self loc, target string) loc {
	if o.name == self.host {
		return o.at(self, target)
	}
	path, q, _ := strings.Cut(target, "?")
	return loc{host: o.name, auth: o.auth, path: path, query: q}
}

// writeLinks turns targets into links with hrefs in styles drawn from rng.
func writeLinks(self loc, ts []ltarget, rng *rand.Rand) []link {
	out := make([]link, len(ts))
	for i, t := range ts {
		out[i] = link{href: hrefFor(self, t.to, rng.IntN(hrefStyles), rng), text: t.text}
	}
	return out
}

// realSpec builds real page i of h as seen from self (whose authority the
// same-host links use).
func (w *Web) realSpec(h *host, i int, self loc) *spec {
	return w.pageSpec(h, i, self, nil)
}

// listSpec builds listing page i of h as shown by a layout view (views.go):
// the page's own items and text, its pagination and bar those of the view.
func (w *Web) listSpec(h *host, i int, self loc, view viewState) *spec {
	return w.pageSpec(h, i, self, &view)
}

func (w *Web) pageSpec(h *host, i int, self loc, view *viewState) *spec {
	p := h.pages[i]
	rng := rngFor(h.seed, p.path)
	g := newTextGen(w.v, rng)
	s := &spec{title: w.titleOf(h, i)}
	s.h1 = s.title
	s.paras = g.paragraphs(300 + rng.IntN(1201))
	real := func(j int32) ltarget {
		return ltarget{h.at(self, h.pages[j].path), w.titleOf(h, int(j))}
	}
	var nav, body []ltarget
	if i != 0 {
		nav = append(nav, real(0))
	}
	switch p.kind {
	case pRoot:
		for _, sec := range h.sections {
			body = append(body, real(sec.index))
		}
		if h.list != nil {
			body = append(body, real(h.list.first))
		}
	case pIndex:
		sec := h.sections[p.sec]
		for k := range min(sec.count, 10) {
			body = append(body, real(sec.first+k))
		}
	case pArticle:
		sec := h.sections[p.sec]
		nav = append(nav, real(sec.index))
		if int32(i)+1 < sec.first+sec.count {
			body = append(body, real(int32(i)+1))
		}
	case pList:
		l := h.list
		n := int(p.n)
		for _, a := range l.order[(n-1)*l.per : min(n*l.per, len(l.order))] {
			body = append(body, real(a))
		}
		if n > 2 {
			nav = append(nav, real(l.first))
		}
		at := func(m int) loc { return h.at(self, l.path(m)) }
		if view != nil {
			at = func(m int) loc { return h.at(self, l.views.path(l, viewState{n: m, vals: view.vals})) }
		}
		if n > 1 {
			nav = append(nav, ltarget{at(n - 1), "Previous"})
		}
		if n < l.n {
			nav = append(nav, ltarget{at(n + 1), "Next"})
		}
		if l.views != nil {
			s := viewState{n: n, vals: make([]int, len(l.views.params))}
			if view != nil {
				s = *view
			}
			nav = append(nav, l.views.bar(h, self, s)...)
		}
	}
	if len(h.pages) > 1 {
		for range 3 + rng.IntN(6) {
			body = append(body, real(int32(1+rng.IntN(len(h.pages)-1))))
		}
	}
	if n := w.cfg.Hosts; n > 1 && rng.Float64() < 0.3 {
		k := rng.IntN(n - 1)
		if k >= h.idx {
			k++
		}
		o := w.hosts[k]
		j := rng.IntN(len(o.pages))
		body = append(body, ltarget{otherAt(o, self, o.pages[j].path), w.titleOf(o, j)})
	}
	for _, t := range h.traps {
		body = t.entryFrom(body, i, self)
	}
	if h.variant != nil {
		body = append(body, h.variant.links(i, self)...)
	}
	if h.caseless != nil {
		body = h.caseless.respell(body, self, p.path, self.target() != p.path, i == 0)
	}
	rng.Shuffle(len(body), func(a, b int) { body[a], body[b] = body[b], body[a] })
	s.links = writeLinks(self, append(nav, body...), rng)
	return s
}

func (w *Web) renderReal(h *host, i int, self loc) Page {
	return finish(w.realSpec(h, i, self), self)
}
