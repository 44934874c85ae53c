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
			t.Errorf("DOM lacks %s:\n%s", want, res.DOM)
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
