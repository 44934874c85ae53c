package main

import (
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// procCPUTimes reads the machine's CPU seconds from /proc/stat and this
// process's from getrusage: idle (with I/O wait, which is idle too) plus
// this process's, and in all (gc_other.go elsewhere).
func procCPUTimes() (mine, total float64, err error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, err
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, err
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	own := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	c := st.CPUTotal
	idle := c.Idle + c.Iowait
	return idle + own, idle + c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal, nil
}
