package browser

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// browserPath returns the browser to test with, skipping the test when there
// is none unless CRAWLER_REQUIRE_BROWSER=1 asks for a failure instead.
func browserPath(t testing.TB) string {
	t.Helper()
	path, err := Find(os.Getenv("CRAWLER_BROWSER"))
	if err != nil {
		if os.Getenv("CRAWLER_REQUIRE_BROWSER") == "1" {
			t.Fatalf("CRAWLER_REQUIRE_BROWSER=1 and no browser: %v", err)
		}
		t.Skipf("no browser: %v", err)
	}
	return path
}

// newPool starts a pool with cfg's bounds, closed when the test ends.
func newPool(t testing.TB, cfg Config) *Pool {
	t.Helper()
	cfg.Path = browserPath(t)
	cfg.ProfileDir = t.TempDir()
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// site is a loopback server whose hits the tests count: the pages are given
// to Render as Documents, so none of its paths should be requested unless a
// test's Loader fetches them.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newSite(t testing.TB, files map[string]string) *site {
	s := &site{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "text/javascript")
		case strings.HasSuffix(r.URL.Path, ".json"):
			w.Header().Set("Content-Type", "application/json")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) hitsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) totalHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.hits {
		n += v
	}
	return n
}

// doc is the page at path of s, as the crawler would have fetched it.
func (s *site) doc(path, body string) Document {
	return Document{URL: s.URL + path, Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte(body)}
}

// recorder is a Loader that fetches from the loopback site with Go's client
// and remembers what it was asked for.
type recorder struct {
	mu     sync.Mutex
	reqs   []Request
	refuse func(Request) bool
}

func (r *recorder) load(ctx context.Context, req Request) (Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if r.refuse != nil && r.refuse(req) {
		return Response{}, errors.New("refused by test")
	}
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Response{}, err
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, err
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

func (r *recorder) requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

func TestRenderScriptBuiltLinks(t *testing.T) {
	page := `<!doctype html><html><head><script src="/app.js"></script></head>
<body><div id="app"></div><img src="/logo.png"></body></html>`
	s := newSite(t, map[string]string{
		"/app.js": `document.addEventListener('DOMContentLoaded', () => {
  const app = document.getElementById('app');
  for (const p of ['/a', '/b']) { const a = document.createElement('a'); a.href = p; a.textContent = p; app.appendChild(a); }
});`,
		"/page": page,
	})
	p := newPool(t, Config{Tabs: 1, Settle: 200 * time.Millisecond, PageTimeout: 10 * time.Second})
	var rec recorder
	res, err := p.Render(context.Background(), s.doc("/page", page), rec.load)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="/a">/a</a>`, `<a href="/b">/b</a>`} {
		if !strings.Contains(res.DOM, want) {
			t.Errorf("DOM lacks %s:\n%.300s", want, res.DOM)
		}
	}
	if res.FinalURL != s.URL+"/page" {
		t.Errorf("FinalURL = %q", res.FinalURL)
	}
	reqs := rec.requests()
	if len(reqs) != 1 || reqs[0].URL != s.URL+"/app.js" || reqs[0].Type != "Script" || reqs[0].Method != "GET" {
		t.Errorf("Loader got %+v, want one Script GET of /app.js", reqs)
	}
	if res.Requests != 1 || res.TimedOut {
		t.Errorf("Requests %d TimedOut %v, want 1, false", res.Requests, res.TimedOut)
	}
	if n := s.hitsOf("/page"); n != 0 {
		t.Errorf("the document was requested %d times from the server", n)
	}
	if n := s.hitsOf("/logo.png"); n != 0 {
		t.Errorf("the image was requested %d times", n)
	}
	t.Logf("rendered in %v, %+v", res.Elapsed, p.Stats())
}

func TestRenderFetchAndXHRGoToLoader(t *testing.T) {
	page := `<!doctype html><html><body><ul id="out"></ul><script>
const out = document.getElementById('out');
const add = (href) => { const li = document.createElement('li'); const a = document.createElement('a'); a.href = href; a.textContent = href; li.appendChild(a); out.appendChild(li); };
fetch('/api/links.json').then(r => r.json()).then(j => j.links.forEach(add));
const x = new XMLHttpRequest();
x.open('GET', '/api/more.json');
x.onload = () => JSON.parse(x.responseText).links.forEach(add);
x.send();
fetch('/api/secret.json').then(r => r.json()).then(j => j.links.forEach(add)).catch(() => add('/fallback'));
</script>
<style>@font-face { font-family: f; src: url(/font.woff2); } body { font-family: f; }</style>
<img src="/pic.png"><p>text</p></body></html>`
	s := newSite(t, map[string]string{
		"/api/links.json":  `{"links": ["/from-fetch"]}`,
		"/api/more.json":   `{"links": ["/from-xhr"]}`,
		"/api/secret.json": `{"links": ["/secret"]}`,
		"/font.woff2":      "not a font",
		"/pic.png":         "not a picture",
	})
	p := newPool(t, Config{Tabs: 1, Settle: 200 * time.Millisecond, PageTimeout: 10 * time.Second})
	rec := recorder{refuse: func(r Request) bool { return strings.HasSuffix(r.URL, "/secret.json") }}
	res, err := p.Render(context.Background(), s.doc("/app", page), rec.load)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="/from-fetch"`, `href="/from-xhr"`, `href="/fallback"`} {
		if !strings.Contains(res.DOM, want) {
			t.Errorf("DOM lacks %s", want)
		}
	}
	if strings.Contains(res.DOM, `href="/secret"`) {
		t.Error("the refused fetch's links are in the DOM")
	}
	types := map[string]string{}
	for _, r := range rec.requests() {
		types[strings.TrimPrefix(r.URL, s.URL)] = r.Type
	}
	want := map[string]string{"/api/links.json": "Fetch", "/api/more.json": "XHR", "/api/secret.json": "Fetch"}
	if len(types) != len(want) {
		t.Errorf("Loader got %v, want %v", types, want)
	}
	for u, typ := range want {
		if types[u] != typ {
			t.Errorf("Loader got %s as %q, want %q", u, types[u], typ)
		}
	}
	for _, path := range []string{"/app", "/api/secret.json", "/font.woff2", "/pic.png"} {
		if n := s.hitsOf(path); n != 0 {
			t.Errorf("the server got %d requests for %s", n, path)
		}
	}
	if res.Requests != 3 {
		t.Errorf("Requests = %d, want 3", res.Requests)
	}
}

