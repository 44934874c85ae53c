package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// injectKinds are the requests -inject-errors can fail, and the retriable errors
// each fails with, as a broker that lost a partition's leadership, its group
// coordinator or a log disk answers them. A failed request's error is chosen among
// its kind's in turn by the seed.
//
// kfake rejects a faulted entity before acting on it, except REQUEST_TIMED_OUT
// on a produce or an offset commit: those are applied and then answered with the
// error, as a real broker's replication or commit timeout is, so the client
// retries what the broker already holds (the idempotent producer's sequence
// numbers make the retried batch a duplicate the broker drops).
var injectKinds = []struct {
	name string
	key  kmsg.Key
	errs []*kerr.Error
}{
	{"produce", kmsg.Produce, []*kerr.Error{kerr.NotLeaderForPartition, kerr.RequestTimedOut}},
	{"fetch", kmsg.Fetch, []*kerr.Error{kerr.NotLeaderForPartition, kerr.KafkaStorageError}},
	{"commit", kmsg.OffsetCommit, []*kerr.Error{kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.RequestTimedOut}},
}

// errorInjection is -inject-errors: for fault testing, the share of produce,
// fetch and offset commit requests the broker fails, and the seed that decides
// which. The n-th request of a kind fails or not by the seed and n alone, so a
// test that sends its requests in the same order sees the same failures.
type errorInjection struct {
	rates []float64 // by injectKinds index
	seed  uint64
}

func (e *errorInjection) enabled() bool {
	for _, r := range e.rates {
		if r > 0 {
			return true
		}
	}
	return false
}

// String gives the flag's value in the form Set reads.
func (e *errorInjection) String() string {
	if e == nil || !e.enabled() {
		return ""
	}
	var parts []string
	for i, k := range injectKinds {
		if e.rates[i] > 0 {
			parts = append(parts, k.name+"="+strconv.FormatFloat(e.rates[i], 'g', -1, 64))
		}
	}
	return strings.Join(append(parts, "seed="+strconv.FormatUint(e.seed, 10)), ",")
}

// Set parses "produce=0.1,fetch=0.05,commit=0.2,seed=7": each kind's share of
// requests to fail, from 0 to 1, and the seed (default 1). An empty value turns
// injection off.
func (e *errorInjection) Set(s string) error {
	out := errorInjection{rates: make([]float64, len(injectKinds)), seed: 1}
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return fmt.Errorf("want kind=rate or seed=N, got %q", kv)
		}
		if seen[k] {
			return fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		if k == "seed" {
			seed, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("seed %q: want a non-negative integer", v)
			}
			out.seed = seed
			continue
		}
		i := injectKind(k)
		if i < 0 {
			return fmt.Errorf("unknown request kind %q: want produce, fetch, commit or seed", k)
		}
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(r) || r < 0 || r > 1 {
			return fmt.Errorf("%s rate %q: want a number from 0 to 1", k, v)
		}
		out.rates[i] = r
	}
	*e = out
	return nil
}

func injectKind(name string) int {
	for i, k := range injectKinds {
		if k.name == name {
			return i
		}
	}
	return -1
}

// install adds the injection's faults to c; the returned function reports how
// many requests of each kind were failed so far, of how many
// ("produce=3/41 fetch=0/12 commit=1/9").
func (e *errorInjection) install(c *kfake.Cluster) (hits func() string) {
	type installed struct {
		name    string
		picker  *failurePicker
		handles []*kfake.FaultHandle
	}
	var all []installed
	for i, k := range injectKinds {
		if e.rates[i] <= 0 {
			continue
		}
		p := newFailurePicker(e.seed, uint64(i+1), e.rates[i], len(k.errs))
		in := installed{name: k.name, picker: p}
		for j, kerrErr := range k.errs {
			in.handles = append(in.handles, c.Fault(kfake.Fault{
				Keys:  []kmsg.Key{k.key},
				Err:   kerrErr,
				Count: -1,
				When:  func(r kmsg.Request) bool { return p.pick(r) == j },
			}))
		}
		all = append(all, in)
	}
	return func() string {
		var parts []string
		for _, in := range all {
			n := 0
			for _, h := range in.handles {
				n += h.Hits()
			}
			parts = append(parts, fmt.Sprintf("%s=%d/%d", in.name, n, in.picker.decided()))
		}
		return strings.Join(parts, " ")
	}
}

// failurePicker decides, for each request of one kind, whether it fails and with
// which of the kind's errors. kfake asks once per partition a request carries
// (and again when a waiting fetch wakes up), so the answer is kept per request:
// a request fails whole or not at all.
type failurePicker struct {
	mu      sync.Mutex
	seed    uint64
	rate    float64
	choices int
	n       uint64 // requests decided so far
	memo    map[kmsg.Request]int
	ring    [pickerMemo]kmsg.Request // memo's keys; the oldest is evicted first
}

// pickerMemo bounds the requests whose answer is kept; a request is asked about
// while it is handled, long before this many others arrive.
const pickerMemo = 4096

func newFailurePicker(seed, kind uint64, rate float64, choices int) *failurePicker {
	return &failurePicker{seed: splitmix64(seed ^ kind<<56), rate: rate, choices: choices, memo: map[kmsg.Request]int{}}
}

// decided returns how many requests pick has seen.
func (p *failurePicker) decided() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// pick returns the index of the error to fail r with, or -1 to let it through.
func (p *failurePicker) pick(r kmsg.Request) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.memo[r]; ok {
		return v
	}
	p.n++
	h := splitmix64(p.seed + p.n)
	v := -1
	if float64(h>>11)/(1<<53) < p.rate {
		v = int(splitmix64(h) % uint64(p.choices))
	}
	slot := &p.ring[p.n%pickerMemo]
	if *slot != nil {
		delete(p.memo, *slot)
	}
	*slot = r
	p.memo[r] = v
	return v
}

// splitmix64 is a 64-bit mixer (Steele, Lea and Flood's SplitMix64 finaliser):
// consecutive inputs give independent-looking outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
