package cache_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCache measures Get, Set and SetMaxTime from parallel goroutines
// (GOMAXPROCS of them), as a fetcher's workers call them, over 10,000 host
// keys.
func BenchmarkCache(b *testing.B) {
	const hosts = 10_000
	keys := make([]string, hosts)
	for i := range keys {
		keys[i] = "robots:host" + strconv.Itoa(i) + ".example"
	}
	val := make([]byte, 2048) // a typical parsed robots.txt
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			ctx := context.Background()
			c := open(b, be.url(b))
			for _, k := range keys {
				if err := c.Set(ctx, k, val, time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			ops := []struct {
				name string
				call func(i int) error
			}{
				{"Get", func(i int) error { _, _, err := c.Get(ctx, keys[i%hosts]); return err }},
				{"Set", func(i int) error { return c.Set(ctx, keys[i%hosts], val, time.Hour) }},
				{"SetMaxTime", func(i int) error {
					return c.SetMaxTime(ctx, "next:"+keys[i%hosts], time.Now(), time.Hour)
				}},
			}
			for _, op := range ops {
				b.Run(op.name, func(b *testing.B) {
					var n atomic.Int64
					start := time.Now()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := op.call(int(n.Add(1))); err != nil {
								b.Error(err)
								return
							}
						}
					})
					b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
				})
			}
		})
	}
}
