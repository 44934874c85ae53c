package pattern

import (
	"fmt"
	"testing"
)

// TestLinkSet: a host's linked URLs go on past the first filter's bound,
// each found again after a save and a restore, with few false positives,
// until the last filter's bound; a state saved with the first filter alone
// (an older build's) reads back.
func TestLinkSet(t *testing.T) {
	var s linkSet
	url := func(i int) string { return fmt.Sprintf("http://a/p/%d.html", i) }
	added := 0
	for ; !s.full(); added++ {
		s.add(url(added))
	}
	if last := linkLevels[len(linkLevels)-1].holds; added < last || len(s.levels) != len(linkLevels) {
		t.Fatalf("full after %d URLs in %d filters, want %d in %d", added, len(s.levels), last, len(linkLevels))
	}
	var r linkSet
	if !r.restore(s.bytes(), s.n) || r.n != s.n {
		t.Fatalf("restored %d of %d URLs", r.n, s.n)
	}
	for i := range added {
		if !r.has(url(i)) {
			t.Fatalf("%s added and restored, not found", url(i))
		}
	}
	fp := 0
	for i := range 10_000 {
		if r.has(fmt.Sprintf("http://a/q/%d.html", i)) {
			fp++
		}
	}
	// Each filter full: its false positives add up.
	if fp > 1_000 {
		t.Errorf("%d of 10,000 URLs never added found", fp)
	}
	n := s.n
	s.add("http://a/new")
	if s.n != n || len(s.levels) != len(linkLevels) {
		t.Errorf("a URL added past the bound: %d URLs in %d filters, was %d", s.n, len(s.levels), n)
	}

	// The first filter alone, as a build before the others saved it.
	var one linkSet
	for i := range maxOnPages {
		one.add(url(i))
	}
	if len(one.levels) != 1 || len(one.bytes()) != onPagesBits/8 {
		t.Fatalf("%d URLs took %d filters, %d bytes", maxOnPages, len(one.levels), len(one.bytes()))
	}
	var back linkSet
	if !back.restore(one.bytes(), maxOnPages) || !back.has(url(3)) || back.full() {
		t.Errorf("the first filter alone not read back")
	}
	if back.restore(make([]byte, 100), 5) {
		t.Errorf("100 bytes read back as filters")
	}
}
