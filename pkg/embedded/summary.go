package embedded

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Summary is what a run did, for the final log line and the exit status.
type Summary struct {
	// Requests are the fetches the run made (pages, sitemaps,
	// sub-resources; robots.txt aside), failed ones and retries included;
	// Errors are those that met a network error or a 5xx answer.
	Requests, Errors int64
	// Seeds of this run that went into the crawl, and that were rejected
	// (not a URL the crawler can fetch); seeds already known are neither.
	SeedsAccepted, SeedsRejected int
	Duration                     time.Duration
	// Start and Store are the store's counters when the run began and when
	// it ended: what the run changed is the difference.
	Start, Store store.Stats
	Reason       string // why the run ended: idle, max-pages, max-duration, nothing-to-crawl, signal, disk-full, served (a finished crawl served read-only)
	// The seen-URL filter: URLs it holds and the bytes it takes.
	SeenURLs, SeenBytes uint64
}

// Fetched is the pages the run fetched: requests a server answered, with
// any status below 500 (a 404 is the server's answer, a 503 is not).
func (s Summary) Fetched() int64 { return s.Requests - s.Errors }

// Changes are what a run changed in the store's counters.
type Changes struct {
	Failed   int64 // URLs given up: network errors, 5xx after retries, robots.txt unreachable
	Excluded int64 // URLs ruled out at fetch time (robots.txt, redirect limit) and candidates never admitted
	Held     int64 // candidates the trap budgets hold back and may admit later
	// Reasons counts, by reason, the failed and excluded URLs the run added.
	Reasons map[string]int64
}

// Changes returns what the run changed in the store. A count that fell (a
// held URL admitted, a failed one fetched on a revisit) counts as none.
func (s Summary) Changes() Changes {
	c := Changes{Reasons: map[string]int64{}}
	c.Failed = max(0, s.Store.URLs[store.StateFailed]-s.Start.URLs[store.StateFailed])
	c.Excluded = max(0, s.Store.URLs[store.StateExcluded]-s.Start.URLs[store.StateExcluded])
	for r, n := range s.Store.Excluded {
		d := max(0, n-s.Start.Excluded[r])
		if slices.Contains(store.HeldReasons, r) {
			c.Held += d
		} else {
			c.Excluded += d
		}
	}
	for r, n := range s.Store.Reasons {
		if d := n - s.Start.Reasons[r]; d > 0 {
			c.Reasons[r] = d
		}
	}
	return c
}

// NothingFetched reports whether a run that ended by itself fetched no page
// although it had something to fetch: a seed, a queued URL, a request made,
// a URL given up. A run a signal stopped or a full disk ended is not judged
// by what it fetched, and a run with nothing to do (a finished crawl
// resumed) has not failed.
func (s Summary) NothingFetched() bool {
	switch s.Reason {
	case reasonIdle, reasonMaxPages, reasonMaxDuration, reasonNothingToCrawl:
	default:
		return false
	}
	if s.Fetched() > 0 {
		return false
	}
	c := s.Changes()
	return s.Requests > 0 || s.SeedsAccepted+s.SeedsRejected > 0 || c.Failed+c.Excluded > 0 ||
		s.Start.URLs[store.StateQueued]+s.Store.URLs[store.StateQueued] > 0
}

// Why names the n most common reasons the run's URLs did not get fetched,
// most common first ("dns_error=2 robots_unavailable=1"): the failed and
// excluded URLs the run added, rejected seeds, and hosts whose robots.txt
// could still not be read when it ended.
func (s Summary) Why(n int) string {
	type count struct {
		reason string
		n      int64
	}
	var counts []count
	for r, k := range s.Changes().Reasons {
		counts = append(counts, count{r, k})
	}
	if s.SeedsRejected > 0 {
		counts = append(counts, count{"seed_rejected", int64(s.SeedsRejected)})
	}
	if s.Store.BlockedHosts > 0 {
		counts = append(counts, count{"robots_unreachable_hosts", s.Store.BlockedHosts})
	}
	slices.SortFunc(counts, func(a, b count) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return strings.Compare(a.reason, b.reason)
	})
	parts := make([]string, 0, n)
	for _, c := range counts[:min(n, len(counts))] {
		parts = append(parts, fmt.Sprintf("%s=%d", c.reason, c.n))
	}
	return strings.Join(parts, " ")
}
