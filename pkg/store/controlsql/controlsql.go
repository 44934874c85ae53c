// Package controlsql is store.ControlStore written once for both SQL stores:
// the control tables (migrations sqlite/0008_control.sql and
// postgres/0006_control.sql) have the same columns in both dialects, times
// and durations as integer milliseconds, so one text of each statement serves
// both. Statements number their parameters $1, $2...; the SQLite store turns
// them into ?1, ?2..., which SQLite reads the same way.
//
// The stores adapt their connections to DB; everything else is here.
package controlsql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Row is one result row (sql.Row, pgx.Row, sql.Rows and pgx.Rows all are).
type Row interface{ Scan(dest ...any) error }

// Tx is a write transaction.
type Tx interface {
	// Exec runs a statement and returns the rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// DB is what a store gives: transactions for writes, queries for reads.
type DB interface {
	// Write runs fn in one transaction, committed when fn returns nil.
	Write(ctx context.Context, fn func(Tx) error) error
	// Query calls scan for every row.
	Query(ctx context.Context, query string, args []any, scan func(Row) error) error
}

// Store implements store.ControlStore on a DB.
type Store struct{ db DB }

var _ store.ControlStore = (*Store)(nil)

// New returns the control store of db.
func New(db DB) *Store { return &Store{db: db} }

const (
	qVersion  = `SELECT version FROM crawl_control WHERE id = 1`
	qCrawl    = `SELECT version, paused, paused_at FROM crawl_control WHERE id = 1`
	qHosts    = `SELECT host, paused, delay_ms, page_budget, render, updated_at FROM host_controls ORDER BY host`
	qPatterns = `SELECT id, pattern, syntax, host, created_at, created_by, excluded FROM exclusion_patterns ORDER BY id`
	qPause    = `UPDATE crawl_control SET paused = $1, paused_at = $2, version = version + 1
		WHERE id = 1 AND paused <> $1`
	qBump       = `UPDATE crawl_control SET version = version + 1 WHERE id = 1`
	qDeleteHost = `DELETE FROM host_controls WHERE host = $1`
	qUpsertHost = `INSERT INTO host_controls (host, paused, delay_ms, page_budget, render, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (host) DO UPDATE SET paused = excluded.paused, delay_ms = excluded.delay_ms,
			page_budget = excluded.page_budget, render = excluded.render, updated_at = excluded.updated_at`
	qAddPattern = `INSERT INTO exclusion_patterns (pattern, syntax, host, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`
	qDeletePattern = `DELETE FROM exclusion_patterns WHERE id = $1`
	qCountExcluded = `UPDATE exclusion_patterns SET excluded = excluded + $1 WHERE id = $2`
	qAudit         = `INSERT INTO control_audit (at, actor, action, target, params, result, status)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`
	qAuditLog = `SELECT id, at, actor, action, target, params, result, status FROM control_audit
		WHERE id < $1 ORDER BY id DESC LIMIT $2`
)

// Queries lists every statement, for a store's query-plan or preparation
// checks.
func Queries() []string {
	return []string{qVersion, qCrawl, qHosts, qPatterns, qPause, qBump, qDeleteHost, qUpsertHost,
		qAddPattern, qDeletePattern, qCountExcluded, qAudit, qAuditLog}
}

// ControlVersion implements store.ControlStore.
func (s *Store) ControlVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.db.Query(ctx, qVersion, nil, func(r Row) error { return r.Scan(&v) })
	if err != nil {
		return 0, fmt.Errorf("control version: %w", err)
	}
	return v, nil
}

