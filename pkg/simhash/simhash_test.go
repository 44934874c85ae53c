package simhash

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// textGen writes deterministic pseudo-prose: words made of syllables, drawn
// with Zipf frequencies so that, as in a natural language, a few words are
// very common and are shared by every text.
type textGen struct {
	rng   *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newTextGen(seed uint64) *textGen {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	onsets := []string{"b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "ch", "sh"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ea", "ou"}
	codas := []string{"", "", "n", "r", "s", "t", "l", "nd", "st"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(vowels[rng.IntN(len(vowels))])
			b.WriteString(codas[rng.IntN(len(codas))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	return &textGen{rng: rng, vocab: vocab, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))}
}

func (g *textGen) words(n int) []string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.vocab[g.zipf.Uint64()]
	}
	return ws
}

// prose joins words into sentences with capitals and punctuation, which
// Fingerprint must ignore.
func prose(ws []string) string {
	var b strings.Builder
	start := true
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		if start {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		start = i%11 == 10
		if start {
			b.WriteByte('.')
		} else if i%7 == 6 {
			b.WriteByte(',')
		}
	}
	return b.String()
}

// referenceFingerprint is the package comment's definition written plainly:
// split into words, hash with hash/fnv, vote bit by bit.
func referenceFingerprint(s string) uint64 {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush()
			words = append(words, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			cur = append(cur, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	h := func(w string) uint64 {
		f := fnv.New64a()
		f.Write([]byte(w))
		return f.Sum64()
	}
	fmix := func(k uint64) uint64 {
		k ^= k >> 33
		k *= 0xff51afd7ed558ccd
		k ^= k >> 33
		k *= 0xc4ceb9fe1a85ec53
		k ^= k >> 33
		return k
	}
	var features []uint64
	if len(words) == 1 {
		features = append(features, fmix(h(words[0])))
	}
	for i := 1; i < len(words); i++ {
		features = append(features, fmix(h(words[i-1])*0x9e3779b97f4a7c15+h(words[i])))
	}
	var votes [64]int
	for _, f := range features {
		for i := range votes {
			if f>>i&1 == 1 {
				votes[i]++
			} else {
				votes[i]--
			}
		}
	}
	var fp uint64
	for i, v := range votes {
		if v > 0 {
			fp |= 1 << i
		}
	}
	if fp == 0 && len(words) > 0 {
		fp = 1
	}
	return fp
}

// TestFingerprintGolden pins fingerprints: they are stored, so a change of
// tokenizer, hash or voting must fail here, not silently in production.
func TestFingerprintGolden(t *testing.T) {
	for _, tt := range []struct {
		text string
		want uint64
	}{
		{"", 0},
		{" \t\n", 0},
		{"--- !!! ... ©", 0},
		{"© 2024", 0x8e74f6f56781bf14},
		{"hello", 0xe9c562c0fdb23244},
		{"Hello, world", 0xd7709b40c46857bf},
		{"The quick brown fox jumps over the lazy dog.", 0xc44d006111312fc0},
		{"Größenwahn und Übermut: Straße 42", 0xd06f554a808b3105},
		{"Поиск дубликатов веб-страниц", 0x57477a1b7c4c66d5},
		{"東京都の天気は晴れです", 0xc038816230014519},
		{prose(newTextGen(1).words(500)), 0x3a3df70dafe6538d},
	} {
		name := []rune(tt.text)
		name = name[:min(len(name), 40)]
		t.Run(string(name), func(t *testing.T) {
			if got := Fingerprint(tt.text); got != tt.want {
				t.Errorf("Fingerprint(%q) = %#x, want %#x", string(name), got, tt.want)
			}
		})
	}
}

func TestFingerprintMatchesReference(t *testing.T) {
	texts := []string{
		"", "a", "a b", "a b c", "A, b; C!", "x\xffy z", "\xe6\x9d", "日本語のテキスト", "naïve café — déjà vu",
		"e\u0301te\u0301", "ǅemal İstanbul ΣΊΣΥΦΟΣ", "१२३ हिन्दी पाठ", "mix3d w0rds_and-dashes",
	}
	g := newTextGen(2)
	for n := range 40 {
		texts = append(texts, prose(g.words(n*n)))
	}
	for _, s := range texts {
		if got, want := Fingerprint(s), referenceFingerprint(s); got != want {
			t.Errorf("Fingerprint(%q) = %#x, reference gives %#x", s, got, want)
		}
		if got, want := FingerprintBytes([]byte(s)), Fingerprint(s); got != want {
			t.Errorf("FingerprintBytes(%q) = %#x, Fingerprint gives %#x", s, got, want)
		}
	}
}

// TestFingerprintTwoByteRunes holds the inline decoding of two-byte UTF-8 to
// the reference for every pair of bytes from 0x80 up, valid or not, inside a
// word, at its edges and cut off at the end of the text.
func TestFingerprintTwoByteRunes(t *testing.T) {
	for b0 := 0x80; b0 < 0x100; b0++ {
		for b1 := range 0x100 {
			pair := string([]byte{byte(b0), byte(b1)})
			for _, s := range []string{"ab" + pair + "cd ef", pair + " x", "x y" + pair, "z " + pair[:1]} {
				if got, want := Fingerprint(s), referenceFingerprint(s); got != want {
					t.Fatalf("Fingerprint(%q) = %#x, reference gives %#x", s, got, want)
				}
			}
		}
	}
}

// TestFingerprintEquivalence: what the tokenizer must ignore, and what it
// must not.
func TestFingerprintEquivalence(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"Hello World", "hello world", true},
		{"hello, world!", "  hello   world ", true},
		{"ÄRGER ÜBER STRASSE", "ärger über strasse", true},
		{"ΣΟΦΙΑ", "σοφια", true},
		{"tab\tand\nnewline", "tab and newline", true},
		{"東京", "東 京", true},
		{"hello world", "world hello", false},
		{"state-of-the-art", "stateoftheart", false},
		{"1.5", "15", false},
		{"hello world", "hello world again", false},
	} {
		fa, fb := Fingerprint(tt.a), Fingerprint(tt.b)
		if (fa == fb) != tt.same {
			t.Errorf("Fingerprint(%q) = %#x, Fingerprint(%q) = %#x; want equal: %v", tt.a, fa, tt.b, fb, tt.same)
		}
	}
}

