package simhash

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// benchText returns about 5 KiB of text, the size of a typical article's main
// text after extraction.
func benchText(unicode bool) string {
	ws := newTextGen(7).words(2000)
	if unicode {
		// Transliterate to Cyrillic: every letter is two bytes and goes
		// through the non-ASCII path.
		r := strings.NewReplacer("a", "а", "b", "б", "c", "ц", "d", "д", "e", "е", "f", "ф", "g", "г", "h", "х",
			"i", "и", "k", "к", "l", "л", "m", "м", "n", "н", "o", "о", "p", "п", "r", "р", "s", "с", "t", "т",
			"u", "у", "v", "в", "w", "ш")
		for i, w := range ws {
			ws[i] = r.Replace(w)
		}
	}
	s := prose(ws)
	for len(s) > 5<<10 {
		s = s[:strings.LastIndexByte(s[:len(s)-1], ' ')]
	}
	return s
}

func BenchmarkFingerprint(b *testing.B) {
	for _, tt := range []struct {
		name    string
		unicode bool
	}{{"ascii", false}, {"cyrillic", true}} {
		b.Run(tt.name, func(b *testing.B) {
			text := benchText(tt.unicode)
			Fingerprint(text) // build the rune table outside the timing
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				Fingerprint(text)
			}
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	var x Index
	b.ReportAllocs()
	for i := uint64(0); b.Loop(); i++ {
		x.Add(rng.Uint64(), i)
	}
}

// BenchmarkNear queries an index of random fingerprints; half the queries
// are within MaxDistance of one of them, half find nothing. bytes/fp is the
// live heap the index takes per fingerprint.
func BenchmarkNear(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%dM", n/1_000_000), func(b *testing.B) {
			if n > 1_000_000 && testing.Short() {
				b.Skip("building 10M fingerprints takes seconds and 500 MB; skipped with -short")
			}
			x, perFP := buildIndex(n, 9)

			// Even queries: the first fingerprints added, regenerated
			// from the seed, with up to MaxDistance bits flipped. Odd
			// queries: from another stream, so almost surely far from
			// everything.
			added := rand.New(rand.NewPCG(9, 9))
			other := rand.New(rand.NewPCG(10, 10))
			queries := make([]uint64, 1<<12)
			for i := range queries {
				queries[i] = added.Uint64()
				if i%2 == 0 {
					queries[i] = flipRandom(other, queries[i], other.IntN(MaxDistance+1))
				} else {
					queries[i] = other.Uint64()
				}
			}
			found := 0
			for i := 0; b.Loop(); i++ {
				if _, _, ok := x.Near(queries[i%len(queries)], MaxDistance); ok {
					found++
				}
			}
			if b.N >= len(queries) && (found < b.N/2 || found > b.N/2+b.N/100) {
				b.Errorf("found %d of %d, want half", found, b.N)
			}
			// After the loop: b.Loop's first call drops metrics
			// reported before it.
			b.ReportMetric(perFP, "bytes/fp")
		})
	}
}

// buildIndex adds n random fingerprints and returns the index with the heap
// it takes per fingerprint.
func buildIndex(n int, seed uint64) (*Index, float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := new(Index)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range n {
		x.Add(rng.Uint64(), uint64(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return x, float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}
