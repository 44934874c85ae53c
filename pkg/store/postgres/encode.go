package postgres

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// timestamp encodes a time as timestamptz, the zero time as NULL.
func timestamp(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: t, Valid: true}
}

// fromTimestamp decodes timestamp, in UTC.
func fromTimestamp(ts pgtype.Timestamptz) time.Time {
	if !ts.Valid {
		return time.Time{}
	}
	return ts.Time.UTC()
}

// positions maps each key to the indexes where it occurs.
func positions[K comparable](keys []K) map[K][]int {
	at := make(map[K][]int, len(keys))
	for i, k := range keys {
		at[k] = append(at[k], i)
	}
	return at
}

// lookUp runs query, whose one parameter is keys, and returns for each key the
// value scan reads from the key's row: the zero value for a key without one.
func lookUp[K comparable, V any](ctx context.Context, db *DB, query string, keys []K, scan func(pgx.Rows) (K, V, error)) ([]V, error) {
	vals := make([]V, len(keys))
	if len(keys) == 0 {
		return vals, nil
	}
	at := positions(keys)
	err := db.queryRows(ctx, query, []any{keys}, func(rows pgx.Rows) error {
		k, v, err := scan(rows)
		if err != nil {
			return err
		}
		for _, i := range at[k] {
			vals[i] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return vals, nil
}

// queryAll runs query and returns every row as scan reads it.
func queryAll[T any](ctx context.Context, db *DB, query string, args []any, scan func(pgx.Rows) (T, error)) ([]T, error) {
	var all []T
	err := db.queryRows(ctx, query, args, func(rows pgx.Rows) error {
		v, err := scan(rows)
		all = append(all, v)
		return err
	})
	return all, err
}

// pageSize is how many rows an iterator reads per query before it calls fn for
// them with no connection held.
const pageSize = 1000

// pages runs query, whose last two parameters are a lower bound on the key
// ("key >= $n") and a LIMIT, with increasing bounds until a page comes back short,
// and calls fn for every row of a page after the page's rows are closed.
func pages[T any](ctx context.Context, db *DB, query string, args []any, scan func(pgx.Rows) (T, error), key func(T) int64, fn func(T) error) error {
	from := int64(math.MinInt64)
	buf := make([]T, 0, pageSize)
	for {
		buf = buf[:0]
		a := append(append(make([]any, 0, len(args)+2), args...), from, pageSize)
		err := db.queryRows(ctx, query, a, func(rows pgx.Rows) error {
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
