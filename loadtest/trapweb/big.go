package trapweb

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// bigSpace is the big host: Config.Big articles under one URL pattern, a
// paginated listing of 20 a page, a hub and a sitemap of everything.
type bigSpace struct {
	n     int
	word  string
	style int
	ext   string
	sep   string
	start int
	seed  uint64
	list  *listing
	hub   string
	vocab *vocabulary
}

const bigPerPage = 20

// bigHubMax is the most articles the hub page links.
const bigHubMax = 5000

func (w *Web) genBig(h *host) {
	rng := rand.New(rand.NewPCG(uint64(w.cfg.Seed), h.seed))
	names := newNameDraw(rng, w.v)
	b := &bigSpace{
		n:     w.cfg.Big,
		word:  names.name(),
		style: rng.IntN(3),
		ext:   []string{"", ".html", "/", ".htm"}[rng.IntN(4)],
		sep:   []string{"-", "_"}[rng.IntN(2)],
		start: 1 + rng.IntN(1_000_000),
		seed:  rng.Uint64(),
		vocab: w.v,
	}
	b.list = &listing{word: names.word(), key: names.word(), style: rng.IntN(4), per: bigPerPage}
	b.list.n = (b.n + bigPerPage - 1) / bigPerPage
	b.hub = "/" + names.word() + []string{"", "/", ".html"}[rng.IntN(3)]
	h.big = b
	h.sitemap = true
	h.disallow = "/" + names.word() + "/"
	// The root's links, like every page's, are drawn at rendering.
	h.pages = []rpage{{path: "/", kind: pRoot}}
	h.byPath["/"] = 0
}

func (b *bigSpace) article(n int, v *vocabulary) string {
	id := strconv.Itoa(b.start + n)
	var name string
	switch b.style {
	case 0:
		name = id
	default:
		h := mix(b.seed ^ uint64(n)*0x9e3779b97f4a7c15)
		ws := make([]string, 2+h%3)
		for i := range ws {
			h = mix(h + uint64(i))
			ws[i] = v.text[h%uint64(len(v.text))]
		}
		slug := strings.Join(ws, b.sep)
		if b.style == 1 {
			name = slug + b.sep + id
		} else {
			name = id + b.sep + slug
		}
	}
	return "/" + b.word + "/" + name + b.ext
}

// articleIndex parses an article path.
func (b *bigSpace) articleIndex(path string, v *vocabulary) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/"+b.word+"/")
	if !ok {
		return 0, false
	}
	if rest, ok = strings.CutSuffix(rest, b.ext); !ok {
		return 0, false
	}
	id := rest
	switch b.style {
	case 1:
		id = rest[strings.LastIndex(rest, b.sep)+1:]
	case 2:
		id, _, _ = strings.Cut(rest, b.sep)
	}
	k, err := strconv.Atoi(id)
	if err != nil {
		return 0, false
	}
	n := k - b.start
	if n < 0 || n >= b.n || b.article(n, v) != path {
		return 0, false
	}
	return n, true
}

// listPage parses a listing page target.
func (l *listing) page(target string) (int, bool) {
	if target == l.path(1) {
		return 1, true
	}
	i := strings.LastIndexAny(target, "=/-")
	if i < 0 {
		return 0, false
	}
	j := i + 1
	k := j
	for k < len(target) && target[k] >= '0' && target[k] <= '9' {
		k++
	}
	if k == j {
		// "/w/N/": the number sits before the final slash.
		i = strings.LastIndexAny(target[:len(target)-1], "/")
		j, k = i+1, len(target)-1
	}
	n, err := strconv.Atoi(target[j:k])
	if err != nil || n < 2 || n > l.n || l.path(n) != target {
		return 0, false
	}
	return n, true
}

func (b *bigSpace) count() int { return 2 + b.list.n + b.n }

