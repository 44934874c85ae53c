package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

var _ store.Controller = (*DB)(nil)

// controlDB adapts the store to controlsql, whose statements number their
// parameters $N: SQLite reads ?N the same way.
type controlDB struct{ db *DB }

func dialect(q string) string { return strings.ReplaceAll(q, "$", "?") }

func (c controlDB) Write(ctx context.Context, fn func(controlsql.Tx) error) error {
	return c.db.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return fn(controlTx{tx}) })
}

func (c controlDB) Query(ctx context.Context, q string, args []any, scan func(controlsql.Row) error) error {
	return c.db.query(ctx, nil, dialect(q), args, func(rows *sql.Rows) error { return scan(rows) })
}

// controlTx runs its statements unprepared: control actions are rare, and
// the writer's statement cache is for the crawl's batches (stmtCache).
type controlTx struct{ tx *sql.Tx }

func (t controlTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, dialect(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t controlTx) QueryRow(ctx context.Context, q string, args ...any) controlsql.Row {
	return t.tx.QueryRowContext(ctx, dialect(q), args...)
}

// Control returns the store's control state and audit log.
func (db *DB) Control() store.ControlStore { return controlsql.New(controlDB{db}) }
