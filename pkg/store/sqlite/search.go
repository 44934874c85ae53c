package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
)

var _ store.Searcher = (*DB)(nil)

// Search returns the store's full-text index (FTS5).
func (db *DB) Search() store.SearchIndex { return searchsql.New(controlDB{db}, searchDialect) }

// The rank sums a bm25 per column, the title's weighing most: FTS5's bm25
// with column weights scales term counts before they saturate, so a body
// that says "event loop" fifty times drowned a title that says it once
// (python3-doc's "asyncio event loop" ranked its Event Loop page 7th; 3rd
// this way, and the sum of the ranks of storetest.DocQueries went from 22
// to 16).
const searchRank = `(bm25(search_fts, 0, 0, 0, 1) + 3 * bm25(search_fts, 1, 0, 0, 0) +
	1.5 * bm25(search_fts, 0, 0, 1, 0) + bm25(search_fts, 0, 1, 0, 0))`

// search_fts rows are keyed by the capture ID, which grows as pages are
// stored, and the indexer inserts a round's by one statement (indexPending):
// FTS5 keeps new rows in memory while their rowids grow and until the
// statement's end, then writes them as one segment. Keyed by URL hash
// (random) and inserted a statement a page, it wrote and merged a segment
// a page: 490 us of CPU a page in AddCaptures (BenchmarkAddCapturesIndexed,
// 600-word pages; 30 us without the index).
//
// A page's old text leaves search_fts before search_text: FTS5 reads the
// text it deletes back from its content table. Only a row the indexer has
// written may be deleted from search_fts: deleting one it has not would
// take postings out that were never put in.
var deleteOldText = []string{
	`DELETE FROM search_fts WHERE rowid = (SELECT capture_id FROM search_docs WHERE url_hash = $1)
		AND rowid <= (SELECT indexed_through FROM search_state WHERE id = 1)`,
	`DELETE FROM search_text WHERE capture_id = (SELECT capture_id FROM search_docs WHERE url_hash = $1)`,
}

// snippet is a passage of the body (the title is shown apart), else of the
// description.
const snippet = `coalesce(nullif(snippet(search_fts, 3, char(2), char(3), '…', 32), ''), snippet(search_fts, 1, char(2), char(3), '…', 32))`

