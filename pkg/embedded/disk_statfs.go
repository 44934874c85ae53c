//go:build linux || darwin || freebsd

package embedded

import "syscall"

// freeBytes returns the space an unprivileged process may still write on
// the file system holding dir.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
