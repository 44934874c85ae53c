//go:build !linux

package browser

import "time"

// Process accounting reads /proc; elsewhere it reports zero and relies on the
// browser's own exit to end its children.

func treeUsage(root int) (rss int64, cpu time.Duration) { return 0, 0 }
func killProfile(dir string)                            {}
func profileProcesses(want []byte, kill bool) []int     { return nil }
func selfCPU() time.Duration                            { return 0 }