func TestFingerprintDoesNotAllocate(t *testing.T) {
	text := benchText(true) + " 東京都の天気 𝐀𝐁𝐂 " + benchText(false)
	Fingerprint(text) // build the rune table
	if n := testing.AllocsPerRun(10, func() { Fingerprint(text) }); n != 0 {
		t.Errorf("Fingerprint allocates %v times", n)
	}
	b := []byte(text)
	if n := testing.AllocsPerRun(10, func() { FingerprintBytes(b) }); n != 0 {
		t.Errorf("FingerprintBytes allocates %v times", n)
	}
}

func TestFingerprintZeroMeansNoWords(t *testing.T) {
	for _, s := range []string{"", "   ", "?!", "\xff\xfe", "— … ©", "_"} {
		if fp := Fingerprint(s); fp != 0 {
			t.Errorf("Fingerprint(%q) = %#x, want 0", s, fp)
		}
	}
	for _, s := range []string{"a", "0", "é", "日"} {
		if fp := Fingerprint(s); fp == 0 {
			t.Errorf("Fingerprint(%q) = 0, want non-zero", s)
		}
	}
}

// TestNearDuplicateTexts checks the statistics the package comment states:
// a few edited words usually stay within MaxDistance, unrelated texts are
// far apart. The rates are measured over many trials rather than on one
// hand-picked pair, since SimHash gives no per-pair guarantee.
func TestNearDuplicateTexts(t *testing.T) {
	g := newTextGen(3)
	const trials = 300
	for _, tt := range []struct {
		words, edits int
		minWithin    float64 // fraction of trials within MaxDistance
	}{
		{500, 1, 0.90},
		{500, 2, 0.70},
		{500, 3, 0.60},
		{1000, 1, 0.95},
		{1000, 3, 0.85},
	} {
		t.Run(fmt.Sprintf("%dwords/%dedits", tt.words, tt.edits), func(t *testing.T) {
			within, sum, worst := 0, 0, 0
			for range trials {
				ws := g.words(tt.words)
				a := Fingerprint(prose(ws))
				for range tt.edits {
					ws[g.rng.IntN(len(ws))] = g.vocab[g.rng.IntN(len(g.vocab))]
				}
				d := Distance(a, Fingerprint(prose(ws)))
				sum += d
				worst = max(worst, d)
				if d <= MaxDistance {
					within++
				}
			}
			rate := float64(within) / trials
			t.Logf("within %d: %.0f%%, mean distance %.2f, worst %d", MaxDistance, 100*rate, float64(sum)/trials, worst)
			if rate < tt.minWithin {
				t.Errorf("%.0f%% of edited texts within distance %d, want at least %.0f%%", 100*rate, MaxDistance, 100*tt.minWithin)
			}
			if worst > 12 {
				t.Errorf("an edited text is at distance %d", worst)
			}
		})
	}
	t.Run("unrelated", func(t *testing.T) {
		closest, sum := 64, 0
		for range trials {
			d := Distance(Fingerprint(prose(g.words(500))), Fingerprint(prose(g.words(500))))
			sum += d
			closest = min(closest, d)
		}
		t.Logf("mean distance %.1f, closest %d", float64(sum)/trials, closest)
		if closest <= 10 {
			t.Errorf("unrelated texts at distance %d, want > 10", closest)
		}
	})
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{1, 1, 0},
		{0, 1, 1},
		{0, 1 << 63, 1},
		{0b1011, 0b0110, 3},
		{0, ^uint64(0), 64},
		{0xffff_0000_ffff_0000, 0x0000_ffff_0000_ffff, 64},
		{0x0123456789abcdef, 0x0123456789abcdee, 1},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%#x, %#x) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%#x, %#x) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestBand(t *testing.T) {
	const fp = 0x0123_4567_89ab_cdef
	want := [Bands]uint16{0xcdef, 0x89ab, 0x4567, 0x0123}
	if got := BandKeys(fp); got != want {
		t.Errorf("BandKeys(%#x) = %#x, want %#x", uint64(fp), got, want)
	}
	for i, w := range want {
		if got := Band(fp, i); got != w {
			t.Errorf("Band(%#x, %d) = %#x, want %#x", uint64(fp), i, got, w)
		}
	}
}