// Controls implements store.ControlStore. The version is read first: rows
// newer than it only make the next poll read them again.
func (s *Store) Controls(ctx context.Context) (store.Controls, error) {
	var c store.Controls
	var pausedAt int64
	err := s.db.Query(ctx, qCrawl, nil, func(r Row) error { return r.Scan(&c.Version, &c.Paused, &pausedAt) })
	if err != nil {
		return c, fmt.Errorf("read crawl control: %w", err)
	}
	c.PausedAt = fromMillis(pausedAt)
	err = s.db.Query(ctx, qHosts, nil, func(r Row) error {
		var h store.HostControl
		var delay, updated int64
		if err := r.Scan(&h.Host, &h.Paused, &delay, &h.PageBudget, &h.Render, &updated); err != nil {
			return err
		}
		h.Delay = store.NoOverride
		if delay >= 0 {
			h.Delay = time.Duration(delay) * time.Millisecond
		}
		h.UpdatedAt = fromMillis(updated)
		c.Hosts = append(c.Hosts, h)
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("read host controls: %w", err)
	}
	err = s.db.Query(ctx, qPatterns, nil, func(r Row) error {
		var p store.ExclusionPattern
		var created int64
		if err := r.Scan(&p.ID, &p.Pattern, &p.Syntax, &p.Host, &created, &p.CreatedBy, &p.Excluded); err != nil {
			return err
		}
		p.CreatedAt = fromMillis(created)
		c.Patterns = append(c.Patterns, p)
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("read exclusion patterns: %w", err)
	}
	return c, nil
}

// SetCrawlPaused implements store.ControlStore.
func (s *Store) SetCrawlPaused(ctx context.Context, paused bool, a store.AuditEntry) (bool, error) {
	var changed bool
	err := s.db.Write(ctx, func(tx Tx) error {
		at := int64(0)
		if paused {
			at = millis(a.At)
		}
		n, err := tx.Exec(ctx, qPause, paused, at)
		if err != nil {
			return err
		}
		changed = n > 0
		return audit(ctx, tx, &a)
	})
	if err != nil {
		return false, fmt.Errorf("set crawl paused %t: %w", paused, err)
	}
	return changed, nil
}

// SetHostControl implements store.ControlStore.
func (s *Store) SetHostControl(ctx context.Context, hc store.HostControl, a store.AuditEntry) error {
	err := s.db.Write(ctx, func(tx Tx) error {
		var err error
		if !hc.Paused && hc.Delay < 0 && hc.PageBudget < 0 && hc.Render == "" {
			_, err = tx.Exec(ctx, qDeleteHost, hc.Host)
		} else {
			delay := int64(store.NoOverride)
			if hc.Delay >= 0 {
				delay = hc.Delay.Milliseconds()
			}
			_, err = tx.Exec(ctx, qUpsertHost, hc.Host, hc.Paused, delay, max(hc.PageBudget, store.NoOverride), hc.Render, millis(hc.UpdatedAt))
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, qBump); err != nil {
			return err
		}
		return audit(ctx, tx, &a)
	})
	if err != nil {
		return fmt.Errorf("set control of host %s: %w", hc.Host, err)
	}
	return nil
}

// AddExclusionPattern implements store.ControlStore. An audit entry without
// a Target gets "exclusion/ID".
func (s *Store) AddExclusionPattern(ctx context.Context, p store.ExclusionPattern, a store.AuditEntry) (store.ExclusionPattern, error) {
	err := s.db.Write(ctx, func(tx Tx) error {
		if err := tx.QueryRow(ctx, qAddPattern, p.Pattern, p.Syntax, p.Host, millis(p.CreatedAt), p.CreatedBy).Scan(&p.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, qBump); err != nil {
			return err
		}
		if a.Target == "" {
			a.Target = fmt.Sprintf("exclusion/%d", p.ID)
		}
		return audit(ctx, tx, &a)
	})
	if err != nil {
		return p, fmt.Errorf("add exclusion pattern %q: %w", p.Pattern, err)
	}
	return p, nil
}

// DeleteExclusionPattern implements store.ControlStore.
func (s *Store) DeleteExclusionPattern(ctx context.Context, id int64, a store.AuditEntry) error {
	err := s.db.Write(ctx, func(tx Tx) error {
		n, err := tx.Exec(ctx, qDeletePattern, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		if _, err := tx.Exec(ctx, qBump); err != nil {
			return err
		}
		return audit(ctx, tx, &a)
	})
	if err != nil {
		return fmt.Errorf("delete exclusion pattern %d: %w", id, err)
	}
	return nil
}

// CountExcluded implements store.ControlStore.
func (s *Store) CountExcluded(ctx context.Context, counts map[int64]int64) error {
	if len(counts) == 0 {
		return nil
	}
	err := s.db.Write(ctx, func(tx Tx) error {
		for id, n := range counts {
			if _, err := tx.Exec(ctx, qCountExcluded, n, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("count exclusions of %d patterns: %w", len(counts), err)
	}
	return nil
}

// RecordAudit implements store.ControlStore.
func (s *Store) RecordAudit(ctx context.Context, a store.AuditEntry) error {
	if err := s.db.Write(ctx, func(tx Tx) error { return audit(ctx, tx, &a) }); err != nil {
		return fmt.Errorf("record audit entry %s: %w", a.Action, err)
	}
	return nil
}

// AuditLog implements store.ControlStore.
func (s *Store) AuditLog(ctx context.Context, before int64, limit int) ([]store.AuditEntry, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	if limit <= 0 {
		return nil, errors.New("audit log: limit must be positive")
	}
	var out []store.AuditEntry
	err := s.db.Query(ctx, qAuditLog, []any{before, limit}, func(r Row) error {
		var a store.AuditEntry
		var at int64
		if err := r.Scan(&a.ID, &at, &a.Actor, &a.Action, &a.Target, &a.Params, &a.Result, &a.Status); err != nil {
			return err
		}
		a.At = fromMillis(at)
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

func audit(ctx context.Context, tx Tx, a *store.AuditEntry) error {
	if a.At.IsZero() {
		a.At = time.Now()
	}
	if a.Params == "" {
		a.Params = "{}"
	}
	return tx.QueryRow(ctx, qAudit, millis(a.At), a.Actor, a.Action, a.Target, a.Params, a.Result, a.Status).Scan(&a.ID)
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
