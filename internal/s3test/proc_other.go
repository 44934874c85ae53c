//go:build !linux

package s3test

import "os/exec"

// startOrphanProof starts cmd. Outside Linux nothing kills it if the test
// process dies before Stop.
func startOrphanProof(cmd *exec.Cmd) error { return cmd.Start() }

const stalePrefix = "crawler-s3test-"

func sweepStale() {}
