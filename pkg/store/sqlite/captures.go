package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/capturesql"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// StoredFetches reports for each fetch ID whether a capture with it exists.
func (db *DB) StoredFetches(ctx context.Context, fetchIDs []string) ([]bool, error) {
	stored := make([]bool, len(fetchIDs))
	if len(fetchIDs) == 0 {
		return stored, nil
	}
	at := positions(fetchIDs)
	err := inChunks(ctx, db, nil, qStoredFetches, fetchIDs, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		for _, i := range at[id] {
			stored[i] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up stored fetches: %w", err)
	}
	return stored, nil
}

// URLStates returns the state of each URL hash ("" when unknown).
func (db *DB) URLStates(ctx context.Context, hashes []int64) ([]store.State, error) {
	states := make([]store.State, len(hashes))
	if len(hashes) == 0 {
		return states, nil
	}
	at := positions(hashes)
	err := inChunks(ctx, db, nil, qURLStates, hashes, func(rows *sql.Rows) error {
		var h int64
		var s string
		if err := rows.Scan(&h, &s); err != nil {
			return err
		}
		for _, i := range at[h] {
			states[i] = store.State(s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up url states: %w", err)
	}
	return states, nil
}

// URLHistories returns what the store holds of each URL for change detection.
func (db *DB) URLHistories(ctx context.Context, hashes []int64) ([]store.URLHistory, error) {
	out := make([]store.URLHistory, len(hashes))
	at := positions(hashes)
	// One set of destinations for all rows: building them per row (the
	// slice and every variable it points to) was ~1.3 KB a crawled page.
	// Scan sets every one of them, and each field of u is set from them.
	var h int64
	var state, kind string
	var fetched, fp, lastmod, seen int64
	var u store.URLHistory
	var rc recrawlCols
	dest := append(append([]any{&h, &state, &kind, &u.Score, &fetched, &u.ContentSHA256, &fp}, rc.dest()...), &lastmod, &seen)
	err := inChunks(ctx, db, nil, qURLHistories, hashes, func(rows *sql.Rows) error {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		u.State, u.Kind, u.FetchedAt, u.SimHash, u.Recrawl = store.State(state), urlkind.Of(kind), fromMillis(fetched), uint64(fp), rc.recrawl()
		u.SitemapLastMod, u.SitemapSeenAt = fromMillis(lastmod), fromMillis(seen)
		for _, i := range at[h] {
			out[i] = u
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up url histories: %w", err)
	}
	return out, nil
}

// ConfirmedCapture returns the capture a 304 for the URL confirms.
func (db *DB) ConfirmedCapture(ctx context.Context, urlHash int64) (store.Capture, error) {
	c, err := scanCapture(db.r.QueryRowContext(ctx, qConfirmedCapture, urlHash))
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("confirmed capture of url %d: %w", urlHash, err)
	}
	return c, nil
}

// Modified plans a visit at due for URLs a sitemap says changed, and keeps
// the listings with their Seen on their URLs.
func (db *DB) Modified(ctx context.Context, mods []store.Modification, due time.Time) (int, error) {
	if len(mods) == 0 {
		return 0, nil
	}
	mods = store.NewestListings(mods)
	var moved int
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		moved = 0
		st, err := db.stmt(ctx, tx, qModified)
		if err != nil {
			return err
		}
		listed, err := db.stmt(ctx, tx, qListed)
		if err != nil {
			return err
		}
		hashes := make([]int64, len(mods))
		for i, m := range mods {
			hashes[i] = m.Hash
		}
		states, err := urlStates(ctx, db, tx, hashes)
		if err != nil {
			return fmt.Errorf("read states: %w", err)
		}
		counts := urlCounts{}
		for _, m := range mods {
			if !m.Seen.IsZero() {
				if _, err := listed.ExecContext(ctx, millis(m.LastMod), millis(m.Seen), m.Hash, millis(m.Seen), millis(m.LastMod)); err != nil {
					return fmt.Errorf("url %d: %w", m.Hash, err)
				}
			}
			if m.KeepPlan {
				continue
			}
			res, err := st.ExecContext(ctx, millis(due), m.Hash, millis(m.LastMod), millis(due))
			if err != nil {
				return fmt.Errorf("url %d: %w", m.Hash, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n > 0 {
				from := states[m.Hash]
				to := urlState{state: from.state, reason: from.reason, planned: millis(due) > 0}
				counts.move(from, to)
				states[m.Hash] = to
			}
			moved += int(n)
		}
		return counts.apply(ctx, db, tx)
	})
	if err != nil {
		return 0, fmt.Errorf("plan visits of modified urls: %w", err)
	}
	return moved, nil
}

func scanCapture(rows interface{ Scan(...any) error }) (store.Capture, error) {
	var c store.Capture
	var fetched, simhash, duration int64
	err := rows.Scan(capturesql.Dest(&c, &fetched, &simhash, &duration)...)
	c.FetchedAt, c.SimHash, c.Duration = fromMillis(fetched), uint64(simhash), time.Duration(duration)*time.Millisecond
	return c, err
}

// ContentOwner returns the first capture (lowest ID) with this content digest and
// status 200.
func (db *DB) ContentOwner(ctx context.Context, sha []byte) (store.Capture, error) {
	if len(sha) == 0 {
		return store.Capture{}, fmt.Errorf("content owner of an empty digest: %w", store.ErrNotFound)
	}
	row := db.contentOwner.QueryRowContext(ctx, sha)
	c, err := scanCapture(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Capture{}, fmt.Errorf("content owner of %x: %w", sha, store.ErrNotFound)
	}
	if err != nil {
		return store.Capture{}, fmt.Errorf("content owner of %x: %w", sha, err)
	}
	return c, nil
}

// bands is how many 16-bit bands a fingerprint is cut into; see simhash_bands in
// migrations/sqlite/0001_init.sql.
const bands = 4

// bandKey returns band i's key of fingerprint fp.
func bandKey(fp uint64, i int) int64 {
	return int64(uint16(fp >> (16 * i)))
}

// NearDuplicate returns the capture whose SimHash is closest to fp and within
// maxDist, the lowest ID among equally close ones. It makes one primary-key look-up
// per band and compares the candidates' fingerprints in Go.
//
// The look-up is exact for maxDist up to 3: two fingerprints that far apart agree
// on at least one of the four bands. For a larger maxDist it finds only candidates
// that share a band, which misses some. A fingerprint of 0 (none) matches nothing.
func (db *DB) NearDuplicate(ctx context.Context, fp uint64, maxDist int) (int64, int, bool, error) {
	if db.noBands {
		return 0, 0, false, ErrNoNearDupIndex
	}
	if fp == 0 || maxDist < 0 {
		return 0, 0, false, nil
	}
	bestID, bestDist := int64(0), maxDist+1
	for band := range bands {
		err := func() error {
			rows, err := db.bandCandidates.QueryContext(ctx, band, bandKey(fp, band))
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, other int64
				if err := rows.Scan(&id, &other); err != nil {
					return err
				}
				// Rows come by ID: past an exact match, nothing in this band can win.
				if bestDist == 0 && id > bestID {
					break
				}
				d := bits.OnesCount64(fp ^ uint64(other))
				if d < bestDist || (d == bestDist && id < bestID) {
					bestID, bestDist = id, d
				}
			}
			return rows.Err()
		}()
		if err != nil {
			return 0, 0, false, fmt.Errorf("near duplicate of %016x: %w", fp, err)
		}
	}
	if bestID == 0 {
		return 0, 0, false, nil
	}
	return bestID, bestDist, true, nil
}

// AddCaptures stores captures in one transaction; see store.CaptureStore. Besides
// the interface's contract, it records the content digest and SimHash on the URL
// row, counts the capture in fetch_count (and in change_count when the digest
// differs from the previous capture's), and leaves revisits (RevisitOf != 0) out of
// the near-duplicate index: their fingerprint is the original's, indexed already. A
// zero URLHash gets store.HashURL(URL).
func (db *DB) AddCaptures(ctx context.Context, caps []store.Capture) error {
	if len(caps) == 0 {
		return nil
	}
	for _, c := range caps {
		if c.FetchID == "" {
			return fmt.Errorf("add captures: capture of %s has no fetch ID", c.URL)
		}
	}
	ids := make([]int64, len(caps))
	var counts [4]int64 // captures, revisits, near_dups, content_len of the rows inserted
	extras := newCaptureExtras()
	err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		ins, err := db.stmt(ctx, tx, qInsertCapture)
		if err != nil {
			return err
		}
		defer ins.Close()
		band, err := db.stmt(ctx, tx, qInsertBands)
		if err != nil {
			return err
		}
		defer band.Close()
		upd, err := db.stmt(ctx, tx, qStoreURL)
		if err != nil {
			return err
		}
		defer upd.Close()
		sched, err := db.stmt(ctx, tx, qStoreURLScheduled)
		if err != nil {
			return err
		}
		defer sched.Close()
		updSame, err := db.stmt(ctx, tx, qStoreURLSameTime)
		if err != nil {
			return err
		}
		defer updSame.Close()
		schedSame, err := db.stmt(ctx, tx, qStoreURLScheduledSameTime)
		if err != nil {
			return err
		}
		defer schedSame.Close()
		urlHashes := make([]int64, len(caps))
		for i, c := range caps {
			urlHashes[i] = c.URLHash
			if urlHashes[i] == 0 {
				urlHashes[i] = store.HashURL(c.URL)
			}
		}
		states, err := urlStates(ctx, db, tx, urlHashes)
		if err != nil {
			return fmt.Errorf("read url states: %w", err)
		}
		moves := urlCounts{}
		var links batchLinks

		for i := range caps {
			c := &caps[i]
			urlHash := urlHashes[i]
			var sha any
			if len(c.ContentSHA256) > 0 {
				sha = c.ContentSHA256
			}
			fp := int64(c.SimHash)
			fetched := millis(c.FetchedAt)
			res, err := ins.ExecContext(ctx, c.FetchID, urlHash, c.URL, fetched, c.Status, c.ContentType,
				c.Length, c.Truncated, c.WARCFile, c.WARCOffset, c.WARCLength, c.WARCRecordID, c.PayloadDigest,
				sha, fp, c.RevisitOf, c.NearDupOf, c.Title, c.Description, c.Language, c.Canonical, c.NoIndex,
				c.Links, c.ETag, c.LastModified, c.Change, c.Duration.Milliseconds(), c.LinksDropped, c.Location, c.Kind.String(),
				c.DocReason)
			if err != nil {
				return fmt.Errorf("insert capture %s: %w", c.FetchID, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				continue // stored already, by an earlier run of this batch
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			ids[i] = id
			counts[0]++
			if c.RevisitOf != 0 {
				counts[1]++
			}
			if c.NearDupOf != 0 {
				counts[2]++
			}
			counts[3] += c.Length
			extras.add(c)
			if id := states[urlHash].id; id != 0 { // a page's row is gone only if unqueued while fetched
				links.add(linkPage{id: id, hash: urlHash}, c.OutLinks)
			}
			if c.SimHash != 0 && c.RevisitOf == 0 && !db.noBands {
				if _, err := band.ExecContext(ctx,
					bandKey(c.SimHash, 0), id, fp, bandKey(c.SimHash, 1), id, fp,
					bandKey(c.SimHash, 2), id, fp, bandKey(c.SimHash, 3), id, fp); err != nil {
					return fmt.Errorf("index simhash of capture %s: %w", c.FetchID, err)
				}
			}
			stored := urlState{state: string(store.StateStored), planned: states[urlHash].planned, fetched: fetched, id: states[urlHash].id}
			same := states[urlHash].fetched == fetched
			if c.Schedule != nil {
				args := append([]any{fetched, c.Status, c.ETag, c.LastModified, sha, fp, fp}, recrawlArgs(*c.Schedule)...)
				args = append(args, urlHash)
				if same {
					res, err = schedSame.ExecContext(ctx, args[1:]...)
				} else {
					res, err = sched.ExecContext(ctx, args...)
				}
				stored.planned = millis(c.Schedule.NextFetchAt) > 0
			} else {
				args := []any{fetched, c.Status, c.ETag, c.LastModified, sha, sha, fp, urlHash}
				if same {
					res, err = updSame.ExecContext(ctx, args[1:]...)
				} else {
					res, err = upd.ExecContext(ctx, args...)
				}
			}
			if err != nil {
				return fmt.Errorf("mark url of capture %s stored: %w", c.FetchID, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				moves.move(states[urlHash], stored)
				states[urlHash] = stored
			}
		}
		if err := links.write(ctx, db, tx); err != nil {
			return err
		}
		if err := searchsql.Write(ctx, &searchTx{db: db, tx: tx}, searchDialect, caps, ids); err != nil {
			return err
		}
		if err := moves.apply(ctx, db, tx); err != nil {
			return fmt.Errorf("count url states: %w", err)
		}
		if err := extras.apply(ctx, db, tx); err != nil {
			return fmt.Errorf("count captures by status and segment: %w", err)
		}
		if counts[0] == 0 {
			return nil
		}
		cnt, err := db.stmt(ctx, tx, qCountCaptures)
		if err != nil {
			return err
		}
		if _, err := cnt.ExecContext(ctx, counts[0], counts[1], counts[2], counts[3]); err != nil {
			return fmt.Errorf("count captures: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add captures: %w", err)
	}
	// Only a committed transaction's IDs are real.
	texts := 0
	for i := range caps {
		caps[i].ID = ids[i]
		if ids[i] != 0 && caps[i].Index != nil && !caps[i].Index.Remove {
			texts++
		}
	}
	db.indexed(texts)
	return nil
}
