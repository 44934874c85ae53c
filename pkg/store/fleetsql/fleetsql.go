// Package fleetsql is store.FleetStore written once for both SQL stores, on
// the same connection adapters as package controlsql: the fetcher_reports
// table (migrations sqlite/0014_fetcher_reports.sql and
// postgres/0011_fetcher_reports.sql) has the same columns in both dialects,
// times as integer milliseconds.
//
// The queue per priority level is JSON text: the number of levels is a flag
// (-levels), so fixed columns would need a migration whenever it grows, and
// nothing queries a level on its own; the API sums the arrays in Go.
package fleetsql

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

// Store implements store.FleetStore on a controlsql.DB.
type Store struct{ db controlsql.DB }

var _ store.FleetStore = (*Store)(nil)

// New returns the fleet store of db.
func New(db controlsql.DB) *Store { return &Store{db: db} }

const (
	qUpsert = `INSERT INTO fetcher_reports (member, at, gone, hosts, active, waiting, backing_off, paused,
			queued, in_flight, by_level)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (member) DO UPDATE SET at = excluded.at, gone = excluded.gone, hosts = excluded.hosts,
			active = excluded.active, waiting = excluded.waiting, backing_off = excluded.backing_off,
			paused = excluded.paused, queued = excluded.queued, in_flight = excluded.in_flight,
			by_level = excluded.by_level`
	qPrune   = `DELETE FROM fetcher_reports WHERE at < $1`
	qReports = `SELECT member, at, gone, hosts, active, waiting, backing_off, paused, queued, in_flight, by_level
		FROM fetcher_reports WHERE at >= $1 ORDER BY member`
)

// Queries lists every statement, for a store's query-plan checks.
func Queries() []string { return []string{qUpsert, qPrune, qReports} }

// ReportFrontier implements store.FleetStore. The prune rides on the
// upsert's transaction: the table holds a row per fetcher, so it costs
// little, and no other process has to own the clean-up.
func (s *Store) ReportFrontier(ctx context.Context, r store.FrontierReport) error {
	levels, err := json.Marshal(nonNil(r.ByLevel))
	if err != nil {
		return fmt.Errorf("report frontier of %s: %w", r.Member, err)
	}
	at := r.At.UnixMilli()
	err = s.db.Write(ctx, func(tx controlsql.Tx) error {
		if _, err := tx.Exec(ctx, qUpsert, r.Member, at, flag(r.Gone), r.Hosts, r.Active, r.Waiting, r.BackingOff,
			r.Paused, r.Queued, r.InFlight, string(levels)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, qPrune, at-store.FleetRetention.Milliseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("report frontier of %s: %w", r.Member, err)
	}
	return nil
}

// FrontierReports implements store.FleetStore.
func (s *Store) FrontierReports(ctx context.Context, since time.Time) ([]store.FrontierReport, error) {
	var out []store.FrontierReport
	err := s.db.Query(ctx, qReports, []any{since.UnixMilli()}, func(row controlsql.Row) error {
		var (
			r         store.FrontierReport
			at, gone  int64
			levelText string
		)
		if err := row.Scan(&r.Member, &at, &gone, &r.Hosts, &r.Active, &r.Waiting, &r.BackingOff, &r.Paused,
			&r.Queued, &r.InFlight, &levelText); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(levelText), &r.ByLevel); err != nil {
			return fmt.Errorf("queue by level of %s: %w", r.Member, err)
		}
		r.At, r.Gone = time.UnixMilli(at).UTC(), gone != 0
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read frontier reports: %w", err)
	}
	return out, nil
}

// nonNil stores a frontier without levels as [], which reads back as an
// empty array rather than null.
func nonNil(levels []int64) []int64 {
	if levels == nil {
		return []int64{}
	}
	return levels
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
