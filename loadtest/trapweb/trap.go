package trapweb

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Trap spaces. Each instance draws a URL grammar (trapKind), a content mode
// and its link structures. Every one is infinite or combinatorially huge.
type trapKind uint8

const (
	kGrammar  trapKind = iota // path template with value slots and/or query keys that matter
	kFacet                    // several query keys whose combinations matter
	kRepeat                   // a prefix followed by any number of "value/" segments
	kCatchAll                 // any path under a prefix answers 200
	trapKinds
)

var trapKindNames = [...]string{"grammar", "facet", "repeat", "catchall"}

type contentMode uint8

const (
	mIdentical contentMode = iota // every page byte-identical
	mNear                         // one text with 1-3 words changed: SimHash within 2 bits pairwise
	mDistinct                     // each page its own text (search results)
	mMixed                        // own title, heading and links, shared body
	contentModes
)

var modeNames = [...]string{"identical", "near", "distinct", "mixed"}

// gpart is a literal or a value slot of a path template.
type gpart struct {
	lit string
	a   *alphabet
}

// qslot is a query key with its values.
type qslot struct {
	name string
	a    *alphabet
}

type facet struct {
	name   string
	values []string
}

type trapSpace struct {
	id   string
	h    *host
	kind trapKind
	mode contentMode
	seed uint64

	parts     []gpart // kGrammar
	qkeys     []qslot // kGrammar: query keys that matter
	facetPath string  // kFacet
	facets    []facet
	prefix    string    // kRepeat, kCatchAll: ends with "/"
	seg       *alphabet // kRepeat: segment values; kCatchAll: segments written
	ignored   []qslot   // parameters the server ignores
	token     *qslot    // a session-like token added to every link of the space
	// ret names a parameter the server ignores whose value is the
	// address of the page that links the URL (a login or share link's
	// return address): the space's own pages nest theirs ("" = none).
	ret string
	// views are the names a record of a grammar space is shown under,
	// each the path's last segment (by date, by author...): every page
	// links the other views of its record, its self links stay in its
	// view (nil = none; recordviews.go).
	views []string

	fanout      int     // self links per page
	entryOne    int     // the real page linking to the space, or -1
	entryFrac   float64 // with entryOne -1: share of real pages linking
	entryMust   int     // a real page that links in any case
	entryVaries bool    // each linking page links its own entry URL
	entryN      int     // with entryVaries: entry URLs a linking page links (a widget's suggestions)
	sample      int     // real pages of the host each page links, drawn per page (a "read next" box)
	sitemap     []string
	nav         []int32
	nearWords   int      // near: words changed per page, at most
	leaves      *leafSet // each page's leaves (leaves.go), or nil

	title      string
	paras      [][]string
	anchors    []string // fixed texts of the self links (identical, near)
	entryText  string
	identHrefs []string
	entry      tstate

	nearOnce sync.Once
	near     *nearBase
	joined   func() []string // paras joined, worked out once
}

// tstate is a parsed URL of a space.
type tstate struct {
	vals  []string // kGrammar: path slots then query keys; kFacet: per facet, "" when absent; kRepeat: segments
	ign   []string // per ignored parameter, "" when absent
	token string
	ret   string // the return address, escaped, "" when absent
	path  string // kCatchAll: the path
	view  int    // with views: the view shown
}

func (st tstate) clone() tstate {
	return tstate{vals: slices.Clone(st.vals), ign: slices.Clone(st.ign), token: st.token, ret: st.ret, path: st.path, view: st.view}
}

var pathSeps = []string{"/", "-", "_", "."}

