// Package reportsql holds what a crawl's report (pkg/api's BuildReport)
// reads of a SQL store beyond the store.Reader methods, written once for
// both stores: the statements number their parameters $N (the SQLite store
// reads them as ?N) and name only columns both schemas have alike.
package reportsql

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/capturesql"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

// ListSeeds implements store.SeedLister on db, whose urlColumns scanURL
// reads.
func ListSeeds(ctx context.Context, db controlsql.DB, urlColumns string, scanURL func(store.Row) (store.URL, error), limit int) ([]store.SeedURL, error) {
	out := []store.SeedURL{}
	err := db.Query(ctx, Seeds(urlColumns), []any{limit}, func(row controlsql.Row) error {
		var to string
		u, err := scanURL(store.ScanWith(row, &to))
		out = append(out, store.SeedURL{URL: u, RedirectTo: to})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	return out, nil
}

// Seeds returns the statement that lists the URLs a crawl started from
// (depth 0, no parent), by URL, at most $1 of them: urlColumns of the urls
// row, then where the seed's redirect led (empty when nowhere): the Location of
// its newest capture; for a capture stored before captures kept it
// (migrations sqlite/0021, postgres/0018), the first URL a redirect of the
// seed admitted. The redirects are grouped in one pass rather than looked
// up per seed: urls has no index on parent, and a report is built on
// request or at a stop, not polled.
func Seeds(urlColumns string) string {
	return `WITH hops AS (
			SELECT parent AS src, min(url) AS target FROM urls WHERE redirects > 0 AND parent <> '' GROUP BY parent
		)
		SELECT ` + urlColumns + `, coalesce(nullif(
				(SELECT c.location FROM captures c WHERE c.url_hash = s.hash ORDER BY c.id DESC LIMIT 1), ''),
			hops.target, '')
		FROM urls s LEFT JOIN hops ON hops.src = s.url
		WHERE s.depth = 0 AND s.parent = '' AND s.kind = 'page'
		ORDER BY s.url LIMIT $1`
}

// ReportCaptures implements store.ReportReader on db. fetchedMS is the
// dialect's expression of captures.fetched_at in Unix milliseconds.
func ReportCaptures(ctx context.Context, db controlsql.DB, fetchedMS string, fn func(store.ReportCapture) error) error {
	q := `SELECT url, ` + fetchedMS + `, length, status, content_type, kind FROM captures`
	var c store.ReportCapture
	var ms int64
	err := db.Query(ctx, q, nil, func(row controlsql.Row) error {
		if err := row.Scan(&c.URL, &ms, &c.Length, &c.Status, &c.ContentType, capturesql.KindDest(&c.Kind)); err != nil {
			return err
		}
		c.FetchedAt = time.UnixMilli(ms).UTC()
		return fn(c)
	})
	if err != nil {
		return fmt.Errorf("read captures for the report: %w", err)
	}
	return nil
}
