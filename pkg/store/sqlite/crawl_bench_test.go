package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/cputime"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// BenchmarkCrawlWrites: the store's writes per crawled page as the embedded
// crawler makes them on the medium load-test web (500 hosts, five links a
// page), on a store opened as the embedded crawler opens it. Each op is a
// batch of 100 pages: their URLs admitted, three in four of them held back
// first (an exclusion recorded) and two in three of those released (the
// exclusion forgotten), the "fetched" marks, then the captures with a
// recrawl plan and five out-links each. Run it with -benchtime 500x for a
// crawl of 50,000 pages.
func BenchmarkCrawlWrites(b *testing.B) {
	db, _ := openTemp(b, WithSynchronous("NORMAL"), WithoutNearDupIndex(), WithCheckpointPages(50000), WithReaders(0), WithCacheSize(16<<10))
	ctx := context.Background()
	if ddl := os.Getenv("CRAWL_BENCH_DDL"); ddl != "" { // for trying schema changes
		if _, err := db.w.ExecContext(ctx, ddl); err != nil {
			b.Fatal(err)
		}
	}
	const hosts, batch, fanout = 500, 100, 5
	rng := rand.New(rand.NewPCG(5, 6))
	page := func(k int) store.URL {
		h := k % hosts
		return storetest.URL(int32(h%256), fmt.Sprintf("host%d.example", h), fmt.Sprintf("/page/%d", k/hosts))
	}
	at := time.UnixMilli(1_767_225_600_000)
	var cpu time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		urls := make([]store.URL, batch)
		var ex []store.Exclusion
		var forget []int64
		var ups []store.URLUpdate
		caps := make([]store.Capture, batch)
		for i := range urls {
			k := n*batch + i
			urls[i] = page(k)
			if i%4 != 0 {
				ex = append(ex, store.Exclusion{Hash: urls[i].Hash, URL: urls[i].URL, Host: urls[i].Host, Reason: "trap_duplicate_space", At: at})
				if i%3 != 0 {
					forget = append(forget, urls[i].Hash)
				}
			}
			ups = append(ups, store.URLUpdate{Hash: urls[i].Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: at.Add(time.Duration(k) * time.Millisecond)})
			c := storetest.Capture(urls[i], fmt.Sprintf("%016x-%d", k, rng.Uint32()), urls[i].URL, rng.Uint64()|1)
			c.FetchedAt = ups[i].FetchedAt
			c.Schedule = &store.Recrawl{NextFetchAt: c.FetchedAt.Add(24 * time.Hour), FetchCount: 1, LastChangeAt: c.FetchedAt, LastVisitAt: c.FetchedAt}
			c.OutLinks = make([]int64, fanout)
			for j := range c.OutLinks {
				c.OutLinks[j] = page(rng.IntN((n + 2) * batch)).Hash
			}
			caps[i] = c
		}
		n++
		b.StartTimer()
		t0, _ := cputime.Process()
		if err := db.RecordExclusions(ctx, ex); err != nil {
			b.Fatal(err)
		}
		if _, err := db.AdmitURLs(ctx, urls); err != nil {
			b.Fatal(err)
		}
		if err := db.ForgetExclusions(ctx, forget); err != nil {
			b.Fatal(err)
		}
		if err := db.UpdateURLs(ctx, ups); err != nil {
			b.Fatal(err)
		}
		if err := db.AddCaptures(ctx, caps); err != nil {
			b.Fatal(err)
		}
		t1, _ := cputime.Process()
		cpu += t1 - t0
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n*batch), "cpu-µs/page")
}
