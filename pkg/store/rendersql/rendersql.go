// Package rendersql is store.RenderStore written once for both SQL stores,
// on the same connection adapters as package controlsql: the render table
// (migrations sqlite/0009_render.sql and postgres/0007_render.sql, and
// their later changes) has the
// same columns in both dialects, times as integer milliseconds.
package rendersql

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

// Store implements store.RenderStore on a controlsql.DB.
type Store struct{ db controlsql.DB }

var _ store.RenderStore = (*Store)(nil)

// New returns the render store of db.
func New(db controlsql.DB) *Store { return &Store{db: db} }

const (
	qUpsert = `INSERT INTO render_decisions (url_hash, host, url, at, decision, reason, compared, gained,
			links_html, links_rendered, text_html, text_rendered, section, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (url_hash) DO UPDATE SET host = excluded.host, section = excluded.section, url = excluded.url, at = excluded.at,
			decision = excluded.decision, reason = excluded.reason, compared = excluded.compared,
			gained = excluded.gained, links_html = excluded.links_html, links_rendered = excluded.links_rendered,
			text_html = excluded.text_html, text_rendered = excluded.text_rendered, detail = excluded.detail`
	qSamples = `SELECT section, count(*), coalesce(sum(gained), 0) FROM render_decisions
		WHERE host = $1 AND compared = 1 GROUP BY section`
	qOne = `SELECT url_hash, host, url, at, decision, reason, compared, gained,
			links_html, links_rendered, text_html, text_rendered, section, detail FROM render_decisions WHERE url_hash = $1`
)

// Queries lists every statement, for a store's query-plan checks.
func Queries() []string { return []string{qUpsert, qSamples, qOne} }

// RecordRenders implements store.RenderStore.
func (s *Store) RecordRenders(ctx context.Context, ds []store.RenderDecision) error {
	if len(ds) == 0 {
		return nil
	}
	err := s.db.Write(ctx, func(tx controlsql.Tx) error {
		for _, d := range ds {
			if _, err := tx.Exec(ctx, qUpsert, d.URLHash, d.Host, d.URL, d.At.UnixMilli(), d.Decision, d.Reason,
				flag(d.Compared), flag(d.Gained), d.LinksHTML, d.LinksRendered, d.TextHTML, d.TextRendered, d.Section, d.Detail); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %d render decisions: %w", len(ds), err)
	}
	return nil
}

// RenderSamples implements store.RenderStore.
func (s *Store) RenderSamples(ctx context.Context, host string) (store.RenderSamples, error) {
	var out store.RenderSamples
	err := s.db.Query(ctx, qSamples, []any{host}, func(r controlsql.Row) error {
		var (
			section   string
			n, gained int64
		)
		if err := r.Scan(&section, &n, &gained); err != nil {
			return err
		}
		if out.Sections == nil {
			out.Sections = map[string]store.RenderSample{}
		}
		out.Sections[section] = store.RenderSample{Compared: int(n), Gained: int(gained)}
		out.Host.Compared += int(n)
		out.Host.Gained += int(gained)
		return nil
	})
	if err != nil {
		return store.RenderSamples{}, fmt.Errorf("render samples of %s: %w", host, err)
	}
	return out, nil
}

// RenderDecisionOf implements store.RenderStore.
func (s *Store) RenderDecisionOf(ctx context.Context, urlHash int64) (store.RenderDecision, error) {
	var (
		d                store.RenderDecision
		at               int64
		compared, gained int64
		found            bool
	)
	err := s.db.Query(ctx, qOne, []any{urlHash}, func(r controlsql.Row) error {
		found = true
		return r.Scan(&d.URLHash, &d.Host, &d.URL, &at, &d.Decision, &d.Reason, &compared, &gained,
			&d.LinksHTML, &d.LinksRendered, &d.TextHTML, &d.TextRendered, &d.Section, &d.Detail)
	})
	if err != nil {
		return d, fmt.Errorf("render decision of %d: %w", urlHash, err)
	}
	if !found {
		return d, fmt.Errorf("render decision of %d: %w", urlHash, store.ErrNotFound)
	}
	d.At, d.Compared, d.Gained = time.UnixMilli(at).UTC(), compared != 0, gained != 0
	return d, nil
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
