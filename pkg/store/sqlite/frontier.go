package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// AdmitURLs inserts the URLs as queued in one transaction. A URL whose Hash is 0
// gets store.HashURL(URL); a zero DiscoveredAt becomes now and an empty Kind
// KindPage. State, Reason and Attempts of the input are ignored: a new URL is
// queued, and an existing one keeps its row untouched. A hash that appears twice in
// urls is inserted once, for its first position.
func (db *DB) AdmitURLs(ctx context.Context, urls []store.URL) ([]bool, error) {
	inserted := make([]bool, len(urls))
	if len(urls) == 0 {
		return inserted, nil
	}
	now := millis(time.Now())
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		ins, err := db.stmt(ctx, tx, qInsertURL)
		if err != nil {
			return err
		}
		defer ins.Close()

		type hostPages struct {
			partition int32
			pages     int
		}
		newPages := map[string]*hostPages{}
		var admitted int64
		var hosts []string // in order of first appearance, so lock order is stable
		for i := range urls {
			u := &urls[i]
			hash := u.Hash
			if hash == 0 {
				hash = store.HashURL(u.URL)
			}
			kind := u.Kind.String()
			discovered := millis(u.DiscoveredAt)
			if discovered == 0 {
				discovered = now
			}
			res, err := ins.ExecContext(ctx, hash, u.Partition, u.URL, u.Host, u.Depth, u.Level, u.Score,
				kind, u.Redirects, u.Parent, u.CrawlID, discovered)
			if err != nil {
				return fmt.Errorf("insert %s: %w", u.URL, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
			inserted[i] = true
			admitted++
			hp := newPages[u.Host]
			if hp == nil {
				hp = &hostPages{partition: u.Partition}
				newPages[u.Host] = hp
				hosts = append(hosts, u.Host)
			}
			hp.pages++
		}
		if len(hosts) == 0 {
			return nil
		}
		counts := urlCounts{}
		counts.add(urlState{state: string(store.StateQueued)}, admitted)
		if err := counts.apply(ctx, db, tx); err != nil {
			return fmt.Errorf("count admitted urls: %w", err)
		}

		up, err := db.stmt(ctx, tx, qCountPages)
		if err != nil {
			return err
		}
		defer up.Close()
		for _, h := range hosts {
			hp := newPages[h]
			if _, err := up.ExecContext(ctx, h, hp.partition, hp.pages, now); err != nil {
				return fmt.Errorf("count pages of host %s: %w", h, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("admit urls: %w", err)
	}
	return inserted, nil
}

// Seen reports for each hash whether the URL is in the urls table.
func (db *DB) Seen(ctx context.Context, hashes []int64) ([]bool, error) {
	seen := make([]bool, len(hashes))
	if len(hashes) == 0 {
		return seen, nil
	}
	at := positions(hashes)
	err := inChunks(ctx, db, nil, qSeen, hashes, func(rows *sql.Rows) error {
		var h int64
		if err := rows.Scan(&h); err != nil {
			return err
		}
		for _, i := range at[h] {
			seen[i] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up seen urls: %w", err)
	}
	return seen, nil
}

// positions maps each key to the indexes where it occurs.
func positions[K comparable](keys []K) map[K][]int {
	at := make(map[K][]int, len(keys))
	for i, k := range keys {
		at[k] = append(at[k], i)
	}
	return at
}

func scanURL(rows interface{ Scan(...any) error }) (store.URL, error) {
	var u store.URL
	var kind, state string
	var discovered, fetched int64
	var rc recrawlCols
	err := rows.Scan(append([]any{&u.Hash, &u.Partition, &u.URL, &u.Host, &u.Depth, &u.Level, &u.Score, &kind, &state,
		&u.Reason, &u.Attempts, &u.Redirects, &u.Parent, &u.CrawlID, &discovered, &fetched, &u.Status,
		&u.ETag, &u.LastModified}, rc.dest()...)...)
	u.Kind, u.State = urlkind.Of(kind), store.State(state)
	u.DiscoveredAt, u.FetchedAt = fromMillis(discovered), fromMillis(fetched)
	u.Recrawl = rc.recrawl()
	return u, err
}

// recrawlCols scans the recrawl columns of urls, in urlColumns' order.
type recrawlCols struct {
	next, fetches, changes, unchanged, changed, lastChange, visited, misses, streak int64
	rate                                                                            float64
}

func (c *recrawlCols) dest() []any {
	return []any{&c.next, &c.fetches, &c.changes, &c.unchanged, &c.changed, &c.lastChange, &c.visited, &c.misses, &c.streak, &c.rate}
}

func (c *recrawlCols) recrawl() store.Recrawl {
	return store.Recrawl{
		NextFetchAt: fromMillis(c.next), FetchCount: int(c.fetches), ChangeCount: int(c.changes),
		Unchanged: time.Duration(c.unchanged) * time.Millisecond, ChangedTime: time.Duration(c.changed) * time.Millisecond,
		LastChangeAt: fromMillis(c.lastChange), LastVisitAt: fromMillis(c.visited), Misses: int(c.misses), Streak: int(c.streak), ChangeRate: c.rate,
	}
}

// recrawlArgs are a Recrawl's column values, in urlColumns' order.
func recrawlArgs(r store.Recrawl) []any {
	return []any{millis(r.NextFetchAt), r.FetchCount, r.ChangeCount, r.Unchanged.Milliseconds(), r.ChangedTime.Milliseconds(),
		millis(r.LastChangeAt), millis(r.LastVisitAt), r.Misses, r.Streak, r.ChangeRate}
}

// DueURLs returns the earliest planned visits of partition p.
func (db *DB) DueURLs(ctx context.Context, p int32, limit int) ([]store.URL, error) {
	return db.dueURLs(ctx, p, qDueURLs, p, limit)
}

// FirstDue returns, for each partition of parts, the time of its earliest
// planned visit (DueURLs(p, 1)'s), zero when it has none. It reads them in
// one statement from the index: a fetcher's recrawl scan asks it of every
// partition it owns every second, and 256 reads of a whole URL row each
// took about 1% of a medium crawl's CPU.
func (db *DB) FirstDue(ctx context.Context, parts []int32) ([]time.Time, error) {
	out := make([]time.Time, len(parts))
	if len(parts) == 0 {
		return out, nil
	}
	list, err := json.Marshal(parts)
	if err != nil {
		return nil, err
	}
	at := positions(parts)
	err = db.query(ctx, nil, qFirstDue, []any{string(list)}, func(rows *sql.Rows) error {
		var p int32
		var next int64
		if err := rows.Scan(&p, &next); err != nil {
			return err
		}
		for _, i := range at[p] {
			out[i] = fromMillis(next)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("first due visits of %d partitions: %w", len(parts), err)
	}
	return out, nil
}

// DueAt returns the earliest visits of partition p due at now.
func (db *DB) DueAt(ctx context.Context, p int32, now time.Time, limit int) ([]store.URL, error) {
	return db.dueURLs(ctx, p, qDueAt, p, millis(now), limit)
}

// dueURLs runs query, one of the due-visit look-ups of partition p, which
// read urlColumns and the URL's sitemap_lastmod.
func (db *DB) dueURLs(ctx context.Context, p int32, query string, args ...any) ([]store.URL, error) {
	var out []store.URL
	err := db.query(ctx, nil, query, args, func(rows *sql.Rows) error {
		var lastmod int64
		u, err := scanURL(store.ScanWith(rows, &lastmod))
		u.SitemapLastMod = fromMillis(lastmod)
		out = append(out, u)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("due urls of partition %d: %w", p, err)
	}
	return out, nil
}

// ClaimRevisits moves due URLs back to queued, each once.
func (db *DB) ClaimRevisits(ctx context.Context, claims []store.Claim) ([]bool, error) {
	claimed := make([]bool, len(claims))
	if len(claims) == 0 {
		return claimed, nil
	}
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		hashes := make([]int64, len(claims))
		for i, c := range claims {
			hashes[i] = c.Hash
		}
		states, err := urlStates(ctx, db, tx, hashes)
		if err != nil {
			return err
		}
		st, err := db.stmt(ctx, tx, qClaimRevisit)
		if err != nil {
			return err
		}
		counts := urlCounts{}
		queued := urlState{state: string(store.StateQueued)}
		clear(claimed)
		for i, c := range claims {
			res, err := st.ExecContext(ctx, c.Hash, millis(c.Due))
			if err != nil {
				return fmt.Errorf("url %d: %w", c.Hash, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				claimed[i] = true
				counts.move(states[c.Hash], queued)
				states[c.Hash] = queued
			}
		}
		return counts.apply(ctx, db, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("claim revisits: %w", err)
	}
	return claimed, nil
}

// QueuedURLs calls fn for every queued URL of partition p, in hash order, a page at
// a time: a URL admitted or moved on while the iteration runs may or may not be seen.
func (db *DB) QueuedURLs(ctx context.Context, p int32, fn func(store.URL) error) error {
	err := pages(ctx, db,
		qQueuedURLs,
		[]any{p},
		func(rows *sql.Rows) (store.URL, error) { return scanURL(rows) },
		func(u store.URL) int64 { return u.Hash },
		fn)
	if err != nil {
		return fmt.Errorf("queued urls of partition %d: %w", p, err)
	}
	return nil
}

// URLHashes calls fn with the hash of every URL of partition p, in hash order.
func (db *DB) URLHashes(ctx context.Context, p int32, fn func(int64) error) error {
	err := pages(ctx, db,
		qURLHashes,
		[]any{p},
		func(rows *sql.Rows) (int64, error) {
			var h int64
			err := rows.Scan(&h)
			return h, err
		},
		func(h int64) int64 { return h },
		fn)
	if err != nil {
		return fmt.Errorf("url hashes of partition %d: %w", p, err)
	}
	return nil
}

func scanHost(rows interface{ Scan(...any) error }) (store.Host, error) {
	var h store.Host
	var delay, next, backoff, updated int64
	err := rows.Scan(&h.Host, &h.Partition, &h.Robots, &delay, &next, &backoff, &h.Pages, &h.Errors, &updated)
	h.Delay, h.Backoff = time.Duration(delay)*time.Millisecond, time.Duration(backoff)*time.Millisecond
	h.NextAllowed, h.UpdatedAt = fromMillis(next), fromMillis(updated)
	return h, err
}

// Hosts returns the host rows of partition p, by name.
func (db *DB) Hosts(ctx context.Context, p int32) ([]store.Host, error) {
	var hosts []store.Host
	err := db.query(ctx, nil, qHosts, []any{p},
		func(rows *sql.Rows) error {
			var admission []byte
			h, err := scanHost(store.ScanWith(rows, &admission))
			h.Admission = admission
			hosts = append(hosts, h)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("hosts of partition %d: %w", p, err)
	}
	return hosts, nil
}

// SaveHosts upserts host rows in one transaction; Pages is left to AdmitURLs. A zero
// UpdatedAt is saved as now.
func (db *DB) SaveHosts(ctx context.Context, hosts []store.Host) error {
	if len(hosts) == 0 {
		return nil
	}
	for _, h := range hosts {
		if h.Host == "" {
			return fmt.Errorf("save hosts: a host has no name")
		}
	}
	now := time.Now()
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := db.stmt(ctx, tx, qSaveHost)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, h := range hosts {
			var robots any
			if h.Robots != nil {
				robots = h.Robots
			}
			updated := h.UpdatedAt
			if updated.IsZero() {
				updated = now
			}
			if _, err := st.ExecContext(ctx, h.Host, h.Partition, robots, h.Delay.Milliseconds(),
				millis(h.NextAllowed), h.Backoff.Milliseconds(), h.Errors, millis(updated), nilIfEmpty(h.Admission)); err != nil {
				return fmt.Errorf("host %s: %w", h.Host, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save hosts: %w", err)
	}
	return nil
}

// stateRank orders states along a crawl cycle; the three outcomes share a rank.
var stateRank = map[store.State]int{
	store.StateQueued:   0,
	store.StateFetched:  1,
	store.StateStored:   2,
	store.StateFailed:   2,
	store.StateExcluded: 2,
}

// UpdateURLs applies state transitions in one transaction. An update is applied
// when it keeps the URL's state (a retry that only counts an attempt, say) or moves
// it forward: queued -> fetched -> one of stored, failed, excluded. Any other
// update, including one for a URL the store does not hold, is dropped, so a replay
// of old updates after a crash cannot move a URL back. A zero FetchedAt keeps the
// stored one; Reason, Status and Attempts are written as given.
func (db *DB) UpdateURLs(ctx context.Context, updates []store.URLUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	for _, u := range updates {
		if _, ok := stateRank[u.State]; !ok {
			return fmt.Errorf("update urls: url %d: unknown state %q", u.Hash, u.State)
		}
	}
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := db.stmt(ctx, tx, qUpdateURL)
		if err != nil {
			return err
		}
		defer st.Close()
		keep, err := db.stmt(ctx, tx, qUpdateURLKeepPlan)
		if err != nil {
			return err
		}
		defer keep.Close()
		hashes := make([]int64, len(updates))
		for i, u := range updates {
			hashes[i] = u.Hash
		}
		states, err := urlStates(ctx, db, tx, hashes)
		if err != nil {
			return fmt.Errorf("read states: %w", err)
		}
		counts := urlCounts{}
		for _, u := range updates {
			s, at := string(u.State), millis(u.FetchedAt)
			// The statement's WHERE clause is the rule; the states read above
			// in this transaction tell which updates it would drop, so those
			// skip it: a "fetched" update that arrives after the parser
			// stored the page (few do: the parsers run seconds behind the
			// fetcher, which saves every 500 ms).
			cur, ok := states[u.Hash]
			if !ok || (cur.state != s && stateRank[u.State] <= stateRank[store.State(cur.state)]) {
				continue
			}
			if u.State == store.StateFetched && cur.state == string(store.StateQueued) && at > 0 && cur.fetched > 0 && at <= cur.fetched {
				continue // a mark held back past its page's store and a revisit's claim (see qUpdateURLs)
			}
			backoff := u.Backoff.Milliseconds()
			if u.State != store.StateFailed {
				backoff = 0
			}
			planned := cur.planned
			if backoff == 0 {
				// Nearly every update of a crawl (the "fetched" marks): the
				// plan stays as read, so no RETURNING row to step and scan.
				res, err := keep.ExecContext(ctx, s, u.Reason, u.Status, u.Attempts, at, at, u.Hash, s, s, s)
				if err != nil {
					return fmt.Errorf("url %d: %w", u.Hash, err)
				}
				if n, err := res.RowsAffected(); err != nil {
					return fmt.Errorf("url %d: %w", u.Hash, err)
				} else if n == 0 {
					continue // the forward-only rule dropped it
				}
			} else {
				err := st.QueryRowContext(ctx, s, u.Reason, u.Status, u.Attempts, at, at,
					backoff, backoff, at, u.BackoffMax.Milliseconds(), backoff, u.Hash, s, s, s).Scan(&planned)
				switch {
				case errors.Is(err, sql.ErrNoRows):
					continue // the forward-only rule dropped it
				case err != nil:
					return fmt.Errorf("url %d: %w", u.Hash, err)
				}
			}
			to := urlState{state: s, reason: u.Reason, planned: planned}
			counts.move(states[u.Hash], to)
			states[u.Hash] = to
		}
		return counts.apply(ctx, db, tx)
	})
	if err != nil {
		return fmt.Errorf("update urls: %w", err)
	}
	return nil
}

// RecordExclusions inserts exclusions in one transaction. A URL recorded already
// keeps its first reason and details; its count grows by one and its last sighting
// moves to At. A zero Hash gets store.HashURL(URL), a zero At now, and a long URL
// is cut (Exclusion.Cut). Every exclusion needs a reason (DESIGN.md invariant 2).
func (db *DB) RecordExclusions(ctx context.Context, ex []store.Exclusion) error {
	if len(ex) == 0 {
		return nil
	}
	for _, e := range ex {
		if e.Reason == "" {
			return fmt.Errorf("record exclusions: %s has no reason", e.URL)
		}
	}
	now := millis(time.Now())
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := db.stmt(ctx, tx, qRecordExclusion)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, e := range ex {
			e.Cut()
			hash := e.Hash
			if hash == 0 {
				hash = store.HashURL(e.URL)
			}
			at := millis(e.At)
			if at == 0 {
				at = now
			}
			hops, origin := e.ChainColumns()
			if _, err := st.ExecContext(ctx, hash, e.URL, e.Host, e.Reason, e.Parent, e.Depth, e.CrawlID, at, at, e.CutFrom, hops, origin, e.DupHops); err != nil {
				return fmt.Errorf("exclusion of %s: %w", e.URL, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record exclusions: %w", err)
	}
	return nil
}

// ForgetExclusions deletes the exclusions of hashes in one transaction; the
// exclusion counters follow through the schema's delete trigger.
func (db *DB) ForgetExclusions(ctx context.Context, hashes []int64) error {
	if len(hashes) == 0 {
		return nil
	}
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		st, err := db.stmt(ctx, tx, qForgetExclusion)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, h := range hashes {
			if _, err := st.ExecContext(ctx, h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("forget %d exclusions: %w", len(hashes), err)
	}
	return nil
}

// UnqueueURL deletes the row of hash if it is still queued, and takes it off
// its host's page count, in one transaction. The URL counters follow through
// the schema's delete trigger (urls_count_delete), not urlCounts: adding -1
// there too would count the row out twice. No other table is keyed by the
// hash of a URL that was admitted and never fetched: the urls row is the
// seen-URL set.
func (db *DB) UnqueueURL(ctx context.Context, hash int64) (bool, error) {
	var gone bool
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		gone = false
		del, err := db.stmt(ctx, tx, qUnqueueURL)
		if err != nil {
			return err
		}
		defer del.Close()
		var host string
		switch err := del.QueryRowContext(ctx, hash).Scan(&host); {
		case errors.Is(err, sql.ErrNoRows):
			return nil // unknown, or no longer queued
		case err != nil:
			return err
		}
		up, err := db.stmt(ctx, tx, qUncountPage)
		if err != nil {
			return err
		}
		defer up.Close()
		if _, err := up.ExecContext(ctx, host); err != nil {
			return fmt.Errorf("count pages of host %s: %w", host, err)
		}
		gone = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("unqueue url %d: %w", hash, err)
	}
	return gone, nil
}

// HeldURLs returns the URLs a pattern budget holds back on hosts, at most
// perHost of each after where from says, first held first.
func (db *DB) HeldURLs(ctx context.Context, from []store.HeldFrom, perHost int) ([]store.Exclusion, error) {
	if len(from) == 0 || perHost <= 0 {
		return nil, nil
	}
	cursors := make([][3]any, len(from))
	for i, f := range from {
		at := int64(math.MinInt64) // from the first
		if !f.At.IsZero() {
			at = millis(f.At)
		}
		cursors[i] = [3]any{f.Host, at, f.Hash}
	}
	list, err := json.Marshal(cursors)
	if err != nil {
		return nil, fmt.Errorf("held urls: %w", err)
	}
	var held []store.Exclusion
	err = db.query(ctx, nil, qHeldURLs, []any{string(list), perHost}, func(rows *sql.Rows) error {
		var e store.Exclusion
		var at, origin int64
		var hops *int64
		if err := rows.Scan(&e.Hash, &e.URL, &e.Host, &e.Reason, &e.Parent, &e.Depth, &e.CrawlID, &at, &e.Seen, &hops, &origin, &e.DupHops); err != nil {
			return err
		}
		e.At, e.Chain = fromMillis(at), store.ChainOf(hops, origin)
		held = append(held, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("held urls of %d hosts: %w", len(from), err)
	}
	return held, nil
}

// nilIfEmpty passes a nil or empty blob as NULL.
func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
