package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// linkRows is the most edges one insert statement carries (512 variables);
// a batch's edges go in statements of 256, 128, ... 1 rows.
const linkRows = 256

// pendingHolds is true of a pending edge p that its page still links: the
// page's edges are replaced when it is stored again, the pending ones only
// at the next merge.
const pendingHolds = `EXISTS (SELECT 1 FROM links l
	WHERE l.from_id = (SELECT id FROM urls WHERE hash = p.from_hash) AND l.to_hash = p.to_hash)`

const (
	qAddSegment = `INSERT INTO warc_segments (name, captures, bytes) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET captures = captures + excluded.captures, bytes = bytes + excluded.bytes`

	qSegments = `SELECT count(*) FROM warc_segments WHERE captures > 0`

	// Through hosts_blocked, whose condition this repeats.
	qBlockedHosts = `SELECT count(*) FROM hosts WHERE substr(robots, 2, 1) = x'03'`

	// Out-links with what the store knows of their targets.
	qOutLinks = `SELECT l.to_hash, coalesce(u.url, e.url, ''), coalesce(u.state, '')
		FROM links l LEFT JOIN urls u ON u.hash = l.to_hash LEFT JOIN exclusions e ON e.hash = l.to_hash
		WHERE l.from_id = (SELECT id FROM urls WHERE hash = ?) LIMIT ?`
	// In-links: the merged index and the edges not merged yet.
	qInLinks = `WITH src(from_hash) AS (
			SELECT from_hash FROM links_in WHERE to_hash = ?1
			UNION SELECT p.from_hash FROM links_pending p WHERE p.to_hash = ?1 AND ` + pendingHolds + `)
		SELECT s.from_hash, coalesce(u.url, ''), coalesce(u.state, '')
		FROM src s LEFT JOIN urls u ON u.hash = s.from_hash LIMIT ?2`
	qOutCount = `SELECT count(*) FROM links WHERE from_id = (SELECT id FROM urls WHERE hash = ?)`
	// In-links and the distinct hosts they come from (a page's host is that
	// of its URL row: only stored pages have out-links).
	qInCount = `WITH src(from_hash) AS (
			SELECT from_hash FROM links_in WHERE to_hash = ?1
			UNION SELECT p.from_hash FROM links_pending p WHERE p.to_hash = ?1 AND ` + pendingHolds + `)
		SELECT count(*), count(DISTINCT u.host) FROM src s LEFT JOIN urls u ON u.hash = s.from_hash`

	// Edges of pages about to be replaced, and the merge of the pending
	// edges into the in-link index, in key order.
	qPendingLinks = `SELECT max(rowid) FROM links_pending`
	qMergeLinks   = `INSERT OR IGNORE INTO links_in (to_hash, from_hash)
		SELECT p.to_hash, p.from_hash FROM links_pending p
		WHERE ` + pendingHolds + `
		ORDER BY p.to_hash, p.from_hash`
	qClearPending = `DELETE FROM links_pending`

	qCapture = `SELECT ` + captureColumns + ` FROM captures WHERE id = ?`

	qHostActivity = `SELECT fetched_at / ?3, count(*) FROM urls INDEXED BY urls_host_fetched
		WHERE host = ?1 AND fetched_at > 0 AND fetched_at >= ?2 GROUP BY 1 ORDER BY 1`

	// With the duration of the capture of each URL's last fetch, if any: a
	// failed fetch leaves an older capture, which says nothing of it.
	qRecentFetches = `SELECT ` + urlColumns + `, coalesce((SELECT c.duration_ms FROM captures c
			WHERE c.url_hash = urls.hash AND c.fetched_at = urls.fetched_at ORDER BY c.id DESC LIMIT 1), 0)
		FROM urls INDEXED BY urls_host_fetched
		WHERE host = ? AND fetched_at > 0 ORDER BY fetched_at DESC LIMIT ?`
)

// hostListQueries sorts the hosts table, whose size is the number of hosts,
// not of URLs: 10,000 rows at a million URLs.
var hostListQueries = map[store.HostOrder]string{
	store.HostsBusiest:  `SELECT ` + hostListColumns + ` FROM hosts ORDER BY pages DESC, host LIMIT ?`,
	store.HostsSlowest:  `SELECT ` + hostListColumns + ` FROM hosts ORDER BY max(delay_ms, backoff_ms) DESC, host LIMIT ?`,
	store.HostsFailing:  `SELECT ` + hostListColumns + ` FROM hosts WHERE errors > 0 ORDER BY errors DESC, host LIMIT ?`,
	store.HostsExcluded: `SELECT ` + hostListColumns + ` FROM hosts WHERE excluded > 0 ORDER BY excluded DESC, host LIMIT ?`,
}

// Host rows without the robots entry (a list has no use for it).
const hostListColumns = `host, partition, NULL, delay_ms, next_allowed_at, backoff_ms, pages, errors, updated_at, excluded`

// captureExtras is what a batch of captures adds besides the rows: counters
// by status class and WARC bytes, the segments' rows, and the pages' edges.
type captureExtras struct {
	counts   urlCounts
	segments map[string][2]int64 // name -> captures, bytes
}

