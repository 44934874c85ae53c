//go:build !(linux || darwin || freebsd)

package embedded

// freeBytes cannot read the free space here: there is no watch, and a full
// data folder shows only as the errors of the writes that fail.
func freeBytes(string) (uint64, bool) { return 0, false }
