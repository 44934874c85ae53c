package main

import (
	"errors"

	"github.com/prometheus/procfs"

	"github.com/crawlcluster/crawler/internal/cputime"
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
	ownTime, ok := cputime.Process()
	if !ok {
		return 0, 0, errors.New("getrusage failed")
	}
	own := ownTime.Seconds()
	c := st.CPUTotal
	idle := c.Idle + c.Iowait
	return idle + own, idle + c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal, nil
}
