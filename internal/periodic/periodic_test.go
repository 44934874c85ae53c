package periodic

import (
	"context"
	"testing"
	"time"
)

// TestEvery: fn runs on each tick until ctx ends, and Every returns then;
// with ctx ended before the first tick, fn never runs.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	Every(ctx, time.Millisecond, func() {
		if calls++; calls == 3 {
			cancel()
		}
	})
	// A tick that was due as ctx ended may still be taken: select picks
	// either of two ready cases.
	if calls < 3 {
		t.Errorf("%d calls, want 3 or more: one per tick until ctx ended", calls)
	}
	Every(ctx, time.Hour, func() { t.Error("fn called after ctx ended") })
}
