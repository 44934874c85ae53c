package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// indexPages stores and indexes one page per (url, title, text).
func indexPages(t *testing.T, e *env, pages ...[3]string) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var caps []store.Capture
	for i, p := range pages {
		u, err := url.Parse(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.DB.AdmitURLs(ctx, []store.URL{{Hash: store.HashURL(p[0]), Partition: queue.PartitionOf(u.Host), URL: p[0], Host: u.Host,
			Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: at}}); err != nil {
			t.Fatal(err)
		}
		caps = append(caps, store.Capture{FetchID: "s" + p[0], URLHash: store.HashURL(p[0]), URL: p[0], FetchedAt: at.Add(time.Duration(i) * time.Hour),
			Status: 200, ContentType: "text/html", Title: p[1], WARCFile: "seg.warc.gz", WARCLength: 10,
			Index: &store.IndexEntry{Host: u.Host, Text: p[2]}})
	}
	if err := e.DB.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
}

func TestSearch(t *testing.T) {
	e := newEnv(t, Config{})
	indexPages(t, e,
		[3]string{"http://a.example/loop", "Event loop", "The event loop runs <script>tasks</script> & callbacks."},
		[3]string{"http://a.example/task", "Tasks", "A task runs in the event loop."},
		[3]string{"http://b.example/x", "Other", "Loops of another kind; an event."},
	)
	code, out := e.do(t, "GET", "/api/v1/search?q=Event+LOOP", "", "")
	if code != http.StatusOK {
		t.Fatalf("search: %d %v", code, out)
	}
	res, _ := out["results"].([]any)
	if len(res) != 3 {
		t.Fatalf("results %v, want 3", out["results"])
	}
	first, _ := res[0].(map[string]any)
	if first["url"] != "http://a.example/loop" || first["warc_href"] != "/api/v1/captures/1/warc" ||
		first["lookup_href"] != "/api/v1/urls?url=http%3A%2F%2Fa.example%2Floop" || first["fetched_at"] != "2026-11-26T12:00:00Z" {
		t.Errorf("first result %v", first)
	}
	// The page's text is escaped; only the matched words are marked up.
	if s, _ := first["snippet"].(string); !strings.Contains(s, "<mark>event</mark> <mark>loop</mark>") || strings.Contains(s, "<script>") ||
		!strings.Contains(s, "&lt;script&gt;") {
		t.Errorf("snippet %q: want the terms in <mark> and the page's markup escaped", s)
	}
	if out["next_cursor"] != nil {
		t.Errorf("a page that is not full has a next cursor: %v", out["next_cursor"])
	}

	// Paging through one at a time gives the same order.
	var paged []any
	cursor := ""
	for range 5 {
		_, out := e.do(t, "GET", "/api/v1/search?limit=1&q=event+loop"+cursor, "", "")
		rs, _ := out["results"].([]any)
		paged = append(paged, rs...)
		c, ok := out["next_cursor"].(string)
		if !ok {
			break
		}
		cursor = "&cursor=" + c
	}
	if len(paged) != 3 {
		t.Fatalf("paged: %d results, want 3", len(paged))
	}
	for i := range paged {
		if paged[i].(map[string]any)["url"] != res[i].(map[string]any)["url"] {
			t.Errorf("page %d: %v, want %v", i, paged[i], res[i])
		}
	}

	_, out = e.do(t, "GET", "/api/v1/search?q=event&host=b.example", "", "")
	if rs, _ := out["results"].([]any); len(rs) != 1 {
		t.Errorf("host filter: %v", out["results"])
	}
	_, out = e.do(t, "GET", "/api/v1/search?q=event&since=2026-11-26T12:30:00Z&until=2026-11-26T13:30:00Z", "", "")
	if rs, _ := out["results"].([]any); len(rs) != 1 || rs[0].(map[string]any)["url"] != "http://a.example/task" {
		t.Errorf("time filter: %v", out["results"])
	}
	_, out = e.do(t, "GET", "/api/v1/search?q=event&status=404", "", "")
	if rs, _ := out["results"].([]any); len(rs) != 0 {
		t.Errorf("status filter: %v", out["results"])
	}

	for _, bad := range []string{"", "q=", "q=%22+%2A", "q=a&limit=0", "q=a&limit=101", "q=a&status=99", "q=a&since=yesterday", "q=a&cursor=xyz", "q=a&cursor=____________________AAA"} {
		if code, out := e.do(t, "GET", "/api/v1/search?"+bad, "", ""); code != http.StatusBadRequest {
			t.Errorf("%q: %d %v, want 400", bad, code, out)
		}
	}
}

func TestSearchNeedsToken(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"secret"}})
	if code, _ := e.do(t, "GET", "/api/v1/search?q=x", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", code)
	}
	if code, _ := e.do(t, "GET", "/api/v1/search?q=x", "secret", ""); code != http.StatusOK {
		t.Errorf("with the token: %d, want 200", code)
	}
}
