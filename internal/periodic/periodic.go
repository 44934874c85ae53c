// Package periodic runs the crawler's background chores (backpressure
// readings, trims, heap samples, control polls) on a fixed period for as
// long as their component lives.
package periodic

import (
	"context"
	"time"
)

// Every calls fn every interval until ctx ends, the first time one interval
// after it is called, and returns when ctx ends. A call of fn is never cut
// short: fn is given no context of its own and must bound its work by one it
// holds. A call that takes longer than interval delays the next, which then
// comes at once (time.Ticker drops the ticks in between).
func Every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn()
	}
}