func newCaptureExtras() captureExtras {
	return captureExtras{counts: urlCounts{}, segments: map[string][2]int64{}}
}

// add counts one inserted capture.
func (x captureExtras) add(c *store.Capture) {
	x.counts[[2]string{"status", store.StatusClass(c.Status)}]++
	if store.SitemapNotFound(c.Kind, c.Status) {
		x.counts[[2]string{"sitemaps_not_found", ""}]++
	}
	x.counts[[2]string{"warc_bytes", ""}] += c.WARCLength
	if c.WARCFile != "" {
		s := x.segments[c.WARCFile]
		x.segments[c.WARCFile] = [2]int64{s[0] + 1, s[1] + c.WARCLength}
	}
}

// apply writes the counters and segments in tx.
func (x captureExtras) apply(ctx context.Context, db *DB, tx *sql.Tx) error {
	if err := x.counts.apply(ctx, db, tx); err != nil {
		return err
	}
	if len(x.segments) == 0 {
		return nil
	}
	st, err := db.stmt(ctx, tx, qAddSegment)
	if err != nil {
		return err
	}
	for name, s := range x.segments {
		if _, err := st.ExecContext(ctx, name, s[0], s[1]); err != nil {
			return fmt.Errorf("count segment %s: %w", name, err)
		}
	}
	return nil
}

// batchLinks collects the out-links of a batch's captures and writes them
// in a few statements after the captures: per capture, a delete and an
// insert of each edge was seven or more statement calls a page, which took
// most of what the link graph cost the crawl. A page is known by its URL
// row's id (links' key) and its hash (the in-link index's).
type batchLinks struct {
	pages []linkPage           // pages whose links are replaced, in order
	to    map[linkPage][]int64 // page -> its links (the last capture's, if twice)
	edges int
}

type linkPage struct{ id, hash int64 }

// add replaces the out-links of page from with to (nil: leaves them).
func (b *batchLinks) add(from linkPage, to []int64) {
	if to == nil {
		return
	}
	if b.to == nil {
		b.to = map[linkPage][]int64{}
	}
	if old, ok := b.to[from]; ok {
		b.edges -= len(old)
	} else {
		b.pages = append(b.pages, from)
	}
	b.to[from] = to
	b.edges += len(to)
}

// write deletes the pages' old links and inserts the new ones, in IN-list
// and multi-row statements of power-of-two sizes (prepared once each), into
// links and links_pending; once enough edges are pending it merges them into
// the in-link index.
func (b *batchLinks) write(ctx context.Context, db *DB, tx *sql.Tx) error {
	for start := 0; start < len(b.pages); start += chunkSize {
		chunk := b.pages[start:min(start+chunkSize, len(b.pages))]
		n := inListLen(len(chunk))
		args := make([]any, n)
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)].id
		}
		// A page stored before has edges in the in-link index: they go
		// first, found through its out-links. Its pending edges stay until
		// the merge, which (like the look-ups) takes only those links still
		// holds: deleting them here was a scan of links_pending per batch.
		for _, q := range []string{deleteInLinksQuery(n), deleteLinksQuery(n)} {
			st, err := db.stmt(ctx, tx, q)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("delete old links: %w", err)
			}
		}
	}
	byID := make([]any, 0, 2*linkRows)   // links: from_id, to_hash
	byHash := make([]any, 0, 2*linkRows) // links_pending: from_hash, to_hash
	flush := func(rows int) error {
		for _, q := range []struct {
			query string
			args  []any
		}{{insertLinksQuery(rows), byID}, {insertPendingQuery(rows), byHash}} {
			st, err := db.stmt(ctx, tx, q.query)
			if err != nil {
				return err
			}
			if _, err := st.ExecContext(ctx, q.args...); err != nil {
				return fmt.Errorf("insert links: %w", err)
			}
		}
		byID, byHash = byID[:0], byHash[:0]
		return nil
	}
	left := b.edges
	rows := linkRowsFor(left)
	for _, from := range b.pages {
		for _, to := range b.to[from] {
			byID = append(byID, from.id, to)
			byHash = append(byHash, from.hash, to)
			if len(byID) == 2*rows {
				if err := flush(rows); err != nil {
					return err
				}
				left -= rows
				rows = linkRowsFor(left)
			}
		}
	}
	if len(byID) > 0 {
		return fmt.Errorf("insert links: %d edges left over (counted %d)", len(byID)/2, b.edges)
	}
	if b.edges == 0 {
		return nil
	}
	return mergeLinks(ctx, db, tx, mergeAt)
}

// mergeAt is how many pending edges make a merge worth it: at 64k edges a
// merge into an index of a few million edges touches each leaf for several
// of them, where one edge at a time touched a leaf each.
const mergeAt = 1 << 16

// mergeLinks moves the pending edges into the in-link index, in key order,
// when at least threshold of them wait.
func mergeLinks(ctx context.Context, db *DB, tx *sql.Tx, threshold int64) error {
	var pending sql.NullInt64 // rowids grow from 1 after each merge empties the table
	if err := tx.QueryRowContext(ctx, qPendingLinks).Scan(&pending); err != nil {
		return fmt.Errorf("count pending links: %w", err)
	}
	if !pending.Valid || pending.Int64 < threshold {
		return nil
	}
	for _, q := range []string{qMergeLinks, qClearPending} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("merge %d pending links: %w", pending.Int64, err)
		}
	}
	return nil
}

