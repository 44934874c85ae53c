package fetcher

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/hostile"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestBrokenURLsDoNotHoldTheirHost: a URL whose answer is malformed (a bad
// status line, broken chunking, oversized headers) fails for good at once
// and is recorded; it does not back its host off nor is it tried again,
// so the host's good pages wait for nothing but the host's delay. (Retried
// and backed off like a timeout, three such URLs held a host's pages for
// 256 s.) A body cut short is tried again, after the host's other URLs.
func TestBrokenURLsDoNotHoldTheirHost(t *testing.T) {
	e := testenv.New(t)
	var log requestLog
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path)
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		if hostile.Write(w, strings.TrimPrefix(r.URL.Path, "/bad/")) {
			return
		}
		fmt.Fprint(w, "<html><body>good</body></html>")
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)
	base := strings.ToLower(srv.URL)
	broken := []string{base + "/bad/invalid-status", base + "/bad/broken-chunking", base + "/bad/huge-headers"}
	cut := base + "/bad/cut-body"
	var good []string
	for i := range 8 {
		good = append(good, fmt.Sprintf("%s/good/%d", base, i))
	}

	cfg := testConfig()
	cfg.DefaultDelay = 200 * time.Millisecond
	cfg.MaxRetries = 2
	reg := prometheus.NewRegistry()
	f, err := New(cfg, e.DB, e.Options(), reg, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The broken URLs first: they are at the head of the host's queue. One
	// batch, so that the host's whole queue is known at its first turn.
	var recs []*kgo.Record
	for _, u := range append(append(append([]string{}, broken...), cut), good...) {
		recs = append(recs, urlRecord(t, queue.URL{URL: u, Seed: true}, queue.PartitionOf(host)))
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "every URL done", func() bool {
		for _, u := range append(append(append([]string{}, broken...), cut), good...) {
			if s := urlState(t, e, u); s != store.StateFetched && s != store.StateFailed {
				return false
			}
		}
		return true
	})

	counts := map[string]int{}
	for _, r := range log.snapshot() {
		counts[r.path]++
	}
	for _, u := range broken {
		path := strings.TrimPrefix(u, base)
		if n := counts[path]; n != 1 {
			t.Errorf("%s requested %d times, want once (a malformed answer is not tried again)", path, n)
		}
		info, err := e.DB.URLInfo(context.Background(), u)
		if err != nil || info.URL == nil || info.URL.State != store.StateFailed || info.URL.Reason == "" {
			t.Errorf("%s: %+v, %v; want failed with a reason", path, info.URL, err)
		}
	}
	if n := counts["/bad/cut-body"]; n != cfg.MaxRetries+1 {
		t.Errorf("cut body requested %d times, want %d (tried again)", n, cfg.MaxRetries+1)
	}
	// The cut body's retries went after the good pages.
	order := log.snapshot()
	lastGood, firstRetry := -1, -1
	seenCut := 0
	for i, r := range order {
		if strings.HasPrefix(r.path, "/good/") {
			lastGood = i
		}
		if r.path == "/bad/cut-body" {
			if seenCut++; seenCut == 2 && firstRetry < 0 {
				firstRetry = i
			}
		}
	}
	if firstRetry >= 0 && firstRetry < lastGood {
		t.Errorf("the cut body was tried again (request %d) before the host's last good page (request %d)", firstRetry, lastGood)
	}
	// No wait imposed on the host beyond its delay: the broken URLs did not
	// back it off.
	if n, over := politenessOver(t, reg, 0.9); n == 0 || over > 0 {
		t.Errorf("%d of %d waits imposed on the host were over 0.9 s with a 0.2 s delay, want none", over, n)
	}
	// Every request, robots.txt and the retries included, was timed from
	// its host's ready time to its start.
	if n, got := histogramCount(t, reg, "crawler_frontier_ready_to_start_seconds"), len(log.snapshot()); n != uint64(got) {
		t.Errorf("%d samples of ready to start for %d requests", n, got)
	}
}

func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no histogram %s", name)
	return 0
}

// politenessOver reads the fetcher's politeness histogram: how many waits it
// observed, and how many were longer than limit seconds (limit must be a
// bucket bound or above one).
func politenessOver(t *testing.T, reg *prometheus.Registry, limit float64) (n, over uint64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "crawler_frontier_politeness_delay_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		n = h.GetSampleCount()
		var under uint64
		for _, b := range h.GetBucket() {
			if b.GetUpperBound() <= limit {
				under = b.GetCumulativeCount()
			}
		}
		return n, n - under
	}
	t.Fatal("no politeness histogram")
	return 0, 0
}
