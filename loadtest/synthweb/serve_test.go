package synthweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// featuresConfig is the e2e world with few pages, so crawls stay short.
func featuresConfig() Config {
	cfg := DefaultConfig()
	cfg.Features = true
	cfg.PagesPerHost = 6
	cfg.Seed = 7
	cfg.Now = time.Date(2024, 5, 15, 12, 0, 0, 0, time.UTC)
	return cfg
}

func startWeb(tb testing.TB, cfg Config) *Web {
	tb.Helper()
	w, err := Start(cfg)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() {
		if err := w.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return w
}

// rawClient shows what the server sent: no redirects followed, no bodies
// decoded, no proxy.
func rawClient() *http.Client {
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DisableCompression: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func get(tb testing.TB, c *http.Client, url string) answer {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatalf("new request %s: %v", url, err)
	}
	req.Header.Set("User-Agent", "testbot/1.0")
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read %s: %v", url, err)
	}
	return answer{resp.StatusCode, resp.Header, string(body)}
}

// logEntry waits for the log entry of host+target: the handler records it
// after the client may already have read the answer.
func logEntry(tb testing.TB, w *Web, host, target string) Request {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		for _, r := range w.Requests() {
			if r.Host == host && r.Target == target {
				return r
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no log entry for %s%s", host, target)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestServe(t *testing.T) {
	w := startWeb(t, featuresConfig())
	hosts := w.Hosts()
	huge := "/x/huge-query?q=" + strings.Repeat("abcdefghij", 3<<10/10)
	tests := []struct {
		host     int
		target   string
		status   int
		kind     string
		trap     string
		resource string            // canonical target; "" means target itself
		header   map[string]string // "" value: header must be absent
		contains []string
	}{
		{host: 0, target: "/", status: 200, kind: "page", contains: []string{`href="/old/1.html"`, `rel="nofollow"`}},
		{host: 0, target: "/robots.txt", status: 404, kind: "robots"},
		{host: 0, target: "/p/%33.html?utm_source=x&sid=abc", status: 200, kind: "page", trap: "session", resource: "/p/3.html"},
		{host: 0, target: "/./p/3.html", status: 200, kind: "page", resource: "/p/3.html"},
		{host: 0, target: "/old/1.html", status: 301, kind: "redirect", header: map[string]string{"Location": "/p/1.html"}},
		{host: 0, target: "/chain/6", status: 301, kind: "redirect", header: map[string]string{"Location": "/chain/7"}},
		{host: 0, target: "/chain/7", status: 301, kind: "redirect", trap: "redirect_chain"},
		{host: 0, target: "/chain/8", status: 301, kind: "redirect", trap: "redirect_chain", header: map[string]string{"Location": "/p/0.html"}},
		{host: 0, target: "/loop/b", status: 301, kind: "redirect", trap: "redirect_loop", header: map[string]string{"Location": "/loop/a"}},
		{host: 0, target: "/away", status: 302, kind: "redirect", header: map[string]string{"Location": "http://" + hosts[1] + "/p/0.html"}},
		{host: 0, target: "/files/report.pdf", status: 200, kind: "file", header: map[string]string{"Content-Type": "application/pdf"}, contains: []string{"%PDF-1.4"}},
		{host: 0, target: "/canonical.html", status: 200, kind: "page", contains: []string{`rel="canonical"`}},
		{host: 0, target: "/meta/nofollow.html", status: 200, kind: "page", contains: []string{`content="nofollow"`, "/meta/behind-nofollow.html"}},
		{host: 0, target: huge, status: 200, kind: "page"},
		{host: 0, target: "/nothing.html", status: 404, kind: "notfound"},
		{host: 0, target: "/p/3.html?other=1", status: 404, kind: "notfound"},
		{host: 0, target: "/calendar?month=2024-05", status: 404, kind: "notfound"},
		{host: 1, target: "/robots.txt", status: 200, kind: "robots", contains: []string{
			"Allow: /private/open.html", "Disallow: /private/", "Sitemap: http://" + hosts[1] + "/sitemap_index.xml"}},
		{host: 1, target: "/sitemap-1.xml.gz", status: 200, kind: "sitemap", header: map[string]string{"Content-Type": "application/gzip", "Content-Encoding": ""}},
		{host: 1, target: "/calendar?month=2024-05", status: 200, kind: "trap", trap: "calendar", contains: []string{"month=2024-04", "month=2024-06"}},
		{host: 1, target: "/calendar?month=2024-13", status: 404, kind: "notfound"},
		{host: 1, target: "/trap/a/a/", status: 200, kind: "trap", trap: "repeat", contains: []string{`href="a/"`}},
		{host: 1, target: "/trap/a/b/", status: 404, kind: "notfound"},
		{host: 1, target: "/deep/1/2/", status: 200, kind: "trap", trap: "depth", contains: []string{`href="3/"`}},
		{host: 1, target: "/deep/1/3/", status: 404, kind: "notfound"},
		{host: 1, target: "/p/1.html?sid=0123", status: 200, kind: "page", trap: "session", resource: "/p/1.html"},
		{host: 2, target: "/robots.txt", status: 200, kind: "robots", contains: []string{"User-agent: testbot\nDisallow: /no-agent/", "User-agent: *\nDisallow: /no-star/"}},
		{host: 2, target: "/err/404.html", status: 404, kind: "error"},
		{host: 2, target: "/err/500.html", status: 500, kind: "error"},
		{host: 3, target: "/robots.txt", status: 200, kind: "robots", contains: []string{"Crawl-delay: 0.25"}},
		{host: 3, target: "/bomb.html", status: 200, kind: "page", header: map[string]string{"Content-Encoding": "gzip"}},
		{host: 3, target: "/sitemap.xml", status: 200, kind: "sitemap", contains: []string{"http://" + hosts[3] + "/orphan/2.html"}},
		{host: 4, target: "/robots.txt", status: 301, kind: "robots", header: map[string]string{"Location": "/robots-real.txt"}},
		{host: 4, target: "/robots-real.txt", status: 200, kind: "robots", contains: []string{"Crawl-delay: 30", "Disallow: /blocked/"}},
		{host: 5, target: "/robots.txt", status: 500, kind: "robots"},
	}
	c := rawClient()
	for _, tt := range tests {
		t.Run(fmt.Sprintf("host%d%s", tt.host, short(tt.target)), func(t *testing.T) {
			host := hosts[tt.host]
			got := get(t, c, "http://"+host+tt.target)
			if got.status != tt.status {
				t.Errorf("status %d, want %d", got.status, tt.status)
			}
			for k, v := range tt.header {
				if g := got.header.Get(k); g != v {
					t.Errorf("header %s = %q, want %q", k, g, v)
				}
			}
			for _, s := range tt.contains {
				if !strings.Contains(got.body, s) {
					t.Errorf("body lacks %q:\n%s", s, got.body)
				}
			}
			r := logEntry(t, w, host, tt.target)
			wantRes := host + tt.target
			if tt.resource != "" {
				wantRes = host + tt.resource
			}
			if r.Status != tt.status || r.Kind != tt.kind || r.Trap != tt.trap || r.Resource != wantRes {
				t.Errorf("logged status %d kind %q trap %q resource %q, want %d %q %q %q",
					r.Status, r.Kind, r.Trap, short(r.Resource), tt.status, tt.kind, tt.trap, short(wantRes))
			}
			if r.UserAgent != "testbot/1.0" || r.End.Before(r.Start) || r.RetryAfter != 0 {
				t.Errorf("logged UA %q, Start %v, End %v, RetryAfter %v", r.UserAgent, r.Start, r.End, r.RetryAfter)
			}
		})
	}
}

func TestServeRetryAfterOnce(t *testing.T) {
	w := startWeb(t, featuresConfig())
	host := w.Hosts()[2]
	c := rawClient()
	first := get(t, c, "http://"+host+"/err/429.html")
	second := get(t, c, "http://"+host+"/err/429.html")
	if first.status != 429 || first.header.Get("Retry-After") != "1" {
		t.Errorf("first answer %d Retry-After %q, want 429 and 1", first.status, first.header.Get("Retry-After"))
	}
	if second.status != 200 || second.header.Get("Retry-After") != "" {
		t.Errorf("second answer %d Retry-After %q, want 200 and none", second.status, second.header.Get("Retry-After"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range w.Requests() {
		got = append(got, fmt.Sprintf("%d %s %v", r.Status, r.Kind, r.RetryAfter))
	}
	if want := []string{"429 error 1s", "200 page 0s"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("log %q, want %q", got, want)
	}
}

func TestServeSlow(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 800 ms")
	}
	w := startWeb(t, featuresConfig())
	start := time.Now()
	got := get(t, rawClient(), "http://"+w.Hosts()[2]+"/slow.html")
	if took := time.Since(start); got.status != 200 || took < slowDelay {
		t.Errorf("status %d after %v, want 200 after at least %v", got.status, took, slowDelay)
	}
	if r := logEntry(t, w, w.Hosts()[2], "/slow.html"); r.Status != 200 || r.End.Sub(r.Start) < slowDelay {
		t.Errorf("logged status %d taking %v", r.Status, r.End.Sub(r.Start))
	}
}

// slowRequest starts GET /slow.html and returns once the request has been
// written, plus a channel with the client's outcome.
func slowRequest(t *testing.T, ctx context.Context, url string) <-chan error {
	t.Helper()
	wrote := make(chan struct{})
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := rawClient().Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				err = fmt.Errorf("answered %d", resp.StatusCode)
			}
		}
		done <- err
	}()
	select {
	case <-wrote:
	case err := <-done:
		t.Fatalf("request failed before it was written: %v", err)
	case <-time.After(3 * time.Second):
		t.Fatal("request not written after 3s")
	}
	time.Sleep(50 * time.Millisecond) // let the handler start waiting
	return done
}

func TestServeSlowGivesUp(t *testing.T) {
	t.Run("client leaves", func(t *testing.T) {
		w := startWeb(t, featuresConfig())
		url := "http://" + w.Hosts()[2] + "/slow.html"
		ctx, cancel := context.WithCancel(context.Background())
		done := slowRequest(t, ctx, url)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("client got %v, want context.Canceled", err)
		}
		r := logEntry(t, w, w.Hosts()[2], "/slow.html")
		if r.Status != 0 || r.Kind != "page" || r.End.Sub(r.Start) >= slowDelay {
			t.Errorf("logged status %d kind %q after %v, want 0 page promptly", r.Status, r.Kind, r.End.Sub(r.Start))
		}
	})
	t.Run("web closes", func(t *testing.T) {
		w := startWeb(t, featuresConfig())
		done := slowRequest(t, context.Background(), "http://"+w.Hosts()[2]+"/slow.html")
		start := time.Now()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took >= slowDelay/2 {
			t.Errorf("Close took %v with a slow request in flight", took)
		}
		if err := <-done; err == nil {
			t.Error("client got no error")
		}
		// Close waited for the handler: the entry is there without polling.
		reqs := w.Requests()
		if len(reqs) != 1 || reqs[0].Status != 0 || reqs[0].Target != "/slow.html" {
			t.Errorf("log %+v, want one unanswered /slow.html", reqs)
		}
	})
}

func TestServeBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 64 MiB")
	}
	// Compressing and decoding 64 MiB takes seconds under the race detector
	// on a busy machine: compress before the request, and decode after the
	// small body is read, so rawClient's timeout covers only the transfer.
	if _, err := bombBody(); err != nil {
		t.Fatal(err)
	}
	w := startWeb(t, featuresConfig())
	resp, err := rawClient().Get("http://" + w.Hosts()[3] + "/bomb.html")
	if err != nil {
		t.Fatal(err)
	}
	wire, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n != bombSize {
		t.Errorf("decoded %d bytes (err %v), want %d", n, err, bombSize)
	}
	if resp.ContentLength > 1<<20 {
		t.Errorf("bomb is %d bytes on the wire, want it small", resp.ContentLength)
	}
}

func TestSeedsAndHosts(t *testing.T) {
	for _, features := range []bool{false, true} {
		t.Run(fmt.Sprint("features=", features), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Features = features
			cfg.Hosts = 7
			w := startWeb(t, cfg)
			hosts, seeds := w.Hosts(), w.Seeds()
			for i, h := range hosts {
				addr, _, err := net.SplitHostPort(h)
				if err != nil || addr != hostAddr(i) {
					t.Errorf("host %d is %q, want address %s", i, h, hostAddr(i))
				}
				if seeds[i] != "http://"+h+"/" {
					t.Errorf("seed %d is %q", i, seeds[i])
				}
			}
			wantSeeds := len(hosts)
			if features {
				wantSeeds++
			}
			if len(seeds) != wantSeeds {
				t.Fatalf("%d seeds, want %d", len(seeds), wantSeeds)
			}
			if !features {
				return
			}
			dead := strings.TrimSuffix(strings.TrimPrefix(seeds[len(seeds)-1], "http://"), "/")
			if conn, err := net.DialTimeout("tcp", dead, time.Second); err == nil {
				conn.Close()
				t.Errorf("dead seed %s accepts connections", dead)
			}
			// Host 6 is beyond the special ones: plain, with the simple robots.txt.
			if got := get(t, rawClient(), "http://"+hosts[6]+"/robots.txt"); got.status != 200 || !strings.Contains(got.body, "Disallow: /cgi-bin/") {
				t.Errorf("host 6 robots.txt: %d %q", got.status, got.body)
			}
		})
	}
}

