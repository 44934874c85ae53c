package renderer

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/browsertest"
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

// fetchTook is how long every capture's fetch took.
const fetchTook = 250 * time.Millisecond

// add stores a capture of url whose record is of type typ with block.
func (a *archive) add(id int64, url, typ, block string, revisitOf int64) {
	rec := &warc.Record{Block: []byte(block)}
	rec.Header.Add(warc.FieldType, typ)
	file := "seg-" + url
	a.records[file] = rec
	c := store.Capture{ID: id, URL: url, WARCFile: file, RevisitOf: revisitOf, Duration: fetchTook}
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
		if resp.Status != tc.status || string(resp.Body) != lib || resp.Header.Get("X-Site") != tc.site || resp.Header.Get("Set-Cookie") != "" || resp.Fetch != fetchTook {
			t.Errorf("%s: served %d %v %q, want %d with X-Site %q and the original's body", tc.url, resp.Status, resp.Header, resp.Body, tc.status, tc.site)
		}
	}
}

// slowCrawl is an archive whose URLs the crawl fetches lag after they are
// asked for, as a host's queue and politeness would; a URL of never is
// never fetched.
type slowCrawl struct {
	*archive
	lag   time.Duration
	never string
	files map[string]string // URL -> JavaScript body

	mu    sync.Mutex
	asked map[string]time.Time
}

func (s *slowCrawl) produce(_ context.Context, recs ...*kgo.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rec := range recs {
		u, err := queue.DecodeURL(rec.Value)
		if err != nil {
			return err
		}
		if _, ok := s.asked[u.URL]; !ok {
			s.asked[u.URL] = time.Now()
		}
	}
	return nil
}

func (s *slowCrawl) URLInfo(ctx context.Context, n string) (store.URLInfo, error) {
	s.mu.Lock()
	at, ok := s.asked[n]
	if !ok || n == s.never || time.Since(at) < s.lag {
		s.mu.Unlock()
		if ok {
			return store.URLInfo{URL: &store.URL{URL: n, State: store.StateQueued}}, nil
		}
		return store.URLInfo{}, store.ErrNotFound
	}
	if _, stored := s.urls[n]; !stored {
		s.add(int64(len(s.captures)+1), n, warc.TypeResponse, "HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\n\r\n"+s.files[n], 0)
	}
	s.mu.Unlock()
	return s.archive.URLInfo(ctx, n)
}

func (s *slowCrawl) read(ctx context.Context, file string, off, n int64) (*warc.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.archive.read(ctx, file, off, n)
}

