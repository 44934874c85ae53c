package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// A batch's edges are written in statements of every size from linkRows
// down to one; each page ends with exactly its last links, old ones gone.
func TestBatchLinks(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	targets := func(page, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = store.HashURL(fmt.Sprintf("http://t.example/%d/%d", page, i))
		}
		return out
	}
	sizes := []int{0, 1, 7, linkRows, linkRows + 3, 2*linkRows + 77}
	var urls []store.URL
	var caps []store.Capture
	for i, n := range sizes {
		u := storetest.URL(1, "links.example", fmt.Sprintf("/p%d", i))
		urls = append(urls, u)
		c := storetest.Capture(u, fmt.Sprint("f", i), fmt.Sprint("body", i), 0)
		c.OutLinks = targets(i, n)
		caps = append(caps, c)
	}
	if _, err := db.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	check := func(page int, want []int64) {
		t.Helper()
		l, err := db.Links(ctx, urls[page].Hash, 10_000)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]bool{}
		for _, o := range l.Out {
			got[o.Hash] = true
		}
		if l.OutCount != int64(len(want)) || len(got) != len(want) {
			t.Fatalf("page %d: %d out-links (count %d), want %d", page, len(got), l.OutCount, len(want))
		}
		for _, h := range want {
			if !got[h] {
				t.Fatalf("page %d: link %d missing", page, h)
			}
		}
	}
	for i, n := range sizes {
		check(i, targets(i, n))
	}
	// A second batch: page 5 gets new links (the old ones go), page 2 is
	// not parsed this time (nil keeps its links), page 3 loses all of them.
	re := []store.Capture{
		storetest.Capture(urls[5], "g5", "new body 5", 0),
		storetest.Capture(urls[2], "g2", "new body 2", 0),
		storetest.Capture(urls[3], "g3", "new body 3", 0),
	}
	re[0].OutLinks = targets(50, 5)
	re[2].OutLinks = []int64{}
	if err := db.AddCaptures(ctx, re); err != nil {
		t.Fatal(err)
	}
	check(5, targets(50, 5))
	check(2, targets(2, 7))
	check(3, nil)
}
