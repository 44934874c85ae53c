package postgres

import (
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestDocRelevance: readers' queries of python3-doc find their page in
// the top 3, as on the SQLite store.
func TestDocRelevance(t *testing.T) {
	db, _ := openFresh(t)
	storetest.RunDocRelevance(t, db)
}
