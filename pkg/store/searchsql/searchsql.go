// Package searchsql is the full-text index (store.SearchIndex) written once
// for both SQL stores, on the connection adapters of package controlsql.
// What differs is the engine: SQLite's FTS5 with bm25 in the embedded store,
// PostgreSQL's tsvector under a GIN index with ts_rank in a cluster. Each
// store gives its statements as a Dialect; deciding what is indexed, the
// duplicates, the query terms, the paging and the scanning are here.
//
// One entry per URL holds its latest stored content. A page whose content
// is a near or exact duplicate of another URL's is indexed once, as that
// URL: its own entry names the original (dup_of) and holds no text, and a
// hit counts the duplicates that point to it.
package searchsql

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/controlsql"
)

// Dialect is one store's statements, numbered $N (the SQLite store reads
// them as ?N, and ignores parameters a statement does not name).
type Dialect struct {
	// Upsert writes a page's entry and text: $1 url_hash, $2 capture_id,
	// $3 url, $4 host, $5 status, $6 fetched_at (ms), $7 content_type,
	// $8 language, $9 title, $10 description, $11 headings, $12 body.
	Upsert []string
	// UpsertBatch, when set, writes the entries of many pages instead of
	// Upsert (InsertTexts their text): $1 a JSON array of Upsert's $1-$9,
	// no URL twice. A statement a page cost more to prepare and run than
	// to index the page (BenchmarkAddCapturesIndexed).
	UpsertBatch []string
	// InsertTexts, when set, writes the text of the pages Upsert or
	// UpsertBatch wrote in one statement, after them: $1 a JSON array of
	// [capture_id, title, description, headings, body]. (FTS5 flushes its
	// pending rows at each statement's savepoint, so a statement a page
	// wrote a segment a page.)
	InsertTexts string
	// InsertText, when set, replaces InsertTexts with a statement a page:
	// $1 capture_id, $2 title, $3 description, $4 headings, $5 body. For
	// a store whose text goes to an ordinary table and whose Tx prepares
	// a statement once, it spares encoding each page's text as JSON and
	// the engine decoding it again.
	InsertText string
	// ClearText, $1 url_hash, drops the text a URL has; it runs before
	// UpsertDup.
	ClearText []string
	// UpsertDup writes the entry of a duplicate, without text: $1-$9 as
	// Upsert, $10 the ID of the capture it duplicates. It affects no row
	// when that capture is of the same URL (a page near its own earlier
	// copy is indexed as itself: Upsert follows).
	UpsertDup string
	// Remove drops a URL's entry and text: $1 url_hash.
	Remove []string
	// Search returns hits without snippets, best first: $1 the Match of the
	// terms, $2 host or '', $3 status or 0, $4 since and $5 until (ms),
	// $6 and $7 the score and URL hash the page starts after, $8 limit,
	// $9 the most matches ranked (MaxCandidates).
	// Columns: url_hash, capture_id, url, host, status, fetched_at,
	// content_type, language, title, score, duplicates.
	Search string
	// When Candidates is set, Search is made of these instead (see
	// searchRanked): Candidates, with Search's parameters, returns the
	// capture_id and url_hash of the matches, at most $9, unranked;
	// Latest, $1 n, the least and greatest capture_id of the latest n
	// pages indexed and their count; Count, $1 a Match and $2 a capture_id, the pages from
	// it on that match; Ranked, $1 a Match, $2 and $3 the least and
	// greatest capture_id, the capture_id and score of the matches
	// between; Docs, $1 a JSON array of URL hashes, their entries, with
	// Search's columns but the score.
	Candidates, Latest, Count, Ranked, Docs string
	// Present, when set, scores the candidates of a query whose words
	// are all common instead of Ranked: $1 the Match of one term, $2 and
	// $3 as Ranked's; a row (capture_id, weight) for each field besides
	// the body that holds the term. See searchRanked.
	Present string
	// CommonPages, when set, replaces the package's (for tests on small
	// indexes).
	CommonPages float64
	// Snippet returns the marked-up passage of one hit: $1 the Match,
	// $2 its url_hash, $3 its capture_id.
	Snippet string
	// Snippets, when set, returns those of all the hits of a page in one
	// statement instead: $1 the Match, $2 a JSON array of their
	// capture_ids; columns capture_id, snippet.
	Snippets string
	// Pages reads entries for the export: $1 after url_hash, $2 limit;
	// columns as Search's up to title, then dup_of, description,
	// headings, body.
	Pages string
	// Match turns the terms into the engine's query text.
	Match func(terms []string) string
	// Pending, when set, indexes the text of the pages stored but not
	// yet indexed (a store that indexes apart from AddCaptures, in
	// rounds); a search calls it first, so that it finds every page
	// stored before it.
	Pending func(ctx context.Context, db controlsql.DB) error
}

