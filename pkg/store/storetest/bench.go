package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/cputime"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The benchmarks take an empty store and measure the hot paths with the batch sizes
// the pipeline uses. Each reports its throughput as a metric besides ns/op.

// AdmitBatch is the batch size of BenchAdmitURLs: about a parsed page's links.
const AdmitBatch = 500

// benchURLs returns n URLs numbered from first, spread over 256 partitions and
// 1000 hosts.
func benchURLs(first, n int) []store.URL {
	urls := make([]store.URL, n)
	for i := range urls {
		k := first + i
		urls[i] = URL(int32(k%256), fmt.Sprintf("host%d.example", k%1000), fmt.Sprintf("/page/%d", k))
	}
	return urls
}

// BenchAdmitURLs admits batches of AdmitBatch new URLs.
func BenchAdmitURLs(b *testing.B, s store.Store) {
	ctx := context.Background()
	n := 0
	for b.Loop() {
		b.StopTimer()
		urls := benchURLs(n*AdmitBatch, AdmitBatch)
		n++
		b.StartTimer()
		if _, err := s.AdmitURLs(ctx, urls); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*AdmitBatch)/b.Elapsed().Seconds(), "urls/s")
}

// BenchSeen looks up batches of 500 hashes, half of them known, in a store of
// 50,000 URLs.
func BenchSeen(b *testing.B, s store.Store) {
	ctx := context.Background()
	const stored, batch = 50_000, 500
	fillBench(ctx, b, s, stored)
	rng := rand.New(rand.NewPCG(1, 2))
	hashes := make([]int64, batch)
	n := 0
	for b.Loop() {
		b.StopTimer()
		for i := range hashes {
			if i%2 == 0 {
				hashes[i] = benchURLs(rng.IntN(stored), 1)[0].Hash
			} else {
				hashes[i] = rng.Int64()
			}
		}
		b.StartTimer()
		seen, err := s.Seen(ctx, hashes)
		if err != nil {
			b.Fatal(err)
		}
		if !seen[0] {
			b.Fatal("a stored hash is not seen")
		}
		n++
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "hashes/s")
}

// BenchURLHistories reads the histories of batches of 500 known URLs (about
// a parser's batch of pages, whose change detection reads them) in a store of
// 50,000 URLs.
func BenchURLHistories(b *testing.B, s store.Store) {
	ctx := context.Background()
	const stored, batch = 50_000, 500
	fillBench(ctx, b, s, stored)
	rng := rand.New(rand.NewPCG(1, 2))
	hashes := make([]int64, batch)
	n := 0
	for b.Loop() {
		b.StopTimer()
		for i := range hashes {
			hashes[i] = benchURLs(rng.IntN(stored), 1)[0].Hash
		}
		b.StartTimer()
		hs, err := s.URLHistories(ctx, hashes)
		if err != nil {
			b.Fatal(err)
		}
		if hs[0].State == "" {
			b.Fatal("a stored URL has no history")
		}
		n++
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "urls/s")
}

// CaptureBatch is the batch size of BenchAddCaptures.
const CaptureBatch = 100

// BenchAddCaptures stores batches of CaptureBatch captures of admitted URLs, each
// with a SimHash, and moves their URLs to stored.
func BenchAddCaptures(b *testing.B, s store.Store) { BenchAddCapturesLinks(b, s, 0) }

// BenchAddCapturesLinks is BenchAddCaptures with links out-links per capture
// (the link graph's edges, written in the same transaction): half to pages of
// the batch, half to URLs the store does not hold, as on a crawl's frontier.
func BenchAddCapturesLinks(b *testing.B, s store.Store, links int) { benchAddCaptures(b, s, links, 0) }

// BenchAddCapturesIndexed is BenchAddCaptures with each capture's text, of
// words words drawn from a vocabulary of 20,000, written to the search index.
func BenchAddCapturesIndexed(b *testing.B, s store.Store, words int) {
	benchAddCaptures(b, s, 0, words)
}

