package seen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// exactSet is an exact store stand-in: the filter's contract is about what it asks
// the store, which a map answers exactly.
type exactSet struct {
	mu      sync.Mutex
	m       map[int64]bool
	lookups int
}

func (s *exactSet) Seen(_ context.Context, hs []int64) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups += len(hs)
	out := make([]bool, len(hs))
	for i, h := range hs {
		out[i] = s.m[h]
	}
	return out, nil
}

func TestCheckNeverMissesAndSkipsLookupsForNew(t *testing.T) {
	store := &exactSet{m: map[int64]bool{}}
	f := New(store, 10000, 0.01)
	rng := rand.New(rand.NewPCG(1, 2))
	var known []int64
	for range 5000 {
		h := rng.Int64()
		known = append(known, h)
		store.m[h] = true
	}
	f.Add(known...)

	// Every known hash must be reported seen (zero missed), every fresh one new.
	fresh := make([]int64, 5000)
	for i := range fresh {
		fresh[i] = rng.Int64()
	}
	res, err := f.Check(context.Background(), append(append([]int64{}, known...), fresh...))
	if err != nil {
		t.Fatal(err)
	}
	for i := range known {
		if !res.Seen[i] {
			t.Fatalf("known hash %d reported new", i)
		}
	}
	for i := range fresh {
		if res.Seen[len(known)+i] {
			t.Fatalf("fresh hash %d reported seen", i)
		}
	}
	if res.StoreSeen != len(known) {
		t.Errorf("StoreSeen = %d, want %d", res.StoreSeen, len(known))
	}
	// At 1% false positives, nearly all fresh hashes must skip the store.
	if res.BloomNew < len(fresh)*95/100 {
		t.Errorf("BloomNew = %d of %d fresh: filter is not saving look-ups", res.BloomNew, len(fresh))
	}
	if store.lookups != len(known)+res.FalsePositive {
		t.Errorf("store looked up %d hashes, want %d", store.lookups, len(known)+res.FalsePositive)
	}
}

func TestCheckConfirmsFalsePositives(t *testing.T) {
	// A filter allowed 50% false positives answers "maybe" for many new hashes: the
	// store must still decide, so nothing new is reported seen.
	store := &exactSet{m: map[int64]bool{}}
	f := New(store, 1, 0.5)
	for h := range int64(20000) {
		f.Add(h)
	}
	hs := make([]int64, 1000)
	for i := range hs {
		hs[i] = int64(i+1) << 40
	}
	res, err := f.Check(context.Background(), hs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range res.Seen {
		if s {
			t.Errorf("hash %d not in store reported seen", hs[i])
		}
	}
	if res.FalsePositive == 0 {
		t.Errorf("expected false positives from a filter allowed 50%%")
	}
}

// randomHashes returns n distinct hashes; seed keeps sets apart.
func randomHashes(n int, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	hs := make([]int64, n)
	for i := range hs {
		hs[i] = rng.Int64()
	}
	return hs
}

// contains reports whether the filter answers "maybe seen" for h.
func (f *Filter) contains(h int64) bool {
	var buf [8]byte
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.test(key(h, &buf))
}

func TestGrowthKeepsFalsePositiveRate(t *testing.T) {
	const target = 0.01
	n, probes := 2_000_000, 500_000
	if testing.Short() {
		n, probes = 400_000, 100_000
	}
	f := New(nil, 100_000, target)
	added := randomHashes(n, 1)
	f.Add(added...)
	if len(f.chain) < 3 {
		t.Fatalf("%d filters after %d URLs from a start of 100000: the filter did not grow", len(f.chain), n)
	}
	// Zero missed: every added hash is answered "maybe seen".
	for i, h := range added {
		if !f.contains(h) {
			t.Fatalf("added hash %d (%d of %d) answered new", h, i, n)
		}
	}
	fp := 0
	for _, h := range randomHashes(probes, 2) {
		if f.contains(h) {
			fp++
		}
	}
	rate := float64(fp) / float64(probes)
	t.Logf("%d URLs, %d filters: false-positive rate %.4f (target %.2f)", n, len(f.chain), rate, target)
	if rate > target {
		t.Errorf("false-positive rate %.4f over the target %.2f", rate, target)
	}
	// Distinct random hashes are all counted, but for those skipped as false
	// positives of the filter itself.
	urls, _ := f.Size()
	if urls > uint64(n) || float64(urls) < float64(n)*(1-target) {
		t.Errorf("Size reports %d URLs after adding %d distinct hashes", urls, n)
	}
}

func TestAddAgainDoesNotGrow(t *testing.T) {
	// Partitions are re-added on every assignment; that must not grow the filter.
	f := New(nil, 10_000, 0.01)
	hs := randomHashes(15_000, 3)
	f.Add(hs...)
	urls, bytes := f.Size()
	for range 3 {
		f.Add(hs...)
	}
	if u, b := f.Size(); u != urls || b != bytes {
		t.Errorf("adding the same hashes again: %d URLs, %d bytes; want %d, %d", u, b, urls, bytes)
	}
}

func TestBytesPerURL(t *testing.T) {
	// Issue 5: at most 4 bytes of RAM per known URL for a one-million-URL crawl. The
	// worst point past a million is just after the next growth step, when the newest
	// filter, as large as all the others together, is still empty.
	tests := []struct {
		name       string
		start      uint
		pastGrowth bool // also check just after the first growth step past 1M
	}{
		{"default start", DefaultCapacity, true},
		{"start 10k", 10_000, true},
		// Starting at the crawl's size is smallest at exactly that size, but the
		// step just past it takes three times the memory of the first filter.
		{"start 1M", 1_000_000, false},
	}
	const n = 1_000_000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(nil, tt.start, 0.01)
			rng := rand.New(rand.NewPCG(4, 4))
			known := 0
			add := func(k int) {
				for range k {
					f.Add(rng.Int64())
				}
				known += k
			}
			check := func() {
				t.Helper()
				urls, bytes := f.Size()
				// Per known URL: the distinct hashes the crawl added (the filter's own
				// count leaves out those it already answered "maybe" for).
				perURL := float64(bytes) / float64(known)
				t.Logf("%d URLs (%d counted), %d filters: %d bytes, %.2f bytes/URL", known, urls, len(f.chain), bytes, perURL)
				if perURL > 4 {
					t.Errorf("%.2f bytes per URL at %d URLs, want at most 4", perURL, known)
				}
			}
			add(n)
			check()
			if !tt.pastGrowth || testing.Short() {
				return
			}
			for filters := len(f.chain); len(f.chain) == filters; {
				add(1)
			}
			check()
		})
	}
}