// DocColumns are the search_docs columns both stores have, and DocUpdate
// the upsert of them.
const (
	DocColumns = `url_hash, capture_id, dup_of, url, host, status, fetched_at, content_type, language, title`
	DocUpdate  = `ON CONFLICT (url_hash) DO UPDATE SET capture_id = excluded.capture_id, dup_of = excluded.dup_of,
		url = excluded.url, host = excluded.host, status = excluded.status, fetched_at = excluded.fetched_at,
		content_type = excluded.content_type, language = excluded.language, title = excluded.title`
)

// Index is a store's SearchIndex.
type Index struct {
	db controlsql.DB
	d  *Dialect
}

var _ store.SearchIndex = (*Index)(nil)

// New returns the index of db.
func New(db controlsql.DB, d *Dialect) *Index { return &Index{db: db, d: d} }

// Write applies the Index entries of captures just inserted in tx; ids[i]
// is caps[i]'s new ID, 0 when it was stored already (a replayed batch wrote
// its entry the first time).
func Write(ctx context.Context, tx controlsql.Tx, d *Dialect, caps []store.Capture, ids []int64) error {
	w := writer{d: d}
	for i := range caps {
		c := &caps[i]
		if c.Index == nil || ids[i] == 0 {
			continue
		}
		if err := w.add(ctx, tx, c, ids[i]); err != nil {
			return fmt.Errorf("index %s: %w", c.URL, err)
		}
	}
	return w.flush(ctx, tx)
}

// writer holds the pages of a batch whose entry and text are written
// together (UpsertBatch, InsertTexts). A removal or a duplicate writes what
// is held first, so that the entries are applied in the batch's order.
type writer struct {
	d       *Dialect
	entries [][9]any
	texts   [][5]any
	held    map[int64]bool // URL hashes of entries
}

// add writes one capture's entry, or holds it.
func (w *writer) add(ctx context.Context, tx controlsql.Tx, c *store.Capture, id int64) error {
	d := w.d
	hash := c.URLHash
	if hash == 0 {
		hash = store.HashURL(c.URL)
	}
	if c.Index.Remove || c.RevisitOf != 0 || c.NearDupOf != 0 || w.held[hash] {
		if err := w.flush(ctx, tx); err != nil {
			return err
		}
	}
	if c.Index.Remove {
		return execAll(ctx, tx, d.Remove, hash)
	}
	entry := [9]any{hash, id, c.URL, c.Index.Host, c.Status, c.FetchedAt.UnixMilli(), c.ContentType, clean(c.Language, 64), clean(c.Title, 1<<10)}
	if of := c.RevisitOf; of != 0 || c.NearDupOf != 0 {
		if of == 0 {
			of = c.NearDupOf
		}
		if err := execAll(ctx, tx, d.ClearText, hash); err != nil {
			return err
		}
		n, err := tx.Exec(ctx, d.UpsertDup, append(entry[:], of)...)
		if err != nil || n > 0 {
			return err
		}
	}
	text := [4]any{clean(c.Description, 1<<10), clean(c.Index.Headings, 2<<10), clean(c.Index.Text, store.MaxIndexText), entry[8]}
	if d.UpsertBatch != nil {
		if w.held == nil {
			w.held = make(map[int64]bool)
		}
		w.held[hash] = true
		w.entries = append(w.entries, entry)
	} else if err := execAll(ctx, tx, d.Upsert, append(entry[:], text[:3]...)...); err != nil {
		return err
	}
	if d.InsertTexts != "" || d.InsertText != "" {
		w.texts = append(w.texts, [5]any{id, text[3], text[0], text[1], text[2]})
	}
	return nil
}

// flush writes the entries and texts held.
func (w *writer) flush(ctx context.Context, tx controlsql.Tx) error {
	if len(w.entries) > 0 {
		rows, err := json.Marshal(w.entries)
		if err != nil {
			return err
		}
		if err := execAll(ctx, tx, w.d.UpsertBatch, string(rows)); err != nil {
			return fmt.Errorf("index %d pages: %w", len(w.entries), err)
		}
	}
	if w.d.InsertText != "" {
		for _, t := range w.texts {
			if _, err := tx.Exec(ctx, w.d.InsertText, t[:]...); err != nil {
				return fmt.Errorf("index the text of capture %d: %w", t[0], err)
			}
		}
	} else if len(w.texts) > 0 {
		rows, err := json.Marshal(w.texts)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, w.d.InsertTexts, string(rows)); err != nil {
			return fmt.Errorf("index the text of %d pages: %w", len(w.texts), err)
		}
	}
	w.entries, w.texts = w.entries[:0], w.texts[:0]
	clear(w.held)
	return nil
}