func benchAddCaptures(b *testing.B, s store.Store, links, words int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(rng, 1.1, 1, 19_999)
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = strconv.FormatUint(zipf.Uint64(), 36) + "x"
		}
		return strings.Join(w, " ")
	}
	n := 0
	// The CPU time of AddCaptures alone: making the pages' text and
	// admitting their URLs cost more than some of what is measured.
	var cpu time.Duration
	cpuOK := true
	for b.Loop() {
		b.StopTimer()
		urls := benchURLs(n*CaptureBatch, CaptureBatch)
		if _, err := s.AdmitURLs(ctx, urls); err != nil {
			b.Fatal(err)
		}
		caps := make([]store.Capture, len(urls))
		for i, u := range urls {
			caps[i] = Capture(u, fmt.Sprintf("fetch-%d-%d", n, i), u.URL, rng.Uint64()|1)
			if words > 0 {
				caps[i].Title = text(6)
				caps[i].Index = &store.IndexEntry{Host: u.Host, Headings: text(10), Text: text(words)}
			}
			if links > 0 {
				caps[i].OutLinks = make([]int64, links)
				for j := range caps[i].OutLinks {
					if j%2 == 0 {
						caps[i].OutLinks[j] = urls[rng.IntN(len(urls))].Hash
					} else {
						caps[i].OutLinks[j] = int64(rng.Uint64())
					}
				}
			}
		}
		n++
		b.StartTimer()
		t0, ok := cputime.Process()
		if err := s.AddCaptures(ctx, caps); err != nil {
			b.Fatal(err)
		}
		t1, ok2 := cputime.Process()
		cpu += t1 - t0
		cpuOK = cpuOK && ok && ok2
	}
	// A store that indexes apart from AddCaptures indexes the rest now,
	// within what is measured.
	if f, ok := s.(interface{ FlushIndex(context.Context) error }); ok {
		t0, ok := cputime.Process()
		if err := f.FlushIndex(ctx); err != nil {
			b.Fatal(err)
		}
		t1, ok2 := cputime.Process()
		cpu += t1 - t0
		cpuOK = cpuOK && ok && ok2
	}
	b.ReportMetric(float64(n*CaptureBatch)/b.Elapsed().Seconds(), "captures/s")
	if cpuOK && n > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(n*CaptureBatch), "cpu-µs/capture")
	}
}

// NearDupCaptures is the index size of BenchNearDuplicate.
const NearDupCaptures = 100_000

// BenchNearDuplicate looks up fingerprints within distance 2 of stored ones in an
// index of NearDupCaptures captures. Filling the index takes seconds, so it is
// skipped under -short.
func BenchNearDuplicate(b *testing.B, s store.Store) {
	if testing.Short() {
		b.Skip("-short: fills an index of 100k captures")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	fps := make([]uint64, 0, NearDupCaptures)
	const batch = 1000
	for first := 0; first < NearDupCaptures; first += batch {
		caps := make([]store.Capture, batch)
		for i := range caps {
			k := first + i
			fp := rng.Uint64() | 1
			fps = append(fps, fp)
			u := URL(int32(k%256), fmt.Sprintf("host%d.example", k%1000), fmt.Sprintf("/doc/%d", k))
			caps[i] = Capture(u, fmt.Sprintf("nd-%d", k), u.URL, fp)
		}
		if err := s.AddCaptures(ctx, caps); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	for b.Loop() {
		fp := fps[rng.IntN(len(fps))] ^ (1 << rng.IntN(64)) ^ (1 << rng.IntN(64))
		if _, _, ok, err := s.NearDuplicate(ctx, fp, 3); err != nil || !ok {
			b.Fatalf("NearDuplicate(%016x) = %v, %v: want a match", fp, ok, err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lookups/s")
}

// fillBench admits the first n of the benchmarks' URLs.
func fillBench(ctx context.Context, b *testing.B, s store.Store, n int) {
	for first := 0; first < n; first += AdmitBatch {
		if _, err := s.AdmitURLs(ctx, benchURLs(first, AdmitBatch)); err != nil {
			b.Fatal(err)
		}
	}
}
