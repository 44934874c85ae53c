package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/capturesql"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// StoredFetches reports for each fetch ID whether a capture with it exists.
func (db *DB) StoredFetches(ctx context.Context, fetchIDs []string) ([]bool, error) {
	stored, err := lookUp(ctx, db, qStoredFetches, fetchIDs, func(rows pgx.Rows) (string, bool, error) {
		var id string
		err := rows.Scan(&id)
		return id, true, err
	})
	if err != nil {
		return nil, fmt.Errorf("look up stored fetches: %w", err)
	}
	return stored, nil
}

// URLStates returns the state of each URL hash ("" when unknown).
func (db *DB) URLStates(ctx context.Context, hashes []int64) ([]store.State, error) {
	states, err := lookUp(ctx, db, qURLStates, hashes, func(rows pgx.Rows) (int64, store.State, error) {
		var h int64
		var s string
		err := rows.Scan(&h, &s)
		return h, store.State(s), err
	})
	if err != nil {
		return nil, fmt.Errorf("look up url states: %w", err)
	}
	return states, nil
}

// URLHistories returns what the store holds of each URL hash for change
// detection (State "" when unknown), in one look-up through url_hashes.
func (db *DB) URLHistories(ctx context.Context, hashes []int64) ([]store.URLHistory, error) {
	hists, err := lookUp(ctx, db, qURLHistories, hashes, func(rows pgx.Rows) (int64, store.URLHistory, error) {
		var h, fp int64
		var state, kind string
		var fetched, lastmod, seen pgtype.Timestamptz
		var u store.URLHistory
		var rc recrawlCols
		err := rows.Scan(append(append([]any{&h, &state, &kind, &u.Score, &fetched, &u.ContentSHA256, &fp}, rc.dest()...), &lastmod, &seen)...)
		u.State, u.Kind, u.FetchedAt, u.SimHash, u.Recrawl = store.State(state), urlkind.Of(kind), fromTimestamp(fetched), uint64(fp), rc.recrawl()
		u.SitemapLastMod, u.SitemapSeenAt = fromTimestamp(lastmod), fromTimestamp(seen)
		return h, u, err
	})
	if err != nil {
		return nil, fmt.Errorf("look up url histories: %w", err)
	}
	return hists, nil
}

// ConfirmedCapture returns the capture a 304 for the URL confirms: its newest
// status-200 capture with a WARC record, or the original that one revisits.
func (db *DB) ConfirmedCapture(ctx context.Context, urlHash int64) (store.Capture, error) {
	return db.capture(ctx, fmt.Sprintf("confirmed capture of url %d", urlHash), qConfirmedCapture, urlHash)
}

