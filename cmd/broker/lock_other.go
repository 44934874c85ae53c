//go:build !unix

package main

import "os"

// lockDataDir only creates the folder where flock is not available.
func lockDataDir(dir string) (unlock func(), err error) {
	return func() {}, os.MkdirAll(dir, 0o755)
}
