package pattern

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestChao(t *testing.T) {
	for _, c := range []struct {
		offered, refound int
		want             float64
	}{
		{100, 50, 125}, // 100 + 50²/100
		{566, 96, 566 + 470*470/192.0},
		{100, trendMin - 1, math.Inf(1)},      // too few found again to tell
		{trendMin - 1, trendMin, math.Inf(1)}, // too few found to tell
		{20, 30, 20},                          // more found again than found: what it found
	} {
		if got := chao(c.offered, c.refound); math.Abs(got-c.want) > 1e-9 && !(math.IsInf(got, 1) && math.IsInf(c.want, 1)) {
			t.Errorf("chao(%d, %d) = %v, want %v", c.offered, c.refound, got, c.want)
		}
	}
}

// trendCrawl crawls one family as its budget lets it with the trend alone
// (a first budget of 60, what converge grants beyond it): each fetched page
// links fan URLs, drawn by link from what it may link. It returns the pages
// fetched.
func trendCrawl(seed uint64, fan, pages int, link func(rng *rand.Rand, known int) int) int {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &space{}
	seen := map[int]bool{}
	queue := []int{0}
	seen[0] = true
	allow, fetched := 60, 0
	for len(queue) > 0 && fetched < pages {
		queue = queue[1:]
		fetched++
		for range fan {
			u := link(rng, len(seen))
			if seen[u] {
				s.relinks++
				s.refound.add(uint64(u) + 1)
				s.far.add(uint64(u) + 1)
				s.mark()
				continue
			}
			seen[u] = true
			s.offered++
			s.mark()
			if s.charged >= allow {
				if !s.converge() {
					continue // held
				}
				allow = max(allow, s.trend.ext)
			}
			s.charged++
			queue = append(queue, u)
		}
	}
	return fetched
}

// TestTrendFiniteSection: a space that makes URLs up, finding known ones
// again at a steady share (a short alphabet's values), is never granted
// more than its first budget, however far its pages go; of sections of a
// site, each page linking a few of its pages at random, many are crawled
// past it. Not all: while few of its URLs were found again the estimate
// cannot tell a section from such a space, and a section whose pages link
// four of 2,000 stops at its first budget (docs/traps.md, Known limits).
func TestTrendFiniteSection(t *testing.T) {
	past := 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 1))
		n, fan := 500+rng.IntN(2500), 3+rng.IntN(11)
		got := trendCrawl(seed, fan, 1<<20, func(rng *rand.Rand, _ int) int { return rng.IntN(n) })
		t.Logf("seed %d: section of %d pages linking %d each: %d fetched", seed, n, fan, got)
		if got > 61 {
			past++
		}
		share := 0.02 + 0.3*rng.Float64()
		next := 1 << 30
		made := trendCrawl(seed, fan, 20000, func(rng *rand.Rand, known int) int {
			if rng.Float64() < share {
				return rng.IntN(known) // one of those made up before
			}
			next++
			return next
		})
		if made > 60+1 {
			t.Errorf("seed %d: made-up space finding %.0f%% known URLs again, %d links a page: %d fetched past its budget of 60", seed, 100*share, fan, made)
		}
	}
	if past < 10 {
		t.Errorf("%d of 40 sections crawled past their first budget, want 10 or more", past)
	}
}

