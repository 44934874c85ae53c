package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
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

// TestSearchLazyMerge: the index merges a level's segments at 16 of them
// (migration 0025), not FTS5's default 4, and every page stays found
// across the unmerged segments. Each AddCaptures commits one segment, of
// enough leaf pages that FTS5 weighs a merge at the next commit.
func TestSearchLazyMerge(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	const commits, perCommit = 12, 8
	for i := range commits {
		caps := make([]store.Capture, perCommit)
		for j := range caps {
			u := storetest.URL(0, "a.example", fmt.Sprintf("/p%d/%d", i, j))
			if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
				t.Fatal(err)
			}
			caps[j] = storetest.Capture(u, fmt.Sprintf("f%d-%d", i, j), u.URL, uint64(i*perCommit+j+1)<<20|1)
			words := []string{"walrus"}
			for k := range 2000 {
				words = append(words, fmt.Sprintf("w%dx%dx%d", i, j, k))
			}
			caps[j].Index = &store.IndexEntry{Host: "a.example", Text: strings.Join(words, " ")}
		}
		if err := db.AddCaptures(ctx, caps); err != nil {
			t.Fatal(err)
		}
	}
	var segments int
	if err := db.w.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM search_fts_idx`).Scan(&segments); err != nil {
		t.Fatal(err)
	}
	if segments != commits {
		t.Errorf("%d segments after %d commits, want %d (none merged below 16)", segments, commits, commits)
	}
	hits, err := db.Search().Search(ctx, store.SearchQuery{Terms: []string{"walrus"}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != commits*perCommit {
		t.Errorf("walrus: %d hits, want %d", len(hits), commits*perCommit)
	}
}

// TestDocRelevance: readers' queries of python3-doc find their page in
// the top 3 (cmd/crawler's TestSearchDocSite does the same on a crawl).
func TestDocRelevance(t *testing.T) {
	db, _ := openTemp(t)
	storetest.RunDocRelevance(t, db)
}

// TestSearchCommonWords: a word on most pages must still be in a hit, and
// a query of common words only is still ranked (by the fields that hold
// them: title, then headings, then description).
func TestSearchCommonWords(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	d := *searchDialect
	d.CommonPages = 1 // every word on more than a tenth of the pages is common
	idx := searchsql.New(controlDB{db}, &d)
	var caps []store.Capture
	var ids []int64
	field := func(n int, title, description, headings, text string) {
		u := fmt.Sprintf("http://common.example/%d", n)
		caps = append(caps, store.Capture{URL: u, URLHash: store.HashURL(u), Status: 200, FetchedAt: time.Unix(1e9, 0), ContentType: "text/html",
			Title: title, Description: description, Index: &store.IndexEntry{Host: "common.example", Headings: headings, Text: text}})
		ids = append(ids, int64(n))
	}
	page := func(n int, text string) { field(n, fmt.Sprintf("page %d", n), "", "", text) }
	for n := 1; n <= 40; n++ {
		page(n, "the the filler words")
	}
	page(41, "the wombat wombat wombat")
	page(42, "the wombat and more words about something else entirely")
	page(43, "a wombat without that common word")
	field(44, "page 44", "the filler described", "", "words")
	field(45, "page 45", "", "the filler heading", "words")
	field(46, "the filler titled", "", "", "words")
	if err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return searchsql.Write(ctx, controlTx{tx}, &d, caps, ids) }); err != nil {
		t.Fatal(err)
	}
	hits, err := idx.Search(ctx, store.SearchQuery{Terms: []string{"the", "wombat"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].URL != caps[40].URL || hits[1].URL != caps[41].URL {
		t.Errorf("the wombat: %v, want pages 41 then 42 (wombat thrice first; page 43 has no \"the\")", hitURLs(hits))
	}
	hits, err = idx.Search(ctx, store.SearchQuery{Terms: []string{"the", "filler"}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 43 || hits[0].Snippet == "" {
		t.Fatalf("the filler: %d hits (first %+v), want 43 with snippets", len(hits), hits)
	}
	if got, want := hitURLs(hits[:3]), []string{caps[45].URL, caps[44].URL, caps[43].URL}; !slices.Equal(got, want) {
		t.Errorf("the filler: first hits %v, want %v (title, headings, description)", got, want)
	}
}

func hitURLs(hits []store.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.URL)
	}
	return out
}
