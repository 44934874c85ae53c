package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/crawlcluster/crawler/migrations"
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
// across the unmerged segments. Each AddCaptures and indexer round after it
// commits one segment, of enough leaf pages that FTS5 weighs a merge at the
// next commit.
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
		if err := indexPending(ctx, controlDB{db}); err != nil {
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

// TestSearchIndexerRounds: the indexer takes the pages AddCaptures stored,
// without a search asking, in rounds of many batches: far fewer segments
// than batches.
func TestSearchIndexerRounds(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	const batches, perBatch = indexBatch / 100, 100
	began := time.Now()
	for i := range batches {
		caps := make([]store.Capture, perBatch)
		for j := range caps {
			u := storetest.URL(0, "a.example", fmt.Sprintf("/p%d/%d", i, j))
			if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
				t.Fatal(err)
			}
			caps[j] = storetest.Capture(u, fmt.Sprintf("f%d-%d", i, j), u.URL, uint64(i*perBatch+j+1)<<20|1)
			caps[j].Index = &store.IndexEntry{Host: "a.example", Text: fmt.Sprintf("echidna w%dx%d", i, j)}
		}
		if err := db.AddCaptures(ctx, caps); err != nil {
			t.Fatal(err)
		}
	}
	// A round every indexEvery while the batches were written, and the one
	// the last batch kicks: on a slow run (the race detector on a busy
	// machine) the ticker's rounds come between the batches.
	rounds := 2 + int(time.Since(began)/indexEvery)
	var through, last int64
	for range 600 { // at most a minute
		if err := db.w.QueryRowContext(ctx, `SELECT (SELECT indexed_through FROM search_state), (SELECT max(capture_id) FROM search_text)`).Scan(&through, &last); err != nil {
			t.Fatal(err)
		}
		if through == last {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if through != last {
		t.Fatalf("indexed through capture %d of %d", through, last)
	}
	var segments, found int
	if err := db.w.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM search_fts_idx`).Scan(&segments); err != nil {
		t.Fatal(err)
	}
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH 'echidna'`).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if found != batches*perBatch || segments > max(rounds, batches/4) {
		t.Errorf("%d pages found in %d segments after %d batches written in %d rounds' time, want %d in at most %d",
			found, segments, batches, rounds, batches*perBatch, max(rounds, batches/4))
	}
}

// TestSearchPendingAfterCrash: pages whose text was stored but not yet
// indexed when the process died (search_text above indexed_through) are
// indexed at the next start, and found.
func TestSearchPendingAfterCrash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var caps []store.Capture
	for i := range 30 {
		u := storetest.URL(0, "a.example", fmt.Sprintf("/p%d", i))
		if _, err := db.AdmitURLs(ctx, []store.URL{u}); err != nil {
			t.Fatal(err)
		}
		c := storetest.Capture(u, fmt.Sprintf("f%d", i), u.URL, uint64(i+1)<<20|1)
		c.Index = &store.IndexEntry{Host: "a.example", Text: fmt.Sprintf("numbat page%d", i)}
		caps = append(caps, c)
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	// The state a crash before the indexer's round leaves: the text
	// stored, no postings.
	close(db.ix.stop)
	<-db.ix.done
	db.ix = nil // no round at Close either
	if _, err := db.w.ExecContext(ctx, `INSERT INTO search_fts(search_fts) VALUES('delete-all')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE search_state SET indexed_through = 0`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH 'numbat'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d pages still indexed (%v), want none", left, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hits, err := db.Search().Search(ctx, store.SearchQuery{Terms: []string{"numbat"}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != len(caps) {
		t.Errorf("numbat: %d hits after the restart, want %d", len(hits), len(caps))
	}
	var through, last int64
	if err := db.w.QueryRowContext(ctx, `SELECT (SELECT indexed_through FROM search_state), (SELECT max(capture_id) FROM search_text)`).Scan(&through, &last); err != nil {
		t.Fatal(err)
	}
	if through != last {
		t.Errorf("indexed through capture %d, the last text stored is %d's", through, last)
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

// TestSearchMigrateText: a store indexed before migration 0026 (the text
// in FTS5's own content table) keeps its pages: 0026 moves their text to
// search_text, and they are found again, with snippets and in the export.
func TestSearchMigrateText(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	upTo25 := fstest.MapFS{}
	all := migrations.SQLite()
	names, err := fs.Glob(all, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if name < "0026" {
			body, err := fs.ReadFile(all, name)
			if err != nil {
				t.Fatal(err)
			}
			upTo25[name] = &fstest.MapFile{Data: body}
		}
	}
	if err := migrate(ctx, old, upTo25); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		u := fmt.Sprintf("http://old.example/%d", i)
		if _, err := old.ExecContext(ctx, `INSERT INTO search_docs (`+searchsql.DocColumns+`) VALUES (?, ?, 0, ?, 'old.example', 200, 0, 'text/html', 'en', ?)`,
			store.HashURL(u), i, u, fmt.Sprintf("Page %d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := old.ExecContext(ctx, `INSERT INTO search_fts (rowid, title, description, headings, body) VALUES (?, ?, '', '', ?)`,
			i, fmt.Sprintf("Page %d", i), fmt.Sprintf("an aardvark on page %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hits, err := db.Search().Search(ctx, store.SearchQuery{Terms: []string{"aardvark"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || !strings.Contains(hits[0].Snippet, store.SnippetOpen+"aardvark"+store.SnippetClose) {
		t.Fatalf("aardvark after 0026: %+v, want the 3 pages with marked snippets", hits)
	}
	pages, err := db.Search().IndexedPages(ctx, -1<<63, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 3 || !strings.HasPrefix(pages[0].Text, "an aardvark on page") {
		t.Errorf("export after 0026: %+v, want 3 pages with their text", pages)
	}
}
