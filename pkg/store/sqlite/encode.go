package sqlite

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"time"
)

// millis encodes a time as Unix milliseconds, the zero time as 0.
func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMillis decodes millis.
func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// chunkSize bounds the host parameters of one IN (...) list, well under SQLite's
// limit of 32766, so that a statement stays small enough to prepare quickly.
const chunkSize = 500

// placeholders returns "?,?,...,?" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// inChunks runs query, which has one "%s" where an IN list goes, for each chunk of
// keys, and calls scan for every row.
func inChunks[K any](ctx context.Context, db queryer, query string, keys []K, scan func(*sql.Rows) error) error {
	for start := 0; start < len(keys); start += chunkSize {
		end := min(start+chunkSize, len(keys))
		args := make([]any, 0, end-start)
		for _, k := range keys[start:end] {
			args = append(args, k)
		}
		q := strings.Replace(query, "%s", placeholders(end-start), 1)
		if err := queryRows(ctx, db, q, args, scan); err != nil {
			return err
		}
	}
	return nil
}

// queryRows runs a query and calls scan for every row.
func queryRows(ctx context.Context, db queryer, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// pageSize is how many rows an iterator reads per query before it calls fn for
// them with no connection held.
const pageSize = 1000

// pages runs query, whose last two parameters are a lower bound on the key
// ("key >= ?") and "LIMIT ?", with increasing bounds until a page comes back short,
// and calls fn for every row of a page after the page's rows are closed.
func pages[T any](ctx context.Context, db *sql.DB, query string, args []any, scan func(*sql.Rows) (T, error), key func(T) int64, fn func(T) error) error {
	from := int64(math.MinInt64)
	buf := make([]T, 0, pageSize)
	for {
		buf = buf[:0]
		a := append(append(make([]any, 0, len(args)+2), args...), from, pageSize)
		err := queryRows(ctx, db, query, a, func(rows *sql.Rows) error {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			buf = append(buf, v)
			return nil
		})
		if err != nil {
			return err
		}
		for _, v := range buf {
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(buf) < pageSize {
			return nil
		}
		last := key(buf[len(buf)-1])
		if last == math.MaxInt64 {
			return nil
		}
		from = last + 1
	}
}
