package postgres

import (
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/fleetsql"
)

var _ store.Fleet = (*DB)(nil)

// Fleet returns the store's cluster fetchers' frontier reports.
func (db *DB) Fleet() store.FleetStore { return fleetsql.New(controlDB{db}) }
