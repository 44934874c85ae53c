// Package migrations carries the metadata store's schema, one folder of numbered SQL
// files per dialect (DESIGN.md, "Storage"), compiled into the binaries so that each
// store applies its own migrations at start without files on disk.
//
// Files are named NNNN_description.sql and applied in version order, each once, in
// its own transaction; the SQLite store records applied versions in
// schema_migrations, the PostgreSQL store (through tern) the current version in
// schema_version, so PostgreSQL versions must run 1, 2, 3... without gaps. A
// migration, once released, is never edited: changes go in a new file.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// SQLite returns the SQLite migrations, rooted at the folder (names like
// "0001_init.sql").
func SQLite() fs.FS {
	sub, err := fs.Sub(files, "sqlite")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "sqlite" is a constant.
		panic(err)
	}
	return sub
}

// Postgres returns the PostgreSQL migrations, rooted at the folder (names like
// "0001_init.sql"). They are applied with github.com/jackc/tern, which also reads
// them as text/template: a file must not contain "{{".
func Postgres() fs.FS {
	sub, err := fs.Sub(files, "postgres")
	if err != nil {
		panic(err)
	}
	return sub
}