func TestStartRejectsConfig(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
	}{
		{"features with 5 hosts", func(c *Config) { c.Features, c.Hosts = true, 5 }},
		{"features with 3 pages", func(c *Config) { c.Features, c.PagesPerHost = true, 3 }},
		{"negative pages", func(c *Config) { c.PagesPerHost = -1 }},
		{"agent with a space", func(c *Config) { c.Agent = "test bot" }},
		{"too many hosts", func(c *Config) { c.Hosts = maxHosts + 1 }},
		{"page size range upside down", func(c *Config) { c.PageBytes, c.PageBytesMax = 5000, 4000 }},
		{"page size past the cap", func(c *Config) { c.PageBytesMax = maxPageBytes + 1 }},
		{"crawl-delay share above 1", func(c *Config) { c.CrawlDelayShare, c.CrawlDelayMin = 1.5, time.Second }},
		{"crawl-delay share NaN", func(c *Config) { c.CrawlDelayShare, c.CrawlDelayMin = math.NaN(), time.Second }},
		{"crawl-delay share without a delay", func(c *Config) { c.CrawlDelayShare = 0.5 }},
		{"crawl-delay range upside down", func(c *Config) {
			c.CrawlDelayShare, c.CrawlDelayMin, c.CrawlDelayMax = 0.5, time.Second, 200*time.Millisecond
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.edit(&cfg)
			if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
				t.Errorf("Validate: %v, want ErrConfig", err)
			}
			if w, err := Start(cfg); !errors.Is(err, ErrConfig) {
				if err == nil {
					w.Close()
				}
				t.Errorf("Start: %v, want ErrConfig", err)
			}
		})
	}
}