// sepNotIn draws a separator that is not a character of a (nil: any).
func sepNotIn(rng *rand.Rand, a *alphabet, seps []string) string {
	var ok []string
	for _, s := range seps {
		if a == nil || !a.in(s[0]) {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		for _, s := range pathSeps {
			if !a.in(s[0]) {
				ok = append(ok, s)
			}
		}
	}
	return ok[rng.IntN(len(ok))]
}

func (w *Web) newTrap(h *host, n int, rng *rand.Rand, names *nameDraw) *trapSpace {
	t := &trapSpace{
		id:   fmt.Sprintf("%s#t%d", strings.TrimSuffix(h.name, "."+strings.ToLower(w.cfg.Domain)), n),
		h:    h,
		mode: contentMode(rng.IntN(int(contentModes))),
		seed: rng.Uint64(),
	}
	if t.mode == mIdentical {
		// Byte-identical pages can only lead to new URLs through
		// relative links that grow the path.
		t.kind = []trapKind{kRepeat, kCatchAll}[rng.IntN(2)]
	} else {
		t.kind = []trapKind{kGrammar, kGrammar, kGrammar, kFacet, kFacet, kRepeat, kCatchAll}[rng.IntN(7)]
	}
	switch t.kind {
	case kGrammar:
		t.drawGrammar(w, rng, names)
	case kFacet:
		t.drawFacets(w, rng, names)
	case kRepeat, kCatchAll:
		t.prefix = "/" + names.name() + "/"
		if rng.IntN(3) == 0 {
			t.prefix += names.word() + "/"
		}
		t.seg = newAlphabet(rng, w.v, false)
	}
	for range rng.IntN(3) {
		if rng.IntN(2) == 0 {
			t.ignored = append(t.ignored, qslot{names.word(), newAlphabet(rng, w.v, false)})
		}
	}
	if t.mode != mIdentical && rng.IntN(4) == 0 {
		// Session ids look random: hex or base62.
		a := newAlphabet(rng, w.v, false)
		for a.kind != aHex && a.kind != aBase62 {
			a = newAlphabet(rng, w.v, false)
		}
		t.token = &qslot{names.word(), a}
	}
	t.fanout = 1 + rng.IntN(20)
	if rng.IntN(3) == 0 {
		t.fanout = 1 + rng.IntN(3)
	}
	t.entryOne = -1
	t.entryMust = rng.IntN(len(h.pages))
	if rng.IntN(2) == 0 {
		t.entryOne = t.entryMust
	} else {
		t.entryFrac = 0.15 + 0.85*rng.Float64()
	}
	t.entryVaries = rng.IntN(2) == 0
	for range 2 + rng.IntN(4) {
		t.nav = append(t.nav, int32(rng.IntN(len(h.pages))))
	}
	t.drawWidgets()
	t.nearWords = 1 + rng.IntN(3)
	g := newTextGen(w.v, rng)
	t.title = g.title(2 + rng.IntN(4))
	t.entryText = g.title(1 + rng.IntN(3))
	t.paras = g.paragraphs(150 + rng.IntN(450))
	t.joined = sync.OnceValue(func() []string { return joinParas(t.paras) })
	t.anchors = make([]string, t.fanout)
	for i := range t.anchors {
		t.anchors[i] = g.title(1 + rng.IntN(3))
	}
	t.entry = t.randomState(rng, true)
	if t.mode == mIdentical {
		for range t.fanout {
			t.identHrefs = append(t.identHrefs, t.seg.random(rng)+"/")
		}
		for _, q := range t.ignored {
			t.identHrefs = append(t.identHrefs, "?"+q.name+"="+q.a.random(rng))
		}
	}
	var listed []loc
	if h.sitemap && rng.IntN(3) == 0 {
		for range 2 + rng.IntN(4) {
			st := t.randomState(rng, false)
			listed = append(listed, t.build(st, rng))
		}
	}
	// Last and from a generator of the space's own: the draws above are
	// those of webs drawn before spaces had leaves.
	t.leaves = w.drawLeaves(t, names.used)
	t.ret = w.drawReturn(t, names.used)
	t.views = w.drawViews(t, names.used)
	for _, l := range listed {
		// Built before the views were drawn: each in the first view.
		l.path = t.viewPath(l.path, 0)
		t.sitemap = append(t.sitemap, l.target())
	}
	return t
}

// drawReturn draws, from a generator of the space's own, whether its links
// carry a return address and under which name: one space in five that is
// not identical (whose pages must be byte-identical) and has no leaves
// (which are made from their hub's URL).
func (w *Web) drawReturn(t *trapSpace, used map[string]bool) string {
	rng := rngFor(t.seed, "return")
	if t.mode == mIdentical || t.leaves != nil || rng.IntN(5) != 0 {
		return ""
	}
	for {
		s := w.v.names[rng.IntN(len(w.v.names))]
		if !used[s] {
			return s
		}
	}
}

func (t *trapSpace) drawGrammar(w *Web, rng *rand.Rand, names *nameDraw) {
	npath := []int{0, 1, 1, 1, 2, 2}[rng.IntN(6)]
	nquery := []int{0, 0, 1, 1, 2}[rng.IntN(5)]
	if npath == 0 {
		nquery = max(nquery, 1)
	}
	lit := "/" + names.name()
	if rng.IntN(3) == 0 {
		lit += "/" + names.word()
	}
	if npath == 0 {
		lit += []string{"", "/", ".php", ".html", ".asp", "/" + names.word()}[rng.IntN(6)]
		t.parts = []gpart{{lit: lit}}
	} else {
		lit += pathSeps[rng.IntN(len(pathSeps))]
		t.parts = append(t.parts, gpart{lit: lit})
		var prev *alphabet
		for k := range npath {
			if k > 0 {
				l := sepNotIn(rng, prev, pathSeps)
				if rng.IntN(2) == 0 {
					l += names.word() + pathSeps[rng.IntN(len(pathSeps))]
				}
				t.parts = append(t.parts, gpart{lit: l})
			}
			prev = newAlphabet(rng, w.v, true)
			t.parts = append(t.parts, gpart{a: prev})
		}
		switch rng.IntN(4) {
		case 1:
			t.parts = append(t.parts, gpart{lit: sepNotIn(rng, prev, []string{"/"})})
		case 2:
			t.parts = append(t.parts, gpart{lit: sepNotIn(rng, prev, []string{"."}) + []string{"html", "php", "htm", "jsp"}[rng.IntN(4)]})
		case 3:
			t.parts = append(t.parts, gpart{lit: sepNotIn(rng, prev, pathSeps) + names.word()})
		}
	}
	for range nquery {
		t.qkeys = append(t.qkeys, qslot{names.word(), newAlphabet(rng, w.v, false)})
	}
}

func (t *trapSpace) drawFacets(w *Web, rng *rand.Rand, names *nameDraw) {
	t.facetPath = "/" + names.name() + []string{"", "/", ".php", ".html", "/" + names.word()}[rng.IntN(5)]
	combos := 1
	for combos <= 10_000 || len(t.facets) < 3 {
		f := facet{name: names.word()}
		n := 4 + rng.IntN(9)
		kind := rng.IntN(4)
		seen := map[string]bool{}
		start := rng.IntN(100)
		for len(f.values) < n {
			var v string
			switch kind {
			case 0:
				v = w.v.text[rng.IntN(len(w.v.text))]
			case 1:
				v = strconv.Itoa(start + len(f.values))
			case 2:
				v = randChars(rng, lowerChars, 1+rng.IntN(3))
			case 3:
				lo := 10 * rng.IntN(50)
				v = strconv.Itoa(lo) + "-" + strconv.Itoa(lo+10*(1+rng.IntN(10)))
			}
			if !seen[v] {
				seen[v] = true
				f.values = append(f.values, v)
			}
		}
		t.facets = append(t.facets, f)
		combos *= n + 1
	}
}

// randomState draws a URL of the space; entry says it is the canonical
// entry (shallow, no ignored parameters).
func (t *trapSpace) randomState(rng *rand.Rand, entry bool) tstate {
	st := tstate{ign: make([]string, len(t.ignored))}
	switch t.kind {
	case kGrammar:
		for _, p := range t.parts {
			if p.a != nil {
				st.vals = append(st.vals, p.a.random(rng))
			}
		}
		for _, q := range t.qkeys {
			st.vals = append(st.vals, q.a.random(rng))
		}
	case kFacet:
		st.vals = make([]string, len(t.facets))
		k := rng.IntN(3)
		if entry {
			k = rng.IntN(2)
		}
		for range k {
			f := rng.IntN(len(t.facets))
			st.vals[f] = t.facets[f].values[rng.IntN(len(t.facets[f].values))]
		}
	case kRepeat:
		k := rng.IntN(3)
		if entry {
			k = rng.IntN(2)
		}
		for range k {
			st.vals = append(st.vals, t.seg.random(rng))
		}
	case kCatchAll:
		st.path = t.prefix
		if !entry || rng.IntN(2) == 0 {
			st.path += t.seg.random(rng) + "/"
		}
	}
	if !entry {
		for i, q := range t.ignored {
			if rng.IntN(2) == 0 {
				st.ign[i] = q.a.random(rng)
			}
		}
	}
	return st
}

// build writes the URL of st (a target: path and sorted query). The token,
// when the space has one and st has none, is drawn from rng.
func (t *trapSpace) build(st tstate, rng *rand.Rand) loc {
	var path strings.Builder
	var q []kv
	switch t.kind {
	case kGrammar:
		k := 0
		for _, p := range t.parts {
			if p.a == nil {
				path.WriteString(p.lit)
			} else {
				path.WriteString(st.vals[k])
				k++
			}
		}
		for _, qs := range t.qkeys {
			q = append(q, kv{qs.name, st.vals[k]})
			k++
		}
		if t.views != nil {
			p := t.viewPath(path.String(), st.view)
			path.Reset()
			path.WriteString(p)
		}
	case kFacet:
		path.WriteString(t.facetPath)
		for i, f := range t.facets {
			if st.vals[i] != "" {
				q = append(q, kv{f.name, st.vals[i]})
			}
		}
	case kRepeat:
		path.WriteString(t.prefix)
		for _, v := range st.vals {
			path.WriteString(v)
			path.WriteByte('/')
		}
	case kCatchAll:
		path.WriteString(st.path)
	}
	for i, qs := range t.ignored {
		if st.ign[i] != "" {
			q = append(q, kv{qs.name, st.ign[i]})
		}
	}
	if st.ret != "" {
		q = append(q, kv{t.ret, st.ret})
	}
	if t.token != nil {
		tok := st.token
		if tok == "" && rng != nil {
			tok = t.token.a.random(rng)
		}
		if tok != "" {
			q = append(q, kv{t.token.name, tok})
		}
	}
	return loc{host: t.h.name, auth: t.h.auth, path: path.String(), query: encodeQuery(q)}
}

// contentKey identifies what a page of the space shows: its URL without
// ignored parameters and token.
func (t *trapSpace) contentKey(st tstate) string {
	c := st
	c.ign = make([]string, len(t.ignored))
	c.token, c.ret = "", ""
	return t.build(c, nil).target()
}

// matchParts parses a path against a template: a slot takes the longest run
// of its characters (the literal after it starts with another character),
// the last slot the rest of the path.
func matchParts(parts []gpart, p string) ([]string, bool) {
	var vals []string
	i := 0
	for j, part := range parts {
		if part.a == nil {
			if !strings.HasPrefix(p[i:], part.lit) {
				return nil, false
			}
			i += len(part.lit)
			continue
		}
		k := len(p)
		if j < len(parts)-1 {
			k = i
			for k < len(p) && part.a.in(p[k]) {
				k++
			}
		}
		v := p[i:k]
		if !part.a.valid(v) {
			return nil, false
		}
		vals = append(vals, v)
		i = k
	}
	return vals, i == len(p)
}

// match parses l as a URL of the space.
func (t *trapSpace) match(l loc) (tstate, bool) {
	var st tstate
	switch t.kind {
	case kGrammar:
		p, view, ok := t.cutView(l.path)
		if !ok {
			return st, false
		}
		st.view = view
		vals, ok := matchParts(t.parts, p)
		if !ok {
			return st, false
		}
		st.vals = append(vals, make([]string, len(t.qkeys))...)
	case kFacet:
		if l.path != t.facetPath {
			return st, false
		}
		st.vals = make([]string, len(t.facets))
	case kRepeat:
		rest, ok := strings.CutPrefix(l.path, t.prefix)
		if !ok {
			return st, false
		}
		if rest != "" {
			if !strings.HasSuffix(rest, "/") {
				return st, false
			}
			for _, s := range strings.Split(rest[:len(rest)-1], "/") {
				if !t.seg.valid(s) {
					return st, false
				}
				st.vals = append(st.vals, s)
			}
		}
	case kCatchAll:
		if !strings.HasPrefix(l.path, t.prefix) {
			return st, false
		}
		st.path = l.path
	}
	st.ign = make([]string, len(t.ignored))
	ps, ok := parseQuery(l.query)
	if !ok && t.kind != kCatchAll {
		return st, false
	}
	npath := len(st.vals) - len(t.qkeys)
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.k] {
			if t.kind == kCatchAll {
				continue
			}
			return st, false
		}
		seen[p.k] = true
		found := false
		if t.kind == kGrammar {
			for i, q := range t.qkeys {
				if q.name == p.k {
					if !q.a.valid(p.v) {
						return st, false
					}
					st.vals[npath+i] = p.v
					found = true
				}
			}
		}
		if t.kind == kFacet {
			for i, f := range t.facets {
				if f.name == p.k {
					if !slices.Contains(f.values, p.v) {
						return st, false
					}
					st.vals[i] = p.v
					found = true
				}
			}
		}
		for i, q := range t.ignored {
			if q.name == p.k && q.a.valid(p.v) {
				st.ign[i] = p.v
				found = true
			}
		}
		if t.token != nil && t.token.name == p.k && t.token.a.valid(p.v) {
			st.token = p.v
			found = true
		}
		if t.ret != "" && t.ret == p.k && strings.HasPrefix(p.v, "%2F") {
			st.ret = p.v
			found = true
		}
		if !found && t.kind != kCatchAll {
			return st, false
		}
	}
	if t.kind == kGrammar {
		for _, v := range st.vals[npath:] {
			if v == "" {
				return st, false
			}
		}
	}
	return st, true
}