// linkRowsFor is the rows of the next insert when n edges are left: the
// largest power of two up to linkRows that n fills.
func linkRowsFor(n int) int {
	rows := linkRows
	for rows > n && rows > 1 {
		rows /= 2
	}
	return rows
}

// insertLinksQuery inserts rows edges; deleteLinksQuery deletes the links of
// n pages.
//
// Both inserts are OR IGNORE, not ON CONFLICT DO NOTHING or plain: a
// statement of many rows that could abort half-way on a constraint (NOT
// NULL, here never violated: the values are Go integers) copies every page
// it changes to a statement journal first, so that it can be undone alone.
// OR IGNORE cannot abort, so SQLite keeps no statement journal, which was
// about a quarter of the links insert's CPU (docs/performance.md, "The
// SQLite write path per page").
func insertLinksQuery(rows int) string {
	return `INSERT OR IGNORE INTO links (from_id, to_hash) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?), ", rows), ", ")
}

func deleteLinksQuery(n int) string {
	return `DELETE FROM links WHERE from_id IN (` + placeholders(n) + `)`
}

// insertPendingQuery appends rows edges (from_hash, to_hash) to
// links_pending; deleteInLinksQuery takes the edges of n pages out of the
// in-link index.
func insertPendingQuery(rows int) string {
	return `INSERT OR IGNORE INTO links_pending (from_hash, to_hash) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?), ", rows), ", ")
}

func deleteInLinksQuery(n int) string {
	return `DELETE FROM links_in WHERE (to_hash, from_hash) IN
		(SELECT l.to_hash, u.hash FROM links l JOIN urls u ON u.id = l.from_id WHERE l.from_id IN (` + placeholders(n) + `))`
}

// Links returns a URL's out-links and in-links (up to limit each) and counts,
// from one snapshot.
func (db *DB) Links(ctx context.Context, hash int64, limit int) (store.Links, error) {
	var l store.Links
	tx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		return l, fmt.Errorf("links: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	read := func(q string, to *[]store.Link) error {
		rows, err := tx.QueryContext(ctx, q, hash, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		return store.LinkRows(rows, to)
	}
	if err := read(qOutLinks, &l.Out); err != nil {
		return l, fmt.Errorf("out-links: %w", err)
	}
	if err := read(qInLinks, &l.In); err != nil {
		return l, fmt.Errorf("in-links: %w", err)
	}
	if err := tx.QueryRowContext(ctx, qOutCount, hash).Scan(&l.OutCount); err != nil {
		return l, fmt.Errorf("count out-links: %w", err)
	}
	if err := tx.QueryRowContext(ctx, qInCount, hash).Scan(&l.InCount, &l.InHosts); err != nil {
		return l, fmt.Errorf("count in-links: %w", err)
	}
	return l, nil
}

// Capture returns one capture.
func (db *DB) Capture(ctx context.Context, id int64) (store.Capture, error) {
	c, err := scanCapture(db.r.QueryRowContext(ctx, qCapture, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("capture %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("capture %d: %w", id, err)
	}
	return c, nil
}

// HostList returns up to limit hosts in order.
func (db *DB) HostList(ctx context.Context, order store.HostOrder, limit int) ([]store.Host, error) {
	q, ok := hostListQueries[order]
	if !ok {
		return nil, fmt.Errorf("host list: unknown order %q", order)
	}
	out := []store.Host{}
	err := db.query(ctx, nil, q, []any{limit}, func(rows *sql.Rows) error {
		h, err := scanHostListed(rows)
		out = append(out, h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("host list by %s: %w", order, err)
	}
	return out, nil
}

func scanHostListed(rows interface{ Scan(...any) error }) (store.Host, error) {
	var excluded int64
	h, err := scanHost(store.ScanWith(rows, &excluded))
	h.Excluded = excluded
	return h, err
}

// HostActivity counts the host's URLs by the bucket of their last fetch.
func (db *DB) HostActivity(ctx context.Context, host string, since time.Time, bucket time.Duration) ([]store.Bucket, error) {
	width := max(bucket.Milliseconds(), 1)
	out := []store.Bucket{}
	err := db.query(ctx, nil, qHostActivity, []any{host, since.UnixMilli(), width}, func(rows *sql.Rows) error {
		b, err := store.BucketOf(rows, width)
		out = append(out, b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("activity of %s: %w", host, err)
	}
	return out, nil
}

// RecentFetches returns the host's URLs fetched most recently.
func (db *DB) RecentFetches(ctx context.Context, host string, limit int) ([]store.Fetch, error) {
	out := []store.Fetch{}
	err := db.query(ctx, nil, qRecentFetches, []any{host, limit}, func(rows *sql.Rows) error {
		f, err := store.FetchOf(rows, func(r store.Row) (store.URL, error) { return scanURL(r) })
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recent fetches of %s: %w", host, err)
	}
	return out, nil
}
