package sqlite

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// The write benchmarks run under both durability settings, to show what
// synchronous=FULL (the default) costs per batch.
var syncModes = []string{"FULL", "NORMAL"}

func BenchmarkAdmitURLs(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode, func(b *testing.B) {
			db, _ := openTemp(b, WithSynchronous(mode))
			storetest.BenchAdmitURLs(b, db)
		})
	}
}

func BenchmarkSeen(b *testing.B) {
	db, _ := openTemp(b)
	storetest.BenchSeen(b, db)
}

func BenchmarkAddCaptures(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode, func(b *testing.B) {
			db, _ := openTemp(b, WithSynchronous(mode))
			storetest.BenchAddCaptures(b, db)
		})
	}
}

func BenchmarkNearDuplicate(b *testing.B) {
	db, _ := openTemp(b)
	storetest.BenchNearDuplicate(b, db)
}

// BenchmarkRecrawlSchedule: the recrawl scan and the schedule summary at a
// million scheduled URLs (50,000 under -short), on a store opened as the
// embedded crawler opens it.
func BenchmarkRecrawlSchedule(b *testing.B) {
	db, _ := openTemp(b, WithSynchronous("NORMAL"), WithoutNearDupIndex(), WithCheckpointPages(50000), WithReaders(0))
	storetest.BenchRecrawlSchedule(b, db)
}
