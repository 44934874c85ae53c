// Package cputime lets a benchmark report the CPU time it used per operation.
// On a shared machine ns/op also counts the time other processes held the
// core; the process's own user+system time varies much less between runs.
package cputime

import (
	"testing"
	"time"
)

// Measure starts measuring; the returned function, called after the b.Loop
// loop, reports the CPU time since per iteration as cpu-ns/op. Where the
// process's CPU time cannot be read it reports nothing.
func Measure(b *testing.B) (stop func()) {
	start, ok := process()
	return func() {
		end, ok2 := process()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// Process returns the CPU time the process has used so far, false where it
// cannot be read: for a benchmark that measures a part of each iteration.
func Process() (time.Duration, bool) { return process() }
