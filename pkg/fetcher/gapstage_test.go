package fetcher

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// histSums gathers a histogram (vec) of reg: sample count and sum by the
// value of label ("" for a histogram without labels).
func histSums(t *testing.T, reg *prometheus.Registry, name, label string) (counts map[string]uint64, sums map[string]float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts, sums = map[string]uint64{}, map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label {
					key = lp.GetValue()
				}
			}
			counts[key] = m.GetHistogram().GetSampleCount()
			sums[key] = m.GetHistogram().GetSampleSum()
		}
	}
	return counts, sums
}

// TestGapStages: every request is split into the stages of
// crawler_frontier_gap_stage_seconds, those within ready-to-start add up to
// it, and a host whose next URL comes well after its delay shows the wait as
// idle, not as ready-to-start.
func TestGapStages(t *testing.T) {
	e := testenv.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		fmt.Fprint(w, "<html><body>page</body></html>")
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)
	base := strings.ToLower(srv.URL)

	cfg := testConfig()
	cfg.DefaultDelay = 50 * time.Millisecond
	f, stop := startFetcher(t, e, cfg)
	defer stop()
	reg := prometheus.NewRegistry()
	reg.MustRegister(f.metrics.gapStages, f.metrics.readyToStart)

	send := func(urls ...string) {
		var recs []*kgo.Record
		for _, u := range urls {
			recs = append(recs, urlRecord(t, queue.URL{URL: u, Seed: true}, queue.PartitionOf(host)))
		}
		if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	fetched := func(urls ...string) {
		testenv.Eventually(t, 60*time.Second, "fetched", func() bool {
			for _, u := range urls {
				if urlState(t, e, u) != store.StateFetched {
					return false
				}
			}
			return true
		})
	}
	first := []string{base + "/a", base + "/b"}
	send(first...)
	fetched(first...)
	// The host's delay ends at most 50 ms (and the margin) after the last
	// response, which came before its state read fetched: a URL sent 300 ms
	// after that finds the host idle for at least 250 ms.
	const late = 300 * time.Millisecond
	time.Sleep(late)
	send(base + "/c")
	fetched(base + "/c")

	counts, sums := histSums(t, reg, "crawler_frontier_gap_stage_seconds", "stage")
	rc, rs := histSums(t, reg, "crawler_frontier_ready_to_start_seconds", "")
	requests := rc[""] // robots.txt and three pages
	if requests != 4 {
		t.Fatalf("ready to start counted %d requests, want 4 (robots.txt and three pages)", requests)
	}
	within := 0.0
	for _, st := range []string{"idle", "held", "backpressure", "worker", "handoff", "gate"} {
		if counts[st] != requests {
			t.Errorf("stage %s: %d observations, want one per request (%d)", st, counts[st], requests)
		}
		if st != "idle" {
			within += sums[st]
		}
	}
	if math.Abs(within-rs[""]) > 1e-6 {
		t.Errorf("stages within ready to start add up to %.6f s, ready to start %.6f s", within, rs[""])
	}
	for _, st := range []string{"dns", "dial", "send"} {
		if counts[st] != 3 {
			t.Errorf("stage %s: %d observations, want one per page (3)", st, counts[st])
		}
	}
	if counts["return"] != requests {
		t.Errorf("return: %d observations, want %d", counts["return"], requests)
	}
	if idle := sums["idle"]; idle < (late - cfg.DefaultDelay - politenessMargin).Seconds() {
		t.Errorf("idle %.3f s, want at least %v: /c came that long after the host's delay", idle, late-cfg.DefaultDelay-politenessMargin)
	}
	if sums["backpressure"] != 0 {
		t.Errorf("backpressure %.3f s in a fetcher never held", sums["backpressure"])
	}
}
