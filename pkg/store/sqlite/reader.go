package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Stats reads the counters the schema's triggers keep, so its cost does not grow
// with the crawl.
func (db *DB) Stats(ctx context.Context) (store.Stats, error) {
	s := store.NewStats()
	err := db.query(ctx, nil, qCounters, nil, func(rows *sql.Rows) error {
		var name, key string
		var n int64
		if err := rows.Scan(&name, &key, &n); err != nil {
			return err
		}
		s.AddCounter(name, key, n)
		return nil
	})
	if err == nil {
		err = db.r.QueryRowContext(ctx, qSegments).Scan(&s.Segments)
	}
	if err == nil {
		err = db.r.QueryRowContext(ctx, qBlockedHosts).Scan(&s.BlockedHosts)
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
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return info, err
	}
	defer tx.Rollback() //nolint:errcheck // read-only; nothing to keep

	u, err := scanURL(tx.QueryRowContext(ctx, qURL, hash))
	switch {
	case err == nil:
		info.URL = &u
	case !errors.Is(err, sql.ErrNoRows):
		return info, err
	}

	var e store.Exclusion
	var at int64
	err = tx.QueryRowContext(ctx, qExclusion, hash).
		Scan(&e.Hash, &e.URL, &e.Host, &e.Reason, &e.Parent, &e.Depth, &e.CrawlID, &at, &e.CutFrom)
	switch {
	case err == nil:
		e.At = fromMillis(at)
		info.Exclusion = &e
	case !errors.Is(err, sql.ErrNoRows):
		return info, err
	}

	rows, err := tx.QueryContext(ctx, qURLCaptures, hash)
	if err != nil {
		return info, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCapture(rows)
		if err != nil {
			return info, err
		}
		info.Captures = append(info.Captures, c)
	}
	return info, rows.Err()
}

// Schedule summarises the planned visits. Its cost grows with the number of
// partitions and of due visits, not with the number planned (qSchedule).
func (db *DB) Schedule(ctx context.Context, now time.Time) (store.ScheduleStats, error) {
	var st store.ScheduleStats
	var next int64
	err := db.query(ctx, nil, qSchedule, []any{millis(now)}, func(rows *sql.Rows) error {
		return rows.Scan(&st.Scheduled, &st.Due, &next)
	})
	if err != nil {
		return store.ScheduleStats{}, fmt.Errorf("schedule: %w", err)
	}
	// The earliest planned visit is the oldest due one when it is due.
	st.NextDue = fromMillis(next)
	if next != 0 && !st.NextDue.After(now) {
		st.OldestDue = st.NextDue
	}
	return st, nil
}

// Host returns one host row.
func (db *DB) Host(ctx context.Context, host string) (store.Host, error) {
	h, err := scanHostListed(db.r.QueryRowContext(ctx, qHost, host))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Host{}, fmt.Errorf("host %s: %w", host, store.ErrNotFound)
	}
	if err != nil {
		return store.Host{}, fmt.Errorf("host %s: %w", host, err)
	}
	return h, nil
}

// Captures calls fn for every capture in ID order, a page at a time.
func (db *DB) Captures(ctx context.Context, fn func(store.Capture) error) error {
	err := pages(ctx, db,
		qCaptures,
		nil,
		func(rows *sql.Rows) (store.Capture, error) { return scanCapture(rows) },
		func(c store.Capture) int64 { return c.ID },
		fn)
	if err != nil {
		return fmt.Errorf("captures: %w", err)
	}
	return nil
}
