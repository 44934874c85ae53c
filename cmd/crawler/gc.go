package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
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
//
// The headroom is memory spent to save CPU, which is only worth it while the
// CPU is short. A medium crawl at 64 MiB instead of 160 peaked at 0.82-0.86x
// the RSS with no more CPU per page while it had the machine to itself, but
// took up to a fifth more beside other work (docs/performance.md, "Memory at
// the peak"). So while other processes take little of the machine's CPU the
// tuner holds the heap to the smaller -gc-idle-headroom-mib, down to half
// the live heap (spareTarget).
type gcFlags struct {
	percent         int
	headroomMiB     int64
	idleHeadroomMiB int64
	limitMiB        int64
}

func (g *gcFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.percent, "gc-percent", 400, "Go GC target: the most the heap grows between collections, in percent of the live heap (GOGC); higher trades memory for CPU. The GOGC environment variable overrides it and -gc-headroom-mib")
	fs.Int64Var(&g.headroomMiB, "gc-headroom-mib", 160, "the most the heap grows between collections in MiB, as long as that is at least Go's default of 100% of the live heap (the GC percent is lowered after each collection to keep to it); 0 = no bound but -gc-percent")
	fs.Int64Var(&g.idleHeadroomMiB, "gc-idle-headroom-mib", 64, "the headroom while other processes take at most a quarter of the machine's CPU (/proc/stat and getrusage, over each second), rising to -gc-headroom-mib as they take up to half; it may hold the growth to 50% of the live heap, not 100%: more collections cost little CPU while the crawler has the cores to itself; 0 = always -gc-headroom-mib")
	fs.Int64Var(&g.limitMiB, "memory-limit-mib", 1024, "soft limit on the Go runtime's memory in MiB (GOMEMLIMIT): the GC works harder as the heap nears it; 0 = none. The GOMEMLIMIT environment variable overrides it")
}

func (g gcFlags) validate() error {
	if g.percent < 1 {
		return fmt.Errorf("gc-percent %d < 1", g.percent)
	}
	if g.headroomMiB < 0 {
		return fmt.Errorf("gc-headroom-mib %d < 0", g.headroomMiB)
	}
	if g.idleHeadroomMiB < 0 {
		return fmt.Errorf("gc-idle-headroom-mib %d < 0", g.idleHeadroomMiB)
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
			var spare *cpuSpare
			if g.idleHeadroomMiB > 0 && g.idleHeadroomMiB < g.headroomMiB {
				spare = newCPUSpare(procCPUTimes)
			}
			tuner = startGCTuner(g.percent, uint64(g.headroomMiB)<<20, uint64(g.idleHeadroomMiB)<<20, spare)
		}
	}
	if _, ok := lookupEnv("GOMEMLIMIT"); !ok && g.limitMiB > 0 {
		debug.SetMemoryLimit(g.limitMiB << 20)
	}
	return tuner
}

// gcPercentFor is the GC percent that lets a live heap of live bytes grow by
// at most headroom bytes before the next collection, but by no less than
// minPercent (Go's default of 100, but for spareTarget) and no more than
// maxPercent.
func gcPercentFor(live, headroom uint64, minPercent, maxPercent int) int {
	if live == 0 {
		return maxPercent
	}
	p := max(headroom*100/live, uint64(minPercent))
	return int(min(p, uint64(maxPercent)))
}

// gcTuner sets the GC percent after every collection from the live heap
// that collection found (gcPercentFor).
type gcTuner struct {
	maxPercent int
	headroom   uint64
	// With spare set, the headroom goes down to idleHeadroom as the share of
	// the machine's CPU that other processes take falls (spareTarget).
	spare        *cpuSpare
	idleHeadroom uint64
	stopped      atomic.Bool
	cycles       atomic.Int64 // collections seen, for tests
	percent      int          // as last set; only the cleanup goroutine touches it
	sample       []metrics.Sample
}

// gcCycle is allocated and dropped at once, so that the collection after
// it runs its cleanup. It holds a pointer: a pointer-free object this small
// would share a block with others and might outlive the collection.
type gcCycle struct{ _ *gcCycle }