// TestBandPigeonhole: fingerprints within MaxDistance share a band.
func TestBandPigeonhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for range 100000 {
		a := rng.Uint64()
		b := flipRandom(rng, a, rng.IntN(MaxDistance+1))
		ka, kb := BandKeys(a), BandKeys(b)
		shared := false
		for i := range ka {
			shared = shared || ka[i] == kb[i]
		}
		if !shared {
			t.Fatalf("%#x and %#x at distance %d share no band", a, b, Distance(a, b))
		}
	}
}

// flip returns fp with the given bits inverted.
func flip(fp uint64, bitPos ...int) uint64 {
	for _, b := range bitPos {
		fp ^= 1 << b
	}
	return fp
}

// flipRandom returns fp with n distinct random bits inverted.
func flipRandom(rng *rand.Rand, fp uint64, n int) uint64 {
	var mask uint64
	for bits.OnesCount64(mask) < n {
		mask |= 1 << rng.IntN(64)
	}
	return fp ^ mask
}

func TestIndexNear(t *testing.T) {
	const base = 0x0123_4567_89ab_cdef
	// Bits 0-15 are band 0, 16-31 band 1, 32-47 band 2, 48-63 band 3.
	for _, tt := range []struct {
		name  string
		flips []int
	}{
		{"exact", nil},
		{"1 bit band 0", []int{0}},
		{"1 bit band 3", []int{63}},
		{"2 bits bands 1,2", []int{17, 40}},
		{"2 bits band 2", []int{33, 47}},
		{"3 bits bands 0,1,2", []int{3, 20, 44}},
		{"3 bits bands 1,2,3", []int{16, 32, 48}},
		{"3 bits bands 0,2,3", []int{15, 47, 63}},
		{"3 bits bands 0,1,3", []int{1, 30, 50}},
		{"3 bits band 0", []int{0, 7, 15}},
		{"3 bits band 1", []int{16, 24, 31}},
		{"3 bits band 2", []int{32, 40, 47}},
		{"3 bits band 3", []int{48, 56, 63}},
		{"3 bits bands 0,0,3", []int{2, 9, 60}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var x Index
			x.Add(base, 7)
			q := flip(base, tt.flips...)
			for maxDist := range MaxDistance + 1 {
				id, dist, ok := x.Near(q, maxDist)
				want := len(tt.flips) <= maxDist
				if ok != want || ok && (id != 7 || dist != len(tt.flips)) {
					t.Errorf("Near(%#x, %d) = %d, %d, %v; want 7, %d, %v", q, maxDist, id, dist, ok, len(tt.flips), want)
				}
			}
		})
	}
}

