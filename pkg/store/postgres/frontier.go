package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// AdmitURLs inserts the URLs as queued in one statement. A URL whose Hash is 0
// gets store.HashURL(URL); a zero DiscoveredAt becomes now and an empty Kind
// KindPage. State, Reason and Attempts of the input are ignored: a new URL is
// queued, and an existing one keeps its row untouched. A hash that appears twice in
// urls is inserted once, for its first position. A Partition outside
// [0, Partitions) is an error, and nothing of the batch is admitted.
func (db *DB) AdmitURLs(ctx context.Context, urls []store.URL) ([]bool, error) {
	if len(urls) == 0 {
		return []bool{}, nil
	}
	args, err := admitArgs(urls, time.Now())
	if err != nil {
		return nil, fmt.Errorf("admit urls: %w", err)
	}
	n := len(urls)
	var inserted []bool
	err = retry(ctx, func() error {
		inserted = make([]bool, n)
		return db.queryRows(ctx, qAdmitURLs, args, func(rows pgx.Rows) error {
			var ord int64
			if err := rows.Scan(&ord); err != nil {
				return err
			}
			inserted[ord-1] = true
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("admit urls: %w", err)
	}
	return inserted, nil
}

// admitArgs returns the parameters of qAdmitURLs.
func admitArgs(urls []store.URL, now time.Time) ([]any, error) {
	n := len(urls)
	var (
		hashes     = make([]int64, n)
		parts      = make([]int32, n)
		addrs      = make([]string, n)
		hosts      = make([]string, n)
		depths     = make([]int32, n)
		levels     = make([]int32, n)
		scores     = make([]int32, n)
		kinds      = make([]string, n)
		redirects  = make([]int32, n)
		parents    = make([]string, n)
		crawlIDs   = make([]string, n)
		discovered = make([]pgtype.Timestamptz, n)
	)
	for i, u := range urls {
		if u.Partition < 0 || u.Partition >= Partitions {
			return nil, fmt.Errorf("%s: partition %d outside [0, %d)", u.URL, u.Partition, Partitions)
		}
		hashes[i] = u.Hash
		if hashes[i] == 0 {
			hashes[i] = store.HashURL(u.URL)
		}
		kinds[i] = u.Kind.String()
		discovered[i] = timestamp(u.DiscoveredAt)
		if u.DiscoveredAt.IsZero() {
			discovered[i] = timestamp(now)
		}
		parts[i], addrs[i], hosts[i] = u.Partition, u.URL, u.Host
		depths[i], levels[i], scores[i], redirects[i] = int32(u.Depth), int32(u.Level), int32(u.Score), int32(u.Redirects)
		parents[i], crawlIDs[i] = u.Parent, u.CrawlID
	}
	return []any{hashes, parts, addrs, hosts, depths, levels, scores, kinds, redirects, parents, crawlIDs, discovered}, nil
}

// Seen reports for each hash whether the URL is in the store, in one look-up of
// url_hashes.
func (db *DB) Seen(ctx context.Context, hashes []int64) ([]bool, error) {
	seen, err := lookUp(ctx, db, qSeen, hashes, func(rows pgx.Rows) (int64, bool, error) {
		var h int64
		err := rows.Scan(&h)
		return h, true, err
	})
	if err != nil {
		return nil, fmt.Errorf("look up seen urls: %w", err)
	}
	return seen, nil
}

func scanURL(row pgx.Row) (store.URL, error) {
	var u store.URL
	var kind, state string
	var discovered, fetched pgtype.Timestamptz
	var rc recrawlCols
	err := row.Scan(append([]any{&u.Hash, &u.Partition, &u.URL, &u.Host, &u.Depth, &u.Level, &u.Score, &kind, &state,
		&u.Reason, &u.Attempts, &u.Redirects, &u.Parent, &u.CrawlID, &discovered, &fetched, &u.Status,
		&u.ETag, &u.LastModified}, rc.dest()...)...)
	u.Kind, u.State = urlkind.Of(kind), store.State(state)
	u.DiscoveredAt, u.FetchedAt = fromTimestamp(discovered), fromTimestamp(fetched)
	u.Recrawl = rc.recrawl()
	return u, err
}

// recrawlCols scans recrawlColumns.
type recrawlCols struct {
	next, lastChange, visited        pgtype.Timestamptz
	fetches, changes, misses, streak int
	unchanged, changed               int64 // milliseconds
	rate                             float64
}

func (c *recrawlCols) dest() []any {
	return []any{&c.next, &c.fetches, &c.changes, &c.unchanged, &c.changed, &c.lastChange, &c.visited,
		&c.misses, &c.streak, &c.rate}
}

func (c *recrawlCols) recrawl() store.Recrawl {
	return store.Recrawl{
		NextFetchAt: fromTimestamp(c.next), FetchCount: c.fetches, ChangeCount: c.changes,
		Unchanged: time.Duration(c.unchanged) * time.Millisecond, ChangedTime: time.Duration(c.changed) * time.Millisecond,
		LastChangeAt: fromTimestamp(c.lastChange), LastVisitAt: fromTimestamp(c.visited),
		Misses: c.misses, Streak: c.streak, ChangeRate: c.rate,
	}
}

// DueURLs returns up to limit URLs of partition p with a visit planned, earliest
// first, read from the urls_due index.
func (db *DB) DueURLs(ctx context.Context, p int32, limit int) ([]store.URL, error) {
	return db.dueURLs(ctx, p, qDueURLs, p, limit)
}

// DueAt returns up to limit URLs of partition p due at now, earliest first,
// read from the urls_due index.
func (db *DB) DueAt(ctx context.Context, p int32, now time.Time, limit int) ([]store.URL, error) {
	return db.dueURLs(ctx, p, qDueAt, p, timestamp(now), limit)
}

// dueURLs runs query, one of the due-visit look-ups of partition p, which
// read urlColumns and the URL's sitemap_lastmod.
func (db *DB) dueURLs(ctx context.Context, p int32, query string, args ...any) ([]store.URL, error) {
	due, err := queryAll(ctx, db, query, args, func(rows pgx.Rows) (store.URL, error) {
		var lastmod pgtype.Timestamptz
		u, err := scanURL(store.ScanWith(rows, &lastmod))
		u.SitemapLastMod = fromTimestamp(lastmod)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("due urls of partition %d: %w", p, err)
	}
	return due, nil
}

// ClaimRevisits moves due URLs back to queued in one statement, each only while
// it is still stored or failed and scheduled for exactly the claim's Due, so a
// claim replayed or repeated claims nothing; the state counters follow through
// the schema's update trigger.
func (db *DB) ClaimRevisits(ctx context.Context, claims []store.Claim) ([]bool, error) {
	claimed := make([]bool, len(claims))
	if len(claims) == 0 {
		return claimed, nil
	}
	hashes := make([]int64, len(claims))
	dues := make([]pgtype.Timestamptz, len(claims))
	for i, c := range claims {
		hashes[i], dues[i] = c.Hash, timestamp(c.Due)
	}
	order := hashOrder(hashes)
	err := retry(ctx, func() error {
		clear(claimed)
		return db.queryRows(ctx, qClaimRevisits, []any{permute(hashes, order), permute(dues, order)}, func(rows pgx.Rows) error {
			var ord int64
			if err := rows.Scan(&ord); err != nil {
				return err
			}
			claimed[order[ord-1]] = true
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("claim %d revisits: %w", len(claims), err)
	}
	return claimed, nil
}

// QueuedURLs calls fn for every queued URL of partition p, in hash order, a page at
// a time: a URL admitted or moved on while the iteration runs may or may not be seen.
func (db *DB) QueuedURLs(ctx context.Context, p int32, fn func(store.URL) error) error {
	err := pages(ctx, db, qQueuedURLs, []any{p},
		func(rows pgx.Rows) (store.URL, error) { return scanURL(rows) },
		func(u store.URL) int64 { return u.Hash },
		fn)
	if err != nil {
		return fmt.Errorf("queued urls of partition %d: %w", p, err)
	}
	return nil
}

// URLHashes calls fn with the hash of every URL of partition p, in hash order.
func (db *DB) URLHashes(ctx context.Context, p int32, fn func(int64) error) error {
	err := pages(ctx, db, qURLHashes, []any{p},
		func(rows pgx.Rows) (int64, error) {
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

func scanHost(row pgx.Row) (store.Host, error) {
	var h store.Host
	var delay, backoff int64
	var next, updated pgtype.Timestamptz
	err := row.Scan(&h.Host, &h.Partition, &h.Robots, &delay, &next, &backoff, &h.Pages, &h.Errors, &updated)
	h.Delay, h.Backoff = time.Duration(delay)*time.Millisecond, time.Duration(backoff)*time.Millisecond
	h.NextAllowed, h.UpdatedAt = fromTimestamp(next), fromTimestamp(updated)
	return h, err
}

// Hosts returns the host rows of partition p, by name.
func (db *DB) Hosts(ctx context.Context, p int32) ([]store.Host, error) {
	hosts, err := queryAll(ctx, db, qHosts, []any{p}, func(rows pgx.Rows) (store.Host, error) {
		var admission []byte
		h, err := scanHost(store.ScanWith(rows, &admission))
		h.Admission = admission
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("hosts of partition %d: %w", p, err)
	}
	return hosts, nil
}

// SaveHosts upserts host rows in one statement; Pages is left to AdmitURLs. A zero
// UpdatedAt is saved as now. A host listed twice is saved as its last entry.
func (db *DB) SaveHosts(ctx context.Context, hosts []store.Host) error {
	if len(hosts) == 0 {
		return nil
	}
	args, err := saveHostsArgs(hosts, time.Now())
	if err != nil {
		return fmt.Errorf("save hosts: %w", err)
	}
	err = retry(ctx, func() error {
		_, err := db.pool.Exec(ctx, qSaveHosts, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("save hosts: %w", err)
	}
	return nil
}

// saveHostsArgs returns the parameters of qSaveHosts.
func saveHostsArgs(hosts []store.Host, now time.Time) ([]any, error) {
	last := map[string]int{}
	for i, h := range hosts {
		if h.Host == "" {
			return nil, fmt.Errorf("a host has no name")
		}
		last[h.Host] = i
	}
	n := len(last)
	var (
		names   = make([]string, 0, n)
		parts   = make([]int32, 0, n)
		robots  = make([][]byte, 0, n)
		delays  = make([]int64, 0, n)
		next    = make([]pgtype.Timestamptz, 0, n)
		backoff = make([]int64, 0, n)
		errs    = make([]int32, 0, n)
		updated = make([]pgtype.Timestamptz, 0, n)
		adm     = make([][]byte, 0, n)
	)
	for i, h := range hosts {
		if last[h.Host] != i {
			continue
		}
		u := h.UpdatedAt
		if u.IsZero() {
			u = now
		}
		names, parts, robots = append(names, h.Host), append(parts, h.Partition), append(robots, h.Robots)
		delays, next = append(delays, h.Delay.Milliseconds()), append(next, timestamp(h.NextAllowed))
		backoff, errs = append(backoff, h.Backoff.Milliseconds()), append(errs, int32(h.Errors))
		updated = append(updated, timestamp(u))
		if len(h.Admission) == 0 {
			adm = append(adm, nil)
		} else {
			adm = append(adm, h.Admission)
		}
	}
	return []any{names, parts, robots, delays, next, backoff, errs, updated, adm}, nil
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
// stored one; Reason, Status and Attempts are written as given. A failed update
// with a positive Backoff counts a miss and plans the retry (see qUpdateURLs).
// Updates of one URL apply in batch order, each checked against the state the one
// before left.
func (db *DB) UpdateURLs(ctx context.Context, updates []store.URLUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	for _, u := range updates {
		if _, ok := stateRank[u.State]; !ok {
			return fmt.Errorf("update urls: url %d: unknown state %q", u.Hash, u.State)
		}
	}
	rounds := updateRounds(updates)
	err := retry(ctx, func() error {
		if len(rounds) == 1 {
			_, err := db.pool.Exec(ctx, qUpdateURLs, rounds[0]...)
			return err
		}
		// The statements of one batch run in one implicit transaction.
		b := &pgx.Batch{}
		for _, args := range rounds {
			b.Queue(qUpdateURLs, args...)
		}
		return db.pool.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("update urls: %w", err)
	}
	return nil
}

// updateRounds returns the parameters of one qUpdateURLs per round. A statement
// updates a row at most once, so the k-th update of each URL goes in the k-th
// round; a batch without repeats is one round.
func updateRounds(updates []store.URLUpdate) [][]any {
	type round struct {
		hashes     []int64
		states     []string
		reasons    []string
		statuses   []int32
		attempts   []int32
		fetched    []pgtype.Timestamptz
		backoff    []int64
		backoffMax []int64
	}
	var rounds []*round
	seen := map[int64]int{}
	for _, u := range updates {
		k := seen[u.Hash]
		seen[u.Hash] = k + 1
		if k == len(rounds) {
			rounds = append(rounds, &round{})
		}
		r := rounds[k]
		r.hashes, r.states, r.reasons = append(r.hashes, u.Hash), append(r.states, string(u.State)), append(r.reasons, u.Reason)
		r.statuses, r.attempts = append(r.statuses, int32(u.Status)), append(r.attempts, int32(u.Attempts))
		r.fetched = append(r.fetched, timestamp(u.FetchedAt))
		var backoff int64
		if u.State == store.StateFailed {
			backoff = u.Backoff.Milliseconds()
		}
		r.backoff, r.backoffMax = append(r.backoff, backoff), append(r.backoffMax, u.BackoffMax.Milliseconds())
	}
	args := make([][]any, len(rounds))
	for i, r := range rounds {
		order := hashOrder(r.hashes)
		args[i] = []any{permute(r.hashes, order), permute(r.states, order), permute(r.reasons, order),
			permute(r.statuses, order), permute(r.attempts, order), permute(r.fetched, order),
			permute(r.backoff, order), permute(r.backoffMax, order)}
	}
	return args
}

// hashOrder returns the indexes of hashes in hash order, the order the
// statements that update URLs lock their rows in (see qUpdateURLs).
func hashOrder(hashes []int64) []int {
	order := make([]int, len(hashes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(hashes[a], hashes[b]) })
	return order
}

// permute returns s reordered: element i of the result is s[order[i]].
func permute[T any](s []T, order []int) []T {
	out := make([]T, len(order))
	for i, j := range order {
		out[i] = s[j]
	}
	return out
}

// RecordExclusions inserts exclusions in one statement. A URL recorded already
// keeps its first reason and details; its count grows by one per sighting and its
// last sighting moves to the latest At. A zero Hash gets store.HashURL(URL), a zero
// At now, and a long URL is cut (Exclusion.Cut). Every exclusion needs a reason
// (DESIGN.md invariant 2).
func (db *DB) RecordExclusions(ctx context.Context, ex []store.Exclusion) error {
	if len(ex) == 0 {
		return nil
	}
	args, err := exclusionArgs(ex, time.Now())
	if err != nil {
		return fmt.Errorf("record exclusions: %w", err)
	}
	err = retry(ctx, func() error {
		_, err := db.pool.Exec(ctx, qRecordExclusions, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("record exclusions: %w", err)
	}
	return nil
}

// exclusionArgs returns the parameters of qRecordExclusions. Sightings of one URL
// in the batch fold into one row: the first one's details, a count, and the
// latest time.
func exclusionArgs(ex []store.Exclusion, now time.Time) ([]any, error) {
	type sighting struct {
		e           store.Exclusion
		first, last time.Time
		count       int32
	}
	var order []int64
	byHash := map[int64]*sighting{}
	for _, e := range ex {
		if e.Reason == "" {
			return nil, fmt.Errorf("%s has no reason", e.URL)
		}
		e.Cut()
		if e.Hash == 0 {
			e.Hash = store.HashURL(e.URL)
		}
		at := e.At
		if at.IsZero() {
			at = now
		}
		s := byHash[e.Hash]
		if s == nil {
			byHash[e.Hash] = &sighting{e: e, first: at, last: at, count: 1}
			order = append(order, e.Hash)
			continue
		}
		s.count++
		if at.After(s.last) {
			s.last = at
		}
	}
	n := len(order)
	var (
		hashes   = make([]int64, 0, n)
		addrs    = make([]string, 0, n)
		hosts    = make([]string, 0, n)
		reasons  = make([]string, 0, n)
		parents  = make([]string, 0, n)
		depths   = make([]int32, 0, n)
		crawlIDs = make([]string, 0, n)
		firsts   = make([]pgtype.Timestamptz, 0, n)
		lasts    = make([]pgtype.Timestamptz, 0, n)
		counts   = make([]int32, 0, n)
		cutFrom  = make([]int32, 0, n)
		hops     = make([]*int64, 0, n)
		origins  = make([]int64, 0, n)
		dupHops  = make([]int32, 0, n)
	)
	for _, h := range order {
		s := byHash[h]
		hashes, addrs, hosts = append(hashes, h), append(addrs, s.e.URL), append(hosts, s.e.Host)
		reasons, parents, depths = append(reasons, s.e.Reason), append(parents, s.e.Parent), append(depths, int32(s.e.Depth))
		crawlIDs, firsts, lasts = append(crawlIDs, s.e.CrawlID), append(firsts, timestamp(s.first)), append(lasts, timestamp(s.last))
		counts, cutFrom = append(counts, s.count), append(cutFrom, int32(s.e.CutFrom))
		h, o := s.e.ChainColumns()
		hops, origins, dupHops = append(hops, h), append(origins, o), append(dupHops, int32(s.e.DupHops))
	}
	return []any{hashes, addrs, hosts, reasons, parents, depths, crawlIDs, firsts, lasts, counts, cutFrom, hops, origins, dupHops}, nil
}

// ForgetExclusions deletes the exclusions of hashes in one statement; the
// exclusion counters follow through the schema's delete trigger.
func (db *DB) ForgetExclusions(ctx context.Context, hashes []int64) error {
	if len(hashes) == 0 {
		return nil
	}
	err := retry(ctx, func() error {
		_, err := db.pool.Exec(ctx, qForgetExclusions, hashes)
		return err
	})
	if err != nil {
		return fmt.Errorf("forget %d exclusions: %w", len(hashes), err)
	}
	return nil
}

// UnqueueURL deletes the row of hash if it is still queued, and takes it off
// its host's pages, in one statement; the URL counters and url_hashes follow
// through the schema's delete trigger.
func (db *DB) UnqueueURL(ctx context.Context, hash int64) (bool, error) {
	var gone bool
	err := retry(ctx, func() error {
		return db.pool.QueryRow(ctx, qUnqueueURL, hash).Scan(&gone)
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
	hosts := make([]string, len(from))
	ats := make([]pgtype.Timestamptz, len(from))
	after := make([]int64, len(from))
	for i, f := range from {
		// From the first: -infinity, before any first_at.
		hosts[i], ats[i], after[i] = f.Host, pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, f.Hash
		if !f.At.IsZero() {
			ats[i] = pgtype.Timestamptz{Time: f.At, Valid: true}
		}
	}
	held, err := queryAll(ctx, db, qHeldURLs, []any{hosts, ats, after, perHost}, func(rows pgx.Rows) (store.Exclusion, error) {
		var e store.Exclusion
		var at pgtype.Timestamptz
		var origin int64
		var hops *int64
		err := rows.Scan(&e.Hash, &e.URL, &e.Host, &e.Reason, &e.Parent, &e.Depth, &e.CrawlID, &at, &e.Seen, &hops, &origin, &e.DupHops)
		e.At, e.Chain = fromTimestamp(at), store.ChainOf(hops, origin)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("held urls of %d hosts: %w", len(hosts), err)
	}
	return held, nil
}
