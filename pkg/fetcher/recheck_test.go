package fetcher

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// TestRecheckHoldsQueuedEntries: the entries of a family are queued as the
// home page links them, before any of its pages is judged. Once its first
// pages come back copies of each other, the next one to leave the queue is
// held (heldAtTake's decision and store step): its row leaves the queue for
// the exclusions with its parent, and it is released, and admitted as a new
// row, once the family's pages turn out distinct. A URL of another family
// leaves the queue as it was.
func TestRecheckHoldsQueuedEntries(t *testing.T) {
	const base, host = "http://h.test", "h.test"
	ctx := context.Background()
	part := queue.PartitionOf(host)
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	cfg := testConfig()
	cfg.Patterns = pattern.DefaultConfig()
	d := admission.New(admission.Config{Admit: cfg.Admit, Patterns: cfg.Patterns, MaxRedirects: MaxRedirects})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := &admission.Host{}
	hosts := func(string) *admission.Host { return h }

	// The home page links eight entries of /x/ and one page of /about/.
	us := []queue.URL{{URL: base + "/", Seed: true}}
	for i := 1; i <= 8; i++ {
		us = append(us, queue.URL{URL: fmt.Sprintf("%s/x/e%d", base, i), Parent: base + "/", Depth: 1})
	}
	us = append(us, queue.URL{URL: base + "/about/team", Parent: base + "/", Depth: 1})
	p := d.Poll()
	var fresh []admission.Candidate
	for _, u := range us {
		v := p.Decide(admissionURL(u, u.URL, host, part), h, 0, noControls{}, now)
		fresh = append(fresh, v.Candidate)
	}
	admitted, excl, _, _ := d.Budget(fresh, nil, nil, hosts, now)
	if len(admitted) != len(us) || len(excl) != 0 {
		t.Fatalf("admitted %d of %d, excluded %+v: want every entry queued", len(admitted), len(us), excl)
	}
	rows := make([]store.URL, len(admitted))
	for i, c := range admitted {
		rows[i] = c.Row
	}
	if _, err := db.AdmitURLs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	item := func(c admission.Candidate) frontier.Item {
		it := itemOf(c.Row, c.FromRobots)
		it.Host = host
		return it
	}
	take := func(c admission.Candidate) (store.Exclusion, bool) {
		t.Helper()
		return d.Recheck(h, queuedCandidate(item(c)), now)
	}
	// Before any verdict, nothing is held.
	if _, held := take(admitted[1]); held {
		t.Fatalf("%s held before any of its family was judged", admitted[1].Row.URL)
	}
	if h.Patterns.Suspect() {
		t.Fatal("host suspect before any verdict: every take would lock the fetcher")
	}
	// Three of /x/ come back copies of each other.
	for _, c := range admitted[1:4] {
		d.Observe(h, admission.Evidence{URL: c.Row.URL, Hash: c.Row.Hash, Grounded: true, Duplicate: true})
	}
	if !h.Patterns.Suspect() {
		t.Fatal("host not suspect after its family came back copies: heldAtTake would not ask")
	}
	state, _ := h.Patterns.Snapshot()
	restored := pattern.NewHost[admission.Candidate]()
	if err := restored.Restore(state); err != nil || !restored.Suspect() {
		t.Fatalf("restored host suspect %v (%v), want it suspect as it was saved", restored.Suspect(), err)
	}
	entry := admitted[5]
	ex, held := take(entry)
	if !held || ex.Reason != pattern.ReasonDuplicateSpace {
		t.Fatalf("%s after three copies: held %v (%+v), want held as a duplicate space", entry.Row.URL, held, ex)
	}
	if _, held := take(admitted[len(admitted)-1]); held {
		t.Errorf("%s of another family held", admitted[len(admitted)-1].Row.URL)
	}
	ok, err := db.HoldQueued(ctx, []store.Exclusion{ex})
	if err != nil || !ok[0] {
		t.Fatalf("HoldQueued = %v, %v", ok, err)
	}
	list, err := db.HeldURLs(ctx, []string{host}, 10)
	if err != nil || len(list) != 1 || list[0].URL != entry.Row.URL || list[0].Parent != base+"/" {
		t.Fatalf("HeldURLs = %+v, %v; want %s held, with its parent", list, err, entry.Row.URL)
	}

	// Its family's next pages are distinct: no longer copying, it is
	// released and admitted again as a new row.
	for _, c := range admitted[6:8] {
		d.Observe(h, admission.Evidence{URL: c.Row.URL, Hash: c.Row.Hash, Grounded: true})
	}
	released, _, _, _ := d.Budget(nil, nil, map[string]bool{host: true}, hosts, now)
	if len(released) != 1 || released[0].Row.URL != entry.Row.URL || !released[0].Released {
		t.Fatalf("released %+v, want %s", released, entry.Row.URL)
	}
	if ins, err := db.AdmitURLs(ctx, []store.URL{released[0].Row}); err != nil || !ins[0] {
		t.Fatalf("AdmitURLs of the released URL = %v, %v; want inserted", ins, err)
	}
}
