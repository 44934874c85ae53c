package trapweb

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Listing views. A host's real listing may be offered in other orders and
// layouts, each chosen by a query parameter whose name and values are drawn
// (what sites call sort, order, view, display...). Every page of the
// listing, and of each view, links the same page (or the first page, drawn
// per listing) in each other value of each parameter; a view's pages
// paginate within their view. An order lists the same articles in an order
// of its own, so its pages are distinct from every page of the listing
// although they lead to no page the listing does not; a layout shows a
// page's items as the listing does, its text with a few words changed.
//
// The views of one listing are one Trap instance, and a finite one (its
// values times the listing's pages): nothing in it is needed to reach a
// real page, and a crawl that takes it for a section of the site fetches
// the listing again in every order and layout.
type listViews struct {
	id     string
	params []viewParam
	keep   bool // the other values link the same page number, not page 1
	seed   uint64
}

type viewParam struct {
	name   string
	values []string  // values[0] is the default, which no link writes
	orders [][]int32 // an order parameter: each value's order of the articles; nil for a layout
}

// viewState is a page of a view: a page number of the listing and, per
// parameter, the index of its value (0: the default).
type viewState struct {
	n    int
	vals []int
}

func (w *Web) newViews(h *host, rng *rand.Rand, names *nameDraw) *listViews {
	l := h.list
	v := &listViews{
		id:   strings.TrimSuffix(h.name, "."+strings.ToLower(w.cfg.Domain)) + "#l",
		keep: rng.IntN(2) == 0,
		seed: rng.Uint64(),
	}
	for k := range 1 + rng.IntN(2) {
		p := viewParam{name: names.word()}
		for range 2 + rng.IntN(3) {
			p.values = append(p.values, names.word())
		}
		// A third of the parameters take numbers (sizes: ?n=10, 25, 50),
		// drawn apart from the web's stream so that the rest of the web
		// stays as it was drawn before.
		if h := mix(v.seed ^ uint64(k+1)); h%3 == 0 {
			p.values = sizes(h, len(p.values))
		}
		// At least one parameter orders, so that a view's pages differ.
		if k == 0 || rng.IntN(2) == 0 {
			p.orders = make([][]int32, len(p.values))
			p.orders[0] = l.order
			for i := 1; i < len(p.values); i++ {
				o := make([]int32, len(l.order))
				for j, x := range rng.Perm(len(l.order)) {
					o[j] = l.order[x]
				}
				p.orders[i] = o
			}
		}
		v.params = append(v.params, p)
	}
	return v
}

// sizes draws n distinct numbers of 1-3 digits, in increasing order, from
// h: the page sizes a listing is offered in.
func sizes(h uint64, n int) []string {
	out := make([]string, 0, n)
	last := 0
	for range n {
		h = mix(h)
		last += 1 + int(h%uint64(60))
		out = append(out, strconv.Itoa(last))
	}
	return out
}

// path is the URL (path and sorted query) of a view's page.
func (v *listViews) path(l *listing, s viewState) string {
	base := l.path(s.n)
	path, q, _ := strings.Cut(base, "?")
	var ps []kv
	if q != "" {
		for _, part := range strings.Split(q, "&") {
			k, val, _ := strings.Cut(part, "=")
			ps = append(ps, kv{k, val})
		}
	}
	for i, p := range v.params {
		if s.vals[i] != 0 {
			ps = append(ps, kv{p.name, p.values[s.vals[i]]})
		}
	}
	if len(ps) == 0 {
		return path
	}
	return path + "?" + encodeQuery(ps)
}

// match parses l as a page of a view: the listing page its URL is without
// the view parameters, and at least one of them set.
func (v *listViews) match(h *host, l loc) (viewState, bool) {
	if l.query == "" {
		return viewState{}, false
	}
	s := viewState{vals: make([]int, len(v.params))}
	var rest []string
	set := false
	for _, part := range strings.Split(l.query, "&") {
		k, val, _ := strings.Cut(part, "=")
		found := false
		for i, p := range v.params {
			if k != p.name || s.vals[i] != 0 {
				continue
			}
			for j, pv := range p.values {
				if pv == val {
					s.vals[i], found, set = j, true, true
					break
				}
			}
		}
		if !found {
			rest = append(rest, part)
		}
	}
	if !set {
		return viewState{}, false
	}
	target := l.path
	if len(rest) > 0 {
		target += "?" + strings.Join(rest, "&")
	}
	i, ok := h.byPath[target]
	if !ok || h.pages[i].kind != pList {
		return viewState{}, false
	}
	s.n = int(h.pages[i].n)
	// A default value written out is the listing's own page again: a
	// view all the same, since the listing never links it.
	return s, true
}

