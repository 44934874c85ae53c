package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/crawlcluster/crawler/pkg/store"
)

// qRecentCaptures walks the captures from the newest (the primary key) and
// stops at limit matches. The host is the authority between "://" and the
// next "/".
const qRecentCaptures = `SELECT ` + captureColumns + ` FROM captures
	WHERE ($1 = '' OR substr(url, position('://' in url) + 3, length($1) + 1) = $1 || '/')
		AND status BETWEEN $2 AND $3
		AND ($4 = '' OR lower(substr(content_type, 1, length($4))) = $4)
	ORDER BY id DESC LIMIT $5`

// RecentCaptures returns up to limit captures matching f, newest first.
func (db *DB) RecentCaptures(ctx context.Context, f store.CaptureFilter, limit int) ([]store.Capture, error) {
	lo, hi := f.StatusBounds()
	out := []store.Capture{}
	err := db.queryRows(ctx, qRecentCaptures, []any{f.Host, lo, hi, strings.ToLower(f.Type), limit}, func(rows pgx.Rows) error {
		c, err := scanCapture(rows)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recent captures: %w", err)
	}
	return out, nil
}
