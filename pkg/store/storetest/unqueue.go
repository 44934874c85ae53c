package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// testUnqueueURL: a queued URL unqueued is gone as if never admitted (unseen,
// off its host's pages and the queued count) and is admitted anew; a URL in
// another state, an unknown one and a second call are left alone.
func testUnqueueURL(t *testing.T, s store.Store) {
	ctx := context.Background()
	q, done := URL(3, "u.example", "/queued"), URL(3, "u.example", "/stored")
	other := URL(3, "v.example", "/queued") // another host's queued URL, untouched
	if ins := admit(t, s, q, done, other); !slices.Equal(ins, []bool{true, true, true}) {
		t.Fatalf("AdmitURLs = %v, want all inserted", ins)
	}
	update(t, s, store.URLUpdate{Hash: done.Hash, State: store.StateStored, Status: 200, Attempts: 1, FetchedAt: t0.Add(time.Minute)})
	before := stats(t, s)
	if got := before.URLs[store.StateQueued]; got != 2 {
		t.Fatalf("before: %d URLs queued, want 2", got)
	}
	if got := host(t, s, "u.example").Pages; got != 2 {
		t.Fatalf("before: u.example has %d pages, want 2", got)
	}

	unknown := store.HashURL("https://u.example/never-admitted")
	for _, c := range []struct {
		name string
		hash int64
		want bool
	}{
		{"queued", q.Hash, true},
		{"stored", done.Hash, false},
		{"unknown", unknown, false},
		{"queued again", q.Hash, false}, // gone already
	} {
		got, err := s.UnqueueURL(ctx, c.hash)
		if err != nil {
			t.Fatalf("UnqueueURL(%s): %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("UnqueueURL(%s) = %v, want %v", c.name, got, c.want)
		}
	}

	seen, err := s.Seen(ctx, []int64{q.Hash, done.Hash, other.Hash, unknown})
	if err != nil {
		t.Fatalf("Seen: %v", err)
	}
	if want := []bool{false, true, true, false}; !slices.Equal(seen, want) {
		t.Errorf("Seen(unqueued, stored, other, unknown) = %v, want %v", seen, want)
	}
	if got := host(t, s, "u.example").Pages; got != 1 {
		t.Errorf("after: u.example has %d pages, want 1", got)
	}
	if got := host(t, s, "v.example").Pages; got != 1 {
		t.Errorf("after: v.example has %d pages, want 1 (untouched)", got)
	}
	after := stats(t, s)
	if got := after.URLs[store.StateQueued]; got != 1 {
		t.Errorf("after: %d URLs queued, want 1", got)
	}
	if got := after.URLs[store.StateStored]; got != before.URLs[store.StateStored] {
		t.Errorf("after: %d URLs stored, want %d (untouched)", got, before.URLs[store.StateStored])
	}
	if r := urlRow(t, s, done); r.State != store.StateStored {
		t.Errorf("stored URL is %s after UnqueueURL, want stored", r.State)
	}
	qs := queued(t, s, 3)
	if _, ok := qs[q.Hash]; ok || len(qs) != 1 {
		t.Errorf("QueuedURLs(3) after UnqueueURL: %d URLs, unqueued one listed %v; want only %s", len(qs), ok, other.URL)
	}

	// Admitted again, it is a new URL.
	if ins := admit(t, s, q); !slices.Equal(ins, []bool{true}) {
		t.Errorf("AdmitURLs of the unqueued URL = %v, want inserted", ins)
	}
	if got := host(t, s, "u.example").Pages; got != 2 {
		t.Errorf("readmitted: u.example has %d pages, want 2", got)
	}
	if got := stats(t, s).URLs[store.StateQueued]; got != 2 {
		t.Errorf("readmitted: %d URLs queued, want 2", got)
	}
	if seen, err := s.Seen(ctx, []int64{q.Hash}); err != nil || !seen[0] {
		t.Errorf("readmitted: Seen = %v, %v; want seen", seen, err)
	}
	if _, ok := queued(t, s, 3)[q.Hash]; !ok {
		t.Errorf("readmitted: QueuedURLs(3) does not list %s", q.URL)
	}
}
