package postgres

import (
	"strings"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
)

var _ store.Searcher = (*DB)(nil)

// Search returns the store's full-text index (tsvector, GIN).
func (db *DB) Search() store.SearchIndex { return searchsql.New(controlDB{db}, searchDialect) }

// searchDocUpdate also replaces the text, which this store keeps in the row.
const searchDocUpdate = searchsql.DocUpdate + `, description = excluded.description, headings = excluded.headings,
		body = excluded.body, tsv = excluded.tsv`

// One text search configuration for every page, so that a query's terms
// are stemmed as the pages' were; the language column says what a page
// declared.
const searchQuery = `plainto_tsquery('english', $1::text)`

// The rank sums a ts_rank per weight class (ts_rank's weights are {D, C,
// B, A}: body, description, headings, title), the title's counting most,
// as the SQLite store sums a bm25 per column. On python3-doc's
// storetest.DocQueries one ts_rank over all classes (normalization 1) put
// two pages at ranks 4 and 5 (sum of ranks 21); this finds each query's
// page first (sum 12). No length normalization: the text is bounded.
const searchRank = `ts_rank('{1,0,0,0}', d.tsv, q) + 3 * ts_rank('{0,0,0,1}', d.tsv, q) +
	1.5 * ts_rank('{0,0,1,0}', d.tsv, q) + ts_rank('{0,1,0,0}', d.tsv, q)`

var searchDialect = &searchsql.Dialect{
	Upsert: []string{
		`INSERT INTO search_docs (` + searchsql.DocColumns + `, description, headings, body, tsv)
		VALUES ($1, $2, 0, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
			setweight(to_tsvector('english', $9), 'A') || setweight(to_tsvector('english', $11), 'B') ||
			setweight(to_tsvector('english', $10), 'C') || setweight(to_tsvector('english', $12), 'D')) ` + searchDocUpdate,
	},
	UpsertDup: `INSERT INTO search_docs (` + searchsql.DocColumns + `)
		SELECT $1::bigint, $2::bigint, c.url_hash, $3::text, $4::text, $5::integer, $6::bigint, $7::text, $8::text, $9::text
		FROM captures c WHERE c.id = $10 AND c.url_hash <> $1 ` + searchDocUpdate,
	ClearText: nil, // UpsertDup's update clears description, headings, body and tsv
	Remove:    []string{`DELETE FROM search_docs WHERE url_hash = $1`},
	// ts_rank grows with relevance; the score is its negation, so that
	// both stores order hits by ascending score.
	Search: `SELECT url_hash, capture_id, url, host, status, fetched_at, content_type, language, title, score,
			(SELECT count(*) FROM search_docs x WHERE x.dup_of = m.url_hash AND x.dup_of <> 0)
		FROM (SELECT d.*, -(` + searchRank + `)::float8 AS score
			FROM (SELECT d.* FROM search_docs d, ` + searchQuery + ` q
				WHERE d.tsv @@ q AND ($2::text = '' OR d.host = $2) AND ($3::integer = 0 OR d.status = $3)
					AND d.fetched_at >= $4::bigint AND d.fetched_at < $5::bigint LIMIT $9) d, ` + searchQuery + ` q) m
		WHERE score > $6::float8 OR (score = $6 AND url_hash > $7::bigint)
		ORDER BY score, url_hash LIMIT $8`,
	Snippet: `SELECT ts_headline('english', CASE WHEN body <> '' THEN body WHEN description <> '' THEN description ELSE title END,
			` + searchQuery + `, 'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=40, MinWords=20, MaxFragments=2, FragmentDelimiter=" … "')
		FROM search_docs WHERE url_hash = $2 AND capture_id = $3`,
	Pages: `SELECT url_hash, capture_id, url, host, status, fetched_at, content_type, language, title, dup_of, description, headings, body
		FROM search_docs WHERE url_hash > $1 ORDER BY url_hash LIMIT $2`,
	Match: func(terms []string) string { return strings.Join(terms, " ") },
}
