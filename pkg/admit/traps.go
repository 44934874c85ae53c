package admit

import (
	"strings"
	"time"
)

// trap returns the reason code of the first trap rule u trips, or "".
// Traps are URL spaces that a site generates without end (a relative link
// that nests itself, a calendar with a "next month" link, faceted search);
// each rule bounds one of them.
func (r *Rules) trap(u parts, now time.Time) string {
	var buf [32]string // paths deeper than this allocate
	segs := appendSegments(buf[:0], u.path)
	if r.cfg.MaxPathDepth > 0 && len(segs) > r.cfg.MaxPathDepth {
		return ReasonTrapPathDepth
	}
	if r.cfg.MaxRepeatedSegment > 0 && maxRepeats(segs) > r.cfg.MaxRepeatedSegment {
		return ReasonTrapRepeatedSegment
	}
	if r.cfg.MaxQueryParams > 0 && countParams(u.query) > r.cfg.MaxQueryParams {
		return ReasonTrapQueryParams
	}
	if !now.IsZero() && (r.cfg.CalendarPast > 0 || r.cfg.CalendarFuture > 0) {
		if r.calendarTrap(segs, u.query, now) {
			return ReasonTrapCalendar
		}
	}
	return ""
}

// appendSegments appends the non-empty segments of an escaped path to segs.
func appendSegments(segs []string, path string) []string {
	for s := range strings.SplitSeq(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// maxRepeats returns how often the most frequent segment occurs.
func maxRepeats(segs []string) int {
	best := 0
	if len(segs) <= 16 {
		// Quadratic but allocation-free for the paths that matter.
		for i, s := range segs {
			n := 0
			for _, t := range segs[i:] {
				if s == t {
					n++
				}
			}
			best = max(best, n)
		}
		return best
	}
	counts := make(map[string]int, len(segs))
	for _, s := range segs {
		counts[s]++
		best = max(best, counts[s])
	}
	return best
}
