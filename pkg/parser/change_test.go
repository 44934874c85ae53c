package parser

import (
	"net/http"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
)

// TestLastModifiedWindow: a Last-Modified dates the page's last change to
// within a second either way (servers truncate or round); a missing or
// malformed one dates nothing, and a page's history then records what an
// undated visit records.
func TestLastModifiedWindow(t *testing.T) {
	lm := time.Date(2026, 11, 28, 22, 0, 5, 0, time.UTC)
	got := lastModified(queue.Page{LastModified: lm.Format(http.TimeFormat)})
	if !got.From.Equal(lm.Add(-time.Second)) || !got.To.Equal(lm.Add(time.Second)) {
		t.Errorf("window %v - %v, want a second either side of %v", got.From, got.To, lm)
	}
	for _, bad := range []string{"", "yesterday", "Fri, 32 Nov 2026 25:00:00 GMT"} {
		if w := lastModified(queue.Page{LastModified: bad}); w != (recrawl.Dated{}) {
			t.Errorf("Last-Modified %q: window %v, want none", bad, w)
		}
	}
	// A change dated 5 s before a visit 30 s after the last one: changed
	// within the window, unchanged after it.
	start := lm.Add(-25 * time.Second)
	var h recrawl.History
	h.Observe(recrawl.First, start)
	h.ObserveDated(recrawl.Changed, lm.Add(5*time.Second), got)
	if h.ChangedTime != 2*time.Second || h.Unchanged != 4*time.Second {
		t.Errorf("dated visit: %+v", h)
	}
}