// A share of the plain hosts gets a Crawl-delay in the range, and the
// pages' sizes spread over theirs; the seed decides both, and the link
// graph stays the one the seed gives without them.
func TestCrawlDelayAndPageSizes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Seed = 40, 20, 3
	plain := startWeb(t, cfg)
	cfg.PageBytes, cfg.PageBytesMax = 5000, 40000
	cfg.CrawlDelayShare, cfg.CrawlDelayMin, cfg.CrawlDelayMax = 0.5, 200*time.Millisecond, time.Second
	w := startWeb(t, cfg)

	delayed := 0
	for i, h := range w.hosts {
		d, ok := h.robots.crawlDelay(cfg.Agent)
		if !ok {
			continue
		}
		delayed++
		if i == 0 || d < cfg.CrawlDelayMin || d > cfg.CrawlDelayMax || d%time.Millisecond != 0 {
			t.Errorf("host %d: Crawl-delay %v, want whole ms in [%v, %v] and none on host 0", i, d, cfg.CrawlDelayMin, cfg.CrawlDelayMax)
		}
		want := fmt.Sprintf("Crawl-delay: %g\n", d.Seconds())
		if body := string(h.static[robotsPath].body); !strings.Contains(body, want) {
			t.Errorf("host %d: robots.txt lacks %q:\n%s", i, want, body)
		}
	}
	if delayed < 10 || delayed > 30 {
		t.Errorf("%d of %d hosts have a Crawl-delay, want about half", delayed, cfg.Hosts)
	}

	lo, hi := math.MaxInt, 0
	for i, h := range w.hosts {
		for n := range cfg.PagesPerHost {
			target := fmt.Sprintf("/p/%d.html", n)
			size := len(h.static[target].body)
			lo, hi = min(lo, size), max(hi, size)
			if got, want := linksOf(h.static[target].body), linksOf(plain.hosts[i].static[target].body); !slices.Equal(got, want) {
				t.Fatalf("host %d %s: links %v, want the seed's %v", i, target, got, want)
			}
		}
	}
	// Sizes are approximate: a page's text is cut at a word.
	if lo < 4000 || lo > 10000 || hi < 30000 || hi > 45000 {
		t.Errorf("page sizes span %d-%d B, want about 5000-40000", lo, hi)
	}
}

