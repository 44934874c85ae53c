package fetcher

import (
	"testing"
	"time"
)

// The backpressure stage is the part of a wait the fetcher was held: spans
// cut to the wait, the hold in force counted to the wait's end.
func TestHoldLogOverlap(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var l holdLog
	l.set(true, at(100))
	l.set(true, at(120)) // already held: the span still starts at 100
	l.set(false, at(200))
	l.set(false, at(210))
	l.set(true, at(300))
	l.set(false, at(350))
	l.set(true, at(500)) // in force
	for _, c := range []struct {
		from, to int
		want     time.Duration
	}{
		{0, 90, 0},
		{0, 1000, (100 + 50 + 500) * time.Millisecond},
		{150, 320, (50 + 20) * time.Millisecond},
		{360, 480, 0},
		{400, 600, 100 * time.Millisecond},
	} {
		if got := l.overlap(at(c.from), at(c.to)); got != c.want {
			t.Errorf("held within [%d, %d] ms: %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