// next returns the state a self link leads to: the successor of a value,
// a random value, a refinement or removal, a deeper path.
func (t *trapSpace) next(st tstate, i int, rng *rand.Rand) tstate {
	n := st.clone()
	n.token = ""
	switch t.kind {
	case kGrammar:
		j := rng.IntN(len(n.vals))
		a := t.slotAlphabet(j)
		if i == 0 || rng.IntN(3) == 0 {
			n.vals[j] = a.next(n.vals[j])
		} else {
			n.vals[j] = a.random(rng)
		}
	case kFacet:
		var present, absent []int
		for k, v := range n.vals {
			if v == "" {
				absent = append(absent, k)
			} else {
				present = append(present, k)
			}
		}
		op := rng.IntN(4)
		switch {
		case i == 0:
			// The next combination in counting order: a chain of
			// first links never comes back.
			for k := len(n.vals) - 1; k >= 0; k-- {
				vs := t.facets[k].values
				at := slices.Index(vs, n.vals[k]) + 1 // 0: absent
				if at < len(vs) {
					n.vals[k] = vs[at]
					break
				}
				n.vals[k] = ""
			}
		case len(present) == 0 || (len(absent) > 0 && op < 2):
			k := absent[rng.IntN(len(absent))]
			n.vals[k] = t.facets[k].values[rng.IntN(len(t.facets[k].values))]
		case op == 2:
			n.vals[present[rng.IntN(len(present))]] = ""
		default:
			k := present[rng.IntN(len(present))]
			n.vals[k] = t.facets[k].values[rng.IntN(len(t.facets[k].values))]
		}
	case kRepeat:
		if i == 0 || len(n.vals) == 0 || rng.IntN(3) != 0 {
			n.vals = append(n.vals, t.seg.random(rng))
		} else {
			n.vals[len(n.vals)-1] = t.seg.random(rng)
		}
	case kCatchAll:
		p := n.path
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
		switch {
		case i == 0 || p == t.prefix || rng.IntN(3) != 0:
			n.path = p + t.seg.random(rng) + []string{"/", "/", ".html", ""}[rng.IntN(4)]
		default:
			parent := p[:strings.LastIndexByte(p[:len(p)-1], '/')+1]
			n.path = parent + t.seg.random(rng) + "/"
			if n.path == p {
				n.path = p + t.seg.random(rng) + "/"
			}
		}
	}
	for k, q := range t.ignored {
		if rng.IntN(4) == 0 {
			n.ign[k] = q.a.random(rng)
		} else if rng.IntN(3) == 0 {
			n.ign[k] = ""
		}
	}
	return n
}

