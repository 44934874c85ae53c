package sqlite

import (
	"context"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestFTS5 holds the pure-Go driver to what the search index needs of it:
// FTS5 with the Porter tokenizer, bm25 and snippet.
func TestFTS5(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	if _, err := db.w.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.probe USING fts5(title, body, tokenize = 'porter unicode61')`); err != nil {
		t.Fatalf("FTS5: %v", err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO temp.probe (rowid, title, body) VALUES (1, 'Loops', 'running event loops'), (2, 'Other', 'nothing')`); err != nil {
		t.Fatal(err)
	}
	var id int64
	var snippet string
	var rank float64
	err := db.w.QueryRowContext(ctx, `SELECT rowid, snippet(probe, 1, '[', ']', '', 4), bm25(probe, 10.0, 1.0)
		FROM temp.probe WHERE probe MATCH 'run loop'`).Scan(&id, &snippet, &rank)
	if err != nil {
		t.Fatal(err)
	}
	if id != 1 || snippet != "[running] event [loops]" || rank >= 0 {
		t.Errorf("match: row %d, snippet %q, bm25 %v; want row 1, stems marked, a negative rank", id, snippet, rank)
	}
}

// TestDocRelevance: readers' queries of python3-doc find their page in
// the top 3 (cmd/crawler's TestSearchDocSite does the same on a crawl).
func TestDocRelevance(t *testing.T) {
	db, _ := openTemp(t)
	storetest.RunDocRelevance(t, db)
}