// target is entry i of the host's page list: root, hub, listing pages,
// articles.
func (b *bigSpace) target(i int) string {
	switch {
	case i == 0:
		return "/"
	case i == 1:
		return b.hub
	case i < 2+b.list.n:
		return b.list.path(i - 1)
	}
	return b.article(i-2-b.list.n, b.vocab)
}

func (b *bigSpace) appendReal(out []string, h *host) []string {
	for i := range b.count() {
		out = append(out, "http://"+h.auth+b.target(i))
	}
	return out
}

func (b *bigSpace) classify(h *host, l loc) hit {
	t := l.target()
	switch {
	case t == "/":
		return hit{h: h, cls: Real, what: hBigRoot}
	case t == b.hub:
		return hit{h: h, cls: Real, what: hBigHub}
	}
	if n, ok := b.list.page(t); ok {
		return hit{h: h, cls: Real, what: hBigList, n: n}
	}
	if l.query == "" {
		if n, ok := b.articleIndex(l.path, b.vocab); ok {
			return hit{h: h, cls: Real, what: hBigArticle, n: n}
		}
	}
	return hit{h: h, cls: Missing}
}

func (w *Web) bigTitle(h *host, target string) string {
	g := newTextGen(w.v, rngFor(h.seed^titleSalt, target))
	return g.title(3 + g.rng.IntN(5))
}

func (w *Web) renderBig(x hit, self loc) Page {
	h, b := x.h, x.h.big
	t := self.target()
	rng := rngFor(h.seed, t)
	g := newTextGen(w.v, rng)
	s := &spec{}
	art := func(n int) ltarget {
		p := b.article(n, w.v)
		return ltarget{h.at(self, p), w.bigTitle(h, p)}
	}
	lst := func(n int, text string) ltarget {
		return ltarget{h.at(self, b.list.path(n)), text}
	}
	var nav, body []ltarget
	if x.what != hBigRoot {
		nav = append(nav, ltarget{h.at(self, "/"), "Home"})
	}
	switch x.what {
	case hBigRoot:
		s.title = capitalize(b.word) + " " + g.title(2)
		s.paras = g.paragraphs(200 + rng.IntN(200))
		body = append(body, lst(1, capitalize(b.list.word)), ltarget{h.at(self, b.hub), "All " + b.word})
		for range 10 {
			body = append(body, art(rng.IntN(b.n)))
		}
	case hBigHub:
		s.title = "All " + b.word + " " + g.title(2)
		s.paras = g.paragraphs(100 + rng.IntN(200))
		k := min(b.n, bigHubMax)
		for i := range k {
			body = append(body, art(i*b.n/k))
		}
	case hBigList:
		n := x.n
		s.title = capitalize(b.list.word) + " page " + strconv.Itoa(n) + " " + g.title(2)
		s.paras = g.paragraphs(100 + rng.IntN(200))
		for i := (n - 1) * bigPerPage; i < min(n*bigPerPage, b.n); i++ {
			body = append(body, art(i))
		}
		if n > 1 {
			nav = append(nav, lst(n-1, "Previous"), lst(1, "First"))
		}
		for k := max(1, n-5); k <= min(b.list.n, n+5); k++ {
			if k != n {
				nav = append(nav, lst(k, strconv.Itoa(k)))
			}
		}
		if n < b.list.n {
			nav = append(nav, lst(n+1, "Next"), lst(b.list.n, "Last"))
		}
	case hBigArticle:
		n := x.n
		s.title = w.bigTitle(h, t)
		s.paras = g.paragraphs(300 + rng.IntN(1201))
		nav = append(nav, lst(n/bigPerPage+1, capitalize(b.list.word)))
		if n+1 < b.n {
			body = append(body, art(n+1))
		}
		if n > 0 {
			body = append(body, art(n-1))
		}
		for range 3 + rng.IntN(6) {
			body = append(body, art(rng.IntN(b.n)))
		}
	}
	s.h1 = s.title
	if x.what != hBigHub {
		rng.Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
	}
	s.links = writeLinks(self, append(nav, body...), rng)
	return finish(s, self)
}
