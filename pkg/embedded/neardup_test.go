package embedded

import (
	"context"
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
