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
//
// The filter grows with the crawl instead of being sized for its end: it is a
// scalable Bloom filter (Almeida et al., "Scalable Bloom Filters", 2007), a chain of
// fixed-size filters. URLs go into the newest one; when it holds the URLs it was
// sized for, a new one twice as large is started. Each new filter gets a tighter
// false-positive rate than the one before, so the rates form a geometric series whose
// sum, the chance that any filter answers "maybe" for a new URL, stays under the
// target however far the chain grows. A small crawl so pays for a small filter, and a
// large one never degrades to a store look-up for every URL, as a fixed filter filled
// far past its size does.
package seen

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
)

// DefaultCapacity is a starting capacity that keeps the filter under 4 bytes per
// known URL between one and ten million URLs, wherever a growth step falls (the
// worst point is just after a step, with the newest filter still nearly empty).
// Starting at the crawl's expected size would be smaller right at that size but
// nearly 5 bytes per URL just past it.
const DefaultCapacity = 100_000

const (
	// growth is each new filter's capacity over the previous one's. Two is the
	// paper's choice for slowly growing sets: few filters to test, and at most half
	// of the memory waiting to be filled.
	growth = 2
	// tightening is each new filter's false-positive rate over the previous one's.
	// Closer to 1 costs more bits in the first filters and fewer in later ones; 0.8
	// is in the range the paper recommends and, from DefaultCapacity, has the lowest
	// worst case between one and ten million URLs (3.9 bytes per URL; 0.5 needs 4.6).
	tightening = 0.8
	// MinCapacity keeps a misconfigured start from growing in tiny steps; New
	// raises a smaller capacity to it.
	MinCapacity = 1024
	// filterOverhead is the memory of one filter besides its bits: the filter and
	// bit-set structs and the chain's entry.
	filterOverhead = 64
)

// Exact is the store's half of the check.
type Exact interface {
	Seen(ctx context.Context, hashes []int64) ([]bool, error)
}

// Filter is safe for concurrent use.
type Filter struct {
	exact Exact

	mu     sync.RWMutex
	chain  []*stage // oldest first; never empty
	urls   uint64   // hashes added to the chain
	fpNext float64  // false-positive rate of the next filter to start
}

// stage is one filter of the chain.
type stage struct {
	bf       *bloom.BloomFilter
	capacity uint // URLs it is sized for
	n        uint // URLs added to it
}

// New starts the filter sized for capacity URLs and grows it past that, keeping the
// chance that a URL never added is answered "maybe seen" under fp, which must be in
// (0, 1).
func New(exact Exact, capacity uint, fp float64) *Filter {
	fp = min(max(fp, 1e-9), 0.999)
	f := &Filter{exact: exact, fpNext: fp * (1 - tightening)}
	f.grow(max(capacity, MinCapacity))
	return f
}

// grow starts a new filter for capacity URLs; f.mu is held or f is not shared yet.
func (f *Filter) grow(capacity uint) *stage {
	s := &stage{bf: bloom.NewWithEstimates(capacity, f.fpNext), capacity: capacity}
	f.chain = append(f.chain, s)
	f.fpNext *= tightening
	return s
}

func key(h int64, buf *[8]byte) []byte {
	binary.LittleEndian.PutUint64(buf[:], uint64(h))
	return buf[:]
}

// test reports whether any filter of the chain may hold k; f.mu is held. The newest
// filters are the largest and hold most URLs, so they answer first.
func (f *Filter) test(k []byte) bool {
	for i := len(f.chain) - 1; i >= 0; i-- {
		if f.chain[i].bf.Test(k) {
			return true
		}
	}
	return false
}

// Add records hashes known to be in the store. A hash the filter already answers
// "maybe seen" for is not added again: callers add every hash they checked, and the
// partitions' hashes are added again on every assignment, so counting them twice
// would grow the filter for URLs it already covers. A false positive skipped this
// way is still answered "maybe seen", so no hash is lost.
func (f *Filter) Add(hashes ...int64) {
	var buf [8]byte
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range hashes {
		k := key(h, &buf)
		if f.test(k) {
			continue
		}
		s := f.chain[len(f.chain)-1]
		if s.n >= s.capacity {
			s = f.grow(s.capacity * growth)
		}
		s.bf.Add(k)
		s.n++
		f.urls++
	}
}

// MayContain reports whether h may have been added; false is certain. For a
// caller that keeps its own exact look-up (exact may then be nil in New).
func (f *Filter) MayContain(h int64) bool {
	var buf [8]byte
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.test(key(h, &buf))
}

// Size returns the URLs added to the filter and the bytes its filters take. A hash
// Add skipped as already "maybe seen" is not counted, so urls can fall short of the
// distinct hashes added by up to the false-positive rate.
func (f *Filter) Size() (urls, bytes uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, s := range f.chain {
		bytes += (uint64(s.bf.Cap())+63)/64*8 + filterOverhead
	}
	return f.urls, bytes
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
	f.mu.RLock()
	for i, h := range hashes {
		if f.test(key(h, &buf)) {
			maybe = append(maybe, h)
			maybeIdx = append(maybeIdx, i)
		}
	}
	f.mu.RUnlock()
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
