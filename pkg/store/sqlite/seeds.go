package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/crawlcluster/crawler/pkg/store"
)

// qSeeds lists the URLs a crawl started from (depth 0, no parent) with the
// first URL a redirect of theirs led to. The redirects are grouped in one
// pass rather than looked up per seed: urls has no index on parent, and a
// report is built once, at a stop.
const qSeeds = `WITH hops AS (
		SELECT parent AS src, min(url) AS target FROM urls WHERE redirects > 0 AND parent <> '' GROUP BY parent
	)
	SELECT ` + urlColumns + `, coalesce(target, '')
	FROM urls LEFT JOIN hops ON src = url
	WHERE depth = 0 AND parent = '' AND kind = 'page'
	ORDER BY url LIMIT ?`

// Seeds returns up to limit seed URLs by URL, each with where its redirect
// led ("" when it did not redirect).
func (db *DB) Seeds(ctx context.Context, limit int) ([]store.SeedURL, error) {
	out := []store.SeedURL{}
	err := db.query(ctx, nil, qSeeds, []any{limit}, func(rows *sql.Rows) error {
		var to string
		u, err := scanURL(store.ScanWith(rows, &to))
		out = append(out, store.SeedURL{URL: u, RedirectTo: to})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list seeds: %w", err)
	}
	return out, nil
}
