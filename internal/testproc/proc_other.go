//go:build !linux

package testproc

import "os/exec"

// Start starts cmd. Outside Linux nothing kills it if the test process dies
// before Stop.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// SweepStale does nothing outside Linux.
func SweepStale(prefix string) {}
