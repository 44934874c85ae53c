package postgres

import (
	"context"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/reportsql"
)

var _ store.SeedLister = (*DB)(nil)

// Seeds returns up to limit seed URLs by URL, each with where its redirect
// led ("" when it did not redirect).
func (db *DB) Seeds(ctx context.Context, limit int) ([]store.SeedURL, error) {
	return reportsql.ListSeeds(ctx, controlDB{db}, urlColumns, func(r store.Row) (store.URL, error) { return scanURL(r) }, limit)
}

// ReportCaptures reads what the report sums of every capture.
func (db *DB) ReportCaptures(ctx context.Context, fn func(store.ReportCapture) error) error {
	return reportsql.ReportCaptures(ctx, controlDB{db}, `coalesce(floor(extract(epoch FROM fetched_at) * 1000)::bigint, 0)`, fn)
}
