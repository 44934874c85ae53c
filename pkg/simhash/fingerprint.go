package simhash

import (
	"math/bits"
	"sync"
	"unicode"
	"unicode/utf8"
)

// FNV-1a 64 parameters (http://www.isthe.com/chongo/tech/comp/fnv/).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// shingleMul combines the word hashes of a shingle (x = x*shingleMul + w); it
// is odd, so no information is lost, and it is the 64-bit golden ratio, so
// the high bits of a product depend on every bit of the word hash.
const shingleMul = 0x9e3779b97f4a7c15

// Fingerprint returns the 64-bit SimHash of text, or 0 if text has no words
// (empty, only white space, punctuation or symbols). 0 is reserved for "no
// fingerprint": callers skip near-duplicate detection for it, and Index
// ignores it. The result depends only on the bytes of text, never on the
// process, so it can be stored and compared with fingerprints computed
// elsewhere; see the package comment for the exact definition.
func Fingerprint(text string) uint64 { return fingerprint(text) }

// FingerprintBytes is Fingerprint for text held in a byte slice, without
// copying it: FingerprintBytes(b) == Fingerprint(string(b)).
func FingerprintBytes(text []byte) uint64 { return fingerprint(text) }

// Distance is the Hamming distance between two fingerprints: the number of
// bits in which they differ, 0 to 64.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// fingerprint tokenizes and votes in one pass over s, without allocating.
func fingerprint[T string | []byte](s T) uint64 {
	var (
		v      voter
		word   uint64 // FNV-1a state of the word being read
		inWord bool
		prev   uint64 // hash of the previous word
		words  int
	)
	// endWord turns the word just read into a feature with the previous
	// one.
	endWord := func() {
		if words > 0 {
			v.add(mix(prev*shingleMul + word))
		}
		prev = word
		words++
		inWord = false
	}
	runes := runeTable()
	for i := 0; i < len(s); {
		c := s[i]
		if l := wordByte[c]; l != 0 {
			// Most of a text: the ASCII letters and digits of a word,
			// hashed in a loop of their own.
			if !inWord {
				word, inWord = fnvOffset, true
			}
			word = (word ^ uint64(l)) * fnvPrime
			for i++; i < len(s); i++ {
				l = wordByte[s[i]]
				if l == 0 {
					break
				}
				word = (word ^ uint64(l)) * fnvPrime
			}
			continue
		}
		if c < utf8.RuneSelf {
			i++
			if inWord {
				endWord()
			}
			continue
		}
		var r rune
		var size int
		if c >= 0xc2 && c <= 0xdf && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			// A lead byte C2 to DF and a continuation byte are always
			// valid UTF-8: the two-byte runes of Latin, Greek,
			// Cyrillic, Hebrew and Arabic, decoded without a call.
			r, size = rune(c&0x1f)<<6|rune(s[i+1]&0x3f), 2
		} else {
			r, size = decodeRune(s[i:min(i+utf8.UTFMax, len(s))])
		}
		i += size
		var ri runeInfo
		if r < bmp {
			ri = (*runes)[r]
		} else {
			ri = infoOf(r)
		}
		switch ri.class() {
		case separator:
			if inWord {
				endWord()
			}
		case ideograph:
			if inWord {
				endWord()
			}
			word = ri.hash(fnvOffset)
			endWord()
		case wordRune:
			if !inWord {
				word, inWord = fnvOffset, true
			}
			word = ri.hash(word)
		}
	}
	if inWord {
		endWord()
	}
	if words == 1 {
		// A text of one word has that word alone as its only feature.
		v.add(mix(prev))
	}
	fp := v.sum()
	if fp == 0 && words > 0 {
		// A text with words gets a non-zero fingerprint, so 0 means
		// exactly "no words". The chance of getting here is 2^-64.
		fp = 1
	}
	return fp
}

// decodeRune decodes the first rune of s, which is at most utf8.UTFMax bytes
// long, so converting a []byte to a string is done on the stack.
func decodeRune[T string | []byte](s T) (rune, int) {
	return utf8.DecodeRuneInString(string(s))
}

