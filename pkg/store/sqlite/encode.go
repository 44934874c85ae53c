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

// chunkSize bounds the host parameters of one IN (...) list, well under SQLite's
// limit of 32766, so that a statement stays small enough to prepare quickly.
const chunkSize = 512

// placeholders returns "?,?,...,?" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// inListLen is the IN list length that serves n keys: a power of two from 8 to
// chunkSize, so that a few prepared statements serve every batch size.
func inListLen(n int) int {
	size := 8
	for size < n {
		size *= 2
	}
	return min(size, chunkSize)
}

// inChunks runs query, which has one "%s" where an IN list goes, for each chunk of
// keys, and calls scan for every row; in tx, or on the read pool when tx is nil.
// A chunk shorter than its list repeats its last key, which IN ignores.
func inChunks[K any](ctx context.Context, db *DB, tx *sql.Tx, query string, keys []K, scan func(*sql.Rows) error) error {
	for start := 0; start < len(keys); start += chunkSize {
		chunk := keys[start:min(start+chunkSize, len(keys))]
		n := inListLen(len(chunk))
		args := make([]any, n)
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)]
		}
		if err := db.query(ctx, tx, strings.Replace(query, "%s", placeholders(n), 1), args, scan); err != nil {
			return err
		}
	}
	return nil
}

// query runs query, prepared once (see DB.stmt), in tx or on the read pool when
// tx is nil, and calls scan for every row.
func (db *DB) query(ctx context.Context, tx *sql.Tx, query string, args []any, scan func(*sql.Rows) error) error {
	st, err := db.stmt(ctx, tx, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
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
func pages[T any](ctx context.Context, db *DB, query string, args []any, scan func(*sql.Rows) (T, error), key func(T) int64, fn func(T) error) error {
	from := int64(math.MinInt64)
	// Grown as rows come: a fetcher loads each of its 256 partitions
	// through here, most holding a few rows, and a page of URL rows made
	// up front took 100 MB of allocation at the start of a medium crawl.
	var buf []T
	for {
		buf = buf[:0]
		a := append(append(make([]any, 0, len(args)+2), args...), from, pageSize)
		err := db.query(ctx, nil, query, a, func(rows *sql.Rows) error {
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