// TestRerenderOnceArrived: a render that times out waiting for a script
// the crawl is still fetching is recorded with what it waited for, and the
// page is rendered again once the script is archived, then built; a page
// whose script loads the one that builds it (a loader and its bundle) is
// rendered once per link of the chain; a page whose script never comes is
// rendered once, and says what it waited for.
func TestRerenderOnceArrived(t *testing.T) {
	path := browsertest.Need(t)
	crawl := &slowCrawl{archive: &archive{urls: map[string]store.URLInfo{}, captures: map[int64]store.Capture{}, records: map[string]*warc.Record{}},
		lag: 2 * time.Second, never: "http://app.test/never.js", asked: map[string]time.Time{},
		files: map[string]string{
			"http://app.test/app.js":    `document.getElementById('app').innerHTML = '<a href="/built">built</a>';`,
			"http://app.test/loader.js": `const s = document.createElement('script'); s.src = '/bundle.js'; document.head.appendChild(s);`,
			"http://app.test/bundle.js": `document.getElementById('app').innerHTML = '<a href="/built">built</a>';`,
		}}
	res := NewResources(ResourcesConfig{Poll: 20 * time.Millisecond}, crawl, crawl.read, crawl.produce)
	pool, err := browser.New(context.Background(), browser.Config{Path: path, ProfileDir: t.TempDir(), Tabs: 1, PageTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r := &Renderer{newPool: func() (*browser.Pool, error) { return pool, nil }, res: res, log: slog.New(slog.DiscardHandler),
		metrics: newMetrics(nil, func() browser.Stats { return browser.Stats{} }), await: 10 * time.Second, pageTimeout: time.Second}
	for _, tc := range []struct {
		script  string
		built   bool
		waiting []string // what the renders timed out waiting for, in order
	}{
		{"/app.js", true, []string{"http://app.test/app.js"}},
		{"/loader.js", true, []string{"http://app.test/loader.js", "http://app.test/bundle.js"}},
		{"/never.js", false, []string{"http://app.test/never.js"}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			pg := queue.Page{URL: "http://app.test/", Status: 200, Render: &queue.Render{Reason: "signals: app_root#app"},
				Body: []byte(`<!DOCTYPE html><div id="app"></div><script src="` + tc.script + `"></script>`)}
			start := time.Now()
			r.renderOne(context.Background(), &pg)
			d := pg.Render.Detail
			if pg.Render.Outcome != queue.RenderRendered || d == nil {
				t.Fatalf("render %+v", pg.Render)
			}
			built := strings.Contains(string(pg.DOM), `href="/built"`)
			t.Logf("%v: reason %q, detail %+v", time.Since(start), pg.Render.Reason, *d)
			again := tc.built
			if built != tc.built || d.Rerendered != again || !slices.Equal(d.TimedOutWaiting, tc.waiting) {
				t.Errorf("built %v, rerendered %v, timed out waiting for %v; want built %v, rerendered %v, waiting for %v",
					built, d.Rerendered, d.TimedOutWaiting, tc.built, again, tc.waiting)
			}
			if again != strings.Contains(pg.Render.Reason, "rendered again") {
				t.Errorf("reason %q", pg.Render.Reason)
			}
			if !tc.built && (!pg.Render.TimedOut || len(d.Subresources) != 1 || !d.Subresources[0].Pending) {
				t.Errorf("a render whose script never came: timed out %v, sub-resources %+v", pg.Render.TimedOut, d.Subresources)
			}
		})
	}
}

// TestRerenderUnloaded: a render cut short before the page's load event,
// with nothing owed by the crawl (a browser too slow to run the page's
// scripts in time, here a script that takes 3.5 s against a bound of 3),
// is rendered again once with twice the bound, and built; a page whose script never ends is
// rendered twice and taken as it is, recorded as cut short before it
// loaded.
func TestRerenderUnloaded(t *testing.T) {
	path := browsertest.Need(t)
	crawl := &slowCrawl{archive: &archive{urls: map[string]store.URLInfo{}, captures: map[int64]store.Capture{}, records: map[string]*warc.Record{}},
		asked: map[string]time.Time{}}
	res := NewResources(ResourcesConfig{Poll: 20 * time.Millisecond}, crawl, crawl.read, crawl.produce)
	pool, err := browser.New(context.Background(), browser.Config{Path: path, ProfileDir: t.TempDir(), Tabs: 1, PageTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	r := &Renderer{newPool: func() (*browser.Pool, error) { return pool, nil }, res: res, log: slog.New(slog.DiscardHandler),
		metrics: newMetrics(nil, func() browser.Stats { return browser.Stats{} }), await: 10 * time.Second, pageTimeout: 3 * time.Second}
	for _, tc := range []struct {
		name, loop string
		built      bool
	}{
		{"slow", "Date.now() - t0 < 3500", true},
		{"endless", "true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pg := queue.Page{URL: "http://app.test/" + tc.name, Status: 200, Render: &queue.Render{Reason: "signals: app_root#app"},
				Body: []byte(`<!DOCTYPE html><div id="app"></div><script>const t0 = Date.now(); while (` + tc.loop + `) {}
document.getElementById('app').innerHTML = '<a href="/bu' + 'ilt">built</a>';</script>`)}
			start := time.Now()
			r.renderOne(context.Background(), &pg)
			d := pg.Render.Detail
			if pg.Render.Outcome != queue.RenderRendered || d == nil {
				t.Fatalf("render %+v", pg.Render)
			}
			t.Logf("%v: reason %q, timed out %v, detail %+v", time.Since(start), pg.Render.Reason, pg.Render.TimedOut, *d)
			if built := strings.Contains(string(pg.DOM), `href="/built"`); built != tc.built {
				t.Errorf("built %v, want %v", built, tc.built)
			}
			if !strings.Contains(pg.Render.Reason, "rendered again with more time") || d.BoundMS != 6000 || !d.Rerendered {
				t.Errorf("reason %q, bound %d ms: want a second render with 6 s", pg.Render.Reason, d.BoundMS)
			}
			// The second render of the slow page may still reach its bound
			// after the load event (settling) on a loaded machine: built,
			// and loaded, is what counts.
			if d.Unloaded == tc.built || !tc.built && !pg.Render.TimedOut {
				t.Errorf("unloaded %v, timed out %v", d.Unloaded, pg.Render.TimedOut)
			}
		})
	}
}
