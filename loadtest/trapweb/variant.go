package trapweb

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Variant families: on a variant host, every article (or a random half of
// them) links to a variant of itself made by one drawn rule; the variant
// shows the article's body byte-identical or with 1-3 words changed, and
// in half the families (drawn by the family's seed) names the article its
// canonical URL, as print and AMP views do.
type variantRule uint8

const (
	vQueryFixed   variantRule = iota // ?name=value, one value
	vQueryVarying                    // ?name=<id>, an id per link (reply-to-comment like)
	vPrefix                          // /name/<article path>
	vSuffix                          // <article path>/name
	vFilename                        // <stem><sep>name<ext>
	variantRules
)

var variantRuleNames = [...]string{"query-fixed", "query-varying", "path-prefix", "path-suffix", "filename-suffix"}

type variantFamily struct {
	id        string
	h         *host
	rule      variantRule
	name      string
	value     string // vQueryFixed
	sep       string // vFilename
	slash     bool   // vSuffix: "/name/" rather than "/name"
	half      bool
	near      bool
	canonical bool // its pages name their article canonical (<link rel="canonical">)
	// grow (vQueryVarying): the variant's value is a list of ids joined by
	// gsep, and its page links itself with one id more (?name=12,40 on
	// ?name=12), as a control that adds to what a page shows: endless.
	grow      bool
	gsep      string
	nearWords int
	seed      uint64
	label     string
}

func (w *Web) newVariant(h *host, rng *rand.Rand, names *nameDraw) *variantFamily {
	v := &variantFamily{
		id:        strings.TrimSuffix(h.name, "."+strings.ToLower(w.cfg.Domain)) + "#v",
		h:         h,
		rule:      variantRule(rng.IntN(int(variantRules))),
		name:      names.word(),
		sep:       []string{"-", "_", "."}[rng.IntN(3)],
		slash:     rng.IntN(2) == 0,
		half:      rng.IntN(2) == 0,
		near:      rng.IntN(2) == 0,
		nearWords: 1 + rng.IntN(3),
		seed:      rng.Uint64(),
	}
	v.value = []string{"1", "true", "yes", "on", names.word()}[rng.IntN(5)]
	// From the seed, not rng: the draws of everything after stay as they were.
	v.canonical = mix(v.seed^0xca70)&1 == 0
	if v.rule == vQueryVarying && mix(v.seed^0x960)&1 == 0 {
		v.grow = true
		v.gsep = []string{",", ".", "~", "_", "-"}[mix(v.seed^0x5e9)%5]
	}
	v.label = capitalize(v.name)
	if !slices.ContainsFunc(h.articles, func(i int32) bool { return v.covers(int(i)) }) {
		v.half = false // a family nothing links would not be one
	}
	return v
}

func (v *variantFamily) covers(i int) bool {
	if v.h.pages[i].kind != pArticle || strings.Contains(v.h.pages[i].path, "?") {
		return false // an article by a query parameter has no variant: the rules build on paths
	}
	return !v.half || mix(v.seed^uint64(i)*0x9e3779b97f4a7c15)&1 == 0
}

// path is the target of the variant of the article at real with value val
// (query rules).
func (v *variantFamily) path(real, val string) string {
	switch v.rule {
	case vQueryFixed, vQueryVarying:
		return real + "?" + v.name + "=" + val
	case vPrefix:
		return "/" + v.name + real
	case vSuffix:
		sfx := v.name
		if v.slash {
			sfx += "/"
		}
		if strings.HasSuffix(real, "/") {
			return real + sfx
		}
		return real + "/" + sfx
	default:
		dir, seg := real[:strings.LastIndexByte(strings.TrimSuffix(real, "/"), '/')+1], real[strings.LastIndexByte(strings.TrimSuffix(real, "/"), '/')+1:]
		slash := strings.HasSuffix(seg, "/")
		seg = strings.TrimSuffix(seg, "/")
		stem, ext := seg, ""
		if k := strings.LastIndexByte(seg, '.'); k > 0 {
			stem, ext = seg[:k], seg[k:]
		}
		out := dir + stem + v.sep + v.name + ext
		if slash {
			out += "/"
		}
		return out
	}
}

// validID is a value of vQueryVarying: a number without leading zero.
func validID(s string) bool {
	if s == "" || len(s) > 12 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxGrown is the most ids a growing family's value lists: past it, 404.
const maxGrown = 64

// validValue is a value of vQueryVarying: an id, or a list of them.
func (v *variantFamily) validValue(x string) bool {
	if !v.grow {
		return validID(x)
	}
	n := 0
	for id := range strings.SplitSeq(x, v.gsep) {
		if n++; n > maxGrown || !validID(id) {
			return false
		}
	}
	return true
}

// match parses l as a variant: the real page index and the value.
func (v *variantFamily) match(l loc) (int, string, bool) {
	var cands []string
	val := ""
	switch v.rule {
	case vQueryFixed, vQueryVarying:
		k, x, ok := strings.Cut(l.query, "=")
		if !ok || k != v.name || strings.Contains(x, "&") {
			return 0, "", false
		}
		if (v.rule == vQueryFixed && x != v.value) || (v.rule == vQueryVarying && !v.validValue(x)) {
			return 0, "", false
		}
		val = x
		cands = []string{l.path}
	default:
		if l.query != "" {
			return 0, "", false
		}
		switch v.rule {
		case vPrefix:
			if r, ok := strings.CutPrefix(l.path, "/"+v.name); ok && strings.HasPrefix(r, "/") {
				cands = []string{r}
			}
		case vSuffix:
			sfx := v.name
			if v.slash {
				sfx += "/"
			}
			if base, ok := strings.CutSuffix(l.path, sfx); ok {
				cands = []string{base, strings.TrimSuffix(base, "/")}
			}
		case vFilename:
			p := strings.TrimSuffix(l.path, "/")
			seg := p[strings.LastIndexByte(p, '/')+1:]
			if k := strings.LastIndex(seg, v.sep+v.name); k >= 0 {
				cut := len(p) - len(seg) + k
				cands = []string{l.path[:cut] + l.path[cut+len(v.sep+v.name):]}
			}
		}
	}
	for _, c := range cands {
		if i, ok := v.h.byPath[c]; ok && v.covers(int(i)) && v.path(c, val) == l.target() {
			return int(i), val, true
		}
	}
	return 0, "", false
}

// links are the variant links of real page i.
func (v *variantFamily) links(i int, self loc) []ltarget {
	if !v.covers(i) {
		return nil
	}
	real := v.h.pages[i].path
	if v.rule != vQueryVarying {
		return []ltarget{{v.h.at(self, v.path(real, v.value)), v.label}}
	}
	rng := rngFor(v.seed, real)
	var out []ltarget
	for range 1 + rng.IntN(3) {
		id := strconv.Itoa(1 + rng.IntN(999_999))
		out = append(out, ltarget{v.h.at(self, v.path(real, id)), v.label + " " + id})
	}
	return out
}

func (v *variantFamily) describe() Instance {
	mode := "identical"
	if v.near {
		mode = "near"
	}
	cover := "all"
	if v.half {
		cover = "half"
	}
	if v.canonical {
		cover += " canonical"
	}
	entry := ""
	for i := range v.h.pages {
		if v.covers(i) {
			entry = "http://" + v.h.auth + v.path(v.h.pages[i].path, v.value)
			if v.rule == vQueryVarying {
				entry = "http://" + v.h.auth + v.path(v.h.pages[i].path, "1")
			}
			break
		}
	}
	kind := fmt.Sprintf("%s name=%s", variantRuleNames[v.rule], v.name)
	if v.grow {
		kind += " growing sep=" + v.gsep
	}
	return Instance{
		ID:    v.id,
		Host:  v.h.name,
		Class: Variant,
		Mode:  mode,
		Links: "variant-of=" + cover,
		Kind:  kind,
		Entry: entry,
	}
}

// renderVariant renders the variant of real page i: the article's page as
// written for the article's URL (so its relative links resolve from the
// variant's), with words changed in near mode.
func (w *Web) renderVariant(h *host, i int, self loc) Page {
	v := h.variant
	s := w.realSpec(h, i, h.at(self, h.pages[i].path))
	if v.near {
		rng := rngFor(v.seed, self.target())
		nearEdit(s.nearBase(), s.paras, 1+rng.IntN(v.nearWords), rng, w.v.text)
	}
	if v.canonical {
		s.canonical = "http://" + h.auth + h.pages[i].path
	}
	if v.grow {
		// Itself with one id more, in place of the article's ids.
		_, val, _ := v.match(self)
		s.links = slices.DeleteFunc(s.links, func(l link) bool { return strings.HasPrefix(l.text, v.label+" ") })
		rng := rngFor(v.seed^0x960, self.target())
		var more []ltarget
		for range 2 + rng.IntN(2) {
			id := strconv.Itoa(1 + rng.IntN(999_999))
			more = append(more, ltarget{h.at(self, v.path(h.pages[i].path, val+v.gsep+id)), v.label + " " + id})
		}
		s.links = append(s.links, writeLinks(self, more, rng)...)
	}
	return finish(s, self)
}