func TestRenderScriptOncePerPage(t *testing.T) {
	page := `<!doctype html><html><head><script src="/bundle.js"></script><script src="/bundle.js"></script></head><body></body></html>`
	s := newSite(t, map[string]string{"/bundle.js": `document.documentElement.dataset.n = (+document.documentElement.dataset.n || 0) + 1;`})
	p := newPool(t, Config{Tabs: 1, Settle: 100 * time.Millisecond})
	for i := range 2 {
		var rec recorder
		res, err := p.Render(context.Background(), s.doc("/p", page), rec.load)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rec.requests()); n != 1 {
			t.Errorf("page %d: the Loader was asked %d times for the script, want once", i, n)
		}
		if !strings.Contains(res.DOM, `data-n="2"`) {
			t.Errorf("page %d: the script did not run twice: %.200s", i, res.DOM)
		}
	}
}

func TestRenderRedirectAndNavigationAway(t *testing.T) {
	page := `<!doctype html><html><body><script src="/old.js"></script><script>
window.addEventListener('load', () => setTimeout(() => location.assign('/elsewhere'), 10));
</script></body></html>`
	s := newSite(t, map[string]string{"/new.js": `document.body.insertAdjacentHTML('beforeend', '<a href="/moved">moved</a>');`, "/elsewhere": "<p>gone</p>"})
	p := newPool(t, Config{Tabs: 1, Settle: 300 * time.Millisecond})
	var mu sync.Mutex
	var asked []string
	load := func(ctx context.Context, r Request) (Response, error) {
		mu.Lock()
		asked = append(asked, strings.TrimPrefix(r.URL, s.URL))
		mu.Unlock()
		if strings.HasSuffix(r.URL, "/old.js") {
			return Response{Status: 301, Header: http.Header{"Location": {"/new.js"}}}, nil
		}
		var rec recorder
		return rec.load(ctx, r)
	}
	res, err := p.Render(context.Background(), s.doc("/p", page), load)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, `href="/moved"`) {
		t.Errorf("the redirected script did not run: %.300s", res.DOM)
	}
	if got := strings.Join(asked, " "); got != "/old.js /new.js" {
		t.Errorf("Loader asked for %q, want the script and its redirect", got)
	}
	if res.FinalURL != s.URL+"/p" || s.hitsOf("/elsewhere") != 0 {
		t.Errorf("the page navigated away: FinalURL %s, server hits %v", res.FinalURL, s.hits)
	}
	if res.Blocked < 1 {
		t.Errorf("Blocked = %d, want the navigation counted", res.Blocked)
	}
}

// TestNothingEscapes: a request the Loader refuses, and requests the
// interception does not see (a WebSocket; a tab without interception at all),
// must not reach a loopback server.
func TestNothingEscapes(t *testing.T) {
	s := newSite(t, map[string]string{"/data": "x", "/ws": "x", "/direct": "x"})
	doc := `<!doctype html><html><body><script>
fetch('/data').catch(() => {});
try { new WebSocket('ws://' + location.host + '/ws'); } catch (e) {}
navigator.sendBeacon && navigator.sendBeacon('/data', 'x');
</script><iframe src="/direct"></iframe></body></html>`
	p := newPool(t, Config{Tabs: 1, Settle: 300 * time.Millisecond})
	rec := recorder{refuse: func(Request) bool { return true }}
	if _, err := p.Render(context.Background(), s.doc("/p", doc), rec.load); err != nil {
		t.Fatal(err)
	}
	if len(rec.requests()) == 0 {
		t.Error("the Loader was not asked for the fetch")
	}

	// A tab of the same browser with no interception: only the proxy stands
	// between it and the server.
	p.mu.Lock()
	in := p.cur
	p.mu.Unlock()
	tctx, cancel := chromedp.NewContext(in.ctx)
	defer cancel()
	ctx, cancel2 := context.WithTimeout(tctx, 10*time.Second)
	defer cancel2()
	if err := chromedp.Do(tctx); err != nil {
		t.Fatal(err)
	}
	nav, err := cdp.Call(ctx, chromedp.FromContext(tctx).Target, page.Navigate, page.NavigateParams{URL: s.URL + "/direct"})
	if err != nil {
		t.Fatal(err)
	}
	if nav.ErrorText == "" {
		t.Error("a navigation without interception succeeded")
	}
	t.Logf("uninterceped navigation: %s", nav.ErrorText)
	time.Sleep(300 * time.Millisecond)
	if n := s.totalHits(); n != 0 {
		t.Errorf("the server got %d requests: %v", n, s.hits)
	}
}
