package pattern

import (
	"math"
	"math/bits"
)

// sketch estimates how many distinct keys were added to it, in 32 bytes
// (linear counting over 256 bits: within a few percent up to a few hundred
// keys, and saturating near 1,400). A family's URLs found again are counted
// by it, not by sighting: a page that links the same few URLs of a space
// on every page (a "popular searches" box) finds the same URLs again, a
// site's pages find its other pages.
type sketch [4]uint64

// add adds k and reports whether the sketch changed: k was not added
// before, unless it shares its bit with a key that was (one in four past
// 70 keys, one in two past 180).
func (s *sketch) add(k uint64) bool {
	// KeyOf's low bits are as good as any; mix them so that keys made by
	// counting (tests, sequential hashes) spread too.
	k *= 0x9e3779b97f4a7c15
	b := k >> 56
	old := s[b/64]
	s[b/64] |= 1 << (b % 64)
	return s[b/64] != old
}

func (s *sketch) count() int {
	set := 0
	for _, w := range s {
		set += bits.OnesCount64(w)
	}
	const m = 256
	if set == m {
		return int(m * math.Log(m))
	}
	return int(math.Round(-m * math.Log(float64(m-set)/m)))
}
