package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// FirstDue finds, for every partition, the visit DueURLs(p, 1) finds first.
func TestFirstDue(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	var caps []store.Capture
	var failed []store.URLUpdate
	var claims []store.Claim
	for p := int32(1); p <= 5; p++ {
		for i := range 4 {
			u := storetest.URL(p, fmt.Sprintf("h%d.example", p), fmt.Sprintf("/%d", i))
			if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
				t.Fatal(err)
			}
			next := at.Add(time.Duration(10*int(p)-i) * time.Minute)
			switch {
			case p == 1: // queued only: nothing planned
			case p == 4 && i == 3: // failed, retried before the others are due
				failed = append(failed, store.URLUpdate{Hash: u.Hash, State: store.StateFailed, Reason: "fetch_timeout",
					FetchedAt: at, Backoff: time.Minute, BackoffMax: time.Hour})
			default:
				c := storetest.Capture(u, fmt.Sprintf("f%d-%d", p, i), "body", 0x1234)
				c.Schedule = &store.Recrawl{NextFetchAt: next, FetchCount: 1}
				caps = append(caps, c)
				if p == 3 && i == 3 { // the earliest of 3, claimed: no longer planned
					claims = append(claims, store.Claim{Hash: u.Hash, Due: next})
				}
			}
		}
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateURLs(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.ClaimRevisits(ctx, claims); err != nil || !ok[0] {
		t.Fatalf("ClaimRevisits = %v, %v", ok, err)
	}

	parts := []int32{5, 1, 2, 3, 4, 9, 2}
	got, err := db.FirstDue(ctx, parts)
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for i, p := range parts {
		var want time.Time
		due, err := db.DueURLs(ctx, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) > 0 {
			want = due[0].Recrawl.NextFetchAt
			planned++
		}
		if !got[i].Equal(want) {
			t.Errorf("FirstDue of partition %d = %v, want %v (DueURLs)", p, got[i], want)
		}
	}
	if planned != 5 { // 2 (twice), 3, 4, 5
		t.Errorf("%d of the partitions asked have a planned visit, want 5: the test proves less", planned)
	}
	if none, err := db.FirstDue(ctx, nil); err != nil || len(none) != 0 {
		t.Errorf("FirstDue(nil) = %v, %v", none, err)
	}
}
