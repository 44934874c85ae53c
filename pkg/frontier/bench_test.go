package frontier

import (
	"context"
	"strconv"
	"testing"
)

// benchFrontier pushes urls items spread over hosts, then drains them through
// Next/Take/Done with no delay, as fetch workers would. With servers > 0 the
// hosts are spread over that many servers and every lease is bound to its
// server, with the per-server limit on (concurrency 2, no spacing).
func benchFrontier(b *testing.B, urls, hosts, servers int) {
	keys := make([]string, hosts)
	for i := range keys {
		keys[i] = "host" + strconv.Itoa(i) + ".example"
	}
	items := make([]Item, urls)
	for i := range items {
		h := keys[i%hosts]
		items[i] = Item{URL: "http://" + h + "/p/" + strconv.Itoa(i), Host: h, Level: i % 4}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cfg := Config{}
		if servers > 0 {
			cfg.ServerConcurrency = 2
		}
		f := New(cfg)
		for _, it := range items {
			f.Push(it)
		}
		for n := 0; n < urls; {
			l, err := f.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if servers > 0 && !l.Bind("10.0.0."+strconv.Itoa(len(l.Host)%servers)) {
				l.Done(Outcome{})
				continue
			}
			if _, ok := l.Take(); ok {
				n++
			}
			l.Done(Outcome{Requested: true})
		}
	}
	b.ReportMetric(float64(b.N*urls)/b.Elapsed().Seconds(), "push+pop/s")
}

func BenchmarkFrontier100kURLs10kHosts(b *testing.B) { benchFrontier(b, 100_000, 10_000, 0) }

// BenchmarkFrontierServerLimits100kURLs10kHosts is the same with the hosts
// bound to servers: the cost of the per-server limit when it never binds.
func BenchmarkFrontierServerLimits100kURLs10kHosts(b *testing.B) {
	benchFrontier(b, 100_000, 10_000, 10_000)
}

func BenchmarkFrontier1MURLs100kHosts(b *testing.B) {
	if testing.Short() {
		b.Skip("1M URLs; skipped with -short")
	}
	benchFrontier(b, 1_000_000, 100_000, 0)
}
