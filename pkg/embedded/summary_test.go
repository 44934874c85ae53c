package embedded

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
)

// stats builds store counters: URLs by state, failed and excluded URLs by
// reason, never-admitted candidates by reason.
func stats(urls map[store.State]int64, reasons, excluded map[string]int64) store.Stats {
	s := store.NewStats()
	for k, n := range urls {
		s.URLs[k] = n
	}
	for k, n := range reasons {
		s.Reasons[k] = n
	}
	for k, n := range excluded {
		s.Excluded[k] = n
	}
	return s
}

func TestSummaryNothingFetched(t *testing.T) {
	empty := store.NewStats()
	finished := stats(map[store.State]int64{store.StateStored: 6}, nil, nil)
	allFailed := stats(map[store.State]int64{store.StateFailed: 2}, map[string]int64{"robots_unavailable": 2}, nil)
	for _, tt := range []struct {
		name string
		sum  Summary
		want bool
	}{
		{"every seed failed", Summary{Reason: reasonIdle, SeedsAccepted: 2, Start: empty, Store: allFailed}, true},
		{"requests all errors", Summary{Reason: reasonMaxPages, Requests: 5, Errors: 5, Start: empty, Store: empty}, true},
		{"max duration with URLs still queued", Summary{Reason: reasonMaxDuration, Start: stats(map[store.State]int64{store.StateQueued: 3}, nil, nil), Store: stats(map[store.State]int64{store.StateQueued: 3}, nil, nil)}, true},
		{"every seed rejected", Summary{Reason: reasonNothingToCrawl, SeedsRejected: 1, Start: empty, Store: empty}, true},
		{"seed refused by robots.txt", Summary{Reason: reasonIdle, SeedsAccepted: 1, Start: empty, Store: stats(map[store.State]int64{store.StateExcluded: 1}, map[string]int64{"robots": 1}, nil)}, true},
		{"one page fetched", Summary{Reason: reasonIdle, SeedsAccepted: 2, Requests: 3, Errors: 2, Start: empty, Store: allFailed}, false},
		{"a 404 is an answer", Summary{Reason: reasonIdle, SeedsAccepted: 1, Requests: 1, Start: empty, Store: finished}, false},
		{"finished crawl resumed", Summary{Reason: reasonIdle, Start: finished, Store: finished}, false},
		{"failures of an earlier run", Summary{Reason: reasonIdle, Start: allFailed, Store: allFailed}, false},
		{"stopped by a signal", Summary{Reason: reasonSignal, SeedsAccepted: 2, Start: empty, Store: allFailed}, false},
		{"disk full", Summary{Reason: reasonDiskFull, SeedsAccepted: 2, Start: empty, Store: allFailed}, false},
	} {
		if got := tt.sum.NothingFetched(); got != tt.want {
			t.Errorf("%s: NothingFetched = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSummaryChangesAndWhy(t *testing.T) {
	start := stats(map[store.State]int64{store.StateFailed: 1, store.StateExcluded: 1},
		map[string]int64{"fetch_timeout": 1, "robots": 1}, map[string]int64{"out_of_scope": 4, store.ReasonPatternBudget: 3})
	end := stats(map[store.State]int64{store.StateFailed: 5, store.StateExcluded: 2},
		map[string]int64{"fetch_timeout": 1, "fetch_dns": 3, "robots_unavailable": 1, "robots": 2},
		map[string]int64{"out_of_scope": 6, store.ReasonPatternBudget: 1, "trap_duplicate_space": 2})
	end.BlockedHosts = 1
	s := Summary{Start: start, Store: end, SeedsRejected: 2}
	c := s.Changes()
	// Excluded: 1 more URL ruled out at fetch time, 2 more out of scope;
	// held: 2 in a duplicate space, the pattern budget's fall counts as none.
	if c.Failed != 4 || c.Excluded != 3 || c.Held != 2 {
		t.Errorf("Changes = failed %d, excluded %d, held %d; want 4, 3, 2", c.Failed, c.Excluded, c.Held)
	}
	if len(c.Reasons) != 3 || c.Reasons["fetch_dns"] != 3 || c.Reasons["robots_unavailable"] != 1 || c.Reasons["robots"] != 1 {
		t.Errorf("Reasons = %v, want fetch_dns 3, robots_unavailable 1, robots 1", c.Reasons)
	}
	for n, want := range map[int]string{
		0: "",
		2: "fetch_dns=3 seed_rejected=2",
		9: "fetch_dns=3 seed_rejected=2 robots=1 robots_unavailable=1 robots_unreachable_hosts=1",
	} {
		if got := s.Why(n); got != want {
			t.Errorf("Why(%d) = %q, want %q", n, got, want)
		}
	}
}