func TestConcurrentCheckAndAdd(t *testing.T) {
	store := &exactSet{m: map[int64]bool{}}
	f := New(store, 1024, 0.01)
	const writers, perWriter = 4, 5000
	sets := make([][]int64, writers)
	for w := range sets {
		sets[w] = randomHashes(perWriter, uint64(10+w))
		for _, h := range sets[w] {
			store.m[h] = true
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i += 100 {
				f.Add(sets[w][i : i+100]...)
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i += 500 {
				if _, err := f.Check(ctx, sets[w][i:i+500]); err != nil {
					t.Error(err)
				}
				f.Size()
			}
		}()
	}
	wg.Wait()
	for w, hs := range sets {
		res, err := f.Check(ctx, hs)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range res.Seen {
			if !s {
				t.Fatalf("writer %d: added hash %d reported new", w, hs[i])
			}
		}
	}
	if len(f.chain) < 2 {
		t.Errorf("%d filters after %d URLs from a start of 1024: growth not exercised", len(f.chain), writers*perWriter)
	}
}

func BenchmarkCheckNew(b *testing.B) {
	store := &exactSet{m: map[int64]bool{}}
	f := New(store, 1<<20, 0.01)
	hs := make([]int64, 512)
	rng := rand.New(rand.NewPCG(3, 4))
	b.ReportAllocs()
	for b.Loop() {
		for i := range hs {
			hs[i] = rng.Int64()
		}
		if _, err := f.Check(context.Background(), hs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(hs))/b.Elapsed().Seconds(), "lookups/s")
}

// BenchmarkFill fills the filter from DefaultCapacity, as the fetcher starts it, and
// reports its memory per URL, the rate of adds while filling, and the rate of checks
// of new URLs once full (every filter of the chain is tested).
func BenchmarkFill(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("urls=%d", n), func(b *testing.B) {
			if n > 1_000_000 && testing.Short() {
				b.Skip("10M URLs take a while; run without -short")
			}
			f := New(&exactSet{m: map[int64]bool{}}, DefaultCapacity, 0.01)
			rng := rand.New(rand.NewPCG(5, 6))
			batch := make([]int64, 512)
			start := time.Now()
			for done := 0; done < n; done += len(batch) {
				batch = batch[:min(len(batch), n-done)]
				for i := range batch {
					batch[i] = rng.Int64()
				}
				f.Add(batch...)
			}
			fill := time.Since(start)
			_, bytes := f.Size()
			batch = batch[:cap(batch)]
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for i := range batch {
					batch[i] = rng.Int64()
				}
				if _, err := f.Check(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "lookups/s")
			b.ReportMetric(float64(n)/fill.Seconds(), "adds/s")
			b.ReportMetric(float64(bytes)/float64(n), "bytes/URL")
			b.ReportMetric(float64(len(f.chain)), "filters")
		})
	}
}
