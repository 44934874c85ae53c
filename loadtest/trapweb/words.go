package trapweb

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
)

// The vocabulary is made of pronounceable made-up words, drawn per seed:
// nameWords name things in URLs (sections, trap prefixes, parameters), each
// used once per host; textWords fill the text, slugs and word values.
const (
	nameWordCount = 1200
	textWordCount = 3000
)

var (
	syllableOnsets = []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
		"br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr"}
	syllableVowels = []string{"a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "oo"}
	syllableCodas  = []string{"", "", "n", "r", "s", "l", "m", "nd", "st", "rt", "ck"}
)

// reservedNames are parameter names a crawler strips (session ids, tracking)
// or that mean something to servers: no drawn name may be one of them.
var reservedNames = map[string]bool{
	"fbclid": true, "gclid": true, "dclid": true, "gbraid": true, "wbraid": true, "msclkid": true, "yclid": true,
	"sessionid": true, "sid": true, "jsessionid": true, "phpsessid": true, "aspsessionid": true,
	"cfid": true, "cftoken": true, "igshid": true, "index": true, "sitemap": true, "robots": true,
}

type vocabulary struct {
	names []string
	text  []string
	idx   map[string]int32 // text word -> index in text
}

func newVocabulary(seed int64) *vocabulary {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x766f636162))
	seen := make(map[string]bool, nameWordCount+textWordCount)
	words := make([]string, 0, nameWordCount+textWordCount)
	var b strings.Builder
	for len(words) < nameWordCount+textWordCount {
		b.Reset()
		for range 1 + rng.IntN(3) {
			b.WriteString(syllableOnsets[rng.IntN(len(syllableOnsets))])
			b.WriteString(syllableVowels[rng.IntN(len(syllableVowels))])
			b.WriteString(syllableCodas[rng.IntN(len(syllableCodas))])
		}
		w := b.String()
		if len(w) < 3 || len(w) > 12 || seen[w] || reservedNames[w] || strings.HasPrefix(w, "utm") {
			continue
		}
		seen[w] = true
		words = append(words, w)
	}
	v := &vocabulary{names: words[:nameWordCount], text: words[nameWordCount:]}
	v.idx = make(map[string]int32, len(v.text))
	for i, w := range v.text {
		v.idx[w] = int32(i)
	}
	return v
}

// FNV-1a and the MurmurHash3 finalizer: every per-URL choice is seeded from
// a hash of the URL, never from call order.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func hashString(seed uint64, s string) uint64 {
	h := uint64(fnvOffset) ^ mix(seed+0x9e3779b97f4a7c15)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return mix(h)
}

// rngFor returns a generator determined by seed and s.
func rngFor(seed uint64, s string) *rand.Rand {
	return rand.New(rand.NewPCG(seed, hashString(seed, s)))
}

// zipfTable maps 2^16 quantiles to word ranks distributed as a Zipf law
// (exponent 1.1 over 3000 ranks): drawing a word is one table look-up.
var zipfTable = sync.OnceValue(func() *[1 << 16]uint16 {
	const n = textWordCount
	var cum [n]float64
	total := 0.0
	for k := range n {
		total += 1 / math.Pow(float64(k)+2.5, 1.1)
		cum[k] = total
	}
	t := new([1 << 16]uint16)
	k := 0
	for q := range t {
		x := (float64(q) + 0.5) / float64(len(t)) * total
		for k < n-1 && cum[k] < x {
			k++
		}
		t[q] = uint16(k)
	}
	return t
})

// textGen writes prose whose word frequencies follow a Zipf law over a
// mapping of ranks to words specific to the text's seed: each page has its
// own "topic" words, which keeps SimHash fingerprints of different pages far
// apart.
type textGen struct {
	rng   *rand.Rand
	words []string
	seed  uint64
	zipf  *[1 << 16]uint16
}

func newTextGen(v *vocabulary, rng *rand.Rand) *textGen {
	return &textGen{rng: rng, words: v.text, seed: rng.Uint64(), zipf: zipfTable()}
}

func (g *textGen) word() string {
	rank := uint64(g.zipf[g.rng.Uint32()>>16])
	return g.words[mix(g.seed^(rank+1)*0x9e3779b97f4a7c15)%uint64(len(g.words))]
}

// uniformWord is any text word, equally likely.
func (g *textGen) uniformWord() string { return g.words[g.rng.IntN(len(g.words))] }

// sentence appends a sentence of 6-15 tokens: words, the first capitalised,
// the last followed by a full stop. Every token is exactly one SimHash word.
func (g *textGen) sentence(out []string) []string {
	n := 6 + g.rng.IntN(10)
	for i := range n {
		w := g.word()
		if i == 0 {
			w = capitalize(w)
		}
		if i == n-1 {
			w += "."
		}
		out = append(out, w)
	}
	return out
}

// paragraphs returns paragraphs of tokens, n tokens in all or a little more.
func (g *textGen) paragraphs(n int) [][]string {
	var out [][]string
	total := 0
	for total < n {
		p := make([]string, 0, 64)
		for range 2 + g.rng.IntN(5) {
			p = g.sentence(p)
		}
		total += len(p)
		out = append(out, p)
	}
	return out
}

// title returns n capitalised words.
func (g *textGen) title(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = capitalize(g.uniformWord())
	}
	return strings.Join(ws, " ")
}

func capitalize(w string) string {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return w
	}
	return string(w[0]-'a'+'A') + w[1:]
}

// nameDraw hands out name words not used before on one host.
type nameDraw struct {
	rng  *rand.Rand
	v    *vocabulary
	used map[string]bool
}

func newNameDraw(rng *rand.Rand, v *vocabulary) *nameDraw {
	return &nameDraw{rng: rng, v: v, used: make(map[string]bool)}
}

func (d *nameDraw) word() string {
	for {
		w := d.v.names[d.rng.IntN(len(d.v.names))]
		if !d.used[w] {
			d.used[w] = true
			return w
		}
	}
}

// name is one word, or two joined by a random separator.
func (d *nameDraw) name() string {
	if d.rng.IntN(4) == 0 {
		return d.word() + []string{"-", "_"}[d.rng.IntN(2)] + d.word()
	}
	return d.word()
}