func (t *trapSpace) slotAlphabet(j int) *alphabet {
	for _, p := range t.parts {
		if p.a != nil {
			if j == 0 {
				return p.a
			}
			j--
		}
	}
	return t.qkeys[j].a
}

// drawWidgets draws the link structures added on 2026-12-06 from a
// generator of their own, so that every other draw of a web (and every
// earlier figure of the simulation) stays what it was: a widget that
// links several entry URLs of its own on each page that has it (a search
// box's "popular searches"), and pages of the space that each link a few
// real pages of the host drawn for that page ("read next"), as an
// independent web's searches and recommendation chains do. A trap's pages
// then reach far into the site without leading anywhere new.
func (t *trapSpace) drawWidgets() {
	rng := rngFor(t.seed, "widgets")
	t.entryN = 1
	if t.entryVaries && rng.IntN(3) == 0 {
		t.entryN = 2 + rng.IntN(4)
	}
	// Only where pages are distinct anyway: links that change from page to
	// page would take a near-copy past the near-duplicate distance.
	if t.mode == mDistinct && rng.IntN(2) == 0 {
		t.sample = 1 + rng.IntN(3)
	}
}

// sampled is the real pages page ckey of the space links besides its
// navigation (sample of them, drawn for the page).
func (w *Web) sampled(t *trapSpace, self loc, ckey string) []ltarget {
	if t.sample == 0 {
		return nil
	}
	h := t.h
	rng := rngFor(t.seed^0x73616d70, ckey)
	out := make([]ltarget, 0, t.sample)
	for range t.sample {
		j := rng.IntN(len(h.pages))
		out = append(out, ltarget{h.at(self, h.pages[j].path), w.titleOf(h, j)})
	}
	return out
}

