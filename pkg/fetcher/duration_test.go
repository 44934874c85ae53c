package fetcher

import (
	"testing"
	"time"
)

// TestCeilMS: a fetch on loopback takes under a millisecond, and the store
// reads 0 as unknown, so a page's duration is rounded up.
func TestCeilMS(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{{0, 0}, {300 * time.Microsecond, 1}, {time.Millisecond, 1}, {time.Millisecond + time.Microsecond, 2}, {1500 * time.Millisecond, 1500}} {
		if got := ceilMS(c.d); got != c.want {
			t.Errorf("ceilMS(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}