// linksOf returns the hrefs of a page, in order, without their ports
// (each web listens on its own).
func linksOf(body []byte) []string {
	var out []string
	for _, m := range hrefRE.FindAllSubmatch(body, -1) {
		out = append(out, portRE.ReplaceAllString(string(m[1]), "/"))
	}
	return out
}

var hrefRE, portRE = regexp.MustCompile(`href="([^"]*)"`), regexp.MustCompile(`:[0-9]+/`)

// TestBuiltResources checks the construction without a network: every
// MustFetch and MustNotFetch resource exists, and robots agrees with them.
func TestBuiltResources(t *testing.T) {
	w := startWeb(t, featuresConfig())
	dynamic := map[string]bool{"/err/429.html": true, "/slow.html": true}
	byKey := map[string]*host{}
	for _, h := range w.hosts {
		byKey[h.key] = h
	}
	split := func(id string) (*host, string) {
		i := strings.IndexByte(id, '/')
		return byKey[id[:i]], id[i:]
	}
	for _, id := range w.MustFetch() {
		h, target := split(id)
		if h.static[target] == nil && !dynamic[target] {
			t.Errorf("must-fetch %s is not served", id)
		}
		if !h.robots.allowed(w.cfg.Agent, target) {
			t.Errorf("must-fetch %s is disallowed by robots.txt", id)
		}
	}
	if len(w.MustFetch()) < 6*w.cfg.PagesPerHost {
		t.Errorf("only %d must-fetch resources", len(w.MustFetch()))
	}
	for _, id := range w.MustNotFetch() {
		if h, target := split(id); h.static[target] == nil {
			t.Errorf("must-not-fetch %s is not served (a crawler asking would not be caught by status)", id)
		}
	}
	for i, want := range []role{roleOpen, roleStar, roleAgent, roleDelay, roleRobotsRedir, roleRobots5xx} {
		if w.hosts[i].role != want {
			t.Errorf("host %d has role %d, want %d", i, w.hosts[i].role, want)
		}
	}
}

