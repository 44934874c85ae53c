package pattern

import (
	"encoding/binary"

	"github.com/bits-and-blooms/bloom/v3"
)

// linkSet holds the URLs of a host that its fetched pages linked
// (Host.onPages), in bloom filters of growing size: what a relisting or a
// mirror is judged by (rewrite.go). A host's first URLs take the first
// filter; a host that links more gets the next, eight times its size, as
// it needs it. With one filter of 700 URLs, a shop linking thousands of
// facet URLs had filled it before its languages' first pages came back,
// and its six translated copies were judged by their text alone: distinct,
// and 4,977 requests of one crawl of an independent web went to them.
type linkSet struct {
	levels []*bloom.BloomFilter
	n      int // URLs added (at most one past the last level's bound)
}

// linkLevels are the filters of a linkSet: the first as it was when there
// was one (its false positives under 2e-5 for the minRelisted links a
// relisting is judged by, at its bound), the others at 10 bits and 4
// hashes a URL (a percent of false positives each, full).
var linkLevels = [...]struct {
	bits, hashes uint
	holds        int // URLs, counted from the first filter's first
}{
	{onPagesBits, onPagesHashes, maxOnPages},
	{1 << 16, 4, maxOnPages + 6_500},
	{1 << 19, 4, maxOnPages + 6_500 + 52_000},
}

// full reports whether the set took all it can: past it, links cannot be
// judged by it.
func (s *linkSet) full() bool { return s.n > linkLevels[len(linkLevels)-1].holds }

// empty reports whether nothing was added.
func (s *linkSet) empty() bool { return len(s.levels) == 0 }

// has reports whether u was added (or is a false positive of a filter).
func (s *linkSet) has(u string) bool {
	for _, f := range s.levels {
		if f.TestString(u) {
			return true
		}
	}
	return false
}

// add adds u unless the set has it or is full.
func (s *linkSet) add(u string) {
	if s.full() || s.has(u) {
		return
	}
	if i := len(s.levels); i == 0 || s.n >= linkLevels[i-1].holds && i < len(linkLevels) {
		s.levels = append(s.levels, bloom.New(linkLevels[i].bits, linkLevels[i].hashes))
	}
	s.levels[len(s.levels)-1].AddString(u)
	s.n++
}

// bytes returns the filters' words, little-endian, one after another.
func (s *linkSet) bytes() []byte {
	var b []byte
	for _, f := range s.levels {
		for _, w := range f.BitSet().Words() {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
	}
	return b
}

// restore sets the set from bytes and n, and reports whether b was the
// size of some number of its filters: another size is a state from a build
// with other filters, left out (variants are judged by their text until
// pages link again).
func (s *linkSet) restore(b []byte, n int) bool {
	var levels []*bloom.BloomFilter
	for _, l := range linkLevels {
		if len(b) == 0 {
			break
		}
		size := int(l.bits / 8)
		if len(b) < size {
			return false
		}
		words := make([]uint64, size/8)
		for i := range words {
			words[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		levels = append(levels, bloom.FromWithM(words, l.bits, l.hashes))
		b = b[size:]
	}
	if len(b) > 0 || len(levels) == 0 {
		return false
	}
	s.levels = levels
	// At least what the filters before the last hold, at most one past
	// the last's bound.
	lo := 0
	if len(levels) > 1 {
		lo = linkLevels[len(levels)-2].holds
	}
	s.n = min(max(n, lo), linkLevels[len(levels)-1].holds+1)
	return true
}
