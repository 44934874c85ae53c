package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Stats sums the counters the schema's triggers keep (at most 32 shards per
// counter), so its cost does not grow with the crawl. The counts are exact as of
// the statement's snapshot.
func (db *DB) Stats(ctx context.Context) (store.Stats, error) {
	s := store.NewStats()
	err := db.queryRows(ctx, qCounters, nil, func(rows pgx.Rows) error {
		var name, key string
		var n int64
		if err := rows.Scan(&name, &key, &n); err != nil {
			return err
		}
		s.AddCounter(name, key, n)
		return nil
	})
	if err == nil {
		err = db.pool.QueryRow(ctx, qSegments).Scan(&s.Segments)
	}
	if err == nil {
		err = db.pool.QueryRow(ctx, qBlockedHosts).Scan(&s.BlockedHosts)
	}
	if err != nil {
		return store.Stats{}, fmt.Errorf("stats: %w", err)
	}
	return s, nil
}

// URLInfo returns the URL row, the exclusion record and the captures (newest first)
// of a normalized URL, read from one snapshot.
func (db *DB) URLInfo(ctx context.Context, normalized string) (store.URLInfo, error) {
	info, err := db.urlInfo(ctx, store.HashURL(normalized))
	if err != nil {
		return store.URLInfo{}, fmt.Errorf("url info of %s: %w", normalized, err)
	}
	if info.URL == nil && info.Exclusion == nil && len(info.Captures) == 0 {
		return store.URLInfo{}, fmt.Errorf("url info of %s: %w", normalized, store.ErrNotFound)
	}
	return info, nil
}

func (db *DB) urlInfo(ctx context.Context, hash int64) (store.URLInfo, error) {
	var info store.URLInfo
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return info, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only; nothing to keep

	// The three reads travel together.
	b := &pgx.Batch{}
	b.Queue(qURL, hash).QueryRow(func(row pgx.Row) error {
		u, err := scanURL(row)
		switch {
		case err == nil:
			info.URL = &u
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		return nil
	})
	b.Queue(qExclusion, hash).QueryRow(func(row pgx.Row) error {
		var e store.Exclusion
		var at pgtype.Timestamptz
		err := row.Scan(&e.Hash, &e.URL, &e.Host, &e.Reason, &e.Parent, &e.Depth, &e.CrawlID, &at, &e.CutFrom)
		switch {
		case err == nil:
			e.At = fromTimestamp(at)
			info.Exclusion = &e
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		return nil
	})
	b.Queue(qURLCaptures, hash).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			c, err := scanCapture(rows)
			if err != nil {
				return err
			}
			info.Captures = append(info.Captures, c)
		}
		return rows.Err()
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return info, err
	}
	return info, tx.Commit(ctx)
}

// Schedule summarises the planned visits (of URLs stored or failed). The total
// comes from the counters; the due count reads the index entries up to now, so
// it costs as much as the backlog.
func (db *DB) Schedule(ctx context.Context, now time.Time) (store.ScheduleStats, error) {
	var st store.ScheduleStats
	var next pgtype.Timestamptz
	if err := db.pool.QueryRow(ctx, qSchedule, timestamp(now), int32(Partitions)).Scan(&st.Scheduled, &st.Due, &next); err != nil {
		return store.ScheduleStats{}, fmt.Errorf("schedule: %w", err)
	}
	st.NextDue = fromTimestamp(next)
	if st.Due > 0 {
		// The earliest planned visit is the oldest due one when any is due.
		st.OldestDue = st.NextDue
	}
	return st, nil
}

// Host returns one host row.
func (db *DB) Host(ctx context.Context, host string) (store.Host, error) {
	h, err := scanHostListed(db.pool.QueryRow(ctx, qHost, host))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Host{}, fmt.Errorf("host %s: %w", host, store.ErrNotFound)
	}
	if err != nil {
		return store.Host{}, fmt.Errorf("host %s: %w", host, err)
	}
	return h, nil
}

// Captures calls fn for every capture in ID order, a page at a time.
func (db *DB) Captures(ctx context.Context, fn func(store.Capture) error) error {
	err := pages(ctx, db, qCaptures, nil,
		func(rows pgx.Rows) (store.Capture, error) { return scanCapture(rows) },
		func(c store.Capture) int64 { return c.ID },
		fn)
	if err != nil {
		return fmt.Errorf("captures: %w", err)
	}
	return nil
}
