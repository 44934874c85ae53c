package trapweb

import (
	"math/bits"
	"math/rand/v2"

	"github.com/crawlcluster/crawler/pkg/simhash"
)

// Near-duplicates are made by editing 1-3 words of a text so that its SimHash
// (pkg/simhash: word pairs, FNV-1a word hashes, MurmurHash3 finalizer,
// majority vote per bit) stays within nearMaxDist bits of the original's.
// Editing blindly is a statistical game (3 words in 500 stay within 3 bits
// only most of the time), so the editor keeps the votes of the text and tries
// candidate edits, each costing a few dozen operations, until one keeps the
// fingerprint close. All pages edited from one original are then within
// 2*nearMaxDist = 2 bits of each other. The result is checked with
// simhash.Fingerprint itself.
const nearMaxDist = 1

const shingleMul = 0x9e3779b97f4a7c15

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// wordHashes returns the FNV-1a hashes of the ASCII words of s (runs of
// letters and digits, lower-cased), as pkg/simhash tokenizes ASCII text.
func wordHashes(out []uint64, s string) []uint64 {
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		h := uint64(fnvOffset)
		for ; i < len(s) && isWordByte(s[i]); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			h = (h ^ uint64(c)) * fnvPrime
		}
		out = append(out, h)
	}
	return out
}

// votes counts, per bit, the word-pair features that have it set.
type votes struct {
	n   int
	cnt [64]int32
}

func (v *votes) add(f uint64, d int32) {
	for f != 0 {
		b := bits.TrailingZeros64(f)
		v.cnt[b] += d
		f &= f - 1
	}
}

func (v *votes) fp() uint64 {
	var fp uint64
	for i, c := range v.cnt {
		if 2*int(c) > v.n {
			fp |= 1 << i
		}
	}
	return fp
}

func feature(a, b uint64) uint64 { return mix(a*shingleMul + b) }

// nearBase is a text's word hashes and the votes of its features.
type nearBase struct {
	words  []uint64
	offset int // index of the first paragraph word
	v      votes
}

func newNearBase(words []uint64, offset int) *nearBase {
	b := &nearBase{words: words, offset: offset}
	if len(words) > 1 {
		b.v.n = len(words) - 1
	}
	for i := 1; i < len(words); i++ {
		b.v.add(feature(words[i-1], words[i]), 1)
	}
	return b
}

// nearEdit replaces k words of paras (tokens, each one word, maybe
// capitalised and followed by "."), the paragraphs of the text base was made
// from, so that the fingerprint stays within nearMaxDist of the original. It
// edits paras in place (callers pass a copy) and returns the number of words
// replaced (fewer than k if no good edit was found).
func nearEdit(base *nearBase, paras [][]string, k int, rng *rand.Rand, vocab []string) int {
	if len(base.words) < 4 {
		return 0
	}
	v := base.v
	orig := v.fp()
	// Only the edited positions change: keep them aside rather than
	// copying the word hashes.
	changed := map[int]uint64{}
	word := func(g int) uint64 {
		if h, ok := changed[g]; ok {
			return h
		}
		return base.words[g]
	}
	total := 0
	for _, p := range paras {
		total += len(p)
	}
	done := 0
	for range k {
		ok := false
		for range 400 {
			at := rng.IntN(total)
			g := base.offset + at
			if g <= 0 || g >= len(base.words)-1 {
				continue
			}
			w := vocab[rng.IntN(len(vocab))]
			nh := wordHashes(nil, w)[0]
			cur, prev, next := word(g), word(g-1), word(g+1)
			if nh == cur {
				continue
			}
			t := v
			t.add(feature(prev, cur), -1)
			t.add(feature(cur, next), -1)
			t.add(feature(prev, nh), 1)
			t.add(feature(nh, next), 1)
			if simhash.Distance(t.fp(), orig) > nearMaxDist {
				continue
			}
			v = t
			changed[g] = nh
			p, j := 0, at
			for j >= len(paras[p]) {
				j -= len(paras[p])
				p++
			}
			old := paras[p][j]
			if old[0] >= 'A' && old[0] <= 'Z' {
				w = capitalize(w)
			}
			if old[len(old)-1] == '.' {
				w += "."
			}
			paras[p][j] = w
			ok = true
			break
		}
		if !ok {
			break
		}
		done++
	}
	return done
}