// linked reports whether real page i links to the space.
func (t *trapSpace) linked(i int) bool {
	if t.entryOne >= 0 || i == t.entryMust {
		return i == t.entryMust
	}
	return float64(mix(t.seed^uint64(i)*0x9e3779b97f4a7c15)>>11)/(1<<53) < t.entryFrac
}

// entryFrom appends to links those real page i has into the space.
func (t *trapSpace) entryFrom(links []ltarget, i int, self loc) []ltarget {
	if !t.linked(i) {
		return links
	}
	rng := rngFor(t.seed, t.h.pages[i].path)
	if !t.entryVaries || i == t.entryMust {
		return append(links, t.entryAt(t.entry, rng, self))
	}
	for range t.entryN {
		links = append(links, t.entryAt(t.randomState(rng, true), rng, self))
	}
	return links
}

func (t *trapSpace) entryAt(st tstate, rng *rand.Rand, self loc) ltarget {
	st.ret = t.returnTo(self)
	to := t.build(st, rng)
	to.auth = self.auth
	return ltarget{to, t.entryText}
}

// entryURL is the URL of the space linked from its entryMust page.
func (t *trapSpace) entryURL() string {
	self := t.h.at(loc{auth: t.h.auth}, t.h.pages[t.entryMust].path)
	return t.entryFrom(nil, t.entryMust, self)[0].to.String()
}

