package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// gcFlags are the garbage collector's settings for the crawler process.
//
// The crawler allocates a page's worth of buffers per fetch (the response, the
// broker record, the parser's copies) while keeping a live heap of tens of
// megabytes, so at Go's default GOGC of 100 it collects several times a second:
// 8% of a medium crawl's CPU (500 hosts x 100 pages, cpuprofile). At 400 that
// fell to 2% and CPU per page by 8%, for ~180 MiB more peak RSS (213-232 to
// 376-407 MiB).
//
// A percentage alone lets one moment decide the heap for a long while: a
// collection that runs while a few capped bodies are in flight (20 MiB each,
// and their copies) finds a live heap of 170 MB instead of 60, and at 400%
// the next one waited for 850 MB. The small synthetic web peaked at 470-820
// MiB that way. So the growth between collections is also held to a number
// of bytes, the headroom, by lowering the percentage after each collection
// while the live heap is large (gcTuner), though not below Go's default:
// a small crawl keeps the cheap collections of 400%, and a large one stays
// clear of the soft limit, which is left to be the ceiling it is meant as.
type gcFlags struct {
	percent     int
	headroomMiB int64
	limitMiB    int64
}

func (g *gcFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.percent, "gc-percent", 400, "Go GC target: the most the heap grows between collections, in percent of the live heap (GOGC); higher trades memory for CPU. The GOGC environment variable overrides it and -gc-headroom-mib")
	fs.Int64Var(&g.headroomMiB, "gc-headroom-mib", 160, "the most the heap grows between collections in MiB, as long as that is at least Go's default of 100% of the live heap (the GC percent is lowered after each collection to keep to it); 0 = no bound but -gc-percent")
	fs.Int64Var(&g.limitMiB, "memory-limit-mib", 1024, "soft limit on the Go runtime's memory in MiB (GOMEMLIMIT): the GC works harder as the heap nears it; 0 = none. The GOMEMLIMIT environment variable overrides it")
}

func (g gcFlags) validate() error {
	if g.percent < 1 {
		return fmt.Errorf("gc-percent %d < 1", g.percent)
	}
	if g.headroomMiB < 0 {
		return fmt.Errorf("gc-headroom-mib %d < 0", g.headroomMiB)
	}
	if g.limitMiB < 0 {
		return fmt.Errorf("memory-limit-mib %d < 0", g.limitMiB)
	}
	return nil
}

// apply sets what the environment does not: the Go runtime has already read
// GOGC and GOMEMLIMIT, and an operator who set them meant them. It returns
// the tuner it started, if any.
func (g gcFlags) apply(lookupEnv func(string) (string, bool)) *gcTuner {
	var tuner *gcTuner
	if _, ok := lookupEnv("GOGC"); !ok {
		debug.SetGCPercent(g.percent)
		if g.headroomMiB > 0 {
			tuner = startGCTuner(g.percent, uint64(g.headroomMiB)<<20)
		}
	}
	if _, ok := lookupEnv("GOMEMLIMIT"); !ok && g.limitMiB > 0 {
		debug.SetMemoryLimit(g.limitMiB << 20)
	}
	return tuner
}

// gcPercentFor is the GC percent that lets a live heap of live bytes grow by
// at most headroom bytes before the next collection, but by no less than
// Go's default of 100% and no more than maxPercent.
func gcPercentFor(live, headroom uint64, maxPercent int) int {
	if live == 0 {
		return maxPercent
	}
	p := max(headroom*100/live, 100)
	return int(min(p, uint64(maxPercent)))
}

// gcTuner sets the GC percent after every collection from the live heap
// that collection found (gcPercentFor).
type gcTuner struct {
	maxPercent int
	headroom   uint64
	stopped    atomic.Bool
	cycles     atomic.Int64 // collections seen, for tests
	percent    int          // as last set; only the cleanup goroutine touches it
	sample     []metrics.Sample
}

// gcCycle is allocated and dropped at once, so that the collection after
// it runs its cleanup. It holds a pointer: a pointer-free object this small
// would share a block with others and might outlive the collection.
type gcCycle struct{ _ *gcCycle }

func startGCTuner(maxPercent int, headroom uint64) *gcTuner {
	t := &gcTuner{
		maxPercent: maxPercent,
		headroom:   headroom,
		percent:    maxPercent,
		sample:     []metrics.Sample{{Name: "/gc/heap/live:bytes"}},
	}
	t.arm()
	return t
}

func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcCycle), (*gcTuner).afterGC, t)
}

// afterGC runs on the runtime's cleanup goroutine after a collection.
func (t *gcTuner) afterGC() {
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		if p := gcPercentFor(t.sample[0].Value.Uint64(), t.headroom, t.maxPercent); p != t.percent {
			debug.SetGCPercent(p)
			t.percent = p
		}
	}
	t.arm()
	t.cycles.Add(1) // after arm: a collection that follows runs the next cleanup
}

// stop ends the tuning after the next collection; the GC percent stays as
// last set.
func (t *gcTuner) stop() { t.stopped.Store(true) }
