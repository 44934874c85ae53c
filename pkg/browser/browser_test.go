package browser

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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

// okPage is a page whose script adds a link, to show a pool still works.
const okPage = `<!doctype html><html><body><script>document.body.insertAdjacentHTML('beforeend', '<a href="/ok">ok</a>')</script></body></html>`

func renderOK(t *testing.T, p *Pool, s *site) {
	t.Helper()
	// No Loader: the page needs none.
	res, err := p.Render(context.Background(), s.doc("/ok-page", okPage), nil)
	if err != nil {
		t.Fatalf("the render after: %v", err)
	}
	if !strings.Contains(res.DOM, `href="/ok"`) {
		t.Fatalf("the render after: TimedOut %v Retried %v DOM %.200s", res.TimedOut, res.Retried, res.DOM)
	}
	if res.TimedOut {
		// The page's script ran in a renderer that answers, which is
		// what this checks; it was not seen quiet within the pool's
		// PageTimeout (2 s in TestRenderHungScript) once in CI, beside
		// other packages under the race detector while the two hung
		// renderers before it were still being ended.
		t.Logf("the render after timed out with its DOM whole: %+v", p.Stats())
	}
	if res.Retried {
		// The pool's own recovery: a renderer still spinning from the
		// page before (its end is asked for, not waited on) failed the
		// first attempt. Seen once under the race detector beside other
		// tests' browsers at a load of 10; the page is rendered all
		// the same, which is what this checks.
		t.Logf("the render after was retried: %+v", p.Stats())
	}
}

