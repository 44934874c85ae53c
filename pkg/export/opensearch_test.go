package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

func TestOpenSearch(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var caps []store.Capture
	// More pages than a batch of the export, so that it pages through.
	for i := range exportBatch + 3 {
		u := "http://a.example/p" + strings.Repeat("x", i%7) + "/" + string(rune('a'+i%26)) + "/" + time.Duration(i).String()
		caps = append(caps, store.Capture{FetchID: u, URL: u, FetchedAt: at, Status: 200, ContentType: "text/html", Title: "T <&> " + u,
			Index: &store.IndexEntry{Host: "a.example", Headings: "H", Text: "body of " + u}})
	}
	if err := db.AddCaptures(ctx, caps); err != nil {
		t.Fatal(err)
	}
	dup := store.Capture{FetchID: "dup", URL: "http://b.example/copy", FetchedAt: at, Status: 200, ContentType: "text/html",
		RevisitOf: caps[0].ID, Index: &store.IndexEntry{Host: "b.example", Text: "same"}}
	if err := db.AddCaptures(ctx, []store.Capture{dup}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, err := OpenSearch(ctx, db.Search(), "crawl-1", &out)
	if err != nil || n != len(caps)+1 {
		t.Fatalf("OpenSearch: %d, %v; want %d", n, err, len(caps)+1)
	}
	body := out.String()
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<20)
	ids := map[string]bool{}
	var lines int
	for sc.Scan() {
		lines++
		var action map[string]map[string]string
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil || action["index"]["_index"] != "crawl-1" || action["index"]["_id"] == "" {
			t.Fatalf("line %d: %s: want an index action (%v)", lines, sc.Bytes(), err)
		}
		id := action["index"]["_id"]
		if ids[id] {
			t.Errorf("_id %s twice", id)
		}
		ids[id] = true
		if !sc.Scan() {
			t.Fatal("an action without its document")
		}
		lines++
		var doc openSearchDoc
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		if id != "" && store.HashURL(doc.URL) != mustInt(t, id) {
			t.Errorf("_id %s is not the hash of %s", id, doc.URL)
		}
		switch {
		case doc.URL == dup.URL:
			if doc.DuplicateOf != toID(caps[0].URL) || doc.Text != "" {
				t.Errorf("duplicate %+v: want duplicate_of %s and no text", doc, toID(caps[0].URL))
			}
		case doc.Text != "body of "+doc.URL || doc.Title != "T <&> "+doc.URL || doc.Headings != "H" || !doc.FetchedAt.Equal(at) || doc.CaptureID == 0:
			t.Errorf("document %+v does not hold its page", doc)
		}
	}
	if lines != 2*n || !strings.HasSuffix(body, "\n") {
		t.Errorf("%d lines for %d pages; the bulk body must end with a newline", lines, n)
	}
	if !strings.Contains(body, `"T <&> `) {
		t.Error("HTML characters escaped in the export")
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var v int64
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func toID(u string) string {
	b, _ := json.Marshal(store.HashURL(u))
	return string(b)
}
