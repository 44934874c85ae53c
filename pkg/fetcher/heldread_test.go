package fetcher

import (
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
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
