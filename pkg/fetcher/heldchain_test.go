package fetcher

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// noControls is an operator who set nothing.
type noControls struct{}

func (noControls) Excluded(string, string) (string, bool) { return "", false }
func (noControls) HostBudget(string) (int64, bool)        { return 0, false }

// TestHeldChainCarried: a URL of family /c/ that family /a/'s generated chain
// led to, on a page of family /b/, is held when /a/'s budget is spent. Handed back at a
// stop or rebalance (parkedURL), or read back from the store after a kill or
// past the parking bound (heldURL), the next owner (the host's saved budgets
// restored) charges it to /a/ again with the same hops: held again, and
// released when /a/'s budget grows. Before, described afresh from its parent
// alone, it was grounded by /b/'s page, or charged to /b/ (the
// TestClusterHandover pages held for good on hosts whose other pages were
// all fetched).
func TestHeldChainCarried(t *testing.T) {
	const base, host = "http://h.test", "h.test"
	part := queue.PartitionOf(host)
	now := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 1, EvidenceWeight: 1}.WithDefaults()
	d := admission.New(admission.Config{Admit: cfg.Admit, Patterns: cfg.Patterns, MaxRedirects: MaxRedirects})
	aSpace, _ := pattern.Of(base + "/a/1.html")
	keyA := uint64(pattern.KeyOf(pattern.Family(aSpace)))

	// decide runs one poll of us through admission on h, as admitRecords
	// does, the seen-URL check aside (every URL is new here).
	decide := func(h *admission.Host, us ...queue.URL) ([]admission.Candidate, []store.Exclusion) {
		t.Helper()
		p := d.Poll()
		var fresh []admission.Candidate
		for _, u := range us {
			v := p.Decide(admissionURL(u, u.URL, host, part), h, 0, noControls{}, now)
			if v.Outcome != admission.Admitted {
				t.Fatalf("%s: outcome %d (%s), want a candidate", u.URL, v.Outcome, v.Reason)
			}
			fresh = append(fresh, v.Candidate)
		}
		admitted, excl, _, _ := d.Budget(fresh, nil, nil, func(string) *admission.Host { return h }, now)
		return admitted, excl
	}
	urls := func(cs []admission.Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Row.URL)
		}
		return out
	}
	// /a/1.html is linked from the home page (a budget of 1 + 1); /a/2.html
	// and /b/1.html are down /a/'s chain and spend it; /c/1.html, found on
	// /b/1.html, is down /a/'s chain too and held. The home page links /b/
	// and /c/ too: sections of the site, not first segments made up down
	// a chain (those are all one family, pattern's /{*}/).
	const held = base + "/c/1.html"
	heldRecord := func(t *testing.T) (h *admission.Host, ex store.Exclusion) {
		h = &admission.Host{}
		admitted, _ := decide(h,
			queue.URL{URL: base + "/", Seed: true},
			queue.URL{URL: base + "/a/1.html", Parent: base + "/"},
			queue.URL{URL: base + "/b/", Parent: base + "/"},
			queue.URL{URL: base + "/c/", Parent: base + "/"},
			queue.URL{URL: base + "/a/2.html", Parent: base + "/a/1.html"},
			queue.URL{URL: base + "/b/1.html", Parent: base + "/a/2.html", ParentHops: 1, ParentOrigin: keyA},
		)
		if len(admitted) != 6 {
			t.Fatalf("admitted %v, want all 6", urls(admitted))
		}
		admitted, excl := decide(h, queue.URL{URL: held, Parent: base + "/b/1.html", Depth: 4, ParentHops: 1, ParentOrigin: keyA})
		if len(admitted) != 0 || len(excl) != 1 || excl[0].Reason != pattern.ReasonPatternBudget {
			t.Fatalf("%s: admitted %v, excluded %+v, want held by the pattern budget", held, urls(admitted), excl)
		}
		if c := excl[0].Chain; c == nil || c.Hops != 1 || c.Origin != keyA {
			t.Fatalf("%s recorded with chain %+v, want 1 hop charged to /a/ (%d)", held, c, keyA)
		}
		return h, excl[0]
	}

	for _, tc := range []struct {
		name string
		// back is the held URL as the next owner receives it.
		back func(t *testing.T, h *admission.Host, ex store.Exclusion) queue.URL
	}{
		{"handed back", func(t *testing.T, h *admission.Host, _ store.Exclusion) queue.URL {
			var back []queue.URL
			h.TakeParked(func(c candidate) { back = append(back, parkedURL(c)) })
			if len(back) != 1 {
				t.Fatalf("handed back %d URLs, want 1", len(back))
			}
			return back[0]
		}},
		{"read from the store", func(t *testing.T, _ *admission.Host, ex store.Exclusion) queue.URL {
			db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "crawl.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.RecordExclusions(context.Background(), []store.Exclusion{ex}); err != nil {
				t.Fatal(err)
			}
			rows, err := db.HeldURLs(context.Background(), []store.HeldFrom{{Host: host}}, 10)
			if err != nil || len(rows) != 1 {
				t.Fatalf("HeldURLs = %+v, %v; want the held URL", rows, err)
			}
			return heldURL(rows[0])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ex := heldRecord(t)
			state, _ := h.Patterns.Snapshot()
			u := tc.back(t, h, ex)
			// Over the wire, as crawl.urls carries it.
			v, err := queue.EncodeURL(u)
			if err != nil {
				t.Fatal(err)
			}
			if u, err = queue.DecodeURL(v); err != nil {
				t.Fatal(err)
			}
			next := &admission.Host{Patterns: admission.NewPatterns()}
			if err := next.Patterns.Restore(state); err != nil {
				t.Fatal(err)
			}

			// Held again, and not recorded again: its record is in the
			// store already, with the count its referrers are read from.
			admitted, excl := decide(next, u)
			if len(admitted) != 0 || len(excl) != 0 || next.Patterns.Parked() != 1 {
				t.Fatalf("decided again: admitted %v, excluded %+v, %d parked; want held again, unrecorded", urls(admitted), excl, next.Patterns.Parked())
			}
			// Evidence for /a/ (another of its pages linked from the home
			// page) grows its budget, which releases the held URL.
			admitted, _ = decide(next, queue.URL{URL: base + "/a/9.html", Parent: base + "/"})
			var got *admission.Candidate
			for i, c := range admitted {
				if c.Row.URL == held {
					got = &admitted[i]
				}
			}
			if got == nil {
				t.Fatalf("/a/'s budget grew: admitted %v, want %s released", urls(admitted), held)
			}
			if !got.Released || got.Row.Hops != 1 || got.Row.Origin != keyA || got.Row.Depth != 4 {
				t.Errorf("released %s: released %v hops %d origin %d depth %d, want released, 1 hop of /a/ (%d), depth 4",
					held, got.Released, got.Row.Hops, got.Row.Origin, got.Row.Depth, keyA)
			}
		})
	}
}
