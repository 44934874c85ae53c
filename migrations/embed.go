// Package migrations carries the metadata store's schema, one folder of numbered SQL
// files per dialect (DESIGN.md, "Storage"), compiled into the binaries so that each
// store applies its own migrations at start without files on disk.
//
// Files are named NNNN_description.sql and applied in version order, each once, in
// its own transaction; a store records applied versions in schema_migrations. A
// migration, once released, is never edited: changes go in a new file.
package migrations

import (
	"embed"
	"io/fs"
)

// The postgres/*.sql pattern joins this directive when that dialect has its first
// file: go:embed rejects a pattern that matches nothing.
//
//go:embed sqlite/*.sql
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
