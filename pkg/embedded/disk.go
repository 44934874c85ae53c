package embedded

import (
	"fmt"
	"syscall"
)

// A full data folder stops the crawl. Every part of the embedded crawler
// writes there (the broker's log, SQLite, WARC segments), and none of them
// can make progress once it is full: the broker refuses the fetch results,
// so pages would be fetched only to be thrown away, and the parsers would
// retry their batches for ever. So the crawler watches the free space and
// stops, with an error, while a little is left, which lets the stop itself
// save what it can. Nothing already stored is harmed by a write that fails
// for want of space (SQLite rolls the transaction back, the WARC writer cuts
// a partial record off, the broker truncates a torn tail when it starts), so
// running the same command again once space is freed resumes the crawl.

// diskFullError is what a run reports when the data folder's file system
// has less free space than -min-free-mib. It wraps ENOSPC, so the message
// names it as the operating system would.
func diskFullError(dir string, free uint64, minFreeMiB int64) error {
	return fmt.Errorf("data folder %s: %.1f MiB free on its file system, less than -min-free-mib %d; free some space and run the same command again to resume: %w",
		dir, float64(free)/(1<<20), minFreeMiB, syscall.ENOSPC)
}

// checkDisk returns a diskFullError when the file system holding dir has
// less than minFreeMiB MiB free, or nothing at all. Where free space cannot
// be read, it reports nothing.
func checkDisk(dir string, minFreeMiB int64) error {
	free, ok := freeBytes(dir)
	if !ok || free > uint64(minFreeMiB)<<20 {
		return nil
	}
	return diskFullError(dir, free, minFreeMiB)
}
