package parser

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// batchDedupStore is the test's store with BatchDedup, answered one by one
// from the store underneath; it counts which way the parser asked.
type batchDedupStore struct {
	*sqlite.DB
	single, batches atomic.Int64
}

func (s *batchDedupStore) ContentOwner(ctx context.Context, sha []byte) (store.Capture, error) {
	s.single.Add(1)
	return s.DB.ContentOwner(ctx, sha)
}

func (s *batchDedupStore) NearDuplicate(ctx context.Context, fp uint64, maxDist int) (int64, int, bool, error) {
	s.single.Add(1)
	return s.DB.NearDuplicate(ctx, fp, maxDist)
}

func (s *batchDedupStore) ContentOwners(ctx context.Context, shas [][]byte) ([]store.Capture, error) {
	s.batches.Add(1)
	out := make([]store.Capture, len(shas))
	for i, sha := range shas {
		c, err := s.DB.ContentOwner(ctx, sha)
		switch {
		case err == nil:
			out[i] = c
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

func (s *batchDedupStore) NearDuplicates(ctx context.Context, fps []uint64, maxDist int) ([]int64, error) {
	s.batches.Add(1)
	out := make([]int64, len(fps))
	for i, fp := range fps {
		id, _, _, err := s.DB.NearDuplicate(ctx, fp, maxDist)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

// TestParserBatchDedup checks that a parser on a BatchDedup store asks it once
// per batch and never page by page, and still finds an exact and a near
// duplicate of a page stored by an earlier batch, and one within its batch.
func TestParserBatchDedup(t *testing.T) {
	e := testenv.New(t)
	st := &batchDedupStore{DB: e.DB}
	runParserOn(t, e, Config{RobotsAgent: "testbot", BatchSize: 50}, st)

	body := `<html><body><p>` + lorem(300, 3) + `</p></body></html>`
	nearBody := `<html><body><p>` + lorem(300, 3) + ` extra</p></body></html>`
	other := `<html><body><p>` + lorem(300, 4) + `</p></body></html>`
	urls := []string{"http://a.example/orig", "http://a.example/copy", "http://a.example/near", "http://a.example/other", "http://a.example/other-copy"}
	admit(t, e, urls...)
	produce(t, e, page("f1", urls[0], body, 200))
	testenv.Eventually(t, 20*time.Second, "the original stored", func() bool { return len(captures(t, e)) == 1 })
	produce(t, e, page("f2", urls[1], body, 200), page("f3", urls[2], nearBody, 200),
		page("f4", urls[3], other, 200), page("f5", urls[4], other, 200))
	testenv.Eventually(t, 20*time.Second, "5 captures", func() bool { return len(captures(t, e)) == 5 })

	caps := captures(t, e)
	orig := caps[urls[0]][0]
	if c := caps[urls[1]][0]; c.RevisitOf != orig.ID {
		t.Errorf("copy of a stored page: RevisitOf %d, want %d", c.RevisitOf, orig.ID)
	}
	if c := caps[urls[2]][0]; c.NearDupOf != orig.ID {
		t.Errorf("near copy of a stored page: NearDupOf %d, want %d", c.NearDupOf, orig.ID)
	}
	a, b := caps[urls[3]][0], caps[urls[4]][0]
	if a.RevisitOf != 0 {
		a, b = b, a
	}
	if a.RevisitOf != 0 || b.RevisitOf != a.ID {
		t.Errorf("copies within a batch: RevisitOf %d and %d, IDs %d and %d; want one original and one revisit of it", a.RevisitOf, b.RevisitOf, a.ID, b.ID)
	}
	if n := st.single.Load(); n != 0 {
		t.Errorf("%d look-ups page by page, want none", n)
	}
	// Each batch asks for digests and fingerprints once; the pages may come
	// in up to one batch each.
	if n := st.batches.Load(); n < 4 || n > 10 {
		t.Errorf("%d batch look-ups for 2 to 5 batches, want 2 per batch", n)
	}
}
