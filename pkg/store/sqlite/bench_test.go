package sqlite

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
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

func BenchmarkURLHistories(b *testing.B) {
	db, _ := openTemp(b)
	storetest.BenchURLHistories(b, db)
}

func BenchmarkAddCaptures(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode, func(b *testing.B) {
			db, _ := openTemp(b, WithSynchronous(mode))
			storetest.BenchAddCaptures(b, db)
		})
	}
}

// BenchmarkAddCapturesIndexed: what the search index costs AddCaptures,
// per capture, at 600 words of text a page (about the synthetic web's 4 KiB
// pages) against BenchmarkAddCaptures, the indexer's rounds included: a
// round of the pages pending after each AddCaptures of 100 (round=100, as
// the store indexed before migration 0026) or at each indexBatch of them.
func BenchmarkAddCapturesIndexed(b *testing.B) {
	for _, round := range []int{storetest.CaptureBatch, indexBatch} {
		b.Run(fmt.Sprintf("round=%d", round), func(b *testing.B) {
			db, _ := openTemp(b, WithSynchronous("NORMAL"))
			// The rounds run in AddCaptures, so that their CPU is
			// measured, not in the indexer's goroutine.
			close(db.ix.stop)
			<-db.ix.done
			db.ix = nil
			storetest.BenchAddCapturesIndexed(b, &roundIndexer{DB: db, round: round}, 600)
		})
	}
}

// roundIndexer runs the indexer's rounds in AddCaptures.
type roundIndexer struct {
	*DB
	round, pending int
}

func (s *roundIndexer) AddCaptures(ctx context.Context, caps []store.Capture) error {
	if err := s.DB.AddCaptures(ctx, caps); err != nil {
		return err
	}
	if s.pending += len(caps); s.pending >= s.round {
		s.pending = 0
		return indexPending(ctx, controlDB{s.DB})
	}
	return nil
}

func (s *roundIndexer) FlushIndex(ctx context.Context) error {
	return indexPending(ctx, controlDB{s.DB})
}

// BenchmarkAddCapturesLinks: what the link graph costs AddCaptures, per
// capture in time and in file size, at 0 and 40 out-links a page.
func BenchmarkAddCapturesLinks(b *testing.B) {
	for _, links := range []int{0, 40} {
		b.Run(fmt.Sprintf("links=%d", links), func(b *testing.B) {
			db, path := openTemp(b, WithSynchronous("NORMAL"))
			storetest.BenchAddCapturesLinks(b, db, links)
			if _, err := db.w.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				b.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			var caps int64
			if err := db.r.QueryRowContext(context.Background(), "SELECT count(*) FROM captures").Scan(&caps); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/float64(max(caps, 1)), "file-B/capture")
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
