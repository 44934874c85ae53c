package embedded

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The in-memory index must answer exactly as the store's band table: same
// candidates, revisits excluded, lowest ID on ties, and it must survive a restart by
// loading what is stored.
func TestNearDupStoreMatchesStore(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	n, err := newNearDupStore(ctx, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	const fp = uint64(0xF0F0_1234_5678_9ABC)
	var urls []store.URL
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://a.example/3"} {
		urls = append(urls, store.URL{URL: u, Host: "a.example", Kind: store.KindPage, State: store.StateQueued})
	}
	if _, err := e.DB.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	caps := []store.Capture{
		{FetchID: "f1", URLHash: store.HashURL(urls[0].URL), URL: urls[0].URL, Status: 200, SimHash: fp},
		{FetchID: "f2", URLHash: store.HashURL(urls[1].URL), URL: urls[1].URL, Status: 200, SimHash: fp ^ 0b101},
		{FetchID: "f3", URLHash: store.HashURL(urls[2].URL), URL: urls[2].URL, Status: 200, SimHash: fp ^ 0xFF00, RevisitOf: 1},
	}
	if err := n.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	reload, err := newNearDupStore(ctx, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []uint64{fp, fp ^ 1, fp ^ 0b101, fp ^ 0b111, fp ^ 0xF, fp ^ 0xFF00, ^fp} {
		wantID, wantD, wantOK, err := e.DB.NearDuplicate(ctx, q, 3)
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range map[string]*nearDupStore{"live": n, "reloaded": reload} {
			id, d, ok, _ := s.NearDuplicate(ctx, q, 3)
			if id != wantID || d != wantD || ok != wantOK {
				t.Errorf("%s: NearDuplicate(%x) = %d,%d,%v; store says %d,%d,%v", name, q, id, d, ok, wantID, wantD, wantOK)
			}
		}
	}
}

// countingStore counts the exact-duplicate look-ups that reach the store.
type countingStore struct {
	store.Store
	owners int
}

func (c *countingStore) ContentOwner(ctx context.Context, sha []byte) (store.Capture, error) {
	c.owners++
	return c.Store.ContentOwner(ctx, sha)
}

// ContentOwner answers as the store does, live and after a restart, and asks
// the store only for digests it may hold.
func TestNearDupStoreContentOwner(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	counting := &countingStore{Store: e.DB}
	n, err := newNearDupStore(ctx, counting)
	if err != nil {
		t.Fatal(err)
	}
	digest := func(s string) []byte { d := sha256.Sum256([]byte(s)); return d[:] }
	var urls []store.URL
	for _, u := range []string{"http://b.example/1", "http://b.example/2"} {
		urls = append(urls, store.URL{URL: u, Host: "b.example", Kind: store.KindPage, State: store.StateQueued})
	}
	if _, err := e.DB.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	caps := []store.Capture{
		{FetchID: "g1", URL: urls[0].URL, Status: 200, ContentSHA256: digest("page one")},
		{FetchID: "g2", URL: urls[1].URL, Status: 404, ContentSHA256: digest("not found page")},
	}
	if err := n.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	reload, err := newNearDupStore(ctx, counting)
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"page one", "not found page", "never stored"} {
		want, wantErr := e.DB.ContentOwner(ctx, digest(content))
		for name, s := range map[string]*nearDupStore{"live": n, "reloaded": reload} {
			got, err := s.ContentOwner(ctx, digest(content))
			if got.ID != want.ID || errors.Is(err, store.ErrNotFound) != errors.Is(wantErr, store.ErrNotFound) {
				t.Errorf("%s: ContentOwner(%q) = %d, %v; store says %d, %v", name, content, got.ID, err, want.ID, wantErr)
			}
		}
	}
	counting.owners = 0
	for i := range 1000 {
		if _, err := n.ContentOwner(ctx, digest(fmt.Sprint("new content ", i))); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("new content %d: %v, want ErrNotFound", i, err)
		}
	}
	if counting.owners > 10 {
		t.Errorf("%d of 1000 new contents were looked up in the store, want about 1 (0.1%% false positives)", counting.owners)
	}
}
