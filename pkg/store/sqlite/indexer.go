package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

// The indexer writes the text AddCaptures stored in search_text to
// search_fts apart from the pages, in rounds of thousands: FTS5 writes a
// round's postings as one segment (hashsize, migration 0026) where a
// crawl's batches of a hundred pages made a small segment each, merged
// again and again. A page is durable when AddCaptures commits it with its
// text; a crash leaves its postings to the next start's first round, and a
// search first indexes what is pending, so it finds every page stored
// before it.
const (
	// indexBatch pending pages start a round; fewer wait for indexEvery.
	indexBatch = 2000
	indexEvery = 5 * time.Second
	// indexRound bounds one transaction, so that a large backlog (a store
	// migrated to 0026, a crash) does not hold the writer for minutes.
	indexRound = 20_000
)

type indexer struct {
	pending atomic.Int64 // pages stored since the last round, a hint
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// startIndexer runs db's indexer until stopIndexer. Its first round takes
// whatever an earlier run left pending.
func (db *DB) startIndexer() {
	ix := &indexer{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	db.ix = ix
	ix.kick <- struct{}{}
	go func() {
		defer close(ix.done)
		tick := time.NewTicker(indexEvery)
		defer tick.Stop()
		for {
			select {
			case <-ix.stop:
				return
			case <-tick.C:
				if ix.pending.Load() == 0 {
					continue
				}
			case <-ix.kick:
			}
			ix.pending.Store(0)
			// A failed round is tried again at the next tick, and a
			// search runs one itself and reports its error.
			if err := indexPending(context.Background(), controlDB{db}); err != nil {
				ix.pending.Add(1)
			}
		}
	}()
}

// indexed counts n pages stored with text, and starts a round at
// indexBatch of them.
func (db *DB) indexed(n int) {
	if db.ix == nil || n == 0 {
		return
	}
	if db.ix.pending.Add(int64(n)) >= indexBatch {
		select {
		case db.ix.kick <- struct{}{}:
		default:
		}
	}
}

// stopIndexer ends the indexer and indexes what is pending, so that a store
// closed cleanly has none, and a crawl's CPU counts all of its index. A
// backlog longer than ctx allows stays for the next start.
func (db *DB) stopIndexer(ctx context.Context) error {
	if db.ix == nil {
		return nil
	}
	close(db.ix.stop)
	<-db.ix.done
	db.ix = nil
	if err := indexPending(ctx, controlDB{db}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("index the pages pending: %w", err)
	}
	return nil
}

// The indexer's statements (controlsql's $N).
const (
	qIndexPending   = `SELECT EXISTS (SELECT 1 FROM search_text WHERE capture_id > (SELECT indexed_through FROM search_state WHERE id = 1))`
	qIndexedThrough = `SELECT indexed_through FROM search_state WHERE id = 1`
	// The last capture ID of the next round and its count of pages.
	qIndexRoundEnd = `SELECT coalesce(max(capture_id), 0), count(*)
		FROM (SELECT capture_id FROM search_text WHERE capture_id > $1 ORDER BY capture_id LIMIT $2)`
	qIndexRound = `INSERT INTO search_fts (rowid, title, description, headings, body)
		SELECT capture_id, title, description, headings, body FROM search_text
		WHERE capture_id > $1 AND capture_id <= $2 ORDER BY capture_id`
)

// indexPending writes to search_fts the text of the pages search_text holds
// above search_state.indexed_through, in rounds of at most indexRound pages
// in capture ID order, each round one transaction and one FTS5 statement.
func indexPending(ctx context.Context, db controlsql.DB) error {
	var pending bool
	err := db.Query(ctx, qIndexPending, nil,
		func(r controlsql.Row) error { return r.Scan(&pending) })
	if err != nil || !pending {
		return err
	}
	for {
		var n int64
		err := db.Write(ctx, func(tx controlsql.Tx) error {
			var through, last int64
			if err := tx.QueryRow(ctx, qIndexedThrough).Scan(&through); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, qIndexRoundEnd, through, indexRound).Scan(&last, &n)
			if err != nil || n == 0 {
				return err
			}
			if _, err := tx.Exec(ctx, qIndexRound, through, last); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE search_state SET indexed_through = $1 WHERE id = 1`, last)
			return err
		})
		if err != nil || n < indexRound {
			return err
		}
	}
}
