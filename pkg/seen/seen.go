// Package seen is the fetcher's seen-URL check: a Bloom filter in memory in front of
// the exact set in the metadata store.
//
// Most links a crawler extracts point at pages it already knows, and most new URLs
// are genuinely new, so both answers should be cheap. The Bloom filter answers
// "definitely new" with certainty; those URLs go straight to the store's idempotent
// insert. A "maybe seen" is never trusted (DESIGN invariant 3): it is confirmed
// against the store, and a false positive is admitted like any new URL. The filter
// therefore only ever saves work; it cannot lose a URL. Filling it from the store
// when partitions are assigned keeps the "maybe seen" path rare for known URLs being
// re-confirmed, and the idempotent insert covers any URL the filter has not been told
// about.
package seen

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
)

// Exact is the store's half of the check.
type Exact interface {
	Seen(ctx context.Context, hashes []int64) ([]bool, error)
}

// Filter is safe for concurrent use.
type Filter struct {
	exact Exact

	mu sync.Mutex
	bf *bloom.BloomFilter
}

// New sizes the Bloom filter for capacity URLs at false-positive rate fp. Past
// capacity the rate grows, which costs store look-ups, never correctness.
func New(exact Exact, capacity uint, fp float64) *Filter {
	return &Filter{exact: exact, bf: bloom.NewWithEstimates(max(capacity, 1024), fp)}
}

func key(h int64, buf *[8]byte) []byte {
	binary.LittleEndian.PutUint64(buf[:], uint64(h))
	return buf[:]
}

// Add records hashes known to be in the store.
func (f *Filter) Add(hashes ...int64) {
	var buf [8]byte
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range hashes {
		f.bf.Add(key(h, &buf))
	}
}

// Result says, per hash, what the check found.
type Result struct {
	Seen          []bool // confirmed in the store
	BloomNew      int    // answered "definitely new" by the filter, no store look-up
	StoreSeen     int    // "maybe seen", confirmed by the store
	FalsePositive int    // "maybe seen", not in the store
}

// Check reports which hashes the store already holds. A hash the filter has never
// seen is new without a look-up; the rest are confirmed in one batched look-up.
func (f *Filter) Check(ctx context.Context, hashes []int64) (Result, error) {
	res := Result{Seen: make([]bool, len(hashes))}
	var maybe []int64
	var maybeIdx []int
	var buf [8]byte
	f.mu.Lock()
	for i, h := range hashes {
		if f.bf.Test(key(h, &buf)) {
			maybe = append(maybe, h)
			maybeIdx = append(maybeIdx, i)
		}
	}
	f.mu.Unlock()
	res.BloomNew = len(hashes) - len(maybe)
	if len(maybe) == 0 {
		return res, nil
	}
	found, err := f.exact.Seen(ctx, maybe)
	if err != nil {
		return res, fmt.Errorf("confirm %d maybe-seen URLs: %w", len(maybe), err)
	}
	for j, ok := range found {
		res.Seen[maybeIdx[j]] = ok
		if ok {
			res.StoreSeen++
		} else {
			res.FalsePositive++
		}
	}
	return res, nil
}

// BitsPerURL returns the filter's memory per URL at its configured capacity.
func (f *Filter) BitsPerURL(capacity uint) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return float64(f.bf.Cap()) / float64(max(capacity, 1))
}
