package main

import (
	"flag"
	"fmt"
	"runtime/debug"
)

// gcFlags are the garbage collector's settings for the crawler process.
//
// The crawler allocates a page's worth of buffers per fetch (the response, the
// broker record, the parser's copies) while keeping a live heap of tens of
// megabytes, so at Go's default GOGC of 100 it collects several times a second:
// 8% of a medium crawl's CPU (500 hosts x 100 pages, cpuprofile). At 400 that
// fell to 2% and CPU per page by 8%, for ~180 MiB more peak RSS (213-232 to
// 376-407 MiB). The soft memory limit keeps the larger heap goal from growing
// past what a big crawl can afford: near it the collector runs as often as it
// must.
type gcFlags struct {
	percent  int
	limitMiB int64
}

func (g *gcFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.percent, "gc-percent", 400, "Go GC target: heap growth in percent between collections (GOGC); higher trades memory for CPU. The GOGC environment variable overrides it")
	fs.Int64Var(&g.limitMiB, "memory-limit-mib", 1024, "soft limit on the Go runtime's memory in MiB (GOMEMLIMIT): the GC works harder as the heap nears it; 0 = none. The GOMEMLIMIT environment variable overrides it")
}

func (g gcFlags) validate() error {
	if g.percent < 1 {
		return fmt.Errorf("gc-percent %d < 1", g.percent)
	}
	if g.limitMiB < 0 {
		return fmt.Errorf("memory-limit-mib %d < 0", g.limitMiB)
	}
	return nil
}

// apply sets what the environment does not: the Go runtime has already read
// GOGC and GOMEMLIMIT, and an operator who set them meant them.
func (g gcFlags) apply(lookupEnv func(string) (string, bool)) {
	if _, ok := lookupEnv("GOGC"); !ok {
		debug.SetGCPercent(g.percent)
	}
	if _, ok := lookupEnv("GOMEMLIMIT"); !ok && g.limitMiB > 0 {
		debug.SetMemoryLimit(g.limitMiB << 20)
	}
}
