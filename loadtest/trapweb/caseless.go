package trapweb

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// A caseless host answers every spelling of a real page's path, in any mix
// of upper and lower case, with the page, as a case-insensitive server does
// (IIS, a Windows share, a CMS that folds its routes). Some of its pages'
// links to their host are spelled in a mix of cases, and the page of such a
// spelling spells all of its own so, each time afresh: every spelling leads
// to more, without end (2^letters a path). Its navigation (the root and the
// section's index) keeps its spelling, as a site's template does. In half
// the hosts drawn, a spelling's page has a few words changed from the
// page's, a counter or a banner of the moment.
type caseless struct {
	id    string
	h     *host
	seed  uint64
	near  bool
	lower map[string]int32 // the real pages by their target in lower case
}

// respellOne: a real page's link to its host is spelled in a mix of cases
// one time in respellOne.
const respellOne = 4

func (w *Web) newCaseless(h *host, rng *rand.Rand) *caseless {
	c := &caseless{
		id:    strings.TrimSuffix(h.name, "."+strings.ToLower(w.cfg.Domain)) + "#c",
		h:     h,
		seed:  rng.Uint64(),
		near:  rng.IntN(2) == 0,
		lower: make(map[string]int32, len(h.pages)),
	}
	for i, p := range h.pages {
		if k := strings.ToLower(p.path); c.lower[k] == 0 {
			c.lower[k] = int32(i) + 1 // 0: none
		}
	}
	return c
}

// match returns the real page that l spells in another case.
func (c *caseless) match(l loc) (int, bool) {
	t := strings.ToLower(l.path)
	if t == l.path {
		return 0, false
	}
	if l.query != "" {
		t += "?" + l.query
	}
	i := c.lower[t]
	return int(i) - 1, i > 0
}

// respell adds to the links ts of real page page, seen from self, a spelling
// in a mix of cases of one link to the host's real pages in respellOne (of
// one at least on the host's root), so that its pages lead to the
// spellings and its real pages stay linked as they are; on a spelling's
// page (alias), it then spells each such link afresh. A spelling's page
// links as many pages, under the same words, as its page.
func (c *caseless) respell(ts []ltarget, self loc, page string, alias, root bool) []ltarget {
	rng := rngFor(c.seed, page)
	n := len(ts)
	for i := range n {
		if !c.real(ts[i].to) {
			continue
		}
		if rng.IntN(respellOne) == 0 || root && len(ts) == n && !slices.ContainsFunc(ts[i+1:n], func(t ltarget) bool { return c.real(t.to) }) {
			t := ts[i]
			t.to.path = mixCase(t.to.path, rng)
			ts = append(ts, t)
		}
	}
	if alias {
		rng = rngFor(c.seed^0x616c696173, self.target())
		for i := range ts {
			if c.real(ts[i].to) || i >= n {
				ts[i].to.path = mixCase(ts[i].to.path, rng)
			}
		}
	}
	return ts
}

// real reports whether l is a real page of the host whose path has a
// letter to spell otherwise.
func (c *caseless) real(l loc) bool {
	if l.host != c.h.name || !hasLetter(l.path) {
		return false
	}
	_, ok := c.h.byPath[l.target()]
	return ok
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

// mixCase spells p's ASCII letters (outside percent-escapes) each in upper
// case at random, one of them at least.
func mixCase(p string, rng *rand.Rand) string {
	b := []byte(strings.ToLower(p))
	var letters []int
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '%':
			i += 2
		case b[i] >= 'a' && b[i] <= 'z':
			letters = append(letters, i)
		}
	}
	if len(letters) == 0 {
		return p
	}
	upper := false
	for _, i := range letters {
		if rng.IntN(2) == 0 {
			b[i] -= 'a' - 'A'
			upper = true
		}
	}
	if !upper {
		b[letters[rng.IntN(len(letters))]] -= 'a' - 'A'
	}
	return string(b)
}

// renderCaseless renders real page i of h as its spelling self asks for.
func (w *Web) renderCaseless(h *host, i int, self loc) Page {
	s := w.pageSpec(h, i, self, nil)
	if h.caseless.near {
		rng := rngFor(h.caseless.seed^0x6e656172, self.target())
		nearEdit(s.nearBase(), s.paras, 1+rng.IntN(2), rng, w.v.text)
	}
	return finish(s, self)
}

func (c *caseless) describe(w *Web) Instance {
	entry := ""
	for _, l := range w.Get("http://" + c.h.auth + c.h.pages[0].path).Links {
		if x, id := w.Classify(l); x == Trap && id == c.id {
			entry = l
			break
		}
	}
	text := "identical"
	if c.near {
		text = "near"
	}
	// Mixed: each spelling is a copy (or near copy) of its own real page.
	return Instance{ID: c.id, Host: c.h.name, Class: Trap, Mode: "mixed", Links: "caseless text=" + text, Kind: "caseless", Entry: entry}
}