func TestCanonicalTarget(t *testing.T) {
	tests := []struct {
		in, want string
		session  bool
	}{
		{"/", "/", false},
		{"", "/", false},
		{"/p/%33.html", "/p/3.html", false},
		{"/a%2fb", "/a%2Fb", false},
		{"/./p/../q/", "/q/", false},
		{"/a/.", "/a/", false},
		{"//a//b", "/a/b", false},
		{"/p?utm_source=x&b=2&a=1&fbclid=z", "/p?a=1&b=2", false},
		{"/p?SID=1", "/p", true},
		{"/p?jsessionid=1&x", "/p?x", true},
		{"/p#frag", "/p", false},
		{"HTTP://127.0.1.1:80/p?q", "/p?q", false},
		{"http://127.0.1.1:80", "/", false},
		{"/%zz%4", "/%25zz%254", false},
		{"/%0%61", "/%250a", false},
	}
	for _, tt := range tests {
		got, session := CanonicalTarget(tt.in)
		if got != tt.want || session != tt.session {
			t.Errorf("CanonicalTarget(%q) = %q, %v; want %q, %v", tt.in, got, session, tt.want, tt.session)
		}
	}
}

func FuzzCanonicalTarget(f *testing.F) {
	for _, s := range []string{"/", "/p/%33.html?utm_source=x", "/a/./b/../c/?b=1&a=2#x", "http://h/x?sid=1", "/%2e%2E/x", "?a&&b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, _ := CanonicalTarget(in)
		if !strings.HasPrefix(c, "/") {
			t.Fatalf("CanonicalTarget(%q) = %q, not a path", in, c)
		}
		if again, session := CanonicalTarget(c); again != c || session {
			t.Fatalf("not idempotent: %q -> %q -> %q (session %v)", in, c, again, session)
		}
	})
}

// BenchmarkServeStatic measures the handler alone on a pre-rendered page.
func BenchmarkServeStatic(b *testing.B) {
	w := startWeb(b, DefaultConfig())
	h := w.hosts[0]
	req := httptest.NewRequest(http.MethodGet, "/p/1.html", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkServeLoopback measures whole exchanges over keep-alive loopback
// connections, client included, as the load test sees them.
func BenchmarkServeLoopback(b *testing.B) {
	w := startWeb(b, DefaultConfig())
	url := "http://" + w.Hosts()[0] + "/p/1.html"
	c := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Second}
	defer c.CloseIdleConnections()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// TestEndBeforeLastByteLeaves checks the invariant the politeness audit
// rests on: the logged End of an answer is read before its last byte is
// handed to the socket, so a crawler holding the whole answer started its
// clock after End, however long the server's goroutine is descheduled. The
// bomb (~64 KiB on the wire) is too big for net/http's buffers; a page is
// small enough to sit in them.
func TestEndBeforeLastByteLeaves(t *testing.T) {
	w := startWeb(t, featuresConfig())
	h := w.hosts[3]
	for _, target := range []string{"/bomb.html", "/"} {
		t.Run(target, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			wl := &writeLog{Listener: ln}
			srv := httptest.NewUnstartedServer(h)
			srv.Listener = wl
			srv.Start()
			defer srv.Close()

			resp, err := rawClient().Get(srv.URL + target)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n == 0 {
				t.Fatalf("read %d bytes: %v", n, err)
			}
			last := wl.last()
			var rec *Request
			for _, r := range w.Requests() {
				if r.Target == target && r.Host == h.key {
					rec = &r
				}
			}
			if rec == nil || rec.Status != http.StatusOK {
				t.Fatalf("log entry %+v, want a 200 for %s", rec, target)
			}
			// The two clock readings happen on different goroutines, maybe
			// different CPUs, whose clocks can disagree by some hundred
			// nanoseconds on a VM; the bug this guards against was 14 ms.
			const skew = 10 * time.Microsecond
			if late := rec.End.Sub(last); late > skew {
				t.Errorf("End logged %v after the last byte was written to the socket", late)
			}
		})
	}
}

// writeLog is a listener whose connections remember when they last wrote.
type writeLog struct {
	net.Listener
	mu sync.Mutex
	at time.Time
}

func (l *writeLog) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &loggedConn{Conn: c, log: l}, nil
}

func (l *writeLog) last() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at
}

type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c *loggedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.log.mu.Lock()
	c.log.at = time.Now()
	c.log.mu.Unlock()
	return n, err
}
