package sqlite

import (
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/rendersql"
)

// Render returns the store's render decisions.
func (db *DB) Render() store.RenderStore { return rendersql.New(controlDB{db}) }
