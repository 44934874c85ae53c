package cluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
)

// A fetcher killed or paused mid-crawl leaves pages it requested but whose
// results were not yet durable: they are fetched again by the next owner of
// their hosts. How many depends on the machine's load (a parser batch, the
// store's round trips, the fetcher's state-save interval), so the tests do
// not bound their number; they read the store at the fault and allow a
// repeat only of a page that was not stored then.

// storedResources returns the resources (synthweb.Request.Resource) the
// store holds a capture of now.
func storedResources(t *testing.T, st store.Store) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := st.Captures(context.Background(), func(cp store.Capture) error {
		out[resourceOf(cp.URL)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resourceOf turns a captured URL into the web's resource name.
func resourceOf(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	i := strings.IndexAny(rest, "/?")
	if i < 0 {
		i = len(rest)
	}
	canon, _ := synthweb.CanonicalTarget(rest[i:])
	return rest[:i] + canon
}

// faultWindow is what a fault at At may cost in repeated fetches: pages
// requested before it (by UserAgent, when set) and not stored at it, fetched
// again after it.
type faultWindow struct {
	At        time.Time
	Sent      time.Time // the first request is one sent before this; At if zero
	UserAgent string
	Stored    map[string]bool // storedResources right after the fault
}

// repeats fails the test for every repeated fetch in log outside the window
// and returns how many are inside it, the duplicates the fault explains.
func (fw faultWindow) repeats(t *testing.T, log []synthweb.Request) int {
	t.Helper()
	sent := fw.Sent
	if sent.IsZero() {
		sent = fw.At
	}
	n, outside := 0, 0
	for _, r := range synthweb.Repeats(log) {
		f := r.First
		if (fw.UserAgent == "" || f.UserAgent == fw.UserAgent) && f.Start.Before(sent) && r.Again.Start.After(fw.At) && !fw.Stored[f.Resource] {
			n++
			continue
		}
		if outside++; outside <= 10 {
			t.Errorf("repeated fetch outside the fault's window: %s first by %q at %v (stored at the fault: %v), again by %q at %v, relative to the fault",
				f.Resource, f.UserAgent, f.Start.Sub(fw.At).Round(time.Millisecond), fw.Stored[f.Resource], r.Again.UserAgent, r.Again.Start.Sub(fw.At).Round(time.Millisecond))
		}
	}
	t.Logf("fetches repeated within the fault's window: %d (%d pages stored at the fault); outside it: %d", n, len(fw.Stored), outside)
	return n
}

// waitLog waits until the JSON log at path has a line with message msg
// after after, and returns its time.
func waitLog(t *testing.T, path, msg string, after time.Time, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if at, ok := logTime(t, path, msg, after); ok {
			return at
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(path)
			t.Fatalf("no %q in %s within %v of %v; its end:\n%s", msg, path, timeout, after.Format(time.RFC3339Nano), tail(b, 2000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
