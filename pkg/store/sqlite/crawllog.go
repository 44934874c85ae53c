package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/crawlcluster/crawler/pkg/store"
)

// qRecentCaptures walks the captures from the newest (the primary key) and
// stops at limit matches. The host is the authority between "://" and the
// next "/"; parameters: host twice (and once with a slash), status bounds,
// type twice, limit.
const qRecentCaptures = `SELECT ` + captureColumns + ` FROM captures
	WHERE (? = '' OR substr(url, instr(url, '://') + 3, length(?) + 1) = ?)
		AND status BETWEEN ? AND ?
		AND (? = '' OR lower(substr(content_type, 1, length(?))) = ?)
	ORDER BY id DESC LIMIT ?`

// RecentCaptures returns up to limit captures matching f, newest first.
func (db *DB) RecentCaptures(ctx context.Context, f store.CaptureFilter, limit int) ([]store.Capture, error) {
	lo, hi := f.StatusBounds()
	typ := strings.ToLower(f.Type)
	out := []store.Capture{}
	err := db.query(ctx, nil, qRecentCaptures, []any{f.Host, f.Host, f.Host + "/", lo, hi, typ, typ, typ, limit}, func(rows *sql.Rows) error {
		c, err := scanCapture(rows)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recent captures: %w", err)
	}
	return out, nil
}
