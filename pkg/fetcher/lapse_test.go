package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestLapsedRevisitLeavesSchedule: a planned revisit of a URL the rules no
// longer admit (here a repeated-segment trap, as after a restart with
// stricter rules) is recorded as excluded with the rule's reason and leaves
// the schedule, instead of staying due and being emitted at every scan.
func TestLapsedRevisitLeavesSchedule(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	const u = "http://a.example/a/a/a/x"
	hash := store.HashURL(u)
	part := queue.PartitionOf("a.example")
	due := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
	if _, err := e.DB.AdmitURLs(ctx, []store.URL{{Hash: hash, Partition: part, URL: u, Host: "a.example", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: due}}); err != nil {
		t.Fatal(err)
	}
	caps := []store.Capture{{FetchID: "f1", URLHash: hash, URL: u, FetchedAt: due.Add(-time.Hour), Status: 200,
		Schedule: &store.Recrawl{NextFetchAt: due, FetchCount: 1, LastVisitAt: due.Add(-time.Hour)}}}
	if err := e.DB.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	_, stop := startFetcher(t, e, testConfig())
	defer stop()
	rec := urlRecord(t, queue.URL{URL: u, Revisit: &queue.Revisit{Due: due}}, part)
	rec.Key = []byte("a.example")
	if err := e.Kafka.ProduceSync(ctx, []*kgo.Record{rec}...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 15*time.Second, "lapsed revisit recorded as excluded", func() bool {
		info, err := e.DB.URLInfo(ctx, u)
		return err == nil && info.URL != nil && info.URL.State == store.StateExcluded && info.URL.Reason != ""
	})
	rows, err := e.DB.DueURLs(ctx, part, 256)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Hash == hash {
			t.Errorf("the lapsed URL is still scheduled at %v", r.Recrawl.NextFetchAt)
		}
	}
}
