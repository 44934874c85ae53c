package fetcher

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/store"
)

// A report holds what the frontier holds: its hosts by state, its queues
// per level, and the requests in flight.
func TestFrontierReportHoldsTheFrontier(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.InstanceID = "fetcher-7"
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithFrontierReports(e.DB.Fleet(), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer f.client.Close()
	defer f.kafka.Close()

	// a.example waits a minute with URLs at levels 0 and 2; b.example's
	// first URL is leased, its request in flight; c.example is paused.
	f.fr.Push(frontier.Item{URL: "http://a.example/", Host: "a.example", Partition: 1, Level: 0})
	f.fr.Push(frontier.Item{URL: "http://a.example/deep", Host: "a.example", Partition: 1, Level: 2})
	f.fr.SetNextAllowed("a.example", 1, time.Now().Add(time.Minute))
	f.fr.Push(frontier.Item{URL: "http://b.example/", Host: "b.example", Partition: 2})
	f.fr.Push(frontier.Item{URL: "http://b.example/next", Host: "b.example", Partition: 2, Level: 1})
	f.fr.SetHostPaused("c.example", 3, true)
	f.fr.Push(frontier.Item{URL: "http://c.example/", Host: "c.example", Partition: 3, Level: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := f.fr.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Returned before the client closes, whose revoke waits for leases.
	defer lease.Done(frontier.Outcome{})
	f.inFlight.Add(1)

	before := time.Now().Add(-time.Millisecond)
	f.reportFrontier(ctx, false)
	rs, err := e.DB.Fleet().FrontierReports(ctx, before)
	if err != nil || len(rs) != 1 {
		t.Fatalf("reports %+v, %v; want one", rs, err)
	}
	got := rs[0]
	s := f.fr.Stats()
	want := store.FrontierReport{Member: "fetcher-7", At: got.At, Hosts: 3, Active: 1, Waiting: 1, Paused: 1,
		Queued: int64(s.Queued), InFlight: 1, ByLevel: []int64{int64(s.ByLevel[0]), 1, 1, 1}}
	if !reflect.DeepEqual(got, want) || s.Queued < 4 {
		t.Errorf("report %+v\nwant %+v (frontier %+v)", got, want, s)
	}
}

// A running fetcher reports at start and every interval, and its last
// report, on a clean stop, is marked gone.
func TestFrontierReportedWhileRunningAndGoneAfterStop(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithFrontierReports(e.DB.Fleet(), 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	latest := func() store.FrontierReport {
		t.Helper()
		rs, err := e.DB.Fleet().FrontierReports(context.Background(), time.Time{})
		if err != nil || len(rs) > 1 {
			t.Fatalf("reports %+v, %v; want at most one row", rs, err)
		}
		if len(rs) == 0 {
			return store.FrontierReport{}
		}
		return rs[0]
	}
	var first time.Time
	testenv.Eventually(t, 30*time.Second, "a first report", func() bool {
		first = latest().At
		return !first.IsZero()
	})
	testenv.Eventually(t, 30*time.Second, "a later report", func() bool { return latest().At.After(first) })
	if r := latest(); r.Gone || r.Member == "" || len(r.ByLevel) != admitLevels(cfg.Admit) {
		t.Errorf("while running: %+v; want a named report, not gone, one queue per level", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := latest(); !r.Gone {
		t.Errorf("after a clean stop: %+v, want gone", r)
	}
}
