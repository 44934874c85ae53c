//go:build unix

package warc

import (
	"syscall"
	"time"
)

// processCPU returns the user and system CPU time the test process has used,
// so benchmarks can report CPU per operation: on a shared machine ns/op also
// counts the time other processes held the core.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