// startGCTuner starts tuning to headroom, or with spare to as little as
// idleHeadroom while the machine's CPU is idle enough.
func startGCTuner(maxPercent int, headroom, idleHeadroom uint64, spare *cpuSpare) *gcTuner {
	t := &gcTuner{
		maxPercent:   maxPercent,
		headroom:     headroom,
		idleHeadroom: idleHeadroom,
		spare:        spare,
		percent:      maxPercent,
		sample:       []metrics.Sample{{Name: "/gc/heap/live:bytes"}},
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
		headroom, minPercent := t.headroom, busyMinPercent
		if t.spare != nil {
			headroom, minPercent = spareTarget(t.spare.others(time.Now()), t.idleHeadroom, t.headroom)
		}
		if p := gcPercentFor(t.sample[0].Value.Uint64(), headroom, minPercent, t.maxPercent); p != t.percent {
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

// The share of the machine's CPU that other processes took, between which
// the headroom goes from the idle one up to the busy one. A collection costs
// about the same work whenever it runs; what makes frequent ones dear is
// competing for the cores: a cycle that other processes hold the cores
// through lasts longer, and for all of it the write barrier is on and
// allocating goroutines assist. A medium crawl at 64 MiB against 160 took
// 0.80-0.98x the CPU per page with the machine to itself (the test web
// beside it), and 1.03-1.20x beside two busy loops (docs/performance.md,
// "Memory at the peak").
const (
	othersNone = 0.25
	othersFull = 0.50
)

// The least GC percent the headroom may lower the percent to: Go's default
// while the machine is busy, so that a large live heap is not collected
// again after less than its own size of allocation; half of it while other
// processes leave the cores to the crawler. On the medium web at 64 MiB
// the floor of 100% held the heap goal at twice the live heap's 100-120 MB;
// at 50% the peak RSS fell by a tenth more (docs/performance.md, "Memory at
// the peak").
const (
	busyMinPercent = 100
	idleMinPercent = 50
)

// spareTarget is the headroom and least GC percent when others of the
// machine's CPU went to other processes: idle up to othersNone, busy from
// othersFull, in between on a line. A share below 0 means unknown, and
// gives busy.
func spareTarget(others float64, idle, busy uint64) (headroom uint64, minPercent int) {
	switch {
	case others < 0 || others >= othersFull:
		return busy, busyMinPercent
	case others <= othersNone:
		return idle, idleMinPercent
	}
	f := (others - othersNone) / (othersFull - othersNone)
	return idle + uint64(f*float64(busy-idle)), idleMinPercent + int(f*float64(busyMinPercent-idleMinPercent))
}

// cpuSpare measures the share of the machine's CPU time that other
// processes took, from counters sampled at most once per cpuSpareWindow:
// collections come several times a second, and a share over a few
// milliseconds says nothing.
type cpuSpare struct {
	// times returns the machine's CPU seconds so far that no other process
	// took (idle, or this one's) and in all.
	times     func() (mine, total float64, err error)
	at        time.Time
	mine, all float64
	last      float64 // the share over the last window; -1 until there is one
}

const cpuSpareWindow = time.Second

func newCPUSpare(times func() (mine, total float64, err error)) *cpuSpare {
	c := &cpuSpare{times: times, last: -1}
	if mine, all, err := times(); err == nil {
		c.at, c.mine, c.all = time.Now(), mine, all
	}
	return c
}

// others returns the share other processes took over the last window
// that ended by now, or -1 if it is not known.
func (c *cpuSpare) others(now time.Time) float64 {
	if !c.at.IsZero() && now.Sub(c.at) < cpuSpareWindow {
		return c.last
	}
	mine, all, err := c.times()
	if err != nil {
		c.last, c.at = -1, time.Time{}
		return -1
	}
	if !c.at.IsZero() && all > c.all {
		c.last = min(max(1-(mine-c.mine)/(all-c.all), 0), 1)
	}
	c.at, c.mine, c.all = now, mine, all
	return c.last
}