func execAll(ctx context.Context, tx controlsql.Tx, qs []string, args ...any) error {
	for _, q := range qs {
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// clean bounds s to max bytes at a character boundary and drops the
// snippet markers, so that no page can fake a highlight.
func clean(s string, max int) string {
	if len(s) > max {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	if strings.ContainsAny(s, store.SnippetOpen+store.SnippetClose+"\x00") {
		s = strings.Map(func(r rune) rune {
			if r == 2 || r == 3 || r == 0 {
				return ' '
			}
			return r
		}, s)
	}
	return s
}

// MaxCandidates bounds the matches a search ranks, taken in the index's
// order (SQLite: the order pages were stored in): ranking costs
// microseconds a match, and two common words match most of a million
// pages. BenchmarkSearch, a million pages, idle machine: unbounded, a p99
// of seconds; 10,000 ranked, p50 95 ms and p99 194 ms; 2,000, p50 56 ms and
// p99 116 ms. A query that matches more is ranked on the first
// MaxCandidates; more words narrow it.
const MaxCandidates = 2_000

// Query limits.
const (
	MaxTerms    = 16
	maxTermLen  = 64
	MaxLimit    = 100
	DefaultSize = 20
)

// Terms splits a user's query into the words a page must hold: runs of
// letters and digits, lower-cased, at most MaxTerms of at most 64 bytes.
// Operators are not read: whatever is typed, the engine sees only words.
func Terms(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(out) == MaxTerms {
			break
		}
		if len(f) > maxTermLen {
			continue
		}
		out = append(out, strings.ToLower(f))
	}
	return out
}

// Search implements store.SearchIndex.
func (x *Index) Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, error) {
	if len(q.Terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 || limit > MaxLimit {
		limit = DefaultSize
	}
	until := int64(math.MaxInt64)
	if !q.Until.IsZero() {
		until = q.Until.UnixMilli()
	}
	var since int64 = math.MinInt64
	if !q.Since.IsZero() {
		since = q.Since.UnixMilli()
	}
	after := store.SearchCursor{Score: -math.MaxFloat64, URLHash: math.MinInt64}
	if q.After != nil {
		after = *q.After
	}
	if x.d.Pending != nil {
		if err := x.d.Pending(ctx, x.db); err != nil {
			return nil, fmt.Errorf("search: index the pages pending: %w", err)
		}
	}
	match := x.d.Match(q.Terms)
	args := []any{match, q.Host, q.Status, since, until, after.Score, after.URLHash, limit, MaxCandidates}
	var hits []store.SearchHit
	var err error
	if x.d.Candidates != "" {
		hits, err = x.searchRanked(ctx, q, args, limit, after)
	} else {
		err = x.db.Query(ctx, x.d.Search, args, func(r controlsql.Row) error {
			var h store.SearchHit
			err := scanURL(r, &h.IndexedURL, &h.Score, &h.Duplicates)
			hits = append(hits, h)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", match, err)
	}
	// Snippets are made for the page shown only: making one for every
	// match would cost as much as reading every matching page.
	if err := x.snippets(ctx, match, hits); err != nil {
		return nil, err
	}
	return hits, nil
}

func (x *Index) snippets(ctx context.Context, match string, hits []store.SearchHit) error {
	if len(hits) == 0 {
		return nil
	}
	if x.d.Snippets == "" {
		for i := range hits {
			err := x.db.Query(ctx, x.d.Snippet, []any{match, hits[i].URLHash, hits[i].CaptureID}, func(r controlsql.Row) error {
				return r.Scan(&hits[i].Snippet)
			})
			if err != nil {
				return fmt.Errorf("snippet of %s: %w", hits[i].URL, err)
			}
		}
		return nil
	}
	ids := make([]int64, len(hits))
	at := make(map[int64]int, len(hits))
	for i, h := range hits {
		ids[i] = h.CaptureID
		at[h.CaptureID] = i
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	err = x.db.Query(ctx, x.d.Snippets, []any{match, string(list)}, func(r controlsql.Row) error {
		var id int64
		var snippet string
		if err := r.Scan(&id, &snippet); err != nil {
			return err
		}
		if i, ok := at[id]; ok {
			hits[i].Snippet = snippet
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("snippets of %d hits: %w", len(hits), err)
	}
	return nil
}

// scanURL reads a row of DocColumns (dup_of aside) then extra.
func scanURL(r controlsql.Row, u *store.IndexedURL, extra ...any) error {
	var at int64
	err := r.Scan(append([]any{&u.URLHash, &u.CaptureID, &u.URL, &u.Host, &u.Status, &at, &u.ContentType, &u.Language, &u.Title}, extra...)...)
	u.FetchedAt = time.UnixMilli(at).UTC()
	return err
}

// IndexedPages implements store.SearchIndex.
func (x *Index) IndexedPages(ctx context.Context, after int64, limit int) ([]store.IndexedPage, error) {
	var out []store.IndexedPage
	err := x.db.Query(ctx, x.d.Pages, []any{after, limit}, func(r controlsql.Row) error {
		var p store.IndexedPage
		err := scanURL(r, &p.IndexedURL, &p.DupOf, &p.Description, &p.Headings, &p.Text)
		out = append(out, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read indexed pages after %d: %w", after, err)
	}
	return out, nil
}
