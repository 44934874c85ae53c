package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/crawlcluster/crawler/pkg/store"
)

const (
	// Parameters: the pages whose links are replaced.
	qDeleteLinks = `DELETE FROM links WHERE from_hash = ANY($1::bigint[])`
	// Parameters: edges as two arrays, inserted in key order so that two
	// parsers lock them in one order.
	qInsertLinks = `INSERT INTO links (from_hash, to_hash)
		SELECT DISTINCT f, t FROM unnest($1::bigint[], $2::bigint[]) AS e (f, t) ORDER BY 1, 2
		ON CONFLICT DO NOTHING`

	// A URL's row is found through url_hashes, which knows its partition.
	qOutLinks = `SELECT l.to_hash, coalesce(u.url, e.url, ''), coalesce(u.state, '')
		FROM (SELECT to_hash FROM links WHERE from_hash = $1 ORDER BY to_hash LIMIT $2) l
		LEFT JOIN url_hashes h ON h.hash = l.to_hash
		LEFT JOIN urls u ON u.partition = h.partition AND u.hash = l.to_hash
		LEFT JOIN exclusions e ON e.hash = l.to_hash`
	qInLinks = `SELECT l.from_hash, coalesce(u.url, ''), coalesce(u.state, '')
		FROM (SELECT from_hash FROM links WHERE to_hash = $1 ORDER BY from_hash LIMIT $2) l
		LEFT JOIN url_hashes h ON h.hash = l.from_hash
		LEFT JOIN urls u ON u.partition = h.partition AND u.hash = l.from_hash`
	qLinkCounts = `SELECT (SELECT count(*) FROM links WHERE from_hash = $1),
			count(*), count(DISTINCT u.host)
		FROM links l
		LEFT JOIN url_hashes h ON h.hash = l.from_hash
		LEFT JOIN urls u ON u.partition = h.partition AND u.hash = l.from_hash
		WHERE l.to_hash = $1`

	qCapture = `SELECT ` + captureColumns + ` FROM captures WHERE id = $1`

	// With the duration of the capture of each URL's last fetch, if any: a
	// failed fetch leaves an older capture, which says nothing of it.
	qRecentFetches = `SELECT ` + urlColumns + `, coalesce((SELECT c.duration_ms FROM captures c
			WHERE c.url_hash = urls.hash AND c.fetched_at = urls.fetched_at ORDER BY c.id DESC LIMIT 1), 0)
		FROM urls
		WHERE host = $1 AND fetched_at IS NOT NULL ORDER BY fetched_at DESC LIMIT $2`

	qHostActivity = `SELECT floor(extract(epoch FROM fetched_at) * 1000 / $3)::bigint AS b, count(*) FROM urls
		WHERE host = $1 AND fetched_at >= $2 GROUP BY b ORDER BY b`

	qSegments = `SELECT count(*) FROM warc_segments WHERE captures > 0`

	// Through hosts_blocked, whose condition this repeats.
	qBlockedHosts = `SELECT count(*) FROM hosts WHERE substring(robots FROM 2 FOR 1) = '\x03'::bytea`

	// Host rows without the robots entry (a list has no use for it).
	hostListColumns = `host, partition, NULL::bytea, delay_ms, next_allowed_at, backoff_ms, pages, errors, updated_at, excluded`
)

// hostListQueries sort the hosts table, whose size is the number of hosts,
// not of URLs.
var hostListQueries = map[store.HostOrder]string{
	store.HostsBusiest:  `SELECT ` + hostListColumns + ` FROM hosts ORDER BY pages DESC, host LIMIT $1`,
	store.HostsSlowest:  `SELECT ` + hostListColumns + ` FROM hosts ORDER BY greatest(delay_ms, backoff_ms) DESC, host LIMIT $1`,
	store.HostsFailing:  `SELECT ` + hostListColumns + ` FROM hosts WHERE errors > 0 ORDER BY errors DESC, host LIMIT $1`,
	store.HostsExcluded: `SELECT ` + hostListColumns + ` FROM hosts WHERE excluded > 0 ORDER BY excluded DESC, host LIMIT $1`,
}

// linkArgs returns the pages whose out-links the captures replace and their
// edges; a capture with nil OutLinks leaves its page's links.
func linkArgs(caps []store.Capture) (pages, from, to []int64) {
	for _, c := range caps {
		if c.OutLinks == nil {
			continue
		}
		h := c.URLHash
		if h == 0 {
			h = store.HashURL(c.URL)
		}
		pages = append(pages, h)
		for _, t := range c.OutLinks {
			from, to = append(from, h), append(to, t)
		}
	}
	return pages, from, to
}

// Links returns a URL's out-links and in-links (up to limit each) and counts,
// from one snapshot.
func (db *DB) Links(ctx context.Context, hash int64, limit int) (store.Links, error) {
	var l store.Links
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return l, fmt.Errorf("links: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	read := func(to *[]store.Link) func(pgx.Rows) error {
		return func(rows pgx.Rows) error { return store.LinkRows(rows, to) }
	}
	b := &pgx.Batch{}
	b.Queue(qOutLinks, hash, limit).Query(read(&l.Out))
	b.Queue(qInLinks, hash, limit).Query(read(&l.In))
	b.Queue(qLinkCounts, hash).QueryRow(func(row pgx.Row) error { return row.Scan(&l.OutCount, &l.InCount, &l.InHosts) })
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return store.Links{}, fmt.Errorf("links: %w", err)
	}
	return l, tx.Commit(ctx)
}

// Capture returns one capture.
func (db *DB) Capture(ctx context.Context, id int64) (store.Capture, error) {
	return db.capture(ctx, fmt.Sprintf("capture %d", id), qCapture, id)
}

// HostList returns up to limit hosts in order.
func (db *DB) HostList(ctx context.Context, order store.HostOrder, limit int) ([]store.Host, error) {
	q, ok := hostListQueries[order]
	if !ok {
		return nil, fmt.Errorf("host list: unknown order %q", order)
	}
	out := []store.Host{}
	err := db.queryRows(ctx, q, []any{limit}, func(rows pgx.Rows) error {
		h, err := scanHostListed(rows)
		out = append(out, h)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("host list by %s: %w", order, err)
	}
	return out, nil
}

func scanHostListed(row pgx.Row) (store.Host, error) {
	var excluded int64
	h, err := scanHost(store.ScanWith(row, &excluded))
	h.Excluded = excluded
	return h, err
}

// HostActivity counts the host's URLs by the bucket of their last fetch.
func (db *DB) HostActivity(ctx context.Context, host string, since time.Time, bucket time.Duration) ([]store.Bucket, error) {
	width := max(bucket.Milliseconds(), 1)
	out := []store.Bucket{}
	err := db.queryRows(ctx, qHostActivity, []any{host, since, width}, func(rows pgx.Rows) error {
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
	err := db.queryRows(ctx, qRecentFetches, []any{host, limit}, func(rows pgx.Rows) error {
		f, err := store.FetchOf(rows, func(r store.Row) (store.URL, error) { return scanURL(r) })
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recent fetches of %s: %w", host, err)
	}
	return out, nil
}
