package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/crawlcluster/crawler/pkg/store"
)

// StoredFetches reports for each fetch ID whether a capture with it exists.
func (db *DB) StoredFetches(ctx context.Context, fetchIDs []string) ([]bool, error) {
	stored := make([]bool, len(fetchIDs))
	if len(fetchIDs) == 0 {
		return stored, nil
	}
	at := positions(fetchIDs)
	err := db.queryRows(ctx, qStoredFetches, []any{fetchIDs}, func(rows pgx.Rows) error {
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
	err := db.queryRows(ctx, qURLStates, []any{hashes}, func(rows pgx.Rows) error {
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

func scanCapture(row pgx.Row) (store.Capture, error) {
	var c store.Capture
	var fetched pgtype.Timestamptz
	var simhash int64
	err := row.Scan(&c.ID, &c.FetchID, &c.URLHash, &c.URL, &fetched, &c.Status, &c.ContentType, &c.Length,
		&c.Truncated, &c.WARCFile, &c.WARCOffset, &c.WARCLength, &c.WARCRecordID, &c.PayloadDigest,
		&c.ContentSHA256, &simhash, &c.RevisitOf, &c.NearDupOf, &c.Title, &c.Description, &c.Language,
		&c.Canonical, &c.NoIndex, &c.Links, &c.ETag, &c.LastModified)
	c.FetchedAt, c.SimHash = fromTimestamp(fetched), uint64(simhash)
	return c, err
}

// ContentOwner returns the first capture (lowest ID) with this content digest and
// status 200.
func (db *DB) ContentOwner(ctx context.Context, sha []byte) (store.Capture, error) {
	if len(sha) == 0 {
		return store.Capture{}, fmt.Errorf("content owner of an empty digest: %w", store.ErrNotFound)
	}
	c, err := scanCapture(db.pool.QueryRow(ctx, qContentOwner, sha))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Capture{}, fmt.Errorf("content owner of %x: %w", sha, store.ErrNotFound)
	}
	if err != nil {
		return store.Capture{}, fmt.Errorf("content owner of %x: %w", sha, err)
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
	bestID, bestDist := int64(0), maxDist+1
	err := db.queryRows(ctx, qBandCandidates,
		[]any{bandKey(fp, 0), bandKey(fp, 1), bandKey(fp, 2), bandKey(fp, 3)},
		func(rows pgx.Rows) error {
			var id, other int64
			if err := rows.Scan(&id, &other); err != nil {
				return err
			}
			d := bits.OnesCount64(fp ^ uint64(other))
			if d < bestDist || (d == bestDist && id < bestID) {
				bestID, bestDist = id, d
			}
			return nil
		})
	if err != nil {
		return 0, 0, false, fmt.Errorf("near duplicate of %016x: %w", fp, err)
	}
	if bestID == 0 {
		return 0, 0, false, nil
	}
	return bestID, bestDist, true, nil
}

// AddCaptures stores captures in one statement; see store.CaptureStore. Besides
// the interface's contract, it records the content digest and SimHash on the URL
// row, counts the capture in fetch_count (and in change_count when the digest
// differs from the previous capture's), and leaves revisits (RevisitOf != 0) out of
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
	var ids []int64
	err = retry(ctx, func() error {
		ids = make([]int64, len(caps))
		return db.queryRows(ctx, qAddCaptures, args, func(rows pgx.Rows) error {
			var id, ord int64
			if err := rows.Scan(&id, &ord); err != nil {
				return err
			}
			ids[ord-1] = id
			return nil
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
		etags[i], lastMods[i] = c.ETag, c.LastModified
	}
	return []any{fetchIDs, urlHashes, addrs, fetched, statuses, types, lengths, truncated, warcFiles, offsets,
		warcLens, recordIDs, payloads, digests, simhashes, revisitOf, nearDupOf, titles, descs, languages,
		canonicals, noindex, links, etags, lastMods}, nil
}