var searchDialect = &searchsql.Dialect{
	Upsert: slices.Concat(deleteOldText, []string{
		`INSERT INTO search_docs (` + searchsql.DocColumns + `) VALUES ($1, $2, 0, $3, $4, $5, $6, $7, $8, $9) ` + searchsql.DocUpdate}),
	UpsertBatch: []string{
		`DELETE FROM search_fts WHERE rowid IN (SELECT d.capture_id FROM json_each($1) j JOIN search_docs d ON d.url_hash = j.value ->> 0)
			AND rowid <= (SELECT indexed_through FROM search_state WHERE id = 1)`,
		`DELETE FROM search_text WHERE capture_id IN (SELECT d.capture_id FROM json_each($1) j JOIN search_docs d ON d.url_hash = j.value ->> 0)`,
		`INSERT INTO search_docs (` + searchsql.DocColumns + `)
			SELECT value ->> 0, value ->> 1, 0, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8
			FROM json_each($1) WHERE true ` + searchsql.DocUpdate,
	},
	InsertText: `INSERT INTO search_text (capture_id, title, description, headings, body) VALUES ($1, $2, $3, $4, $5)`,
	ClearText:  deleteOldText,
	UpsertDup: `INSERT INTO search_docs (` + searchsql.DocColumns + `)
		SELECT $1, $2, c.url_hash, $3, $4, $5, $6, $7, $8, $9 FROM captures c WHERE c.id = $10 AND c.url_hash <> $1 ` + searchsql.DocUpdate,
	Remove: slices.Concat(deleteOldText, []string{`DELETE FROM search_docs WHERE url_hash = $1`}),
	// The matches that pass the filters, at most $9 of them in the
	// index's order (the order pages were stored in), so that a query of
	// common words costs a bounded time (see searchsql.MaxCandidates), are
	// ranked by the words that are not common (searchsql.CommonShare) and
	// the page of them sorted.
	Candidates: `SELECT search_fts.rowid, d.url_hash
		FROM search_fts JOIN search_docs d ON d.capture_id = search_fts.rowid
		WHERE search_fts MATCH $1 AND ($2 = '' OR d.host = $2) AND ($3 = 0 OR d.status = $3)
			AND d.fetched_at >= $4 AND d.fetched_at < $5
		LIMIT $9`,
	Latest: `SELECT coalesce(min(id), 0), coalesce(max(id), 0), count(*) FROM (SELECT id FROM search_fts_docsize ORDER BY id DESC LIMIT $1)`,
	Count:  `SELECT count(*) FROM search_fts WHERE search_fts MATCH $1 AND rowid >= $2`,
	Ranked: `SELECT rowid, ` + searchRank + ` FROM search_fts WHERE search_fts MATCH $1 AND rowid BETWEEN $2 AND $3`,
	// The weights are searchRank's. FTS5 reads a column filter from the
	// position lists of the documents between $2 and $3 only.
	Present: `SELECT rowid, 3 FROM search_fts WHERE search_fts MATCH '{title} : ' || $1 AND rowid BETWEEN $2 AND $3
		UNION ALL SELECT rowid, 1.5 FROM search_fts WHERE search_fts MATCH '{headings} : ' || $1 AND rowid BETWEEN $2 AND $3
		UNION ALL SELECT rowid, 1 FROM search_fts WHERE search_fts MATCH '{description} : ' || $1 AND rowid BETWEEN $2 AND $3`,
	Docs: `SELECT d.url_hash, d.capture_id, d.url, d.host, d.status, d.fetched_at, d.content_type, d.language, d.title,
			(SELECT count(*) FROM search_docs x WHERE x.dup_of = d.url_hash AND x.dup_of <> 0)
		FROM search_docs d WHERE d.url_hash IN (SELECT value FROM json_each($1))`,
	// FTS5 looks each rowid of the list up (its rowid constraint).
	Snippets: `SELECT rowid, ` + snippet + `
		FROM search_fts WHERE search_fts MATCH $1 AND rowid IN (SELECT value FROM json_each($2))`,
	Pages: `SELECT d.url_hash, d.capture_id, d.url, d.host, d.status, d.fetched_at, d.content_type, d.language, d.title,
			d.dup_of, coalesce(f.description, ''), coalesce(f.headings, ''), coalesce(f.body, '')
		FROM search_docs d LEFT JOIN search_text f ON f.capture_id = d.capture_id AND d.dup_of = 0
		WHERE d.url_hash > $1 ORDER BY d.url_hash LIMIT $2`,
	Match:   ftsMatch,
	Pending: indexPending,
}

// searchWrites are the statements AddCaptures runs for the index, prepared
// at Open (txQueries) and run through searchTx.
func searchWrites() []string {
	d := searchDialect
	qs := append(append(append([]string{d.InsertText, d.UpsertDup}, d.UpsertBatch...), d.ClearText...), d.Remove...)
	for i, q := range qs {
		qs[i] = dialect(q)
	}
	return qs
}

// searchTx runs searchsql.Write's statements prepared: a batch runs some a
// page, and preparing one costs more than running it.
type searchTx struct {
	db    *DB
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (t *searchTx) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	st, ok := t.stmts[q]
	if !ok {
		var err error
		if st, err = t.db.stmt(ctx, t.tx, dialect(q)); err != nil {
			return 0, err
		}
		if t.stmts == nil {
			t.stmts = make(map[string]*sql.Stmt)
		}
		t.stmts[q] = st
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *searchTx) QueryRow(ctx context.Context, q string, args ...any) controlsql.Row {
	return t.tx.QueryRowContext(ctx, dialect(q), args...)
}

// ftsMatch quotes each term, so that FTS5 reads words whatever they are
// ("and", "near", "col:") and a page must hold them all.
func ftsMatch(terms []string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, " ")
}