func TestIndexNeverBeyondMaxDistance(t *testing.T) {
	const base = 0x0123_4567_89ab_cdef
	for _, flips := range [][]int{
		{0, 16, 32, 48},     // one per band: no band shared
		{0, 1, 2, 3},        // all in band 0: bands 1-3 shared
		{0, 1, 16, 17},      // two bands shared
		{5, 6, 7, 8, 9, 10}, // distance 6, three bands shared
	} {
		var x Index
		x.Add(base, 1)
		q := flip(base, flips...)
		for _, maxDist := range []int{3, 4, 10, 64} {
			if id, dist, ok := x.Near(q, maxDist); ok {
				t.Errorf("Near(distance %d, maxDist %d) = %d, %d, true; want nothing", len(flips), maxDist, id, dist)
			}
		}
	}
}

func TestIndexClosestThenEarliest(t *testing.T) {
	const base = 0x0123_4567_89ab_cdef
	var x Index
	x.Add(flip(base, 0, 1, 2), 1) // distance 3
	x.Add(flip(base, 20), 2)      // distance 1
	x.Add(flip(base, 50), 3)      // distance 1, later
	x.Add(flip(base, 30, 31), 4)  // distance 2
	if id, dist, ok := x.Near(base, MaxDistance); !ok || id != 2 || dist != 1 {
		t.Errorf("Near = %d, %d, %v; want 2, 1, true", id, dist, ok)
	}
	x.Add(base, 5)
	x.Add(base, 6)
	if id, dist, ok := x.Near(base, MaxDistance); !ok || id != 5 || dist != 0 {
		t.Errorf("Near = %d, %d, %v; want 5, 0, true", id, dist, ok)
	}
	if id, dist, ok := x.Near(flip(base, 0, 1), MaxDistance); !ok || id != 1 || dist != 1 {
		t.Errorf("Near = %d, %d, %v; want 1, 1, true", id, dist, ok)
	}
}

func TestIndexZeroAndEmpty(t *testing.T) {
	var x Index
	if _, _, ok := x.Near(1, MaxDistance); ok {
		t.Error("empty index found something")
	}
	x.Add(0, 1)
	if x.Len() != 0 {
		t.Errorf("Add(0) stored a fingerprint: Len = %d", x.Len())
	}
	x.Add(1, 2)
	if _, _, ok := x.Near(0, MaxDistance); ok {
		t.Error("Near(0) found something")
	}
	if _, _, ok := x.Near(1, -1); ok {
		t.Error("Near with maxDist -1 found something")
	}
	if _, _, found := x.NearOrAdd(0, 3, MaxDistance); found || x.Len() != 1 {
		t.Errorf("NearOrAdd(0): found %v, Len %d; want false, 1", found, x.Len())
	}
}

func TestIndexNearOrAdd(t *testing.T) {
	const base = 0x0123_4567_89ab_cdef
	var x Index
	if _, _, found := x.NearOrAdd(base, 1, MaxDistance); found {
		t.Fatal("found in an empty index")
	}
	if id, dist, found := x.NearOrAdd(flip(base, 9), 2, MaxDistance); !found || id != 1 || dist != 1 {
		t.Errorf("NearOrAdd = %d, %d, %v; want 1, 1, true", id, dist, found)
	}
	if _, _, found := x.NearOrAdd(flip(base, 9), 3, 0); found {
		t.Error("found at maxDist 0")
	}
	if id, dist, found := x.NearOrAdd(flip(base, 9), 4, 0); !found || id != 3 || dist != 0 {
		t.Errorf("NearOrAdd = %d, %d, %v; want 3, 0, true", id, dist, found)
	}
	if x.Len() != 2 {
		t.Errorf("Len = %d, want 2", x.Len())
	}
}

// linear is the brute-force model of an Index.
type linear []record

