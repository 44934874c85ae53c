package fetcher

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// TestHeldReaderPasses: a host's held URLs are read in passes from the
// first, each read going on after the last URL of the one before while
// reads come back full; a pass that ends starts over from the first only
// if URLs spilled past the parking bound while it was under way (they may
// be behind its cursor), so a host whose budgets hold nothing new is read
// once and left alone.
func TestHeldReaderPasses(t *testing.T) {
	const host, perHost = "a.example", 2
	at := time.Unix(1000, 0)
	url := func(i int) store.Exclusion {
		return store.Exclusion{Host: host, Hash: int64(i), At: at.Add(time.Duration(i) * time.Second)}
	}
	var r heldReader
	if from := r.next(host, 5); from != (store.HeldFrom{Host: host}) {
		t.Fatalf("first read from %+v, want the first", from)
	}
	if !r.done(perHost, perHost, url(2), 5) {
		t.Fatal("a full read: no more to read")
	}
	if from := r.next(host, 5); from != store.HeldAfter(url(2)) {
		t.Fatalf("second read from %+v, want after the first read's last", from)
	}
	// Three URLs spill while the pass goes on; its last read finds the
	// end.
	if !r.done(1, perHost, url(3), 8) {
		t.Fatal("a pass that ended with URLs spilled during it: not read again")
	}
	if from := r.next(host, 8); from != (store.HeldFrom{Host: host}) {
		t.Fatalf("after the pass, read from %+v, want the first", from)
	}
	// A pass during which nothing spilled ends the reads.
	if r.done(0, perHost, store.Exclusion{}, 8) {
		t.Error("a pass with nothing spilled during it: read again")
	}
	if from := r.next(host, 8); from != (store.HeldFrom{Host: host}) {
		t.Errorf("a read after the end from %+v, want the first", from)
	}
}

// TestAllHeld: a host whose rewrite stopped holding URLs that only the
// store has is read whole, in reads of the parking bound, every URL once,
// first held first, whatever the other hosts hold.
func TestAllHeld(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Unix(1000, 0)
	var held []store.Exclusion
	for i := range 7 {
		for _, host := range []string{"a.example", "b.example"} {
			// Two in each instant: the reads go on after a URL, not a time.
			held = append(held, store.Exclusion{URL: fmt.Sprintf("http://%s/v/%d?sid=1", host, i), Host: host,
				Reason: "dust_rewrite", At: at.Add(time.Duration(i/2) * time.Second)})
		}
	}
	if err := db.RecordExclusions(ctx, held); err != nil {
		t.Fatal(err)
	}
	f := &Fetcher{store: db}
	for _, perHost := range []int{1, 2, 7, 8} {
		all, err := f.allHeld(ctx, "a.example", perHost)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range all {
			got = append(got, e.URL)
		}
		var want []string
		for i := range 7 {
			want = append(want, fmt.Sprintf("http://a.example/v/%d?sid=1", i))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("reads of %d: %v, want %v", perHost, got, want)
		}
	}
}
