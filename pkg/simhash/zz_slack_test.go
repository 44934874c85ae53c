package simhash

import (
	"math/rand/v2"
	"testing"
)

func TestZZSlack(t *testing.T) {
	for _, n := range []int{1_000_000, 10_000_000} {
		var x Index
		rng := rand.New(rand.NewPCG(9, 9))
		for i := range n {
			x.Add(rng.Uint64(), uint64(i))
		}
		var l, c int
		for _, band := range x.bands {
			for _, b := range band {
				l += len(b)
				c += cap(b)
			}
		}
		t.Logf("n=%d entries len %d cap %d unused %.1f%% bytes/fp entries %.2f", n, l, c, 100*float64(c-l)/float64(c), float64(c*6)/float64(n))
	}
}