// TestTrendSaved: a family's marks and grants go into the host's saved
// state and come back, and a crafted state cannot make them negative or
// unbounded.
func TestTrendSaved(t *testing.T) {
	s := &space{}
	for i := range 3000 {
		if i%5 == 0 && s.offered > 0 {
			s.relinks++
			s.refound.add(uint64(i % (s.offered + 1)))
			if i%10 == 0 {
				s.far.add(uint64(i % (s.offered + 1)))
			}
		} else {
			s.offered++
		}
		s.mark()
	}
	s.charged = 100
	s.converge()
	back := trendOf(s.trend.saved())
	if len(back.marks) != len(s.trend.marks) || back.level != s.trend.level || back.ext != s.trend.ext {
		t.Fatalf("restored %+v, saved %+v", back, s.trend)
	}
	for i := range back.marks {
		if back.marks[i] != s.trend.marks[i] {
			t.Errorf("mark %d: restored %+v, saved %+v", i, back.marks[i], s.trend.marks[i])
		}
	}
	old := s.trend.saved()
	old.Far = nil // a state saved before far was kept: far is refound
	for i, m := range trendOf(old).marks {
		if m.far != m.refound || m.refound != s.trend.marks[i].refound {
			t.Errorf("mark %d of a state without far: restored %+v", i, m)
		}
	}
	if trendOf(nil).ext != 0 || (trend{}).saved() != nil {
		t.Error("an empty trend is not saved as empty")
	}
	bad := trendOf(&savedTrend{Marks: make([][2]int, 100), Level: -3, Ext: -7})
	if len(bad.marks) > trendMarks || bad.level < 0 || bad.ext < 0 {
		t.Errorf("crafted state restored as %d marks, level %d, ext %d", len(bad.marks), bad.level, bad.ext)
	}
}

// TestChainNotGranted: a family whose estimate held while its finds doubled
// is granted more, unless what held was the count of its URLs its
// neighbours found again (a chain: far, read without them, has too few to
// estimate); and a chain's URLs found again earn no more than a family's
// that is not closing.
func TestChainNotGranted(t *testing.T) {
	family := func(far int) *space {
		s := &space{offered: 300, relinks: 200, charged: 120}
		for i := range 100 {
			s.refound.add(uint64(KeyOf(word(i))))
			if i < far {
				s.far.add(uint64(KeyOf(word(i))))
			}
		}
		s.trend.marks = make([]trendMark, 3) // marks 0-2, at 32<<i finds
		s.trend.marks[2] = trendMark{offered: 250, refound: 70, far: min(far, 70)}
		return s
	}
	if s := family(100); !s.converge() || s.chain() {
		t.Errorf("pages found again by far pages: converge false or a chain (ext %d)", s.trend.ext)
	}
	if s := family(5); s.converge() || !s.chain() {
		t.Errorf("pages found again by their neighbours: granted %d, or no chain", s.trend.ext)
	}
	cfg := DefaultConfig()
	h := NewHost[string]()
	h.real = 10
	section, chain := family(100), family(5)
	if a, b := h.allowanceAt(cfg, section, false), h.allowanceAt(cfg, chain, false); b.refound >= a.refound {
		t.Errorf("a chain's URLs found again earn %d, a section's %d", b.refound, a.refound)
	}
}

// TestEstimateWithdrawnWhenOutgrown: what a family's estimate was granted
// while it held stands while it holds, and is withdrawn once the estimate
// grows half again while its finds double (outgrowing): a burst of its URLs
// found again (a shop's product pages finding the comparisons their
// neighbours made up) passed for a size that the next doubling disproved.
func TestEstimateWithdrawnWhenOutgrown(t *testing.T) {
	cfg := Config{Budget: 2, Probe: 2}.WithDefaults()
	h := NewHost[string]()
	family := func(offered, relinks, refound int, mark trendMark) *space {
		s := &space{offered: offered, relinks: relinks, charged: 600}
		for i := range refound {
			s.refound.add(uint64(KeyOf(word(i))))
		}
		s.trend.marks = make([]trendMark, 6) // marks 0-5, at 32<<i finds
		s.trend.marks[5] = mark
		s.trend.level, s.trend.ext = 6, 1000
		return s
	}
	// 2,100 finds: compared with mark 5, at 1,024.
	held := family(1000, 1100, 160, trendMark{offered: 900, refound: 150})
	grown := family(4000, 0, 40, trendMark{offered: 900, refound: 40})
	if held.outgrowing() || !grown.outgrowing() {
		t.Fatalf("outgrowing: held %v, grown %v; want false, true", held.outgrowing(), grown.outgrowing())
	}
	if got := h.allowance(cfg, held); got != 1000 {
		t.Errorf("estimate that held: allowance %d, want the grant, 1000", got)
	}
	if got := h.allowance(cfg, grown); got >= 600 {
		t.Errorf("estimate that grew sixfold: allowance %d, want under the 600 charged", got)
	}
}