// Modified plans a visit at due, in one statement, for each URL a sitemap says
// changed after its stored copy was fetched, unless one is planned by then,
// and keeps the listings with their Seen on their URLs in another. A URL
// listed twice counts with its newest listing. It returns how many moved.
func (db *DB) Modified(ctx context.Context, mods []store.Modification, due time.Time) (int, error) {
	if len(mods) == 0 {
		return 0, nil
	}
	var hashes, seenHashes []int64
	var lastMods, seenLastMods, seen []pgtype.Timestamptz
	for _, m := range store.NewestListings(mods) {
		if !m.Seen.IsZero() {
			seenHashes = append(seenHashes, m.Hash)
			seenLastMods = append(seenLastMods, timestamp(m.LastMod))
			seen = append(seen, timestamp(m.Seen))
		}
		if !m.KeepPlan {
			hashes = append(hashes, m.Hash)
			lastMods = append(lastMods, timestamp(m.LastMod))
		}
	}
	if len(seenHashes) > 0 {
		if err := retry(ctx, func() error {
			_, err := db.pool.Exec(ctx, qListed, seenHashes, seenLastMods, seen)
			return err
		}); err != nil {
			return 0, fmt.Errorf("keep the sitemap listings of %d urls: %w", len(seenHashes), err)
		}
	}
	if len(hashes) == 0 {
		return 0, nil
	}
	var moved int64
	err := retry(ctx, func() error {
		tag, err := db.pool.Exec(ctx, qModified, hashes, lastMods, timestamp(due))
		moved = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("plan visits of %d modified urls: %w", len(hashes), err)
	}
	return int(moved), nil
}

// scanCapture scans a capture's columns, after lead's when a query has
// columns before them.
func scanCapture(row pgx.Row, lead ...any) (store.Capture, error) {
	var c store.Capture
	var fetched pgtype.Timestamptz
	var simhash, duration int64
	err := row.Scan(append(lead, capturesql.Dest(&c, &fetched, &simhash, &duration)...)...)
	c.FetchedAt, c.SimHash, c.Duration = fromTimestamp(fetched), uint64(simhash), time.Duration(duration)*time.Millisecond
	return c, err
}

// ContentOwner returns the first capture (lowest ID) with this content digest and
// status 200.
func (db *DB) ContentOwner(ctx context.Context, sha []byte) (store.Capture, error) {
	if len(sha) == 0 {
		return store.Capture{}, fmt.Errorf("content owner of an empty digest: %w", store.ErrNotFound)
	}
	return db.capture(ctx, fmt.Sprintf("content owner of %x", sha), qContentOwner, sha)
}

// capture runs a query of one capture; what names it in errors, which wrap
// store.ErrNotFound when there is none.
func (db *DB) capture(ctx context.Context, what, query string, arg any) (store.Capture, error) {
	c, err := scanCapture(db.pool.QueryRow(ctx, query, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Capture{}, fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	if err != nil {
		return store.Capture{}, fmt.Errorf("%s: %w", what, err)
	}
	return c, nil
}

// bands is how many 16-bit bands a fingerprint is cut into; see simhash_bands in
// migrations/postgres/0001_init.sql.
const bands = 4

// bandKey returns band i's key of fingerprint fp.
func bandKey(fp uint64, i int) int32 {
	return int32(uint16(fp >> (16 * i)))
}

// NearDuplicate returns the capture whose SimHash is closest to fp and within
// maxDist, the lowest ID among equally close ones. One query reads the candidates
// of all four bands from the index; their distances are computed here.
//
// The look-up is exact for maxDist up to 3: two fingerprints that far apart agree
// on at least one of the four bands. For a larger maxDist it finds only candidates
// that share a band, which misses some. A fingerprint of 0 (none) matches nothing.
func (db *DB) NearDuplicate(ctx context.Context, fp uint64, maxDist int) (int64, int, bool, error) {
	if fp == 0 || maxDist < 0 {
		return 0, 0, false, nil
	}
	var best closest
	best.reset(maxDist)
	err := db.queryRows(ctx, qBandCandidates,
		[]any{bandKey(fp, 0), bandKey(fp, 1), bandKey(fp, 2), bandKey(fp, 3)},
		func(rows pgx.Rows) error {
			var id, other int64
			if err := rows.Scan(&id, &other); err != nil {
				return err
			}
			best.offer(fp, id, other)
			return nil
		})
	if err != nil {
		return 0, 0, false, fmt.Errorf("near duplicate of %016x: %w", fp, err)
	}
	if best.id == 0 {
		return 0, 0, false, nil
	}
	return best.id, best.dist, true, nil
}

// closest is the best candidate of a near-duplicate look-up so far: the
// nearest within the distance, the lowest ID among equally near ones.
type closest struct {
	id   int64
	dist int
}

func (c *closest) reset(maxDist int) { c.id, c.dist = 0, maxDist+1 }

func (c *closest) offer(fp uint64, id, other int64) {
	d := bits.OnesCount64(fp ^ uint64(other))
	if d < c.dist || (d == c.dist && id < c.id) {
		c.id, c.dist = id, d
	}
}

// NearDuplicates is NearDuplicate for every fingerprint of fps in one query,
// the parser's batch at once: one round trip instead of one per page, which
// a parser otherwise waits for in turn. ids[i] is fps[i]'s answer, 0 for
// none (IDs start at 1).
func (db *DB) NearDuplicates(ctx context.Context, fps []uint64, maxDist int) ([]int64, error) {
	ids := make([]int64, len(fps))
	if maxDist < 0 {
		return ids, nil
	}
	type bandKeyPair struct {
		band int16
		key  int32
	}
	want := map[bandKeyPair][]int{} // band and key -> positions in fps
	var bandArg []int16
	var keyArg []int32
	for i, fp := range fps {
		if fp == 0 {
			continue
		}
		for b := range bands {
			k := bandKeyPair{int16(b), bandKey(fp, b)}
			if _, ok := want[k]; !ok {
				bandArg, keyArg = append(bandArg, k.band), append(keyArg, k.key)
			}
			want[k] = append(want[k], i)
		}
	}
	if len(bandArg) == 0 {
		return ids, nil
	}
	best := make([]closest, len(fps))
	for i := range best {
		best[i].reset(maxDist)
	}
	err := db.queryRows(ctx, qBandCandidatesBatch, []any{bandArg, keyArg}, func(rows pgx.Rows) error {
		var k bandKeyPair
		var id, other int64
		if err := rows.Scan(&k.band, &k.key, &id, &other); err != nil {
			return err
		}
		for _, i := range want[k] {
			best[i].offer(fps[i], id, other)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("near duplicates of %d fingerprints: %w", len(fps), err)
	}
	for i := range best {
		ids[i] = best[i].id
	}
	return ids, nil
}

// ContentOwners is ContentOwner for every digest of shas in one query (see
// NearDuplicates): owners[i] is shas[i]'s, the zero Capture (ID 0) for none.
func (db *DB) ContentOwners(ctx context.Context, shas [][]byte) ([]store.Capture, error) {
	owners := make([]store.Capture, len(shas))
	var arg [][]byte
	var pos []int
	for i, sha := range shas {
		if len(sha) > 0 {
			arg, pos = append(arg, sha), append(pos, i)
		}
	}
	if len(arg) == 0 {
		return owners, nil
	}
	err := db.queryRows(ctx, qContentOwners, []any{arg}, func(rows pgx.Rows) error {
		var ord int64
		c, err := scanCapture(rows, &ord)
		if err != nil {
			return err
		}
		if ord < 1 || int(ord) > len(pos) {
			return fmt.Errorf("content owner at position %d of %d", ord, len(pos))
		}
		owners[pos[ord-1]] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("content owners of %d digests: %w", len(arg), err)
	}
	return owners, nil
}

// AddCaptures stores captures in one statement; see store.CaptureStore. Besides
// the interface's contract, it records the content digest and SimHash on the URL
// row, counts the capture in fetch_count (and in change_count when the digest
// differs from the previous capture's) unless the capture carries a Schedule to
// write instead (see qAddCaptures), and leaves revisits (RevisitOf != 0) out of
// the near-duplicate index: their fingerprint is the original's, indexed already.
// IDs grow in batch order. A zero URLHash gets store.HashURL(URL).
func (db *DB) AddCaptures(ctx context.Context, caps []store.Capture) error {
	if len(caps) == 0 {
		return nil
	}
	args, err := captureArgs(caps)
	if err != nil {
		return fmt.Errorf("add captures: %w", err)
	}
	pages, from, to := linkArgs(caps)
	indexed := slices.ContainsFunc(caps, func(c store.Capture) bool { return c.Index != nil })
	var ids []int64
	err = retry(ctx, func() error {
		ids = make([]int64, len(caps))
		scan := func(rows pgx.Rows) error {
			var id, ord int64
			if err := rows.Scan(&id, &ord); err != nil {
				return err
			}
			ids[ord-1] = id
			return nil
		}
		if len(pages) == 0 && !indexed {
			return db.queryRows(ctx, qAddCaptures, args, scan)
		}
		// The pages' edges go in the captures' transaction, one round trip:
		// a replayed batch writes the same edges again, which changes nothing.
		// Index entries follow, once the captures' IDs are known.
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(qAddCaptures, args...).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					if err := scan(rows); err != nil {
						return err
					}
				}
				return rows.Err()
			})
			if len(pages) > 0 {
				b.Queue(qDeleteLinks, pages)
				b.Queue(qInsertLinks, from, to)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil || !indexed {
				return err
			}
			return searchsql.Write(ctx, controlTx{tx}, searchDialect, caps, ids)
		})
	})
	if err != nil {
		return fmt.Errorf("add captures: %w", err)
	}
	// Only a committed statement's IDs are real.
	for i := range caps {
		caps[i].ID = ids[i]
	}
	return nil
}

// captureArgs returns the parameters of qAddCaptures.
func captureArgs(caps []store.Capture) ([]any, error) {
	n := len(caps)
	var (
		fetchIDs   = make([]string, n)
		urlHashes  = make([]int64, n)
		addrs      = make([]string, n)
		fetched    = make([]pgtype.Timestamptz, n)
		statuses   = make([]int32, n)
		types      = make([]string, n)
		lengths    = make([]int64, n)
		truncated  = make([]string, n)
		warcFiles  = make([]string, n)
		offsets    = make([]int64, n)
		warcLens   = make([]int64, n)
		recordIDs  = make([]string, n)
		payloads   = make([]string, n)
		digests    = make([][]byte, n)
		simhashes  = make([]int64, n)
		revisitOf  = make([]int64, n)
		nearDupOf  = make([]int64, n)
		titles     = make([]string, n)
		descs      = make([]string, n)
		languages  = make([]string, n)
		canonicals = make([]string, n)
		noindex    = make([]bool, n)
		links      = make([]int32, n)
		etags      = make([]string, n)
		lastMods   = make([]string, n)
		changes    = make([]string, n)
		durations  = make([]int64, n)
		dropped    = make([]int32, n)
		schedules  = newRecrawlArrays(n)
		locations  = make([]string, n)
		kinds      = make([]string, n)
		docReasons = make([]string, n)
	)
	for i, c := range caps {
		if c.FetchID == "" {
			return nil, fmt.Errorf("capture of %s has no fetch ID", c.URL)
		}
		fetchIDs[i], urlHashes[i], addrs[i] = c.FetchID, c.URLHash, c.URL
		if urlHashes[i] == 0 {
			urlHashes[i] = store.HashURL(c.URL)
		}
		fetched[i], statuses[i], types[i], lengths[i] = timestamp(c.FetchedAt), int32(c.Status), c.ContentType, c.Length
		truncated[i], warcFiles[i], offsets[i], warcLens[i] = c.Truncated, c.WARCFile, c.WARCOffset, c.WARCLength
		recordIDs[i], payloads[i], simhashes[i] = c.WARCRecordID, c.PayloadDigest, int64(c.SimHash)
		if len(c.ContentSHA256) > 0 {
			digests[i] = c.ContentSHA256
		}
		revisitOf[i], nearDupOf[i], titles[i], descs[i] = c.RevisitOf, c.NearDupOf, c.Title, c.Description
		languages[i], canonicals[i], noindex[i], links[i] = c.Language, c.Canonical, c.NoIndex, int32(c.Links)
		etags[i], lastMods[i], changes[i], durations[i] = c.ETag, c.LastModified, c.Change, c.Duration.Milliseconds()
		dropped[i], locations[i], kinds[i], docReasons[i] = int32(c.LinksDropped), c.Location, c.Kind.String(), c.DocReason
		if c.Schedule != nil {
			schedules.set(i, *c.Schedule)
		}
	}
	return append([]any{fetchIDs, urlHashes, addrs, fetched, statuses, types, lengths, truncated, warcFiles, offsets,
		warcLens, recordIDs, payloads, digests, simhashes, revisitOf, nearDupOf, titles, descs, languages,
		canonicals, noindex, links, etags, lastMods, changes, durations, dropped}, append(schedules.args(), locations, kinds, docReasons)...), nil
}

// recrawlArrays are the schedule parameters of qAddCaptures: whether each
// capture has one, then one array per column of recrawlColumns.
type recrawlArrays struct {
	scheduled                        []bool
	next, lastChange, visited        []pgtype.Timestamptz
	fetches, changes, misses, streak []int32
	unchanged, changed               []int64 // milliseconds
	rate                             []float64
}

func newRecrawlArrays(n int) recrawlArrays {
	return recrawlArrays{
		scheduled: make([]bool, n),
		next:      make([]pgtype.Timestamptz, n), lastChange: make([]pgtype.Timestamptz, n), visited: make([]pgtype.Timestamptz, n),
		fetches: make([]int32, n), changes: make([]int32, n), misses: make([]int32, n), streak: make([]int32, n),
		unchanged: make([]int64, n), changed: make([]int64, n),
		rate: make([]float64, n),
	}
}

func (a recrawlArrays) set(i int, r store.Recrawl) {
	a.scheduled[i] = true
	a.next[i], a.lastChange[i], a.visited[i] = timestamp(r.NextFetchAt), timestamp(r.LastChangeAt), timestamp(r.LastVisitAt)
	a.fetches[i], a.changes[i], a.misses[i], a.streak[i] = int32(r.FetchCount), int32(r.ChangeCount), int32(r.Misses), int32(r.Streak)
	a.unchanged[i], a.changed[i] = r.Unchanged.Milliseconds(), r.ChangedTime.Milliseconds()
	a.rate[i] = r.ChangeRate
}

func (a recrawlArrays) args() []any {
	return []any{a.scheduled, a.next, a.fetches, a.changes, a.unchanged, a.changed, a.lastChange, a.visited,
		a.misses, a.streak, a.rate}
}