func (l linear) near(fp uint64, maxDist int) (id uint64, dist int, ok bool) {
	if fp == 0 || maxDist < 0 {
		return 0, 0, false
	}
	maxDist = min(maxDist, MaxDistance)
	for _, r := range l {
		if d := Distance(r.fp, fp); d <= maxDist && (!ok || d < dist) {
			id, dist, ok = r.id, d, true
		}
	}
	return id, dist, ok
}

func TestIndexMatchesLinearScan(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		fp   func(*rand.Rand) uint64
	}{
		{"uniform", 20000, (*rand.Rand).Uint64},
		// Few values per band: full buckets, many candidates and ties.
		{"clustered", 5000, func(rng *rand.Rand) uint64 {
			var fp uint64
			for i := range Bands {
				fp |= uint64(rng.IntN(8)*0x1111) << (16 * i)
			}
			return flipRandom(rng, fp, rng.IntN(3))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 5))
			var (
				x     Index
				model linear
			)
			add := func(fp uint64) {
				id := uint64(len(model)) + 1000
				x.Add(fp, id)
				if fp != 0 {
					model = append(model, record{fp, id})
				}
			}
			for range tt.n {
				fp := tt.fp(rng)
				add(fp)
				if rng.IntN(10) == 0 { // plant neighbours at distance 1 to 5
					for range 1 + rng.IntN(3) {
						add(flipRandom(rng, fp, 1+rng.IntN(5)))
					}
				}
			}
			if x.Len() != len(model) {
				t.Fatalf("Len = %d, want %d", x.Len(), len(model))
			}
			queries := 3000
			if testing.Short() {
				queries = 300
			}
			var outcomes [MaxDistance + 2]int // found at distance 0..3, not found
			for range queries {
				var q uint64
				if rng.IntN(4) == 0 {
					q = tt.fp(rng)
				} else {
					q = flipRandom(rng, model[rng.IntN(len(model))].fp, rng.IntN(6))
				}
				maxDist := rng.IntN(MaxDistance + 3)
				id, dist, ok := x.Near(q, maxDist)
				wid, wdist, wok := model.near(q, maxDist)
				if id != wid || dist != wdist || ok != wok {
					t.Fatalf("Near(%#x, %d) = %d, %d, %v; linear scan gives %d, %d, %v", q, maxDist, id, dist, ok, wid, wdist, wok)
				}
				if ok {
					outcomes[dist]++
				} else {
					outcomes[MaxDistance+1]++
				}
			}
			t.Logf("found at distance 0..%d, not found: %v", MaxDistance, outcomes)
			for d, n := range outcomes {
				if n == 0 {
					t.Errorf("no query had outcome %d: the test does not cover it", d)
				}
			}
		})
	}
}

// TestIndexConcurrent runs under -race in CI. Workers that meet
// near-duplicates of one page at the same time must add exactly one of them.
func TestIndexConcurrent(t *testing.T) {
	const (
		workers = 8
		pages   = 500
	)
	rng := rand.New(rand.NewPCG(6, 6))
	bases := make([]uint64, pages)
	for i := range bases {
		bases[i] = rng.Uint64() | 1<<63
	}
	var (
		x     Index
		wg    sync.WaitGroup
		added [pages]int
		mu    sync.Mutex
	)
	for w := range workers {
		wg.Go(func() {
			for p, fp := range bases {
				// Worker w's copy differs from the others' in two bits.
				variant := flip(fp, w)
				if _, dist, found := x.NearOrAdd(variant, uint64(p), MaxDistance); !found {
					mu.Lock()
					added[p]++
					mu.Unlock()
				} else if dist != 2 {
					t.Errorf("page %d: found at distance %d, want 2", p, dist)
				}
				x.Add(filler(w, p), uint64(pages+w*pages+p))
				if id, _, ok := x.Near(variant, MaxDistance); !ok || id != uint64(p) {
					t.Errorf("page %d: Near = %d, %v", p, id, ok)
				}
				_ = x.Len()
			}
		})
	}
	wg.Wait()
	for p, n := range added {
		if n != 1 {
			t.Errorf("page %d added %d times, want once", p, n)
		}
	}
	if want := pages + workers*pages; x.Len() != want {
		t.Errorf("Len = %d, want %d", x.Len(), want)
	}
}

// filler is a random fingerprint, unrelated to the pages.
func filler(w, p int) uint64 {
	return rand.New(rand.NewPCG(uint64(w)+1000, uint64(p))).Uint64()
}