func (t *trapSpace) describe() Instance {
	var links []string
	links = append(links, "self="+strconv.Itoa(t.fanout))
	if t.entryOne >= 0 {
		links = append(links, "entry=one")
	} else {
		links = append(links, fmt.Sprintf("entry=many(%.0f%%)", 100*t.entryFrac))
	}
	if t.entryVaries {
		links = append(links, "entry-varies")
	}
	if t.entryN > 1 {
		links = append(links, "entry-widget="+strconv.Itoa(t.entryN))
	}
	if t.sample > 0 {
		links = append(links, "sample="+strconv.Itoa(t.sample))
	}
	if len(t.sitemap) > 0 {
		links = append(links, "sitemap")
	}
	if t.token != nil {
		links = append(links, "token")
	}
	if t.ret != "" {
		links = append(links, "return")
	}
	if len(t.ignored) > 0 {
		links = append(links, "ignored="+strconv.Itoa(len(t.ignored)))
	}
	if t.leaves != nil {
		links = append(links, "leaves="+strconv.Itoa(t.leaves.n))
	}
	if t.views != nil {
		links = append(links, "views="+strconv.Itoa(len(t.views)))
	}
	var kind strings.Builder
	kind.WriteString(trapKindNames[t.kind])
	kind.WriteByte(' ')
	switch t.kind {
	case kGrammar:
		for _, p := range t.parts {
			if p.a == nil {
				kind.WriteString(p.lit)
			} else {
				kind.WriteString("{" + p.a.String() + "}")
			}
		}
		for i, q := range t.qkeys {
			kind.WriteString([]string{"?", "&"}[min(i, 1)] + q.name + "={" + q.a.String() + "}")
		}
	case kFacet:
		kind.WriteString(t.facetPath)
		for _, f := range t.facets {
			fmt.Fprintf(&kind, " %s(%d)", f.name, len(f.values))
		}
	case kRepeat, kCatchAll:
		kind.WriteString(t.prefix + "{" + t.seg.String() + "}/...")
	}
	for _, q := range t.ignored {
		kind.WriteString(" ignored:" + q.name + "={" + q.a.String() + "}")
	}
	if t.token != nil {
		kind.WriteString(" token:" + t.token.name + "={" + t.token.a.String() + "}")
	}
	if t.ret != "" {
		kind.WriteString(" return:" + t.ret + "={address}")
	}
	if t.leaves != nil {
		kind.WriteString(t.leaves.describe())
	}
	if t.views != nil {
		kind.WriteString(" views:" + strings.Join(t.views, "|"))
	}
	return Instance{
		ID:    t.id,
		Host:  t.h.name,
		Class: Trap,
		Mode:  modeNames[t.mode],
		Links: strings.Join(links, " "),
		Kind:  kind.String(),
		Entry: t.entryURL(),
	}
}

