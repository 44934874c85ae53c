package trapweb

import (
	"fmt"
	"slices"
	"strings"
)

// Leaves: a link structure some trap spaces draw on top of their own. Every
// page of the space (a hub) links L leaf URLs of a second shape made from
// its own URL (the hub's path with a value appended after a separator, or
// the hub's URL with one more query parameter): under the space's first
// path segment when its URLs share one, and every hub has its own. A leaf links its
// hub, its previous and next leaf (by index, the first and last wrapping
// around) and the space's real pages: nothing a crawler has not been given
// by the hub already. A calendar whose months are made up from each other
// and list their days is one such space.
//
// Everything here is drawn from a generator of the space's own seed, not
// from the host's: spaces without leaves draw and render what they did
// before leaves existed.
type leafSet struct {
	n      int // leaves per hub
	a      *alphabet
	values []string // the leaves' values, by index
	index  map[string]int

	key  string // a query parameter added to the hub's URL; "" for a path shape
	conn string // path shape: written after the hub's path (its trailing "/" dropped) before the value
	ext  string // path shape: written after the value when the hub's path has no trailing "/"

	// Near spaces: the texts of links within the space carry no words, so
	// hubs and leaves show one text (heading, body and the real pages'
	// titles) and are near copies of each other.
	symSelf, symLeaf, symUp, symPrev, symNext string
}

// Salts of the generators of leaf pages.
const (
	leafSalt   = 0x6c656166 // a leaf's content
	leafLinks  = 0x6c656c6b // a leaf's href styles
	leafAnchor = 0x6c66616e // the text of a link to a leaf (distinct, mixed)
)

// drawLeaves draws whether t has leaves and their shape, from a generator
// of t's own seed. used are the name words the host has drawn so far.
func (w *Web) drawLeaves(t *trapSpace, used map[string]bool) *leafSet {
	rng := rngFor(t.seed, "leaves")
	if t.mode == mIdentical || rng.IntN(4) != 0 {
		return nil
	}
	word := func() string {
		for {
			s := w.v.names[rng.IntN(len(w.v.names))]
			if !used[s] {
				return s
			}
		}
	}
	lf := &leafSet{n: 3 + rng.IntN(28), a: newAlphabet(rng, w.v, false), index: map[string]int{}}
	// A repeat or catch-all space takes any value segment (or any path)
	// its own pages link: only a parameter of its own keeps its leaves
	// apart from them.
	if t.kind == kRepeat || t.kind == kCatchAll || rng.IntN(4) == 0 {
		lf.key = word()
	} else {
		last := sepNotIn(rng, lf.a, pathSeps)
		lf.conn = last
		if rng.IntN(3) == 0 {
			lf.conn = sepNotIn(rng, nil, pathSeps) + word() + last
		}
		if t.firstOnly() && lf.conn[0] != '/' {
			// Its pages' path is one segment the space always has: the
			// leaves go under it, not beside it.
			lf.conn = "/" + lf.conn[1:]
		}
		lf.ext = []string{"", "", ".html", ".php", ".htm"}[rng.IntN(5)]
	}
	v := lf.a.random(rng)
	for len(lf.values) < lf.n {
		if _, dup := lf.index[v]; dup {
			break
		}
		lf.index[v] = len(lf.values)
		lf.values = append(lf.values, v)
		v = lf.a.next(v)
	}
	lf.n = len(lf.values)
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	lf.symSelf = pick("+", "*", "~", "::")
	lf.symLeaf = pick("#", "[ ]", "-", "=")
	lf.symUp = pick("^", "..", "[^]")
	lf.symPrev = pick("<", "<<", "<-")
	lf.symNext = pick(">", ">>", "->")
	return lf
}

// firstOnly reports whether every page of the space has one path, a single
// segment ("/a", "/a/", "/a.php"): with the query alone varying, the first
// path segment the space always has is all of it.
func (t *trapSpace) firstOnly() bool {
	var p string
	switch {
	case t.kind == kFacet:
		p = t.facetPath
	case t.kind == kGrammar && len(t.parts) == 1:
		p = t.parts[0].lit
	default:
		return false
	}
	return !strings.Contains(strings.TrimSuffix(p, "/")[1:], "/")
}

// at is leaf k of the hub at hub (a normalized URL of the space, with its
// token and ignored parameters as they are); ok is false for a hub whose
// query cannot take one more parameter.
func (lf *leafSet) at(hub loc, k int) (loc, bool) {
	out := hub
	v := lf.values[k]
	if lf.key != "" {
		ps, ok := parseQuery(hub.query)
		if !ok || slices.ContainsFunc(ps, func(p kv) bool { return p.k == lf.key }) {
			return loc{}, false
		}
		out.query = encodeQuery(append(ps, kv{lf.key, v}))
		return out, true
	}
	p, slash := strings.CutSuffix(hub.path, "/")
	p += lf.conn + v
	if slash {
		p += "/"
	} else {
		p += lf.ext
	}
	out.path = p
	return out, true
}

