package renderer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// archive is a store.Reader and a RecordReader over a few captures: each
// capture's WARC file names its record.
type archive struct {
	store.Reader // unused methods panic
	urls         map[string]store.URLInfo
	captures     map[int64]store.Capture
	records      map[string]*warc.Record
}

func (a *archive) URLInfo(_ context.Context, n string) (store.URLInfo, error) {
	info, ok := a.urls[n]
	if !ok {
		return store.URLInfo{}, store.ErrNotFound
	}
	return info, nil
}

func (a *archive) Capture(_ context.Context, id int64) (store.Capture, error) {
	c, ok := a.captures[id]
	if !ok {
		return store.Capture{}, store.ErrNotFound
	}
	return c, nil
}

func (a *archive) read(_ context.Context, file string, _, _ int64) (*warc.Record, error) {
	rec, ok := a.records[file]
	if !ok {
		return nil, errors.New("no such record")
	}
	return rec, nil
}

// add stores a capture of url whose record is of type typ with block.
func (a *archive) add(id int64, url, typ, block string, revisitOf int64) {
	rec := &warc.Record{Block: []byte(block)}
	rec.Header.Add(warc.FieldType, typ)
	file := "seg-" + url
	a.records[file] = rec
	c := store.Capture{ID: id, URL: url, WARCFile: file, RevisitOf: revisitOf}
	a.captures[id] = c
	a.urls[url] = store.URLInfo{URL: &store.URL{URL: url, State: store.StateStored}, Captures: []store.Capture{c}}
}

// TestResourcesServeRevisits: a sub-resource whose payload the crawl had
// archived before under another URL (one library on two sites, one 404
// page for every missing stylesheet of a server) is stored as a revisit; it
// is served with the original's body and its own status and headers, not
// refused. A 304 revisit keeps the original's status.
func TestResourcesServeRevisits(t *testing.T) {
	a := &archive{urls: map[string]store.URLInfo{}, captures: map[int64]store.Capture{}, records: map[string]*warc.Record{}}
	const lib = "window.lib = 1;"
	a.add(1, "http://a.test/lib.js", warc.TypeResponse, "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nX-Site: a\r\n\r\n"+lib, 0)
	a.add(2, "http://b.test/lib.js", warc.TypeRevisit, "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nX-Site: b\r\nSet-Cookie: s=1\r\n\r\n", 1)
	// A revisit of a revisit (two captures of one batch): followed.
	a.add(3, "http://c.test/lib.js", warc.TypeRevisit, "HTTP/1.1 404 Not Found\r\nContent-Type: text/javascript\r\n\r\n", 2)
	a.add(4, "http://a.test/again.js", warc.TypeRevisit, "HTTP/1.1 304 Not Modified\r\nX-Site: again\r\n\r\n", 1)
	// A revisit whose original is gone is refused with the reason.
	a.add(5, "http://d.test/lib.js", warc.TypeRevisit, "HTTP/1.1 200 OK\r\n\r\n", 99)
	r := NewResources(ResourcesConfig{}, a, a.read, func(context.Context, ...*kgo.Record) error { return errors.New("nothing to ask") })
	page := queue.Page{URL: "http://b.test/"}
	for _, tc := range []struct {
		url    string
		status int
		site   string
		err    string
	}{
		{"http://a.test/lib.js", 200, "a", ""},
		{"http://b.test/lib.js", 200, "b", ""},
		{"http://c.test/lib.js", 404, "", ""},
		{"http://a.test/again.js", 200, "a", ""},
		{"http://d.test/lib.js", 0, "", "original"},
	} {
		resp, err := r.Load(context.Background(), page, browser.Request{URL: tc.url, Method: "GET"})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error about the %s", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if resp.Status != tc.status || string(resp.Body) != lib || resp.Header.Get("X-Site") != tc.site || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s: served %d %v %q, want %d with X-Site %q and the original's body", tc.url, resp.Status, resp.Header, resp.Body, tc.status, tc.site)
		}
	}
}
