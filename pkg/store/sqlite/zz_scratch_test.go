package sqlite

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestScratchAdmit(t *testing.T) {
	for _, cfg := range [][]string{
		nil,
	} {
		db, _ := openTemp(t)
		ctx := context.Background()
		for _, p := range cfg {
			if _, err := db.w.ExecContext(ctx, "PRAGMA "+p); err != nil {
				t.Fatal(err)
			}
		}
		var batches [][]store.URL
		for n := 0; n < 200; n++ {
			urls := make([]store.URL, 500)
			for i := range urls {
				k := n*500 + i
				urls[i] = storetest.URL(int32(k%256), fmt.Sprintf("host%d.example", k%1000), fmt.Sprintf("/page/%d", k))
			}
			batches = append(batches, urls)
		}
		start, cpu := time.Now(), cpuNow()
		for _, urls := range batches {
			if _, err := db.AdmitURLs(ctx, urls); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%v: wall %v cpu %v -> %.0f urls/s wall, %.0f urls/cpu-s", cfg, time.Since(start), cpuNow()-cpu,
			100000/time.Since(start).Seconds(), 100000/(cpuNow()-cpu).Seconds())
	}
}
