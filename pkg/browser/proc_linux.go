//go:build linux

package browser

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procEntry is what /proc says of one process.
type procEntry struct {
	pid, ppid int
	rss       int64         // proportional set size (else VmRSS), bytes
	cpu       time.Duration // user+system, with the children it has reaped
}

// clockTick is the unit of the times in /proc/<pid>/stat; 100 on every Linux
// the crawler runs on (USER_HZ).
const clockTick = time.Second / 100

// readProc reads /proc/<pid>/stat and status. A process that is gone returns
// false.
func readProc(pid int) (procEntry, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	// The command name is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is the state (field 3); ppid is field 4, utime..cstime 14..17.
	if len(f) < 15 {
		return procEntry{}, false
	}
	e := procEntry{pid: pid}
	e.ppid, _ = strconv.Atoi(f[1])
	var ticks int64
	for _, s := range f[11:15] {
		n, _ := strconv.ParseInt(s, 10, 64)
		ticks += n
	}
	e.cpu = time.Duration(ticks) * clockTick
	// Summed over Chromium's processes, VmRSS counts the shared libraries
	// and shared memory once per process, about twice the truth; PSS
	// splits each shared page among its sharers.
	if e.rss = memField(dir+"/smaps_rollup", "Pss:"); e.rss == 0 {
		e.rss = memField(dir+"/status", "VmRSS:")
	}
	return e, true
}

// memField reads a "Name:   123 kB" line of a /proc file, in bytes.
func memField(path, name string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// processTree returns root and its descendants.
func processTree(root int) []procEntry {
	if root <= 0 {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procEntry{}
	var rootEntry procEntry
	found := false
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		e, ok := readProc(pid)
		if !ok {
			continue
		}
		if pid == root {
			rootEntry, found = e, true
		}
		children[e.ppid] = append(children[e.ppid], e)
	}
	if !found {
		return nil
	}
	tree := []procEntry{rootEntry}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i].pid]...)
	}
	return tree
}

// treeUsage is the resident memory and CPU time of root's process tree. The
// CPU time of processes that ended is in their parent's, once reaped.
func treeUsage(root int) (rss int64, cpu time.Duration) {
	for _, e := range processTree(root) {
		rss += e.rss
		cpu += e.cpu
	}
	return rss, cpu
}

// killProfile kills every process whose command line names the profile
// directory dir; Chromium passes --user-data-dir to each of its children, and
// the zygote's children can outlive the browser process. It looks until it has
// found none a few times in a row, since a child can fork as its parent dies.
func killProfile(dir string) {
	want := []byte("--user-data-dir=" + dir)
	deadline := time.Now().Add(3 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(profileProcesses(want, true)) == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// profileProcesses lists (and, with kill, kills) the processes that have the
// argument want in their command line.
func profileProcesses(want []byte, kill bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				pids = append(pids, pid)
				if kill {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				break
			}
		}
	}
	return pids
}

// selfCPU is the CPU time of this process.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
