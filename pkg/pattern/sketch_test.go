package pattern

import (
	"fmt"
	"testing"
)

// TestSketch: the estimate of distinct keys is close for the few dozen a
// section has, adding a key again changes nothing, and a full sketch
// saturates instead of overflowing.
func TestSketch(t *testing.T) {
	for _, n := range []int{0, 1, 10, 40, 100, 300} {
		var s sketch
		for i := range n {
			k := uint64(KeyOf(fmt.Sprintf("http://a/guide/%d.html", i)))
			s.add(k)
			s.add(k)
		}
		got := s.count()
		if d := got - n; d < -n/8-1 || d > n/8+1 {
			t.Errorf("%d distinct keys: estimate %d", n, got)
		}
	}
	var full sketch
	for i := range 1 << 14 {
		full.add(uint64(i))
	}
	if got := full.count(); got < 1000 || got > 1500 {
		t.Errorf("saturated sketch: estimate %d, want about 1,400", got)
	}
}
