package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// RunFleet checks a store.FleetStore: reports round-trip, a fetcher keeps
// its latest, since filters by time, and reports older than
// store.FleetRetention are dropped by the next write.
func RunFleet(t *testing.T, fs store.FleetStore) {
	ctx := context.Background()
	if rs, err := fs.FrontierReports(ctx, time.Time{}); err != nil || len(rs) != 0 {
		t.Fatalf("empty store: %v, %v", rs, err)
	}
	a := store.FrontierReport{Member: "fetcher-a", At: t0, Hosts: 12, Active: 3, Waiting: 7, BackingOff: 2,
		Paused: 1, Queued: 140, InFlight: 4, ByLevel: []int64{100, 30, 10, 0}}
	b := store.FrontierReport{Member: "fetcher-b", At: t0.Add(2 * time.Second), Hosts: 1, ByLevel: []int64{}}
	for _, r := range []store.FrontierReport{a, b} {
		if err := fs.ReportFrontier(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	read := func(since time.Time) []store.FrontierReport {
		t.Helper()
		rs, err := fs.FrontierReports(ctx, since)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	if got := read(t0); !reflect.DeepEqual(got, []store.FrontierReport{a, b}) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, []store.FrontierReport{a, b})
	}
	if got := read(t0.Add(time.Second)); !reflect.DeepEqual(got, []store.FrontierReport{b}) {
		t.Errorf("since filters by time: %+v, want only fetcher-b's", got)
	}
	// A fetcher's next report replaces its last; a nil queue reads back empty.
	a2 := a
	a2.At, a2.Gone, a2.Active, a2.ByLevel = t0.Add(5*time.Second), true, 0, nil
	if err := fs.ReportFrontier(ctx, a2); err != nil {
		t.Fatal(err)
	}
	a2.ByLevel = []int64{}
	if got := read(t0); !reflect.DeepEqual(got, []store.FrontierReport{a2, b}) {
		t.Errorf("upsert:\n got %+v\nwant %+v", got, []store.FrontierReport{a2, b})
	}
	// A report an hour and more later prunes both: a fetcher that left long
	// ago takes no room.
	c := store.FrontierReport{Member: "fetcher-c", At: a2.At.Add(store.FleetRetention + time.Millisecond), ByLevel: []int64{5}}
	if err := fs.ReportFrontier(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := read(time.Time{}); !reflect.DeepEqual(got, []store.FrontierReport{c}) {
		t.Errorf("after an hour: %+v, want only fetcher-c's", got)
	}
}
