package sqlite

import (
	"context"
	"database/sql"

	"github.com/crawlcluster/crawler/pkg/store"
)

// urlState is what the counters table counts of a URL row.
type urlState struct {
	state   string
	reason  string
	planned bool // next_fetch_at > 0: a visit is planned

	fetched int64 // fetched_at, which the counters do not count
	id      int64 // the row's, which the counters do not count either
}

// counted is s as the counters see it.
func (s urlState) counted() urlState {
	s.fetched, s.id = 0, 0
	return s
}

// urlCounts is what a transaction's URL inserts and state changes add to the
// counters table ("urls" by state, "reasons" of failed and excluded URLs,
// "scheduled": stored or failed URLs with a visit planned). Row triggers did
// this until migration 0004: two to four counter upserts per admitted URL and
// per state change were a sixth of the cost of admitting URLs and a fifth of
// storing captures; one upsert per counter per transaction replaces them.
type urlCounts map[[2]string]int64

func (c urlCounts) add(s urlState, n int64) {
	c[[2]string{"urls", s.state}] += n
	if s.state == string(store.StateFailed) || s.state == string(store.StateExcluded) {
		c[[2]string{"reasons", s.reason}] += n
	}
	if s.planned && (s.state == string(store.StateStored) || s.state == string(store.StateFailed)) {
		c[[2]string{"scheduled", ""}] += n
	}
}

// move counts a row that went from one state to another (nothing if neither
// state, reason nor planning changed, as the trigger did).
func (c urlCounts) move(from, to urlState) {
	if from.counted() != to.counted() {
		c.add(from, -1)
		c.add(to, 1)
	}
}

const qAddCounter = `INSERT INTO counters (name, key, n) VALUES (?, ?, ?)
	ON CONFLICT (name, key) DO UPDATE SET n = n + excluded.n`

// apply writes the counts in tx.
func (c urlCounts) apply(ctx context.Context, db *DB, tx *sql.Tx) error {
	if len(c) == 0 {
		return nil
	}
	st, err := db.stmt(ctx, tx, qAddCounter)
	if err != nil {
		return err
	}
	for k, n := range c {
		if n == 0 {
			continue
		}
		if _, err := st.ExecContext(ctx, k[0], k[1], n); err != nil {
			return err
		}
	}
	return nil
}

const qURLStateReasons = `SELECT hash, state, reason, next_fetch_at > 0, fetched_at, id FROM urls WHERE hash IN (%s)`

// urlStates reads, in tx, the state, reason, planning, fetch time and id of
// the rows of hashes that exist.
func urlStates(ctx context.Context, db *DB, tx *sql.Tx, hashes []int64) (map[int64]urlState, error) {
	out := make(map[int64]urlState, len(hashes))
	err := inChunks(ctx, db, tx, qURLStateReasons, hashes, func(rows *sql.Rows) error {
		var h int64
		var s urlState
		if err := rows.Scan(&h, &s.state, &s.reason, &s.planned, &s.fetched, &s.id); err != nil {
			return err
		}
		out[h] = s
		return nil
	})
	return out, err
}
