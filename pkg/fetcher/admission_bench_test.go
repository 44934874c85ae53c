package fetcher

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
)

// BenchmarkAdmitRecords admits polls of 1,000 new URLs of 100 owned hosts
// (admitRecords: decoding, the rules, the seen check, the store's insert and
// the frontier), as the fetcher's consume loop does with crawl.urls. The
// allocations per poll are the figure to watch (docs/performance.md, "Memory
// at the peak"); the time is mostly SQLite's.
func BenchmarkAdmitRecords(b *testing.B) {
	f := outsideFetcher(b, testenv.New(b))
	f.member.touch()
	const hosts, perPoll = 100, 1000
	f.mu.Lock()
	for i := range hosts {
		f.owned[queue.PartitionOf(fmt.Sprintf("host%d.example", i))] = true
	}
	f.mu.Unlock()
	poll := func(n int) []*kgo.Record {
		recs := make([]*kgo.Record, perPoll)
		for i := range recs {
			host := fmt.Sprintf("host%d.example", i%hosts)
			p := queue.PartitionOf(host)
			v, err := queue.EncodeURL(queue.URL{URL: fmt.Sprintf("http://%s/p%d/%d.html", host, n, i), Seed: true, DiscoveredAt: time.Now()})
			if err != nil {
				b.Fatal(err)
			}
			recs[i] = &kgo.Record{Topic: queue.TopicURLs, Value: v, Partition: p}
		}
		return recs
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		recs := poll(n)
		b.StartTimer()
		if err := f.admitRecords(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
}
