//go:build !unix

package warc

import "time"

// processCPU is not available here; benchmarks then report ns/op only.
func processCPU() (time.Duration, bool) { return 0, false }
