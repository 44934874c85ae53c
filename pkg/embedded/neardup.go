package embedded

import (
	"context"
	"fmt"

	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/store"
)

// nearDupStore answers near-duplicate look-ups from an in-memory banded index
// instead of four SQL queries per page. That is only right with a single parser,
// which the embedded mode has: every capture this process stores passes through
// AddCaptures, so the index stays exactly what the store's band table holds (same
// rule: originals with a fingerprint, not revisits; ties to the lowest ID, which is
// the first added). Clusters keep the store's index, shared by all parsers.
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
