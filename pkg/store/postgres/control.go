package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

var _ store.Controller = (*DB)(nil)

// controlDB adapts the pool to controlsql.
type controlDB struct{ db *DB }

func (c controlDB) Write(ctx context.Context, fn func(controlsql.Tx) error) error {
	return pgx.BeginFunc(ctx, c.db.pool, func(tx pgx.Tx) error { return fn(controlTx{tx}) })
}

func (c controlDB) Query(ctx context.Context, q string, args []any, scan func(controlsql.Row) error) error {
	return c.db.queryRows(ctx, q, args, func(rows pgx.Rows) error { return scan(rows) })
}

type controlTx struct{ tx pgx.Tx }

func (t controlTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (t controlTx) QueryRow(ctx context.Context, q string, args ...any) controlsql.Row {
	return t.tx.QueryRow(ctx, q, args...)
}

// Control returns the store's control state and audit log.
func (db *DB) Control() store.ControlStore { return controlsql.New(controlDB{db}) }
