package parser

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/store"
)

// BatchDedup is a store that answers the dedup look-ups of a whole batch in
// one query each (the cluster's PostgreSQL). A parser walks its batch in
// order and, without it, waits for two round trips per page: on the medium
// bench that was ~100,000 statements for 50,500 pages, and the parsers spent
// most of each batch waiting on them while the fetchers held for the parsers'
// backlog. The answers are the same: nothing the batch stores is visible to
// its own look-ups either way.
type BatchDedup interface {
	// ContentOwners is store.CaptureStore's ContentOwner for each digest:
	// owners[i] is shas[i]'s, the zero Capture (ID 0) for none.
	ContentOwners(ctx context.Context, shas [][]byte) ([]store.Capture, error)
	// NearDuplicates is NearDuplicate for each fingerprint: ids[i] is
	// fps[i]'s, 0 for none.
	NearDuplicates(ctx context.Context, fps []uint64, maxDist int) ([]int64, error)
}

// dedupAnswers are a batch's dedup look-ups, asked before the batch is
// walked. A digest or fingerprint that was asked is in its map, with a zero
// answer for none; one that was not goes to the store on its own.
type dedupAnswers struct {
	owners map[[32]byte]store.Capture
	near   map[uint64]int64
}

// lookUpBatch asks a BatchDedup store about every digest and fingerprint the
// batch's stored pages may look up; nil (ask page by page) for other stores,
// such as the embedded crawler's, which answers from memory.
func (p *Parser) lookUpBatch(ctx context.Context, keep []bool, found []analysis) (*dedupAnswers, error) {
	bd, ok := p.store.(BatchDedup)
	if !ok {
		return nil, nil
	}
	a := &dedupAnswers{owners: map[[32]byte]store.Capture{}, near: map[uint64]int64{}}
	var shas [][]byte
	var fps []uint64
	for i := range found {
		f := &found[i]
		if !keep[i] {
			continue
		}
		if _, dup := a.owners[f.sha]; f.hasSHA && !dup {
			a.owners[f.sha] = store.Capture{}
			shas = append(shas, f.sha[:])
		}
		if _, dup := a.near[f.simhash]; f.simhash != 0 && !dup {
			a.near[f.simhash] = 0
			fps = append(fps, f.simhash)
		}
	}
	if len(shas) > 0 {
		owners, err := bd.ContentOwners(ctx, shas)
		if err != nil {
			return nil, fmt.Errorf("look up content owners: %w", err)
		}
		for i, c := range owners {
			a.owners[[32]byte(shas[i])] = c
		}
	}
	if len(fps) > 0 {
		start := time.Now()
		ids, err := bd.NearDuplicates(ctx, fps, simhash.MaxDistance)
		p.metrics.storeSeconds.WithLabelValues("near_duplicate").Observe(time.Since(start).Seconds())
		if err != nil {
			return nil, fmt.Errorf("near-duplicate look-up: %w", err)
		}
		for i, id := range ids {
			a.near[fps[i]] = id
		}
	}
	return a, nil
}

// contentOwner is the store's ContentOwner, from the batch's answers when
// they hold the digest.
func (p *Parser) contentOwner(ctx context.Context, a *dedupAnswers, sha [32]byte) (store.Capture, error) {
	if a != nil {
		if c, ok := a.owners[sha]; ok {
			if c.ID == 0 {
				return c, store.ErrNotFound
			}
			return c, nil
		}
	}
	return p.store.ContentOwner(ctx, sha[:])
}

// nearDuplicate is the store's NearDuplicate at simhash.MaxDistance, from the
// batch's answers when they hold the fingerprint.
func (p *Parser) nearDuplicate(ctx context.Context, a *dedupAnswers, fp uint64) (int64, bool, error) {
	if a != nil {
		if id, ok := a.near[fp]; ok {
			return id, id != 0, nil
		}
	}
	start := time.Now()
	id, _, ok, err := p.store.NearDuplicate(ctx, fp, simhash.MaxDistance)
	p.metrics.storeSeconds.WithLabelValues("near_duplicate").Observe(time.Since(start).Seconds())
	return id, ok, err
}
