package fetcher

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/crawlcluster/crawler/internal/cputime"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// BenchmarkScanDue runs the partition owner's scan for due visits (scanDue,
// what recrawlLoop does every second) over storetest.ScheduleSize() scheduled
// URLs (a million; 50,000 under -short) of 10,000 hosts, 2% of them due, in
// a SQLite store opened as the embedded crawler opens it, with all 256
// partitions owned. After each scan the records it emitted count as claimed
// and fetched (their bookkeeping is dropped), so every scan reads, ranks and
// produces as in a crawl that keeps up with its revisits. It reports the
// rows due and records emitted per scan, the largest emitted map, the Go heap
// and the process's peak RSS over the scans (docs/performance.md, "Recrawl
// schedule at a million URLs").
func BenchmarkScanDue(b *testing.B) {
	ctx := context.Background()
	e := testenv.New(b)
	// pkg/embedded's options.
	db, err := sqlite.Open(ctx, filepath.Join(e.Dir, "schedule.db"), sqlite.WithSynchronous("NORMAL"),
		sqlite.WithoutNearDupIndex(), sqlite.WithCheckpointPages(50000), sqlite.WithReaders(0))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	n := storetest.ScheduleSize()
	now := time.Now().Truncate(time.Millisecond)
	took := storetest.FillSchedule(b, db, n, now)
	b.Logf("filled %d scheduled URLs in %v", n, took.Round(time.Millisecond))

	cfg := testConfig()
	cfg.Recrawl = recrawl.DefaultPolicy()
	f, err := New(cfg, db, e.Options(), nil, e.Log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(f.kafka.Close)
	f.mu.Lock()
	for p := range int32(queue.Partitions) {
		f.owned[p] = true
	}
	f.mu.Unlock()

	var emitted, maxEmitted int
	mem := storetest.StartMemory()
	cpu := cputime.Measure(b)
	for b.Loop() {
		if err := f.scanDue(ctx, now); err != nil {
			b.Fatal(err)
		}
		f.mu.Lock()
		emitted = len(f.emitted)
		maxEmitted = max(maxEmitted, emitted)
		for h := range f.emitted {
			f.forgetEmitted(h)
		}
		f.mu.Unlock()
		mem.Sample()
	}
	cpu()
	if emitted == 0 {
		b.Fatal("a scan emitted nothing")
	}
	b.ReportMetric(testutil.ToFloat64(f.metrics.recrawlDue), "due/scan")
	b.ReportMetric(float64(emitted), "emitted/scan")
	b.ReportMetric(float64(maxEmitted), "emitted-map")
	mem.Report(b)
}
