package postgres

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"
)

// versionTable is where tern records the schema version. Unqualified, like every
// table of the schema, so a search_path in the DSN places both in one schema.
const versionTable = "schema_version"

// applyMigrations applies, in order, the migrations of fsys newer than the database's
// schema version, each in its own transaction together with the version bump.
// Tern holds a session advisory lock on one connection meanwhile, so processes that
// start together against a new database apply each migration once: the first
// applies them, the others wait and then find nothing to do.
func applyMigrations(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	m, err := migrate.NewMigrator(ctx, conn.Conn(), versionTable)
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	if err := m.LoadMigrations(fsys); err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	have, err := m.GetCurrentVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if want := int32(len(m.Migrations)); have > want {
		return fmt.Errorf("database schema version %d is newer than this binary's %d", have, want)
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}