func TestRenderHungScript(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for page timeouts")
	}
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 2, Settle: 100 * time.Millisecond, PageTimeout: 2 * time.Second, Hang: time.Second})
	for _, tc := range []struct{ name, page string }{
		// A script that never ends while the page loads: no load event.
		{"while loading", `<!doctype html><html><body><a href="/before">b</a><script>for (;;) {}</script></body></html>`},
		// After load, forever, from timers that come back.
		{"after load", `<!doctype html><html><body><a href="/before">b</a><script>
onload = () => { const spin = () => { setTimeout(spin, 0); const t = Date.now(); while (Date.now() - t < 1e9) {} }; spin(); };
</script></body></html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			start := time.Now()
			res, err := p.Render(context.Background(), s.doc("/hang", tc.page), rec.load)
			t.Logf("%v after %v: TimedOut %v Retried %v, %d bytes of DOM, %+v", err, time.Since(start), res.TimedOut, res.Retried, len(res.DOM), p.Stats())
			switch {
			case errors.Is(err, ErrHung):
			case err != nil:
				t.Fatalf("err = %v, want ErrHung or a timed-out result", err)
			case !res.TimedOut || !strings.Contains(res.DOM, `href="/before"`):
				t.Fatalf("TimedOut %v, DOM %.200s", res.TimedOut, res.DOM)
			}
			renderOK(t, p, s)
		})
	}
}

// TestRenderNeverQuiet: a page that never settles but answers ends TimedOut
// with its DOM as it was then.
func TestRenderNeverQuiet(t *testing.T) {
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 1, Settle: time.Second, PageTimeout: 3 * time.Second})
	page := `<!doctype html><html><body><a href="/before">b</a><script>
setInterval(() => document.body.insertAdjacentHTML('beforeend', '<a href="/x">x</a>'), 20);
</script></body></html>`
	var rec recorder
	res, err := p.Render(context.Background(), s.doc("/busy", page), rec.load)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !strings.Contains(res.DOM, `href="/x"`) || res.Elapsed < 3*time.Second {
		t.Errorf("TimedOut %v after %v, DOM %.200s", res.TimedOut, res.Elapsed, res.DOM)
	}
	renderOK(t, p, s)
}

func TestRenderRunawayAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a renderer's heap")
	}
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 2, Settle: 100 * time.Millisecond, PageTimeout: 10 * time.Second, HeapMiB: 64})
	page := `<!doctype html><html><body><script>
const keep = []; for (;;) { keep.push(new Array(1e6).fill(keep.length)); }
</script></body></html>`
	var rec recorder
	start := time.Now()
	res, err := p.Render(context.Background(), s.doc("/oom", page), rec.load)
	t.Logf("%v after %v, %+v", err, time.Since(start), p.Stats())
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("err = %v (TimedOut %v), want ErrCrashed", err, res.TimedOut)
	}
	if st := p.Stats(); st.Crashed != 2 || st.Retried != 1 || st.Failed != 1 {
		t.Errorf("stats %+v, want 2 crashes, 1 retry, 1 failure", st)
	}
	renderOK(t, p, s)
}

// A page that allocates from timers after it has loaded makes no request and
// may leave the DOM alone: it is not settled while its heap keeps growing,
// so it runs into the heap limit, or into its bound if V8 fights for the
// last megabytes longer than that (13 s here on a quiet machine, more than
// PageTimeout in CI), and is never snapshotted as a settled page.
func TestRenderRunawayFromTimers(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a renderer's heap")
	}
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 2, Settle: 300 * time.Millisecond, PageTimeout: 10 * time.Second, HeapMiB: 64})
	page := `<!doctype html><html><body><p>x</p><script>
document.addEventListener('DOMContentLoaded', () => {
  const hog = [];
  const grow = () => { for (let i = 0; i < 8; i++) hog.push(new Array(1 << 17).fill('runaway ' + hog.length)); setTimeout(grow, 0); };
  grow();
});
</script></body></html>`
	var rec recorder
	start := time.Now()
	res, err := p.Render(context.Background(), s.doc("/oom-timers", page), rec.load)
	t.Logf("%v after %v (TimedOut %v), %+v", err, time.Since(start), res.TimedOut, p.Stats())
	if !errors.Is(err, ErrCrashed) && (err != nil || !res.TimedOut) {
		t.Fatalf("err = %v (TimedOut %v, %d bytes of DOM), want ErrCrashed or a timed-out render", err, res.TimedOut, len(res.DOM))
	}
	renderOK(t, p, s)
}

func TestTabsBound(t *testing.T) {
	s := newSite(t, map[string]string{"/slow": "{}"})
	p := newPool(t, Config{Tabs: 2, Settle: 50 * time.Millisecond})
	page := `<!doctype html><html><body><script>fetch('/slow').then(() => document.body.insertAdjacentHTML('beforeend', '<a href="/done">d</a>'))</script></body></html>`
	var mu sync.Mutex
	inFlight, most := 0, 0
	load := func(ctx context.Context, r Request) (Response, error) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		// Hold each request until a second page is fetching too (or a
		// while has passed), so that a third would be seen if the bound
		// let one through.
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			n := inFlight
			mu.Unlock()
			if n >= 2 {
				break
			}
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return Response{}, ctx.Err()
		}
		return Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte("{}")}, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Go(func() {
			res, err := p.Render(context.Background(), s.doc("/p"+string(rune('a'+i)), page), load)
			if err == nil && !strings.Contains(res.DOM, `href="/done"`) {
				err = errors.New("no link in " + res.DOM)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if most != 2 {
		t.Errorf("at most %d pages fetched at once, want 2 (Tabs)", most)
	}
	if st := p.Stats(); st.Rendered != 6 || st.Busy != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestRenderDocumentTimeout: a Document's Timeout replaces PageTimeout for
// its render, up to MaxPageTimeout. The page waits 3 s for its data, past
// the pool's 2 s bound: cut short at 2 s, whole with 20 s.
func TestRenderDocumentTimeout(t *testing.T) {
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 1, PageTimeout: 2 * time.Second, MaxPageTimeout: 30 * time.Second})
	page := `<!doctype html><html><body><script>
fetch('/data').then(r => r.text()).then(t => document.body.insertAdjacentHTML('beforeend', '<a href="/' + t + '">data</a>'));
</script></body></html>`
	load := func(ctx context.Context, r Request) (Response, error) {
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
			return Response{}, ctx.Err()
		}
		return Response{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("late")}, nil
	}
	short, err := p.Render(context.Background(), s.doc("/slow", page), load)
	if err != nil {
		t.Fatal(err)
	}
	if !short.TimedOut || strings.Contains(short.DOM, `href="/late"`) || short.Bound != 2*time.Second {
		t.Errorf("with the pool's bound: TimedOut %v, bound %v, DOM %.300s", short.TimedOut, short.Bound, short.DOM)
	}
	doc := s.doc("/slow", page)
	doc.Timeout = 20 * time.Second
	long, err := p.Render(context.Background(), doc, load)
	if err != nil {
		t.Fatal(err)
	}
	if long.TimedOut || !strings.Contains(long.DOM, `href="/late"`) {
		t.Errorf("with the document's 20 s: TimedOut %v after %v, bound %v, DOM %.300s", long.TimedOut, long.Elapsed, long.Bound, long.DOM)
	}
	doc.Timeout = time.Hour
	if capped, err := p.Render(context.Background(), doc, load); err != nil || capped.Bound != 30*time.Second {
		t.Errorf("an hour asked: bound %v (err %v), want MaxPageTimeout 30s", capped.Bound, err)
	}
}

func TestRenderBounds(t *testing.T) {
	s := newSite(t, map[string]string{"/echo": "{}"})
	p := newPool(t, Config{Tabs: 1, Settle: 200 * time.Millisecond, MaxRequests: 2})
	// The document's headers describe the body as it came over the wire;
	// the browser gets it decoded, so they must not reach it.
	doc := s.doc("/p", `<!doctype html><html><body><script>
for (let i = 0; i < 5; i++) fetch('/echo?' + i, {method: 'POST', body: 'n=' + i}).then(r => r.text()).then(t => document.body.insertAdjacentHTML('beforeend', '<a href="/got' + i + '">' + t + '</a>')).catch(() => {});
document.body.insertAdjacentHTML('beforeend', '<p id="sw">' + typeof navigator.serviceWorker + '</p>');
</script></body></html>`)
	doc.Header.Set("Content-Encoding", "gzip")
	doc.Header.Set("Content-Length", "3")
	var mu sync.Mutex
	var bodies []string
	load := func(ctx context.Context, r Request) (Response, error) {
		mu.Lock()
		bodies = append(bodies, r.Method+" "+string(r.Body))
		mu.Unlock()
		return Response{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}, "Content-Encoding": {"br"}}, Body: r.Body}, nil
	}
	res, err := p.Render(context.Background(), doc, load)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 2 || res.Blocked < 3 {
		t.Errorf("Requests %d Blocked %d, want 2 and at least 3 refused over MaxRequests", res.Requests, res.Blocked)
	}
	if strings.Count(res.DOM, `">n=`) != 2 {
		t.Errorf("want the 2 answered fetches' links: %.400s", res.DOM)
	}
	for _, b := range bodies {
		if !strings.HasPrefix(b, "POST n=") || !strings.Contains(res.DOM, ">"+strings.TrimPrefix(b, "POST ")+"</a>") {
			t.Errorf("Loader got %q, not echoed in the DOM as sent", b)
		}
	}
	if !strings.Contains(res.DOM, `<p id="sw">undefined</p>`) {
		t.Errorf("service workers are on: %.400s", res.DOM)
	}
	if n := s.totalHits(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
}

// TestRenderFramesAndWorkers: the requests of a cross-site frame and of a
// dedicated worker go to the Loader too.
func TestRenderFramesAndWorkers(t *testing.T) {
	s := newSite(t, map[string]string{
		"/frame":        `<!doctype html><script src="/frame.js"></script>`,
		"/frame.js":     `parent.postMessage('frame', '*')`,
		"/worker.js":    `fetch('/worker.json').then(r => r.text()).then(t => postMessage(t))`,
		"/worker.json":  `worker`,
		"/unused.json":  `x`,
		"/cross-origin": `x`,
	})
	// localhost and 127.0.0.1 are two sites: Chromium would put the frame
	// in a process of its own if site isolation were on.
	other := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
	page := `<!doctype html><html><body><iframe src="` + other + `/frame"></iframe><script>
onmessage = (e) => document.body.insertAdjacentHTML('beforeend', '<a href="/' + e.data + '">' + e.data + '</a>');
const w = new Worker('/worker.js');
w.onmessage = (e) => document.body.insertAdjacentHTML('beforeend', '<a href="/' + e.data + '">' + e.data + '</a>');
</script></body></html>`
	p := newPool(t, Config{Tabs: 1, Settle: 300 * time.Millisecond})
	var rec recorder
	res, err := p.Render(context.Background(), s.doc("/p", page), rec.load)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rec.requests() {
		got[r.URL] = r.Type
	}
	t.Logf("Loader got %v", got)
	// Chromium gives a worker's script the type Other, and a worker's
	// fetch() has no Network event in the page to tell it from an XHR.
	for u, types := range map[string]string{other + "/frame": "Document", other + "/frame.js": "Script", s.URL + "/worker.js": "Other", s.URL + "/worker.json": "Fetch XHR"} {
		if !slices.Contains(strings.Fields(types), got[u]) {
			t.Errorf("Loader got %s as %q, want %s", u, got[u], types)
		}
	}
	for _, want := range []string{`href="/frame"`, `href="/worker"`} {
		if !strings.Contains(res.DOM, want) {
			t.Errorf("DOM lacks %s: %.300s", want, res.DOM)
		}
	}
}

// TestRenderDialogsAndDownloads: dialogs would hold the page's script until
// answered, and a download would write a file; neither may happen.
func TestRenderDialogsAndDownloads(t *testing.T) {
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 1, Settle: 200 * time.Millisecond, PageTimeout: 5 * time.Second})
	page := `<!doctype html><html><body><iframe src="/dl"></iframe><script>
alert('hello');
const ok = confirm('sure?');
const name = prompt('name?', 'x');
document.body.insertAdjacentHTML('beforeend', '<a href="/after-dialogs">' + ok + ' ' + name + '</a>');
</script></body></html>`
	load := func(ctx context.Context, r Request) (Response, error) {
		if strings.HasSuffix(r.URL, "/dl") {
			return Response{Status: 200, Header: http.Header{
				"Content-Type":        {"application/octet-stream"},
				"Content-Disposition": {`attachment; filename="crawler-download-test.bin"`},
			}, Body: []byte("download")}, nil
		}
		return Response{Status: 404}, nil
	}
	res, err := p.Render(context.Background(), s.doc("/p", page), load)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, `<a href="/after-dialogs">false null</a>`) || res.TimedOut {
		t.Errorf("TimedOut %v, DOM %.400s", res.TimedOut, res.DOM)
	}
	home, _ := os.UserHomeDir()
	for _, dir := range []string{p.cfg.ProfileDir, home + "/Downloads"} {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), "crawler-download-test") {
				t.Errorf("downloaded: %s", path)
			}
			return nil
		})
	}
}

