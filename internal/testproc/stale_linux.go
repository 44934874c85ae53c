//go:build linux

package testproc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// SweepStale removes folders named prefix* of earlier test processes that died
// before Stop (their server died with them). A folder whose pid file names
// a live process is left alone.
func SweepStale(prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "pid"))
		if err != nil {
			continue // being created, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if !alive(pid) {
			os.RemoveAll(d)
		}
	}
}

// alive reports whether pid runs. A zombie (killed, not yet reaped) does not.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	f := strings.Fields(string(rest))
	return len(f) == 0 || f[0] != "Z"
}
