package sqlite

import (
	"context"
	"database/sql"
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

// In-links are found while pending and after the merge into the index, and
// a page's replaced links leave both.
func TestInLinksMerge(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	target := store.HashURL("http://t.example/")
	a := storetest.URL(1, "a.example", "/")
	b := storetest.URL(2, "b.example", "/")
	if _, err := db.AdmitURLs(ctx, []store.URL{a, b}); err != nil {
		t.Fatal(err)
	}
	ca, cb := storetest.Capture(a, "fa", "a", 0), storetest.Capture(b, "fb", "b", 0)
	ca.OutLinks, cb.OutLinks = []int64{target}, []int64{target, 42}
	if err := db.AddCaptures(ctx, []store.Capture{ca, cb}); err != nil {
		t.Fatal(err)
	}
	in := func(when string, want int64, wantHosts int64) {
		t.Helper()
		l, err := db.Links(ctx, target, 10)
		if err != nil {
			t.Fatal(err)
		}
		if l.InCount != want || int64(len(l.In)) != want || l.InHosts != wantHosts {
			t.Errorf("%s: %d in-links (%d listed) from %d hosts, want %d from %d", when, l.InCount, len(l.In), l.InHosts, want, wantHosts)
		}
	}
	pending := func() int64 {
		var n int64
		if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM links_pending`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	in("pending", 2, 2)
	if n := pending(); n != 3 {
		t.Fatalf("%d edges pending, want 3", n)
	}
	if err := db.write(ctx, func(ctx context.Context, tx *sql.Tx) error { return mergeLinks(ctx, db, tx, 1) }); err != nil {
		t.Fatal(err)
	}
	if n := pending(); n != 0 {
		t.Fatalf("%d edges pending after the merge", n)
	}
	in("merged", 2, 2)
	// a's new copy links elsewhere: its edge leaves the index.
	ca2 := storetest.Capture(a, "fa2", "a again", 0)
	ca2.OutLinks = []int64{7}
	if err := db.AddCaptures(ctx, []store.Capture{ca2}); err != nil {
		t.Fatal(err)
	}
	in("after a's links changed", 1, 1)
	// b's page is re-parsed before a merge: its pending and indexed edges go.
	cb2 := storetest.Capture(b, "fb2", "b again", 0)
	cb2.OutLinks = []int64{}
	if err := db.AddCaptures(ctx, []store.Capture{cb2}); err != nil {
		t.Fatal(err)
	}
	in("after b's links went", 0, 0)
}
