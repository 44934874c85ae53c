package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
)

// CaptureReader is the part of a store StampLateness reads.
type CaptureReader interface {
	Captures(ctx context.Context, fn func(store.Capture) error) error
}

// StampLateness returns the longest time from the crawler's start of a request
// (its capture's FetchedAt) to the web's stamp of it. The web stamps a start
// when its handler runs, late on a loaded machine; a check that sets one
// start against another needs this much slack.
func StampLateness(t testing.TB, w *synthweb.Web, st CaptureReader) time.Duration {
	t.Helper()
	started := map[string]time.Time{}
	err := st.Captures(context.Background(), func(c store.Capture) error {
		started[c.URL] = c.FetchedAt
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var late time.Duration
	n := 0
	for _, r := range w.Requests() {
		if at, ok := started["http://"+r.Host+r.Target]; ok {
			late = max(late, r.Start.Sub(at))
			n++
		}
	}
	if n == 0 {
		t.Fatal("no request of the web matches a capture: cannot measure the server's stamps")
	}
	return late
}
