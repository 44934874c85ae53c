package seen

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
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
	// A tiny, overfull filter answers "maybe" for nearly everything: the store must
	// still decide, so nothing new is reported seen.
	store := &exactSet{m: map[int64]bool{}}
	f := New(store, 1, 0.5)
	for h := range int64(20000) {
		f.Add(h)
	}
	hs := []int64{1 << 40, 2 << 40, 3 << 40}
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
		t.Errorf("expected false positives from an overfull filter")
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
