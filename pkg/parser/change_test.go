package parser

import (
	"math/bits"
	"net/http"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestLastModifiedWindow: a Last-Modified dates the page's last change to
// within a second either way (servers truncate or round); a missing or
// malformed one dates nothing, and a page's history then records what an
// undated visit records.
func TestLastModifiedWindow(t *testing.T) {
	lm := time.Date(2026, 11, 28, 22, 0, 5, 0, time.UTC)
	got := lastModified(queue.Page{LastModified: lm.Format(http.TimeFormat)})
	if !got.From.Equal(lm.Add(-time.Second)) || !got.To.Equal(lm.Add(time.Second)) {
		t.Errorf("window %v - %v, want a second either side of %v", got.From, got.To, lm)
	}
	for _, bad := range []string{"", "yesterday", "Fri, 32 Nov 2026 25:00:00 GMT"} {
		if w := lastModified(queue.Page{LastModified: bad}); w != (recrawl.Dated{}) {
			t.Errorf("Last-Modified %q: window %v, want none", bad, w)
		}
	}
	// A change dated 5 s before a visit 30 s after the last one: changed
	// within the window, unchanged after it.
	start := lm.Add(-25 * time.Second)
	var h recrawl.History
	h.Observe(recrawl.First, start)
	h.ObserveDated(recrawl.Changed, lm.Add(5*time.Second), got)
	if h.ChangedTime != 2*time.Second || h.Unchanged != 4*time.Second {
		t.Errorf("dated visit: %+v", h)
	}
}

// TestSitemapDated: a listing fetched between the last visit and this one
// says the copy was current then (a <lastmod> before the copy) or dates
// the change (after it, unless the answer's Last-Modified does, to the
// day for a date without a time); an older listing says nothing.
func TestSitemapDated(t *testing.T) {
	last := time.Date(2026, 11, 28, 22, 0, 0, 0, time.UTC)
	fetched := last.Add(time.Minute)
	seen := last.Add(30 * time.Second)
	hist := func(lm, seen time.Time) store.URLHistory {
		return store.URLHistory{Recrawl: store.Recrawl{LastVisitAt: last}, SitemapLastMod: lm, SitemapSeenAt: seen}
	}
	page := queue.Page{FetchedAt: fetched}
	withLM := queue.Page{FetchedAt: fetched, LastModified: last.Add(40 * time.Second).Format(http.TimeFormat)}
	midnight := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	changedAt := last.Add(10 * time.Second)
	cases := []struct {
		name string
		pg   queue.Page
		h    store.URLHistory
		want recrawl.Dated
	}{
		{"no listing", page, hist(time.Time{}, time.Time{}), recrawl.Dated{}},
		{"copy current", page, hist(last.Add(-time.Hour), seen), recrawl.Dated{Current: seen}},
		{"changed since the copy", page, hist(changedAt, seen), recrawl.Dated{From: changedAt.Add(-time.Second), To: changedAt.Add(time.Second), Until: seen}},
		{"the answer's date first", withLM, hist(changedAt, seen), lastModified(withLM)},
		{"current and the answer's date", withLM, hist(last.Add(-time.Hour), seen), recrawl.Dated{From: lastModified(withLM).From, To: lastModified(withLM).To, Current: seen}},
		{"listing before the last visit", page, hist(changedAt, last.Add(-time.Second)), recrawl.Dated{}},
		{"listing after this fetch", page, hist(changedAt, fetched.Add(time.Second)), recrawl.Dated{}},
		{"a lastmod after its sitemap", page, hist(seen.Add(time.Second), seen), recrawl.Dated{}},
		{"a day's date, the copy's day", page, hist(midnight, seen), recrawl.Dated{From: midnight, To: midnight.Add(24 * time.Hour), Until: seen}},
		{"a day's date, the day before", page, hist(midnight.Add(-24*time.Hour), seen), recrawl.Dated{Current: seen}},
	}
	for _, c := range cases {
		if got := dated(c.pg, c.h); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestUnlikeItsTarget: a rewrite's variant is judged against its target's
// stored copy: a near duplicate of it, distinct but close to it (a few
// words changed, which proves its rewrite neither right nor wrong), or
// plainly distinct; with no copy, NoTarget.
func TestUnlikeItsTarget(t *testing.T) {
	const fp = 0x0123_4567_89ab_cdef
	flip := func(n int) uint64 { return fp ^ (1<<n - 1) } // n low bits changed
	for _, tc := range []struct {
		target                 store.URLHistory
		page                   uint64
		unlike, noTarget, near bool
	}{
		{store.URLHistory{SimHash: fp}, flip(2), false, false, false},
		{store.URLHistory{SimHash: fp}, flip(6), true, false, true},
		{store.URLHistory{SimHash: fp}, flip(20), true, false, false},
		{store.URLHistory{}, flip(20), false, true, false},
	} {
		pd := &pending{capture: store.Capture{SimHash: tc.page}}
		unlike, noTarget, close := unlike(pd, tc.target)
		if unlike != tc.unlike || noTarget != tc.noTarget || close != tc.near {
			t.Errorf("page %d bits from its target %+v: unlike %v, no target %v, close %v; want %v, %v, %v",
				bits.OnesCount64(tc.page^fp), tc.target, unlike, noTarget, close, tc.unlike, tc.noTarget, tc.near)
		}
	}
}