// order is the articles of a view in the order it lists them: the first
// order parameter set decides.
func (v *listViews) order(l *listing, s viewState) []int32 {
	for i, p := range v.params {
		if p.orders != nil && s.vals[i] != 0 {
			return p.orders[s.vals[i]]
		}
	}
	return l.order
}

// reordered says whether a view lists other articles than the listing's
// page of the same number.
func (v *listViews) reordered(s viewState) bool {
	for i, p := range v.params {
		if p.orders != nil && s.vals[i] != 0 {
			return true
		}
	}
	return false
}

// bar is the links of a page of the listing or of a view to the other
// values of each parameter.
func (v *listViews) bar(h *host, self loc, s viewState) []ltarget {
	var out []ltarget
	for i, p := range v.params {
		for j, val := range p.values {
			if j == s.vals[i] {
				continue
			}
			o := viewState{n: s.n, vals: append([]int(nil), s.vals...)}
			o.vals[i] = j
			if !v.keep {
				o.n = 1
			}
			out = append(out, ltarget{h.at(self, v.path(h.list, o)), capitalize(p.name) + " " + val})
		}
	}
	return out
}

func (v *listViews) describe(h *host) Instance {
	// Every listing with views has an order: its pages are distinct, or
	// mixed with layouts that are near-duplicates of the listing's pages.
	var ps []string
	mode := "distinct"
	for _, p := range v.params {
		kind := "order"
		if p.orders == nil {
			kind, mode = "layout", "mixed"
		}
		ps = append(ps, fmt.Sprintf("%s=%s(%d)", p.name, kind, len(p.values)))
	}
	links := "views=reset"
	if v.keep {
		links = "views=keep-page"
	}
	s := viewState{n: 1, vals: make([]int, len(v.params))}
	s.vals[0] = 1
	return Instance{
		ID:     v.id,
		Host:   h.name,
		Class:  Trap,
		Mode:   mode,
		Links:  links + " pages=" + strconv.Itoa(h.list.n),
		Kind:   "listing " + h.list.path(1) + " " + strings.Join(ps, " "),
		Entry:  "http://" + h.auth + v.path(h.list, s),
		Finite: true,
	}
}

// viewSpec builds a page of a view as seen from self.
func (w *Web) viewSpec(h *host, s viewState, self loc) *spec {
	l, v := h.list, h.list.views
	i := int(l.first) + s.n - 1
	if !v.reordered(s) {
		// A layout of the listing's own page: its text with a few words
		// changed, its links the listing page's and the bar of this view.
		sp := w.listSpec(h, i, self, s)
		rng := rngFor(v.seed, self.target())
		nearEdit(sp.nearBase(), sp.paras, 1+rng.IntN(3), rng, w.v.text)
		return sp
	}
	rng := rngFor(v.seed, self.target())
	g := newTextGen(w.v, rng)
	sp := &spec{title: capitalize(l.word) + " page " + strconv.Itoa(s.n)}
	sp.h1 = sp.title
	sp.paras = g.paragraphs(300 + rng.IntN(1201))
	real := func(j int32) ltarget {
		return ltarget{h.at(self, h.pages[j].path), w.titleOf(h, int(j))}
	}
	order := v.order(l, s)
	var nav, body []ltarget
	nav = append(nav, real(0))
	for _, a := range order[(s.n-1)*l.per : min(s.n*l.per, len(order))] {
		body = append(body, real(a))
	}
	page := func(n int, text string) ltarget {
		o := viewState{n: n, vals: s.vals}
		return ltarget{h.at(self, v.path(l, o)), text}
	}
	if s.n > 1 {
		nav = append(nav, page(s.n-1, "Previous"))
	}
	if s.n < l.n {
		nav = append(nav, page(s.n+1, "Next"))
	}
	nav = append(nav, v.bar(h, self, s)...)
	sp.links = writeLinks(self, append(nav, body...), rng)
	return sp
}

func (w *Web) renderView(h *host, s viewState, self loc) Page {
	return finish(w.viewSpec(h, s, self), self)
}