// mix is the MurmurHash3 64-bit finalizer. FNV-1a alone leaves its low bits
// dependent on few input bits; SimHash needs every feature bit to be an
// unbiased, independent coin.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

type runeClass uint8

const (
	separator runeClass = iota
	wordRune            // letter, mark or decimal digit: part of a word
	ideograph           // Han, Hiragana or Katakana: a word by itself
)

func class(r rune) runeClass {
	if r >= 0x2e80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
		return ideograph
	}
	// utf8.RuneError (invalid UTF-8) is a symbol, so a separator.
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
		return wordRune
	}
	return separator
}

// runeInfo is what the tokenizer needs to know about a rune, looked up once:
// its class and the UTF-8 encoding of its lower case, up to 4 bytes, first
// byte lowest.
type runeInfo uint64

func infoOf(r rune) runeInfo {
	c := class(r)
	if c == separator {
		return 0
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
	ri := runeInfo(c)<<40 | runeInfo(n)<<32
	for j, b := range buf[:n] {
		ri |= runeInfo(b) << (8 * j)
	}
	return ri
}

func (ri runeInfo) class() runeClass { return runeClass(ri >> 40) }

// hash feeds the lower-case UTF-8 bytes into the FNV-1a state h.
func (ri runeInfo) hash(h uint64) uint64 {
	for range int(ri >> 32 & 0xff) {
		h = (h ^ uint64(byte(ri))) * fnvPrime
		ri >>= 8
	}
	return h
}

// bmp bounds the Basic Multilingual Plane, which holds nearly all the
// letters of running text.
const bmp = 0x10000

// runeTable caches infoOf for the BMP: the unicode package's binary searches
// (IsLetter, ToLower) would otherwise cost more than everything else
// together for non-Latin text. It is 512 KiB, built in a few milliseconds on
// first use.
var runeTable = sync.OnceValue(func() *[bmp]runeInfo {
	t := new([bmp]runeInfo)
	for r := range rune(bmp) {
		t[r] = infoOf(r)
	}
	return t
})

// wordByte maps the bytes of ASCII letters and digits to their lower-case
// byte and every other byte, including those of non-ASCII runes, to 0.
var wordByte = func() (t [256]byte) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// voter counts, for each of the 64 bit positions, how many features have that
// bit set. Counting bit by bit costs 64 steps per feature; instead each byte
// of a feature is spread into eight 8-bit lanes of a uint64 (spread) and the
// lanes are added in parallel, eight steps per feature. The lanes are flushed
// into 32-bit counts before they can overflow.
type voter struct {
	lanes  [8]uint64 // lanes[k] byte j counts bit 8k+j since the last flush
	count  [64]uint32
	n      int // features voted
	unread int // features in lanes
}

const laneMax = 255

func (v *voter) add(f uint64) {
	v.lanes[0] += spread[byte(f)]
	v.lanes[1] += spread[byte(f>>8)]
	v.lanes[2] += spread[byte(f>>16)]
	v.lanes[3] += spread[byte(f>>24)]
	v.lanes[4] += spread[byte(f>>32)]
	v.lanes[5] += spread[byte(f>>40)]
	v.lanes[6] += spread[byte(f>>48)]
	v.lanes[7] += spread[byte(f>>56)]
	v.n++
	if v.unread++; v.unread == laneMax {
		v.flush()
	}
}

func (v *voter) flush() {
	for k, l := range v.lanes {
		for j := range 8 {
			v.count[8*k+j] += uint32(byte(l >> (8 * j)))
		}
	}
	v.lanes = [8]uint64{}
	v.unread = 0
}

// sum sets each bit that more than half of the features have set; a tie
// leaves it 0.
func (v *voter) sum() uint64 {
	v.flush()
	var fp uint64
	for i, c := range v.count {
		if 2*int(c) > v.n {
			fp |= 1 << i
		}
	}
	return fp
}

// spread[b] has byte j equal to bit j of b.
var spread = func() (t [256]uint64) {
	for b := range 256 {
		for j := range 8 {
			t[b] |= uint64(b>>j&1) << (8 * j)
		}
	}
	return t
}()
