package embedded

import (
	"context"
	"fmt"

	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/store"
)

// nearDupStore answers near-duplicate look-ups from an in-memory banded index
// instead of four SQL queries per page, and the SQLite store keeps no band table
// (sqlite.WithoutNearDupIndex). Every capture this process stores passes through
// AddCaptures, so the index holds what a band table would (same rule: originals
// with a fingerprint, not revisits; ties to the lowest ID, which is the first
// added), and it is rebuilt from the captures' fingerprints at start.
// simhash.Index is safe for concurrent use, so the process's parsers share it;
// as in a cluster, two near-duplicates in two parsers' concurrent batches are
// not matched with each other.
type nearDupStore struct {
	store.Store
	idx simhash.Index
}

// newNearDupStore loads the fingerprints of the captures already stored.
func newNearDupStore(ctx context.Context, st store.Store) (*nearDupStore, error) {
	n := &nearDupStore{Store: st}
	err := st.Captures(ctx, func(c store.Capture) error {
		n.add(c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load near-duplicate index: %w", err)
	}
	return n, nil
}

func (n *nearDupStore) add(c store.Capture) {
	if c.ID != 0 && c.SimHash != 0 && c.RevisitOf == 0 {
		n.idx.Add(c.SimHash, uint64(c.ID))
	}
}

func (n *nearDupStore) NearDuplicate(_ context.Context, fp uint64, maxDist int) (int64, int, bool, error) {
	id, d, ok := n.idx.Near(fp, maxDist)
	return int64(id), d, ok, nil
}

func (n *nearDupStore) AddCaptures(ctx context.Context, caps []store.Capture) error {
	if err := n.Store.AddCaptures(ctx, caps); err != nil {
		return err
	}
	for _, c := range caps {
		n.add(c)
	}
	return nil
}
