package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/store"
)

// clusterLive is the frontier tier's live view: no frontier of its own.
type clusterLive struct{}

func (clusterLive) Pages(context.Context) (int64, error) { return 0, nil }
func (clusterLive) LiveStats(context.Context) LiveStats {
	return LiveStats{Mode: "cluster", Uptime: time.Minute}
}
func (clusterLive) LiveHost(string) (LiveHost, bool) { return LiveHost{}, false }

// In cluster mode the frontier's numbers are the sum of the fetchers' fresh
// reports: a stale one (a fetcher that died) and a gone one (a fetcher that
// stopped) do not count, and with none fresh the numbers are null.
func TestStatsSumFetchersReports(t *testing.T) {
	te := testenv.New(t)
	e := newEnvOn(t, te, clusterLive{}, Config{})
	frontier := func() (hosts, queue map[string]any) {
		t.Helper()
		code, out := e.do(t, "GET", "/api/v1/stats", "", "")
		if code != http.StatusOK {
			t.Fatalf("stats: %d %v", code, out)
		}
		return out["hosts"].(map[string]any), out["queue"].(map[string]any)
	}
	hosts, queue := frontier()
	for _, v := range []any{hosts["active"], hosts["waiting"], hosts["backing_off"], queue["in_frontier"], queue["in_flight"], queue["by_level"]} {
		if v != nil {
			t.Fatalf("no report: hosts %v, queue %v; want the frontier's numbers null", hosts, queue)
		}
	}
	if hosts["reporting_fetchers"] != 0.0 {
		t.Errorf("no report: reporting_fetchers %v, want 0", hosts["reporting_fetchers"])
	}

	ctx := context.Background()
	now := time.Now()
	fleet := te.DB.Fleet()
	for _, r := range []store.FrontierReport{
		{Member: "fetcher-0", At: now.Add(-time.Second), Hosts: 10, Active: 3, Waiting: 5, BackingOff: 1, Queued: 100, InFlight: 4, ByLevel: []int64{60, 30, 10}},
		{Member: "fetcher-1", At: now.Add(-4 * time.Second), Hosts: 7, Active: 2, Waiting: 4, BackingOff: 0, Queued: 20, InFlight: 2, ByLevel: []int64{5, 15}},
		// Died: its last report is older than three intervals.
		{Member: "fetcher-2", At: now.Add(-store.FrontierReportFresh - time.Second), Active: 50, Waiting: 50, Queued: 1000, InFlight: 50, ByLevel: []int64{1000}},
		// Stopped cleanly a moment ago.
		{Member: "fetcher-3", At: now, Gone: true, Active: 70, Waiting: 70, Queued: 7000, InFlight: 70, ByLevel: []int64{7000}},
	} {
		if err := fleet.ReportFrontier(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	hosts, queue = frontier()
	got, _ := json.Marshal(map[string]any{"hosts": hosts, "queue": queue})
	want := map[string]any{
		"active": 5.0, "waiting": 9.0, "backing_off": 1.0, "reporting_fetchers": 2.0,
		"in_frontier": 120.0, "in_flight": 6.0,
	}
	for k, v := range want {
		if hosts[k] != v && queue[k] != v {
			t.Errorf("%s: want %v in %s", k, v, got)
		}
	}
	if lv, _ := json.Marshal(queue["by_level"]); string(lv) != "[65,45,10]" {
		t.Errorf("by_level %s, want [65,45,10]", lv)
	}

	// A process with its own frontier reads it, not the reports.
	emb := newEnvOn(t, te, fakeLive{}, Config{})
	_, out := emb.do(t, "GET", "/api/v1/stats", "", "")
	if h := out["hosts"].(map[string]any); h["active"] != 1.0 || h["reporting_fetchers"] != nil {
		t.Errorf("embedded: hosts %v, want its own frontier's active 1 and reporting_fetchers null", h)
	}
}
