//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// process returns the user and system CPU time this process has used, GC
// workers included.
func process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