// TestRenderLargeBodies: a site's bundle of megabytes and a large DOM pass
// through the DevTools pipe both ways.
func TestRenderLargeBodies(t *testing.T) {
	// Bounds far past what the render needs: what is tested is size, and
	// under the race detector beside other tests' browsers the 3 MiB
	// snapshot once took longer than the default 2 s Hang after the
	// page's bound.
	p := newPool(t, Config{Tabs: 1, Settle: 200 * time.Millisecond, PageTimeout: 30 * time.Second, Hang: 30 * time.Second})
	bundle := "/*" + strings.Repeat("x", 6<<20) + "*/\ndocument.body.insertAdjacentHTML('beforeend', '<a href=\"/from-bundle\">b</a>' + '<p>' + 'y'.repeat(3 << 20) + '</p>');"
	load := func(ctx context.Context, r Request) (Response, error) {
		return Response{Status: 200, Header: http.Header{"Content-Type": {"text/javascript"}}, Body: []byte(bundle)}, nil
	}
	doc := Document{URL: "http://127.0.0.1:1/big", Body: []byte(`<!doctype html><html><body><script src="/bundle.js"></script></body></html>`)}
	res, err := p.Render(context.Background(), doc, load)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.DOM, `href="/from-bundle"`) || len(res.DOM) < 3<<20 {
		t.Errorf("%d bytes of DOM: %.200s", len(res.DOM), res.DOM)
	}
	t.Logf("%d bytes of DOM in %v", len(res.DOM), res.Elapsed)
}
