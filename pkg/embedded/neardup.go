package embedded

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/crawlcluster/crawler/pkg/seen"
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
//
// It also keeps a Bloom filter of the content digests of stored 200 captures,
// so the exact-duplicate look-up every stored page makes (ContentOwner) goes
// to the store only when the digest may be there: almost every page is new
// content, and the look-up was ~3% of the crawler's CPU.
type nearDupStore struct {
	store.Store
	idx      simhash.Index
	contents *seen.Filter
}

// contentFalsePositive is the share of new contents the filter sends to the
// store anyway; 0.1% costs ~1.8 bytes per capture.
const contentFalsePositive = 0.001

// newNearDupStore loads the fingerprints and digests of the captures already
// stored.
func newNearDupStore(ctx context.Context, st store.Store) (*nearDupStore, error) {
	n := &nearDupStore{Store: st, contents: seen.New(nil, seen.DefaultCapacity, contentFalsePositive)}
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
	if c.ID == 0 {
		return // not stored (a capture the store already had)
	}
	if c.SimHash != 0 && c.RevisitOf == 0 {
		n.idx.Add(c.SimHash, uint64(c.ID))
	}
	if c.Status == 200 && len(c.ContentSHA256) >= 8 {
		n.contents.Add(digestKey(c.ContentSHA256))
	}
}

func digestKey(sha []byte) int64 { return int64(binary.LittleEndian.Uint64(sha)) }

// ContentOwner asks the store only when the filter may hold the digest.
func (n *nearDupStore) ContentOwner(ctx context.Context, sha []byte) (store.Capture, error) {
	if len(sha) >= 8 && !n.contents.MayContain(digestKey(sha)) {
		return store.Capture{}, store.ErrNotFound
	}
	return n.Store.ContentOwner(ctx, sha)
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
