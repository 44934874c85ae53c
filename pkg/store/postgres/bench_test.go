package postgres

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// The benchmarks run on the test server (pgtest): a private one has fsync off, so
// they measure the statements and the round trips, not the disk; on a server named
// by CRAWLER_TEST_POSTGRES they measure that server as configured.

func BenchmarkAdmitURLs(b *testing.B) {
	db, _ := openFresh(b)
	storetest.BenchAdmitURLs(b, db)
}

func BenchmarkSeen(b *testing.B) {
	db, _ := openFresh(b)
	storetest.BenchSeen(b, db)
}

func BenchmarkAddCaptures(b *testing.B) {
	db, _ := openFresh(b)
	storetest.BenchAddCaptures(b, db)
}

func BenchmarkNearDuplicate(b *testing.B) {
	db, _ := openFresh(b)
	storetest.BenchNearDuplicate(b, db)
}

// BenchmarkRecrawlSchedule: the recrawl scan and the schedule summary at a
// million scheduled URLs (50,000 under -short).
func BenchmarkRecrawlSchedule(b *testing.B) {
	db, _ := openFresh(b)
	storetest.BenchRecrawlSchedule(b, db)
}