// matchLeaf parses l as a leaf of t: its hub's URL and state and its index.
func (t *trapSpace) matchLeaf(l loc) (hub loc, st tstate, k int, ok bool) {
	lf := t.leaves
	hub = l
	var v string
	if lf.key != "" {
		ps, ok := parseQuery(l.query)
		if !ok {
			return hub, st, 0, false
		}
		at := -1
		for i, p := range ps {
			if p.k == lf.key {
				if at >= 0 {
					return hub, st, 0, false
				}
				at = i
			}
		}
		if at < 0 {
			return hub, st, 0, false
		}
		v = ps[at].v
		hub.query = encodeQuery(slices.Delete(ps, at, at+1))
	} else {
		p, slash := strings.CutSuffix(l.path, "/")
		if !slash {
			if p, ok = strings.CutSuffix(p, lf.ext); !ok {
				return hub, st, 0, false
			}
		}
		i := strings.LastIndexByte(p, lf.conn[len(lf.conn)-1])
		if i < 0 {
			return hub, st, 0, false
		}
		v = p[i+1:]
		base, ok := strings.CutSuffix(p[:i+1], lf.conn)
		if !ok || !strings.HasPrefix(base, "/") {
			return hub, st, 0, false
		}
		if slash {
			base += "/"
		}
		hub.path = base
	}
	if k, ok = lf.index[v]; !ok {
		return hub, st, 0, false
	}
	if st, ok = t.match(hub); !ok {
		return hub, st, 0, false
	}
	if back, ok := lf.at(hub, k); !ok || back != l {
		return hub, st, 0, false
	}
	return hub, st, k, true
}

// leafKey identifies what leaf k of the hub of content key ckey shows.
func (lf *leafSet) leafKey(ckey string, k int) string {
	return ckey + "#" + lf.values[k]
}

// leafTarget is the link to leaf k of the hub at hub, whose content key is
// ckey, with its text.
func (w *Web) leafTarget(t *trapSpace, hub loc, ckey string, k int) (ltarget, bool) {
	lf := t.leaves
	to, ok := lf.at(hub, k)
	if !ok {
		return ltarget{}, false
	}
	if t.mode == mNear {
		return ltarget{to, lf.symLeaf}, true
	}
	g := newTextGen(w.v, rngFor(t.seed^leafAnchor, lf.leafKey(ckey, k)))
	return ltarget{to, g.title(1 + g.rng.IntN(3))}, true
}

// hubLeaves are the links of the hub at self (content key ckey) to its
// leaves.
func (w *Web) hubLeaves(t *trapSpace, self loc, ckey string) []ltarget {
	var out []ltarget
	for k := range t.leaves.n {
		if l, ok := w.leafTarget(t, self, ckey, k); ok {
			out = append(out, l)
		}
	}
	return out
}

// renderLeaf renders leaf k of the hub at hub (state st) of space t.
func (w *Web) renderLeaf(t *trapSpace, st tstate, hub loc, k int, self loc) Page {
	lf := t.leaves
	h := t.h
	ckey := t.contentKey(st)
	crng := rngFor(t.seed^leafSalt, lf.leafKey(ckey, k))
	lrng := rngFor(t.seed^leafLinks, self.String())
	var links []ltarget
	for _, j := range t.nav {
		links = append(links, ltarget{h.at(self, h.pages[j].path), w.titleOf(h, int(j))})
	}
	links = append(links, w.sampled(t, self, lf.leafKey(ckey, k))...)
	prev, _ := w.leafTarget(t, hub, ckey, (k+lf.n-1)%lf.n)
	next, _ := w.leafTarget(t, hub, ckey, (k+1)%lf.n)
	up := ltarget{hub, lf.symUp}
	if t.mode == mNear {
		prev.text, next.text = lf.symPrev, lf.symNext
	} else {
		g := newTextGen(w.v, rngFor(t.seed^0x616e63, ckey))
		up.text = g.title(2 + g.rng.IntN(3))
	}
	links = append(links, up, prev, next)
	// The hubs' text: their links within the space carry no words.
	return w.trapText(t, self, links, crng, lrng)
}

// describe writes the leaves' shape for logs.
func (lf *leafSet) describe() string {
	if lf.key != "" {
		return fmt.Sprintf(" leaves:+%s={%s}", lf.key, lf.a)
	}
	return fmt.Sprintf(" leaves:{page}%s{%s}(/|%s)", lf.conn, lf.a, lf.ext)
}
