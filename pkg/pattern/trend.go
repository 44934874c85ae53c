package pattern

import "math"

// trend follows whether a family runs out of new URLs as it is crawled, by
// an estimate of how many URLs it has in all: Chao's estimator from
// capture-recapture (Chao 1984), the distinct URLs its pages found (D)
// plus f1²/2f2, where f1 are those found once and f2 those found again.
// A section of a site is a finite set of pages that link each other: as
// more of it is crawled the estimate settles on its size. A space that
// makes its URLs up finds new ones without end, and the few it finds
// again (a short alphabet's values) grow with the rest: its estimate grows
// with what it found.
//
// What it is for: a wiki's articles, or a shop's products that link a few
// related ones, are found almost only from each other, as a made-up
// space's URLs are. When each page links few of them (5-13 of 2,000), the
// share of known finds stays under warming's bar until a tenth of the
// section is crawled, more than its budgets give, and the section stopped
// at its first 60 pages, all the rest held (trapsim.WikiWeb: 16 draws of
// 100). A family whose estimate held (within trendStable) while its finds
// doubled may have charged twice what it had, up to the estimate: it goes
// on as long as the estimate stays put, until closing (budget.go) counts it
// as a section that ran out of new URLs.
type trend struct {
	marks []trendMark // at each power of two of its finds, from trendFirst
	level int         // one past the last mark a grant was compared with: one grant per mark
	ext   int         // what the family may have charged at least
}

// trendMark is a family's distinct URLs and those found again, when its
// finds (offered and relinks) reached trendFirst<<i.
type trendMark struct{ offered, refound, far int }

const (
	trendFirst  = 32   // finds at the first mark
	trendMin    = 8    // distinct URLs found again, at least, to estimate
	trendStable = 1.25 // how much the estimate may grow while the finds double
	trendMarks  = 24   // trendFirst<<24 finds is past any host
)

// mark notes the family's counts at each power of two of its finds:
// called after each change of offered or relinks.
func (s *space) mark() {
	finds := s.offered + s.relinks
	for len(s.trend.marks) < trendMarks && finds >= trendFirst<<len(s.trend.marks) {
		s.trend.marks = append(s.trend.marks, trendMark{offered: s.offered, refound: s.refound.count(), far: s.far.count()})
	}
}

// chao is the estimate of a family's URLs from offered distinct ones, of
// which refound were found again (+Inf with too few of either to tell).
// Found again counts the family's grounded URLs too, and may pass what it
// offered: then the estimate is what it offered. With no estimate there, an
// independent web's forum threads, whose pages link their neighbours' two
// either side and the forum's other threads, had nothing to tell that their
// pagination past its last page grew with every page, and what its pages
// found again paid for 548 requests into it.
func chao(offered, refound int) float64 {
	if refound < trendMin || offered < trendMin {
		return math.Inf(1)
	}
	refound = min(refound, offered)
	f1 := float64(offered - refound)
	return float64(offered) + f1*f1/(2*float64(refound))
}

// converge reports whether the family's estimate held while its finds
// doubled since a mark not used before, and it has URLs left by it; it then
// records the grant, twice what it charged, up to the estimate. A family
// stops finding when its budget is spent: the mark compared is the last
// one at half its finds or less, not one its pages must reach first.
func (s *space) converge() bool {
	t := &s.trend
	m, then, now := s.estimates(false)
	if m < 0 || m+1 <= t.level {
		return false
	}
	if math.IsInf(then, 1) || now > trendStable*then || now <= float64(s.charged) {
		return false
	}
	// Held too when what its neighbours found again is left out: a chain
	// (each month linking the month before and after, a pager its next
	// page) has each URL found again by the page after the one that made
	// it up, a step behind the crawl, so its estimate is high while few
	// are and falls as the rest are; with them left out it has none. An
	// independent web's archive of months, four views a month, was granted
	// twice its charge three times over (820 requests on a host of 36
	// pages); a site's pages that link each other at random are found
	// again by far pages, and hold both ways.
	if _, thenFar, nowFar := s.estimates(true); math.IsInf(thenFar, 1) || nowFar > trendStable*thenFar {
		return false
	}
	t.level = m + 1
	t.ext = max(t.ext, min(2*s.charged, int(now)))
	return true
}

// outgrowing reports whether a family's estimate grew with its finds: at
// least trendGrowing times what it was when it had found half as much. A
// section closes on its size however densely its pages link each other;
// a space that counts its URLs (a calendar: each month links the months
// and years either side) finds most of its links known, as a section
// does, and its estimate grows with every page.
func (s *space) outgrowing() bool {
	m, then, now := s.estimates(false)
	return m >= 0 && !math.IsInf(then, 1) && !math.IsInf(now, 1) && now > trendGrowing*then
}

// estimates returns a family's estimate now, and at its last mark at half
// its finds or less (m, -1 when it has none yet); far counts as found again
// only the URLs found on a page other than their next or previous.
func (s *space) estimates(far bool) (m int, then, now float64) {
	finds := s.offered + s.relinks
	m = len(s.trend.marks) - 1
	for m >= 0 && trendFirst<<m > finds/2 {
		m--
	}
	if m < 0 {
		return m, math.Inf(1), math.Inf(1)
	}
	if far {
		return m, chao(s.trend.marks[m].offered, s.trend.marks[m].far), chao(s.offered, s.far.count())
	}
	return m, chao(s.trend.marks[m].offered, s.trend.marks[m].refound), chao(s.offered, s.refound.count())
}

const trendGrowing = 1.5