// renderTrap renders a page of the space.
func (w *Web) renderTrap(t *trapSpace, st tstate, self loc) Page {
	ckey := t.contentKey(st)
	h := t.h
	var nav []ltarget
	for _, j := range t.nav {
		nav = append(nav, ltarget{h.at(self, h.pages[j].path), w.titleOf(h, int(j))})
	}
	if t.mode == mIdentical {
		s := &spec{title: t.title, h1: t.title, paras: t.paras, joined: t.joined()}
		for _, n := range nav {
			s.links = append(s.links, link{href: n.to.target(), text: n.text})
		}
		for i, href := range t.identHrefs {
			s.links = append(s.links, link{href: href, text: t.anchors[i%len(t.anchors)]})
		}
		return finish(s, self)
	}
	// The content is the same for every URL of one content key (ignored
	// parameters and token aside); with a token, links (and so the body)
	// change with the URL.
	crng := rngFor(t.seed, ckey)
	lrng := rngFor(t.seed^0x6c696e6b, ckey)
	if t.token != nil || t.ret != "" {
		lrng = rngFor(t.seed^0x6c696e6b, self.String())
	}
	var tok string
	if t.token != nil {
		tok = t.token.a.random(lrng)
	}
	var self1 []ltarget
	for i := range t.fanout {
		n := t.next(st, i, crng)
		n.token = tok
		n.ret = t.returnTo(self)
		to := t.build(n, nil)
		to.auth = self.auth
		var text string
		switch t.mode {
		case mNear:
			text = t.anchors[i]
			if t.leaves != nil {
				text = t.leaves.symSelf
			}
		default:
			g := newTextGen(w.v, rngFor(t.seed^0x616e63, t.contentKey(n)))
			text = g.title(2 + g.rng.IntN(3))
		}
		self1 = append(self1, ltarget{to, text})
	}
	if t.leaves != nil {
		// After the self links: a page's first link into the space is
		// still its next value.
		self1 = append(self1, w.hubLeaves(t, self, ckey)...)
	}
	self1 = append(self1, t.viewLinks(st, tok, self)...)
	nav = append(nav, w.sampled(t, self, ckey)...)
	return w.trapText(t, self, append(nav, self1...), crng, lrng)
}

// trapText is the page at self of space t, hub or leaf, that links links,
// its text by the space's content mode.
func (w *Web) trapText(t *trapSpace, self loc, links []ltarget, crng, lrng *rand.Rand) Page {
	s := &spec{}
	switch t.mode {
	case mNear:
		s.title, s.h1 = t.title, t.title
		s.paras = cloneParas(t.paras)
		s.links = writeLinks(self, links, lrng)
		// Every page of the space has the same text before the edit:
		// its hashes and votes are worked out once.
		t.nearOnce.Do(func() { t.near = s.nearBase() })
		nearEdit(t.near, s.paras, 1+crng.IntN(t.nearWords), crng, w.v.text)
	case mDistinct:
		g := newTextGen(w.v, crng)
		s.title = g.title(3 + crng.IntN(4))
		s.h1 = s.title
		s.paras = g.paragraphs(20 + crng.IntN(40))
		for range 5 + crng.IntN(11) {
			s.items = append(s.items, strings.Join(g.sentence(nil), " "))
		}
		s.links = writeLinks(self, links, lrng)
	case mMixed:
		g := newTextGen(w.v, crng)
		s.title = t.title + " " + g.title(2+crng.IntN(3))
		s.h1 = s.title
		s.paras, s.joined = t.paras, t.joined()
		s.links = writeLinks(self, links, lrng)
	}
	return finish(s, self)
}

// returnTo is the return address a link of the space carries from page
// self, escaped as a query value ("" when the space has none, or self is
// no page).
func (t *trapSpace) returnTo(self loc) string {
	if t.ret == "" || self.path == "" {
		return ""
	}
	return url.QueryEscape(self.target())
}
