package parallel

import (
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, min int }{{0, 1}, {1, 1}, {7, 1}, {1000, 1}, {1000, 64}, {10, 64}} {
		calls := make([]atomic.Int32, tc.n)
		For(tc.n, tc.min, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d min=%d: index %d called %d times", tc.n, tc.min, i, c)
			}
		}
	}
}
