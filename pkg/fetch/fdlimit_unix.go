//go:build unix

package fetch

import "syscall"

// openFilesLimit is the process's limit of open files (the soft
// RLIMIT_NOFILE, which Go raises to the hard limit at start-up), 0 if
// unknown.
func openFilesLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}
