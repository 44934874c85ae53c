package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// testPage is what /page serves.
var testPage = []byte("<!doctype html><html><head><title>t</title></head><body>" +
	strings.Repeat("<p>polite crawling</p>\n", 40) + "</body></html>")

// bombPlain is the decoded size of /bomb: far over the caps the tests set,
// a few KiB once compressed.
const bombPlain = 16 << 20

var bombGzip = sync.OnceValue(func() []byte {
	return mustEncode("gzip", make([]byte, bombPlain))
})

// received is what the test site saw of one request.
type received struct {
	path   string
	uri    string
	proto  int
	header http.Header
	tls    *tls.ConnectionState // nil over plain http
}

// testSite is the loopback web the client tests fetch from: one httptest
// server with a handler per behaviour, recording what each request carried so
// the tests assert from the server's side.
type testSite struct {
	*httptest.Server
	release chan struct{} // closed at cleanup to free /hang and /drip

	mu   sync.Mutex
	reqs []received
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	s := &testSite{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(s.handler())
	s.Start()
	// Cleanups run last-in first-out: free blocked handlers, then close.
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) })
	return s
}

func newTLSTestSite(t *testing.T, http2 bool) *testSite {
	t.Helper()
	return newTLSTestSiteMax(t, http2, 0)
}

// newTLSTestSiteMax is newTLSTestSite offering TLS versions up to
// maxVersion (0: the default, 1.3).
func newTLSTestSiteMax(t *testing.T, http2 bool, maxVersion uint16) *testSite {
	t.Helper()
	s := &testSite{release: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(s.handler())
	s.EnableHTTP2 = http2
	s.TLS = &tls.Config{MaxVersion: maxVersion}
	// The untrusted-certificate test makes handshakes fail on purpose.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) })
	return s
}

// requests returns what the site received for path ("" for every path).
func (s *testSite) requests(path string) []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []received
	for _, r := range s.reqs {
		if path == "" || r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func (s *testSite) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(testPage)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil {
			http.Error(w, "bad code", http.StatusBadRequest)
			return
		}
		if code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, "status %d", code)
	})
	// /redirect/... answers with ?code= (default 302) and Location ?to= when
	// present, so tests choose both.
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusFound
		if c := r.URL.Query().Get("code"); c != "" {
			code, _ = strconv.Atoi(c)
		}
		if to, ok := r.URL.Query()["to"]; ok {
			w.Header()["Location"] = to
		}
		w.WriteHeader(code)
	})
	mux.HandleFunc("/encoded/{coding}", func(w http.ResponseWriter, r *http.Request) {
		coding := r.PathValue("coding")
		body := testPage
		switch coding {
		case "gzip", "br", "zstd", "deflate":
			body = mustEncode(coding, testPage)
		}
		w.Header().Set("Content-Encoding", coding)
		_, _ = w.Write(body)
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bombGzip())
	})
	// /big serves ?n= bytes (default 10 KiB), chunked when ?chunked=1.
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n := 10 << 10
		if v := r.URL.Query().Get("n"); v != "" {
			n, _ = strconv.Atoi(v)
		}
		body := bigBody(n)
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
			return
		}
		for len(body) > 0 {
			k := min(len(body), 1000)
			_, _ = w.Write(body[:k])
			w.(http.Flusher).Flush()
			body = body[k:]
		}
	})
	mux.HandleFunc("/gzip-large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(largeGzip())
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Parts", "3")
		for _, part := range []string{"first ", "second ", "third"} {
			_, _ = io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/etag", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(testPage)
	})
	// /hang never answers until the client gives up or the test ends.
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	})
	// /drip sends headers, then one byte every 20ms for at most 10s.
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 500 {
			select {
			case <-r.Context().Done():
				return
			case <-s.release:
				return
			case <-tick.C:
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	})
	mux.HandleFunc("/huge-headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("b", maxResponseHeaderBytes+1024))
	})
	// /reset reads the request and drops the connection without a word.
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, received{path: r.URL.Path, uri: r.RequestURI, proto: r.ProtoMajor, header: r.Header.Clone(), tls: r.TLS})
		s.mu.Unlock()
		if r.URL.Query().Get("close") != "" {
			w.Header().Set("Connection", "close")
		}
		mux.ServeHTTP(w, r)
	})
}

func bigBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// largeGzipPlain compresses poorly enough that a few KiB of its gzip form
// decode to a usable prefix.
var largeGzipPlain = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	x := uint32(1)
	for b.Len() < 256<<10 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		fmt.Fprintf(&b, "word%d ", x%100000)
	}
	return b.Bytes()
})

var largeGzip = sync.OnceValue(func() []byte {
	return mustEncode("gzip", largeGzipPlain())
})

// newClient returns a client for loopback servers, with short timeouts so
// a failure cannot stall the suite.
func newClient(t testing.TB, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		UserAgent:      testUA,
		AllowPrivate:   true,
		ConnectTimeout: 2 * time.Second,
		HeaderTimeout:  3 * time.Second,
		TotalTimeout:   5 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// fakeDNS is a Config.Resolver that answers from a table and counts calls.
// It hands out its own slices, as a static resolver would.
type fakeDNS struct {
	mu    sync.Mutex
	hosts map[string][]netip.Addr
	calls map[string]int
}

func newFakeDNS(hosts map[string][]string) *fakeDNS {
	f := &fakeDNS{hosts: make(map[string][]netip.Addr), calls: make(map[string]int)}
	for h, addrs := range hosts {
		f.set(h, addrs...)
	}
	return f
}

func (f *fakeDNS) set(host string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hosts[host] = nil
	for _, a := range addrs {
		f.hosts[host] = append(f.hosts[host], netip.MustParseAddr(a))
	}
}

func (f *fakeDNS) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[host]++
	addrs, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

func (f *fakeDNS) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

func mustDo(t *testing.T, c *Client, req Request) *Response {
	t.Helper()
	resp, err := c.Do(t.Context(), req)
	if err != nil {
		t.Fatalf("Do(%s): %v (class %s)", req.URL, err, Classify(err))
	}
	return resp
}

// parseRaw reads a RawResponse back the way a WARC reader would.
func parseRaw(t *testing.T, raw []byte) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("RawResponse does not parse: %v\n%.300q", err, raw)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("RawResponse body: %v", err)
	}
	return resp, body
}

func TestDoPage(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	before := time.Now()
	resp := mustDo(t, c, Request{URL: site.URL + "/page?b=2&a=1"})

	if resp.Status != http.StatusOK || !bytes.Equal(resp.Body, testPage) || resp.Truncated || resp.TruncReason != "" {
		t.Errorf("Do = status %d, %d body bytes, truncated %v %q; want 200, the page, whole",
			resp.Status, len(resp.Body), resp.Truncated, resp.TruncReason)
	}
	if resp.URL != site.URL+"/page?b=2&a=1" || resp.Location != "" || resp.RemoteIP != "127.0.0.1" {
		t.Errorf("URL %q, Location %q, RemoteIP %q", resp.URL, resp.Location, resp.RemoteIP)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	if resp.FetchedAt.Before(before.Add(-time.Second)) || resp.FetchedAt.Location() != time.UTC ||
		resp.TTFB <= 0 || resp.Duration < resp.TTFB {
		t.Errorf("FetchedAt %v, TTFB %v, Duration %v", resp.FetchedAt, resp.TTFB, resp.Duration)
	}

	reqs := site.requests("/page")
	if len(reqs) != 1 {
		t.Fatalf("site got %d requests for /page, want 1", len(reqs))
	}
	h := reqs[0].header
	want := map[string]string{
		"User-Agent":        testUA,
		"Accept":            defaultAccept,
		"Accept-Encoding":   "gzip, br, zstd",
		"If-None-Match":     "",
		"If-Modified-Since": "",
		"Cookie":            "",
	}
	for name, v := range want {
		if got := h.Get(name); got != v {
			t.Errorf("server saw %s %q, want %q", name, got, v)
		}
	}
	if reqs[0].uri != "/page?b=2&a=1" {
		t.Errorf("server saw request URI %q", reqs[0].uri)
	}
}

func TestDoAccept(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	tests := []struct{ accept, want string }{
		{"", defaultAccept},
		{"application/xml", "application/xml"},
		{"text/plain\r\nX-Injected: 1", defaultAccept},
	}
	for i, tt := range tests {
		path := fmt.Sprintf("/page?i=%d", i)
		mustDo(t, c, Request{URL: site.URL + path, Accept: tt.accept})
		reqs := site.requests("/page")
		got := reqs[len(reqs)-1].header
		if got.Get("Accept") != tt.want || got.Get("X-Injected") != "" {
			t.Errorf("Accept %q: server saw Accept %q, X-Injected %q; want %q", tt.accept, got.Get("Accept"), got.Get("X-Injected"), tt.want)
		}
	}
}

func TestDoStatuses(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	for _, code := range []int{200, 201, 204, 304, 400, 403, 404, 410, 429, 451, 500, 502, 503} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			resp := mustDo(t, c, Request{URL: fmt.Sprintf("%s/status/%d", site.URL, code)})
			if resp.Status != code {
				t.Errorf("Status = %d, want %d", resp.Status, code)
			}
			wantBody := fmt.Sprintf("status %d", code)
			if code == 204 || code == 304 {
				wantBody = ""
			}
			if string(resp.Body) != wantBody || resp.Truncated {
				t.Errorf("Body = %q (truncated %v), want %q", resp.Body, resp.Truncated, wantBody)
			}
			if code == 503 || code == 429 {
				if got := resp.Header.Get("Retry-After"); got != "7" {
					t.Errorf("Retry-After = %q, want 7", got)
				}
			}
			raw, body := parseRaw(t, resp.RawResponse)
			if raw.StatusCode != code || string(body) != wantBody {
				t.Errorf("RawResponse reads back as %d %q", raw.StatusCode, body)
			}
		})
	}
}

func TestDoRedirectNotFollowed(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	base := site.URL + "/redirect/a/b"
	tests := []struct {
		name, to string // to "-" means no Location header
		code     int
		want     string
	}{
		{"absolute", "https://other.test/x?y=1", 301, "https://other.test/x?y=1"},
		{"absolute path", "/page?x=1", 302, site.URL + "/page?x=1"},
		{"relative", "../c", 303, site.URL + "/redirect/c"},
		{"sibling", "d", 307, site.URL + "/redirect/a/d"},
		{"query only", "?page=2", 308, site.URL + "/redirect/a/b?page=2"},
		{"protocol-relative", "//other.test/p", 302, "http://other.test/p"},
		{"uppercase scheme", "HTTPS://other.test/", 302, "https://other.test/"},
		{"fragment kept for the normalizer", "/page#top", 302, site.URL + "/page#top"},
		{"unclosed IPv6", "http://[::1", 302, ""},
		{"space in host", "http://a b/", 302, ""},
		{"non-http scheme", "javascript:alert(1)", 302, ""},
		{"ftp", "ftp://other.test/f", 301, ""},
		{"empty", "", 302, ""},
		{"missing", "-", 302, ""},
		{"not a redirect status", "/page", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{"code": {strconv.Itoa(tt.code)}}
			if tt.to != "-" {
				q.Set("to", tt.to)
			}
			resp := mustDo(t, c, Request{URL: base + "?" + q.Encode()})
			if resp.Status != tt.code || resp.Location != tt.want {
				t.Errorf("Status %d, Location %q; want %d, %q", resp.Status, resp.Location, tt.code, tt.want)
			}
			if tt.to != "-" && resp.Header.Get("Location") != tt.to {
				t.Errorf("Header Location = %q, want the header as sent %q", resp.Header.Get("Location"), tt.to)
			}
		})
	}
	if n := len(site.requests("/page")) + len(site.requests("/redirect/c")) + len(site.requests("/redirect/a/d")); n != 0 {
		t.Errorf("site got %d requests for redirect targets, want 0 (redirects are not followed)", n)
	}
}

func TestDoContentEncoding(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	for _, coding := range []string{"gzip", "br", "zstd", "deflate", "identity", "compress"} {
		t.Run(coding, func(t *testing.T) {
			resp := mustDo(t, c, Request{URL: site.URL + "/encoded/" + coding})
			if !bytes.Equal(resp.Body, testPage) || resp.Truncated {
				t.Errorf("Body = %d bytes (truncated %v %q), want the %d-byte page", len(resp.Body), resp.Truncated, resp.TruncReason, len(testPage))
			}
			raw, rawBody := parseRaw(t, resp.RawResponse)
			if raw.Header.Get("Content-Encoding") != coding {
				t.Errorf("RawResponse Content-Encoding = %q, want %q", raw.Header.Get("Content-Encoding"), coding)
			}
			wantRaw := testPage
			switch coding {
			case "gzip", "br", "zstd", "deflate":
				wantRaw = encode(t, coding, testPage)
			}
			if !bytes.Equal(rawBody, wantRaw) {
				t.Errorf("RawResponse body is %d bytes, want the %d bytes as sent (still encoded)", len(rawBody), len(wantRaw))
			}
		})
	}
}

func TestDoMaxBodyBytes(t *testing.T) {
	site := newTestSite(t)
	const limit = 4096
	c := newClient(t, func(cfg *Config) { cfg.MaxBodyBytes = limit })
	tests := []struct {
		name       string
		path       string
		wantLen    int
		wantReason string
	}{
		{"under", "/big?n=4095", 4095, ""},
		{"exactly", "/big?n=4096", 4096, ""},
		{"one over", "/big?n=4097", 4096, TruncMaxBodyBytes},
		{"far over", "/big?n=1000000", 4096, TruncMaxBodyBytes},
		{"chunked over", "/big?n=20000&chunked=1", 4096, TruncMaxBodyBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := mustDo(t, c, Request{URL: site.URL + tt.path})
			if len(resp.Body) != tt.wantLen || resp.TruncReason != tt.wantReason || resp.Truncated != (tt.wantReason != "") {
				t.Errorf("Body %d bytes, Truncated %v, TruncReason %q; want %d bytes, %q",
					len(resp.Body), resp.Truncated, resp.TruncReason, tt.wantLen, tt.wantReason)
			}
			if !bytes.Equal(resp.Body, bigBody(tt.wantLen)) {
				t.Errorf("Body is not the first %d bytes served", tt.wantLen)
			}
			raw, rawBody := parseRaw(t, resp.RawResponse)
			if raw.ContentLength != int64(tt.wantLen) || !bytes.Equal(rawBody, resp.Body) {
				t.Errorf("RawResponse Content-Length %d with %d body bytes, want the stored %d", raw.ContentLength, len(rawBody), tt.wantLen)
			}
		})
	}

	// A compressed body cut by the wire cap keeps what decoded and blames
	// the cap, not the broken stream.
	t.Run("gzip cut by wire cap", func(t *testing.T) {
		c := newClient(t, func(cfg *Config) { cfg.MaxBodyBytes = 16 << 10 })
		resp := mustDo(t, c, Request{URL: site.URL + "/gzip-large"})
		if resp.TruncReason != TruncMaxBodyBytes || !resp.Truncated {
			t.Errorf("TruncReason = %q, want %q", resp.TruncReason, TruncMaxBodyBytes)
		}
		if len(resp.Body) == 0 || !bytes.HasPrefix(largeGzipPlain(), resp.Body) {
			t.Errorf("Body is %d bytes, want a non-empty prefix of the original", len(resp.Body))
		}
		if _, rawBody := parseRaw(t, resp.RawResponse); len(rawBody) != 16<<10 {
			t.Errorf("RawResponse body %d bytes, want the 16 KiB read", len(rawBody))
		}
	})
}

// TestDoGzipBomb: a few KiB on the wire that decode to 16 MiB stop at
// MaxDecodedBytes, while the WARC record keeps every compressed byte.
func TestDoGzipBomb(t *testing.T) {
	site := newTestSite(t)
	const limit = 1 << 20
	c := newClient(t, func(cfg *Config) { cfg.MaxDecodedBytes = limit })
	resp := mustDo(t, c, Request{URL: site.URL + "/bomb"})
	if len(bombGzip()) > bombPlain/100 {
		t.Fatalf("bomb is %d bytes compressed; the test needs a high ratio", len(bombGzip()))
	}
	if len(resp.Body) != limit || resp.TruncReason != TruncMaxDecodedBytes || !resp.Truncated {
		t.Errorf("Body %d bytes, TruncReason %q; want %d bytes, %q", len(resp.Body), resp.TruncReason, limit, TruncMaxDecodedBytes)
	}
	if cap(resp.Body) > limit+1 {
		t.Errorf("cap(Body) = %d, want at most %d", cap(resp.Body), limit+1)
	}
	if bytes.IndexFunc(resp.Body, func(r rune) bool { return r != 0 }) >= 0 {
		t.Error("Body is not the decoded zeros")
	}
	if _, rawBody := parseRaw(t, resp.RawResponse); !bytes.Equal(rawBody, bombGzip()) {
		t.Errorf("RawResponse body %d bytes, want the %d compressed bytes sent", len(rawBody), len(bombGzip()))
	}
}

// TestDoOverCap fetches bodies past the default caps, compression bombs of
// every coding the client decodes and an identity body with and without a
// Content-Length: each is cut at its cap with the reason recorded, and a
// fetch allocates about the cap once. Reading into a slice that doubles
// as it fills, then copying it into the record, cost twice the cap and
// more; the bound leaves an eighth of the cap for everything else (half
// under the race detector).
func TestDoOverCap(t *testing.T) {
	srv := overCapSite(t)
	c := newClient(t, nil)
	tests := []struct {
		path       string
		wantLen    int
		wantReason string
	}{
		{"/huge", DefaultMaxBodyBytes, TruncMaxBodyBytes},
		{"/huge?chunked=1", DefaultMaxBodyBytes, TruncMaxBodyBytes},
	}
	for _, coding := range bombCodings {
		tests = append(tests, struct {
			path       string
			wantLen    int
			wantReason string
		}{"/bomb/" + coding, DefaultMaxDecodedBytes, TruncMaxDecodedBytes})
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			req := Request{URL: srv.URL + tt.path}
			// The first fetch fills the pools of chunks and decoders the
			// measured ones reuse; no collection empties them meanwhile.
			// The least of a few fetches is measured: under the race
			// detector sync.Pool drops a quarter of what is put back, and
			// a dropped brotli decoder alone costs its 16 MiB window again
			// (CI: 31,489,184 bytes against a bound of 31,457,280).
			mustDo(t, c, req)
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			var resp *Response
			allocated := uint64(math.MaxUint64)
			for range 4 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				resp = mustDo(t, c, req)
				runtime.ReadMemStats(&after)
				allocated = min(allocated, after.TotalAlloc-before.TotalAlloc)
			}

			if len(resp.Body) != tt.wantLen || resp.TruncReason != tt.wantReason || !resp.Truncated {
				t.Errorf("Body %d bytes, Truncated %v, TruncReason %q; want %d bytes, %q",
					len(resp.Body), resp.Truncated, resp.TruncReason, tt.wantLen, tt.wantReason)
			}
			if bytes.ContainsFunc(resp.Body, func(r rune) bool { return r == 0 }) != strings.HasPrefix(tt.path, "/bomb/") {
				t.Error("Body is not what was served")
			}
			if _, rawBody := parseRaw(t, resp.RawResponse); len(rawBody) > DefaultMaxBodyBytes {
				t.Errorf("RawResponse body %d bytes, over the %d-byte cap", len(rawBody), DefaultMaxBodyBytes)
			}
			slack := tt.wantLen / 8
			if raceEnabled {
				slack = tt.wantLen / 2 // sync.Pool drops a quarter of what is put back
			}
			if limit := uint64(tt.wantLen + slack); allocated > limit {
				t.Errorf("the fetch allocated %d bytes for a %d-byte body, want at most %d", allocated, tt.wantLen, limit)
			}
			t.Logf("%d bytes allocated for a %d-byte body", allocated, tt.wantLen)
		})
	}
}

func TestDoConditional(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	const lm = "Wed, 21 Oct 2015 07:28:00 GMT"

	first := mustDo(t, c, Request{URL: site.URL + "/etag"})
	if first.Status != 200 || first.Header.Get("ETag") != `"v1"` || first.Header.Get("Last-Modified") != lm {
		t.Fatalf("first fetch: %d, ETag %q, Last-Modified %q", first.Status, first.Header.Get("ETag"), first.Header.Get("Last-Modified"))
	}

	tests := []struct {
		name       string
		etag, lm   string
		wantINM    string
		wantIMS    string
		wantStatus int
	}{
		{"both validators", first.Header.Get("ETag"), first.Header.Get("Last-Modified"), `"v1"`, lm, 304},
		{"etag only", `"v1"`, "", `"v1"`, "", 304},
		{"last-modified only", "", lm, "", lm, 200},
		{"stale etag", `"v0"`, "", `"v0"`, "", 200},
		{"weak etag", `W/"v1"`, "", `W/"v1"`, "", 200},
		{"etag with CRLF dropped", "\"v1\"\r\nX-Injected: 1", lm, "", lm, 200},
		{"etag with NUL dropped", "\"v1\x00\"", "", "", "", 200},
		{"last-modified with LF dropped", `"v1"`, lm + "\nX-Injected: 1", `"v1"`, "", 304},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("/etag?i=%d", i)
			resp := mustDo(t, c, Request{URL: site.URL + path, ETag: tt.etag, LastModified: tt.lm})
			if resp.Status != tt.wantStatus {
				t.Errorf("Status = %d, want %d", resp.Status, tt.wantStatus)
			}
			if tt.wantStatus == 304 && (len(resp.Body) != 0 || resp.Truncated) {
				t.Errorf("304 with body %q, truncated %v", resp.Body, resp.Truncated)
			}
			reqs := site.requests("/etag")
			h := reqs[len(reqs)-1].header
			if h.Get("If-None-Match") != tt.wantINM || h.Get("If-Modified-Since") != tt.wantIMS || h.Get("X-Injected") != "" {
				t.Errorf("server saw If-None-Match %q, If-Modified-Since %q, X-Injected %q; want %q, %q, none",
					h.Get("If-None-Match"), h.Get("If-Modified-Since"), h.Get("X-Injected"), tt.wantINM, tt.wantIMS)
			}
			if got := bytes.Contains(resp.RawRequest, []byte("If-None-Match")); got != (tt.wantINM != "") {
				t.Errorf("RawRequest If-None-Match present = %v, want %v", got, tt.wantINM != "")
			}
		})
	}
}

// rawServer answers every connection with one canned response and hands
// back the request head each connection sent, for byte-level checks httptest
// cannot make. It serves at most 16 connections.
func rawServer(t *testing.T, response string) (addr string, heads <-chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []byte, 16)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 16 {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			var head []byte
			buf := make([]byte, 4096)
			for !bytes.Contains(head, []byte("\r\n\r\n")) && len(head) < 64<<10 {
				n, err := conn.Read(buf)
				head = append(head, buf[:n]...)
				if err != nil {
					break
				}
			}
			ch <- head
			_, _ = io.WriteString(conn, response)
			_ = conn.Close()
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().String(), ch
}

// TestDoRawRecords checks the WARC bytes against what crossed the wire: the
// request exactly as the server read it, the response de-chunked with its
// length fixed.
func TestDoRawRecords(t *testing.T) {
	tests := []struct {
		name     string
		response string // as the server writes it
		wantRaw  string // RawResponse
		wantBody string
	}{
		{
			name:     "chunked",
			response: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
			wantRaw:  "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-A: 1\r\nContent-Length: 11\r\n\r\nhello world",
			wantBody: "hello world",
		},
		{
			name:     "chunked with trailer",
			response: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n",
			// The trailer and its announcement go: the record is not chunked.
			wantRaw:  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
			wantBody: "abc",
		},
		{
			name:     "content-length, headers sorted, repeats kept",
			response: "HTTP/1.1 404 Not Found\r\nX-B: 2\r\nSet-Cookie: a=1\r\nContent-Length: 4\r\nSet-Cookie: b=2\r\n\r\nnope",
			wantRaw:  "HTTP/1.1 404 Not Found\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-B: 2\r\nContent-Length: 4\r\n\r\nnope",
			wantBody: "nope",
		},
		{
			name:     "HTTP/1.0 read to close",
			response: "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nuntil close",
			wantRaw:  "HTTP/1.0 200 OK\r\nServer: old\r\nContent-Length: 11\r\n\r\nuntil close",
			wantBody: "until close",
		},
		{
			name:     "custom reason phrase kept",
			response: "HTTP/1.1 200 Fine Thanks\r\nContent-Length: 0\r\n\r\n",
			wantRaw:  "HTTP/1.1 200 Fine Thanks\r\nContent-Length: 0\r\n\r\n",
		},
		{
			name:     "missing reason phrase filled",
			response: "HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n",
			wantRaw:  "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
		},
		{
			name:     "gzip stored encoded",
			response: "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(string(encode(t, "gzip", []byte("zipped")))) + "0\r\n\r\n",
			wantRaw:  "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(len(encode(t, "gzip", []byte("zipped")))) + "\r\n\r\n" + string(encode(t, "gzip", []byte("zipped"))),
			wantBody: "zipped",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, heads := rawServer(t, tt.response)
			c := newClient(t, nil)
			resp := mustDo(t, c, Request{
				URL:          "http://" + addr + "/raw/path?b=2&a=%20x",
				ETag:         `"abc"`,
				LastModified: "Mon, 02 Jan 2006 15:04:05 GMT",
				Accept:       "text/plain",
			})
			var wire []byte
			select {
			case wire = <-heads:
			case <-time.After(5 * time.Second):
				t.Fatal("server saw no request")
			}
			if !bytes.Equal(resp.RawRequest, wire) {
				t.Errorf("RawRequest differs from the wire:\n got %q\nwant %q", resp.RawRequest, wire)
			}
			if _, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(resp.RawRequest))); err != nil {
				t.Errorf("RawRequest does not parse: %v", err)
			}
			if string(resp.RawResponse) != tt.wantRaw {
				t.Errorf("RawResponse\n got %q\nwant %q", resp.RawResponse, tt.wantRaw)
			}
			if string(resp.Body) != tt.wantBody {
				t.Errorf("Body = %q, want %q", resp.Body, tt.wantBody)
			}
			raw, _ := parseRaw(t, resp.RawResponse)
			if len(raw.TransferEncoding) != 0 || raw.ContentLength < 0 {
				t.Errorf("RawResponse reads back with Transfer-Encoding %v, Content-Length %d", raw.TransferEncoding, raw.ContentLength)
			}
		})
	}
}

func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

// TestDoRawResponseHTTPServer parses RawResponse back for a real server's
// chunked answer and compares it field by field with the Response.
func TestDoRawResponseHTTPServer(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	resp := mustDo(t, c, Request{URL: site.URL + "/chunked"})
	if string(resp.Body) != "first second third" {
		t.Fatalf("Body = %q", resp.Body)
	}
	if bytes.Contains(bytes.ToLower(resp.RawResponse), []byte("chunked")) {
		t.Errorf("RawResponse still mentions chunked:\n%q", resp.RawResponse)
	}
	raw, body := parseRaw(t, resp.RawResponse)
	if raw.StatusCode != resp.Status || raw.ContentLength != int64(len(resp.Body)) || !bytes.Equal(body, resp.Body) {
		t.Errorf("RawResponse reads back as %d, Content-Length %d, body %q", raw.StatusCode, raw.ContentLength, body)
	}
	for name, vs := range resp.Header {
		if got := raw.Header[name]; strings.Join(got, ",") != strings.Join(vs, ",") {
			t.Errorf("RawResponse header %s = %q, Response has %q", name, got, vs)
		}
	}
	// Body shares the record's memory rather than copying it.
	if &resp.Body[0] != &resp.RawResponse[len(resp.RawResponse)-len(resp.Body)] {
		t.Error("unencoded Body does not share RawResponse's tail")
	}
}

func TestDoTimeouts(t *testing.T) {
	site := newTestSite(t)
	tests := []struct {
		name        string
		path        string
		cfg         func(*Config)
		wantAtLeast time.Duration
		wantBelow   time.Duration
	}{
		{
			name: "header timeout on a server that never answers", path: "/hang",
			cfg:         func(c *Config) { c.HeaderTimeout = 200 * time.Millisecond; c.TotalTimeout = 5 * time.Second },
			wantAtLeast: 200 * time.Millisecond, wantBelow: 3 * time.Second,
		},
		{
			name: "total timeout on a slow-dripping body", path: "/drip",
			cfg:         func(c *Config) { c.HeaderTimeout = 5 * time.Second; c.TotalTimeout = 300 * time.Millisecond },
			wantAtLeast: 300 * time.Millisecond, wantBelow: 3 * time.Second,
		},
		{
			name: "total timeout shorter than header timeout", path: "/hang",
			cfg:         func(c *Config) { c.HeaderTimeout = 5 * time.Second; c.TotalTimeout = 200 * time.Millisecond },
			wantAtLeast: 200 * time.Millisecond, wantBelow: 3 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, tt.cfg)
			start := time.Now()
			resp, err := c.Do(t.Context(), Request{URL: site.URL + tt.path})
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("Do = %d with %d body bytes, want a timeout", resp.Status, len(resp.Body))
			}
			if got := Classify(err); got != ClassTimeout {
				t.Errorf("Classify(%v) = %q, want %q", err, got, ClassTimeout)
			}
			if elapsed < tt.wantAtLeast || elapsed > tt.wantBelow {
				t.Errorf("Do took %v, want between %v and %v", elapsed, tt.wantAtLeast, tt.wantBelow)
			}
		})
	}
}

func TestDoCancel(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)

	ctx, cancel := context.WithCancel(t.Context())
	timer := time.AfterFunc(100*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := c.Do(ctx, Request{URL: site.URL + "/hang"})
	if got := Classify(err); got != ClassCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled mid-request: Classify(%v) = %q, want %q", err, got, ClassCanceled)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Do returned %v after cancellation", elapsed)
	}

	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	before := len(site.requests(""))
	_, err = c.Do(ctx, Request{URL: site.URL + "/page"})
	if got := Classify(err); got != ClassCanceled {
		t.Errorf("cancelled before start: Classify(%v) = %q, want %q", err, got, ClassCanceled)
	}
	if n := len(site.requests("")) - before; n != 0 {
		t.Errorf("site got %d requests from a cancelled context", n)
	}

	// The caller's deadline, shorter than the client's, reads as a timeout.
	ctx, cancelDeadline := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancelDeadline()
	if _, err := c.Do(ctx, Request{URL: site.URL + "/hang"}); Classify(err) != ClassTimeout {
		t.Errorf("caller deadline: Classify(%v) = %q, want %q", err, Classify(err), ClassTimeout)
	}
}

func TestDoErrors(t *testing.T) {
	site := newTestSite(t)
	tlsSite := newTLSTestSite(t, false)
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return addr
	}()
	tests := []struct {
		name, url, want string
	}{
		{"refused", "http://" + refused + "/", ClassRefused},
		{"reset before any response", site.URL + "/reset", ClassReset},
		{"headers over the cap", site.URL + "/huge-headers", ClassHeadersTooLarge},
		{"untrusted certificate", tlsSite.URL + "/page", ClassTLS},
		{"unknown host", "http://nx.test/", ClassNoSuchHost},
		{"ftp", "ftp://example.test/", ClassInvalidURL},
		{"relative", "/page", ClassInvalidURL},
		{"no host", "http:///page", ClassInvalidURL},
		{"unparsable", "http://[::1/", ClassInvalidURL},
		{"control character", "http://example.test/\x7f", ClassInvalidURL},
	}
	dns := newFakeDNS(nil)
	c := newClient(t, func(cfg *Config) { cfg.Resolver = dns.resolve })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Do(t.Context(), Request{URL: tt.url})
			if err == nil {
				t.Fatalf("Do = status %d, want an error of class %s", resp.Status, tt.want)
			}
			if resp != nil {
				t.Errorf("Do returned a Response with the error %v", err)
			}
			if got := Classify(err); got != tt.want {
				t.Errorf("Classify(%v) = %q, want %q", err, got, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "fetch ") {
				t.Errorf("error %q does not name the operation", err)
			}
			if tt.want == ClassInvalidURL && !errors.Is(err, ErrInvalidURL) {
				t.Errorf("error %v does not wrap ErrInvalidURL", err)
			}
		})
	}
}

// TestDoHTTP2 fetches over TLS with HTTP/2 negotiated: the record is still
// rendered as HTTP/1.1, the form WARC readers parse, with the empty reason
// phrase HTTP/2 leaves (WARC-Protocol will say h2).
func TestDoHTTP2(t *testing.T) {
	site := newTLSTestSite(t, true)
	c := newClient(t, func(cfg *Config) { cfg.RootCAs = trusting(site) })

	resp := mustDo(t, c, Request{URL: site.URL + "/encoded/gzip"})
	if reqs := site.requests("/encoded/gzip"); len(reqs) != 1 || reqs[0].proto != 2 {
		t.Fatalf("site saw %+v, want one HTTP/2 request", reqs)
	}
	if !bytes.Equal(resp.Body, testPage) || resp.RemoteIP != "127.0.0.1" {
		t.Errorf("Body %d bytes, RemoteIP %q", len(resp.Body), resp.RemoteIP)
	}
	if !bytes.HasPrefix(resp.RawResponse, []byte("HTTP/1.1 200 \r\n")) {
		t.Errorf("RawResponse starts %.40q, want \"HTTP/1.1 200 \"", resp.RawResponse)
	}
	raw, body := parseRaw(t, resp.RawResponse)
	if raw.StatusCode != http.StatusOK {
		t.Errorf("RawResponse parses with status %d", raw.StatusCode)
	}
	if raw.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(body, encode(t, "gzip", testPage)) {
		t.Errorf("RawResponse body is %d bytes with Content-Encoding %q", len(body), raw.Header.Get("Content-Encoding"))
	}
}

// TestDoConnection checks what a Response says of the connection it came
// over, against what the server saw of it.
func TestDoConnection(t *testing.T) {
	tests := []struct {
		name         string
		site         func(*testing.T) *testSite
		wantProtocol string
		wantTLS      string
	}{
		{"plain HTTP/1.1", newTestSite, "http/1.1", ""},
		{"HTTP/1.1 over TLS 1.3", func(t *testing.T) *testSite { return newTLSTestSite(t, false) }, "http/1.1", "tls/1.3"},
		{"HTTP/2 over TLS 1.3", func(t *testing.T) *testSite { return newTLSTestSite(t, true) }, "h2", "tls/1.3"},
		{"HTTP/2 over TLS 1.2", func(t *testing.T) *testSite { return newTLSTestSiteMax(t, true, tls.VersionTLS12) }, "h2", "tls/1.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := tt.site(t)
			c := newClient(t, func(cfg *Config) { cfg.RootCAs = trusting(site) })
			resp := mustDo(t, c, Request{URL: site.URL + "/page"})
			reqs := site.requests("/page")
			if len(reqs) != 1 {
				t.Fatalf("site saw %d requests", len(reqs))
			}
			seen := reqs[0]
			wantSuite := ""
			if seen.tls != nil {
				wantSuite = tls.CipherSuiteName(seen.tls.CipherSuite)
			}
			if resp.Protocol != tt.wantProtocol || resp.TLSVersion != tt.wantTLS || resp.CipherSuite != wantSuite {
				t.Errorf("Protocol %q, TLSVersion %q, CipherSuite %q; want %q, %q, %q (the server saw HTTP/%d)",
					resp.Protocol, resp.TLSVersion, resp.CipherSuite, tt.wantProtocol, tt.wantTLS, wantSuite, seen.proto)
			}
			if (seen.tls != nil) != (tt.wantTLS != "") || (seen.proto == 2) != (tt.wantProtocol == "h2") {
				t.Errorf("the server saw HTTP/%d, TLS %v", seen.proto, seen.tls != nil)
			}
		})
	}
}

// trusting returns a pool holding site's certificate, or nil for a plain
// site.
func trusting(site *testSite) *x509.CertPool {
	if site.TLS == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AddCert(site.Certificate())
	return pool
}

func TestGet(t *testing.T) {
	site := newTestSite(t)
	c := newClient(t, nil)
	tests := []struct {
		name, url    string
		wantStatus   int
		wantLocation string
		wantBody     []byte
		wantClass    string
	}{
		{"page", site.URL + "/page", 200, "", testPage, ""},
		{"decoded", site.URL + "/encoded/br", 200, "", testPage, ""},
		{"redirect", site.URL + "/redirect/x?to=%2Frobots.txt", 302, site.URL + "/robots.txt", nil, ""},
		{"not found", site.URL + "/status/404", 404, "", []byte("status 404"), ""},
		{"invalid", "ftp://example.test/robots.txt", 0, "", nil, ClassInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, loc, body, err := c.Get(t.Context(), tt.url)
			if Classify(err) != tt.wantClass {
				t.Fatalf("Get error %v, want class %q", err, tt.wantClass)
			}
			if status != tt.wantStatus || loc != tt.wantLocation || !bytes.Equal(body, tt.wantBody) {
				t.Errorf("Get = %d, %q, %d bytes; want %d, %q, %d bytes", status, loc, len(body), tt.wantStatus, tt.wantLocation, len(tt.wantBody))
			}
		})
	}
}

// refuseConnect replaces the client's TCP connect: addresses on loopback are
// dialled for real (so a guard failure would reach the test server), any
// other is recorded and refused, so no test traffic leaves the machine.
func refuseConnect(c *Client) (dialled func() []string) {
	var mu sync.Mutex
	var seen []string
	dial := c.dialer.connect
	c.dialer.connect = func(ctx context.Context, network, address string) (net.Conn, error) {
		ap, err := netip.ParseAddrPort(address)
		if err == nil && ap.Addr().Unmap().IsLoopback() {
			return dial(ctx, network, address)
		}
		mu.Lock()
		seen = append(seen, address)
		mu.Unlock()
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("test refuses %s: %w", address, errTestRefused)}
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

var errTestRefused = errors.New("connection refused by test")

// TestGuard resolves a name to each address through Config.Resolver, and
// also uses the address as a literal host: without AllowPrivate, every
// non-public address is refused before any connect.
func TestGuard(t *testing.T) {
	tests := []struct {
		name    string
		addrs   []string
		blocked bool
		dialled []string // with port 80; for allowed cases
	}{
		{"loopback", []string{"127.0.0.1"}, true, nil},
		{"loopback range", []string{"127.45.6.7"}, true, nil},
		{"IPv6 loopback", []string{"::1"}, true, nil},
		{"10/8", []string{"10.1.2.3"}, true, nil},
		{"172.16/12", []string{"172.31.255.254"}, true, nil},
		{"192.168/16", []string{"192.168.0.1"}, true, nil},
		{"cloud metadata", []string{"169.254.169.254"}, true, nil},
		{"link-local", []string{"169.254.1.1"}, true, nil},
		{"CGNAT", []string{"100.64.0.1"}, true, nil},
		{"CGNAT top", []string{"100.127.255.254"}, true, nil},
		{"Alibaba metadata", []string{"100.100.100.200"}, true, nil},
		{"unspecified", []string{"0.0.0.0"}, true, nil},
		{"this network", []string{"0.1.2.3"}, true, nil},
		{"IPv6 unspecified", []string{"::"}, true, nil},
		{"ULA fd00::/8", []string{"fd00::1"}, true, nil},
		{"AWS IPv6 metadata", []string{"fd00:ec2::254"}, true, nil},
		{"ULA fc00::/8", []string{"fc00::1"}, true, nil},
		{"IPv6 link-local", []string{"fe80::1"}, true, nil},
		{"IPv4-mapped loopback", []string{"::ffff:127.0.0.1"}, true, nil},
		{"IPv4-mapped private", []string{"::ffff:10.0.0.1"}, true, nil},
		{"IPv4-mapped metadata", []string{"::ffff:169.254.169.254"}, true, nil},
		{"IPv4-compatible loopback", []string{"::127.0.0.1"}, true, nil},
		{"NAT64 of metadata", []string{"64:ff9b::a9fe:a9fe"}, true, nil},
		{"local-use NAT64", []string{"64:ff9b:1::808:808"}, true, nil},
		{"6to4 of loopback", []string{"2002:7f00:1::1"}, true, nil},
		{"multicast", []string{"224.0.0.1"}, true, nil},
		{"broadcast", []string{"255.255.255.255"}, true, nil},
		{"benchmarking", []string{"198.18.0.1"}, true, nil},
		{"documentation", []string{"2001:db8::1"}, true, nil},
		{"every address private", []string{"10.0.0.1", "127.0.0.1", "::1"}, true, nil},
		{"public", []string{"93.184.216.34"}, false, []string{"93.184.216.34:80"}},
		{"public IPv6", []string{"2606:4700:4700::1111"}, false, []string{"[2606:4700:4700::1111]:80"}},
		{"IPv4-mapped public dialled as IPv4", []string{"::ffff:8.8.8.8"}, false, []string{"8.8.8.8:80"}},
		{"NAT64 of public", []string{"64:ff9b::808:808"}, false, []string{"[64:ff9b::808:808]:80"}},
		{"6to4 of public", []string{"2002:808:808::1"}, false, []string{"[2002:808:808::1]:80"}},
		{"private skipped, public tried", []string{"127.0.0.1", "93.184.216.34", "10.0.0.1", "1.1.1.1"}, false,
			[]string{"93.184.216.34:80", "1.1.1.1:80"}},
		{"at most four addresses tried", []string{"1.0.0.1", "1.0.0.2", "1.0.0.3", "1.0.0.4", "1.0.0.5"}, false,
			[]string{"1.0.0.1:80", "1.0.0.2:80", "1.0.0.3:80", "1.0.0.4:80"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns := newFakeDNS(map[string][]string{"victim.test": tt.addrs})
			c := newClient(t, func(cfg *Config) {
				cfg.AllowPrivate = false
				cfg.Resolver = dns.resolve
			})
			dialled := refuseConnect(c)
			urls := []string{"http://victim.test/"}
			if len(tt.addrs) == 1 {
				urls = append(urls, "http://"+net.JoinHostPort(tt.addrs[0], "80")+"/")
			}
			for _, u := range urls {
				before := len(dialled())
				_, err := c.Do(t.Context(), Request{URL: u})
				got := dialled()[before:]
				if tt.blocked {
					if Classify(err) != ClassBlockedAddress || !errors.Is(err, ErrBlockedAddress) {
						t.Errorf("%s: Do error %v (class %q), want %q", u, err, Classify(err), ClassBlockedAddress)
					}
					if len(got) != 0 {
						t.Errorf("%s: dialled %v, want nothing", u, got)
					}
					continue
				}
				if !errors.Is(err, errTestRefused) || Classify(err) == ClassBlockedAddress {
					t.Errorf("%s: Do error %v, want the test's refusal", u, err)
				}
				want := tt.dialled
				if u != urls[0] {
					want = want[:1]
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s: dialled %v, want %v", u, got, want)
				}
			}
			if n := dns.count("victim.test"); n != 1 {
				t.Errorf("resolver called %d times, want 1 (literal IPs are not resolved)", n)
			}
		})
	}
}

// TestGuardLoopbackServer points names and literals at a live loopback server:
// refused without AllowPrivate (the server sees nothing), fetched with it.
// The name resolves to a public address first and to loopback once the cache
// expires, as in DNS rebinding.
func TestGuardLoopbackServer(t *testing.T) {
	site := newTestSite(t)
	u, _ := url.Parse(site.URL)
	port := u.Port()
	dns := newFakeDNS(map[string][]string{
		"rebind.test":    {"93.184.216.34"},
		"mapped.test":    {"::ffff:127.0.0.1"},
		"localhost.test": {"127.0.0.1"},
	})
	var offset atomic.Int64
	c := newClient(t, func(cfg *Config) {
		cfg.AllowPrivate = false
		cfg.Resolver = dns.resolve
		cfg.DNSCacheTTL = time.Minute
	})
	c.dialer.dns.now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	dialled := refuseConnect(c)

	_, err := c.Do(t.Context(), Request{URL: "http://rebind.test:" + port + "/page"})
	if !errors.Is(err, errTestRefused) || len(dialled()) != 1 {
		t.Fatalf("public answer: Do error %v, dialled %v; want one refused public dial", err, dialled())
	}
	dns.set("rebind.test", "127.0.0.1")
	offset.Store(int64(2 * time.Minute))

	for _, target := range []string{
		"http://rebind.test:" + port + "/page",
		"http://mapped.test:" + port + "/page",
		"http://localhost.test:" + port + "/page",
		"http://127.0.0.1:" + port + "/page",
		"http://[::ffff:127.0.0.1]:" + port + "/page",
		"http://[::ffff:7f00:1]:" + port + "/page",
	} {
		if _, err := c.Do(t.Context(), Request{URL: target}); Classify(err) != ClassBlockedAddress {
			t.Errorf("%s: Do error %v, want %q", target, err, ClassBlockedAddress)
		}
	}
	if n := len(site.requests("")); n != 0 {
		t.Fatalf("loopback server got %d requests through the guard", n)
	}
	if n := dns.count("rebind.test"); n != 2 {
		t.Errorf("rebind.test resolved %d times, want 2 (once per TTL)", n)
	}
	if got := dns.hosts["mapped.test"][0]; got != netip.MustParseAddr("::ffff:127.0.0.1") {
		t.Errorf("resolver's own slice was changed to %v", got)
	}

	open := newClient(t, func(cfg *Config) { cfg.Resolver = dns.resolve })
	for _, target := range []string{
		"http://rebind.test:" + port + "/page",
		"http://mapped.test:" + port + "/page",
		"http://[::ffff:127.0.0.1]:" + port + "/page",
	} {
		resp := mustDo(t, open, Request{URL: target})
		if resp.Status != 200 || resp.RemoteIP != "127.0.0.1" {
			t.Errorf("AllowPrivate %s: status %d from %q", target, resp.Status, resp.RemoteIP)
		}
	}
}

func TestBlockedAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.0.0.1", true}, {"169.254.169.254", true},
		{"100.64.0.0", true}, {"100.63.255.255", false}, {"100.128.0.0", false},
		{"fd00::1", true}, {"fe80::1%eth0", true}, {"::ffff:127.0.0.1", true}, {"::ffff:192.168.1.1", true},
		{"172.15.255.255", false}, {"172.32.0.0", false}, {"8.8.8.8", false}, {"2001:4860:4860::8888", false},
		{"::ffff:8.8.8.8", false}, {"64:ff9b::7f00:1", true}, {"64:ff9b::808:808", false},
		{"2002:a00:1::", true}, {"2002:808:808::", false}, {"::10.0.0.1", true}, {"::8.8.8.8", true},
		{"192.0.2.1", true}, {"203.0.113.9", true}, {"240.0.0.1", true}, {"ff02::1", true},
	}
	for _, tt := range tests {
		if got := blockedAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("blockedAddr(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if !blockedAddr(netip.Addr{}) {
		t.Error("the zero Addr is not blocked")
	}
}

// TestDNSCache counts resolver calls behind real fetches; responses carry
// Connection: close so every fetch dials, and so resolves, again.
func TestDNSCache(t *testing.T) {
	site := newTestSite(t)
	u, _ := url.Parse(site.URL)
	dns := newFakeDNS(map[string][]string{"cached.test": {"127.0.0.1"}})
	var offset atomic.Int64
	c := newClient(t, func(cfg *Config) {
		cfg.Resolver = dns.resolve
		cfg.DNSCacheTTL = time.Minute
	})
	c.dialer.dns.now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	page := "http://" + net.JoinHostPort("cached.test", u.Port()) + "/page?close=1"

	for range 3 {
		mustDo(t, c, Request{URL: page})
	}
	if n := dns.count("cached.test"); n != 1 {
		t.Errorf("3 fetches resolved %d times, want 1", n)
	}
	if n := len(site.requests("/page")); n != 3 {
		t.Fatalf("site got %d requests, want 3", n)
	}
	offset.Store(int64(61 * time.Second))
	mustDo(t, c, Request{URL: page})
	if n := dns.count("cached.test"); n != 2 {
		t.Errorf("after the TTL: resolved %d times, want 2", n)
	}

	// Negative caching: a dead name is asked once per 30 s, however many
	// of its URLs come by.
	for range 3 {
		_, err := c.Do(t.Context(), Request{URL: "http://nx.test/"})
		if Classify(err) != ClassNoSuchHost {
			t.Errorf("unknown host: Classify(%v) = %q, want %q", err, Classify(err), ClassNoSuchHost)
		}
	}
	if n := dns.count("nx.test"); n != 1 {
		t.Errorf("3 fetches of a dead name resolved %d times, want 1", n)
	}
	offset.Add(int64(negativeDNSTTL + time.Second))
	_, _ = c.Do(t.Context(), Request{URL: "http://nx.test/"})
	if n := dns.count("nx.test"); n != 2 {
		t.Errorf("after the negative TTL: resolved %d times, want 2", n)
	}
	// A name that comes to life is picked up once the negative entry ends.
	dns.set("nx.test", "127.0.0.1")
	offset.Add(int64(negativeDNSTTL + time.Second))
	mustDo(t, c, Request{URL: "http://" + net.JoinHostPort("nx.test", u.Port()) + "/page?close=1"})
}

// TestDNSCacheJoinsLookups: concurrent resolutions of one name share one
// lookup, and a caller giving up fails only itself.
func TestDNSCacheJoinsLookups(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		calls.Add(1)
		select {
		case <-release:
			return []netip.Addr{netip.MustParseAddr("::ffff:192.0.2.7")}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := newDNSCache(lookup, time.Minute, 5*time.Second)

	const waiters = 8
	results := make(chan error, waiters)
	for range waiters {
		go func() {
			addrs, err := c.resolve(t.Context(), "joined.test")
			if err == nil && (len(addrs) != 1 || addrs[0] != netip.MustParseAddr("192.0.2.7")) {
				err = fmt.Errorf("addrs = %v, want [192.0.2.7] unmapped", addrs)
			}
			results <- err
		}()
	}
	impatient, cancel := context.WithCancel(t.Context())
	impatientErr := make(chan error, 1)
	go func() {
		_, err := c.resolve(impatient, "joined.test")
		impatientErr <- err
	}()
	cancel()
	if err := <-impatientErr; !errors.Is(err, context.Canceled) || Classify(err) == ClassDNS {
		t.Errorf("cancelled caller: %v (class %q), want context.Canceled and not dns", err, Classify(err))
	}
	close(release)
	for range waiters {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("lookup called %d times for %d concurrent callers, want 1", n, waiters+1)
	}
}

// TestDNSCacheLookupTimeout: a resolver that hangs is cut off at the connect
// timeout, and the failure is a DNS error.
func TestDNSCacheLookupTimeout(t *testing.T) {
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c := newDNSCache(lookup, time.Minute, 100*time.Millisecond)
	start := time.Now()
	_, err := c.resolve(t.Context(), "slow.test")
	if Classify(err) != ClassDNS {
		t.Errorf("Classify(%v) = %q, want %q", err, Classify(err), ClassDNS)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("resolve took %v", elapsed)
	}
	empty := newDNSCache(func(context.Context, string) ([]netip.Addr, error) { return nil, nil }, time.Minute, time.Second)
	if _, err := empty.resolve(t.Context(), "empty.test"); Classify(err) != ClassDNS {
		t.Errorf("empty answer: Classify(%v) = %q, want %q", err, Classify(err), ClassDNS)
	}
}

func TestDNSCacheEviction(t *testing.T) {
	c := newDNSCache(func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
	}, time.Minute, time.Second)
	for i := range maxDNSEntries + 10 {
		if _, err := c.resolve(t.Context(), fmt.Sprintf("h%d.test", i)); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	n := len(c.entries)
	c.mu.Unlock()
	if n > maxDNSEntries {
		t.Errorf("cache holds %d entries, bound is %d", n, maxDNSEntries)
	}
}

func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("fetch http://x/: %w", err) }
	op := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"invalid URL", wrap(ErrInvalidURL), ClassInvalidURL},
		{"blocked", wrap(ErrBlockedAddress), ClassBlockedAddress},
		{"blocked while the deadline passed", wrap(fmt.Errorf("%w: %w", context.DeadlineExceeded, ErrBlockedAddress)), ClassBlockedAddress},
		{"resolver failure", wrap(fmt.Errorf("%w x: %w", errResolve, errors.New("servfail"))), ClassDNS},
		{"net.DNSError", wrap(&net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}), ClassDNS},
		{"no such host", wrap(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), ClassNoSuchHost},
		{"DNS timeout is dns", wrap(&net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}), ClassDNS},
		{"canceled", wrap(context.Canceled), ClassCanceled},
		{"deadline", wrap(context.DeadlineExceeded), ClassTimeout},
		{"net timeout", wrap(op(timeoutErr{})), ClassTimeout},
		{"unknown authority", wrap(x509.UnknownAuthorityError{}), ClassTLS},
		{"hostname mismatch", wrap(x509.HostnameError{Host: "x"}), ClassTLS},
		{"expired", wrap(x509.CertificateInvalidError{Reason: x509.Expired}), ClassTLS},
		{"untyped tls handshake", wrap(errors.New("tls: protocol version not supported")), ClassTLS},
		{"refused", wrap(op(syscall.ECONNREFUSED)), ClassRefused},
		{"reset", wrap(op(syscall.ECONNRESET)), ClassReset},
		{"broken pipe", wrap(op(syscall.EPIPE)), ClassReset},
		{"EOF", wrap(io.EOF), ClassReset},
		{"unexpected EOF", wrap(io.ErrUnexpectedEOF), ClassReset},
		{"headers too large", wrap(errors.New("net/http: server response headers exceeded 65536 bytes; aborted")), ClassHeadersTooLarge},
		{"other", wrap(errors.New("malformed HTTP response")), ClassOther},
	}
	classes := map[string]bool{}
	for _, c := range ErrorClasses() {
		if classes[c] {
			t.Errorf("ErrorClasses lists %q twice", c)
		}
		classes[c] = true
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.err)
			if got != tt.want {
				t.Errorf("Classify(%v) = %q, want %q", tt.err, got, tt.want)
			}
			if got != "" && !classes[got] {
				t.Errorf("class %q is missing from ErrorClasses", got)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"minimal", Config{UserAgent: testUA}, false},
		{"https contact", Config{UserAgent: "crawlcluster/1.0 (+https://example.org/bot)"}, false},
		{"browser-style", Config{UserAgent: "Mozilla/5.0 (compatible; crawlcluster/2.1; +http://www.example.com/bot.html)"}, false},
		{"bare URL", Config{UserAgent: "bot https://example.org"}, false},
		{"uppercase scheme", Config{UserAgent: "bot (HTTPS://example.org/bot)"}, false},
		{"empty user agent", Config{}, true},
		{"blank user agent", Config{UserAgent: "  \t "}, true},
		{"no URL", Config{UserAgent: "crawlcluster/1.0"}, true},
		{"http only as a word", Config{UserAgent: "httpbot/1.0"}, true},
		{"scheme without host", Config{UserAgent: "bot/1.0 (+http://)"}, true},
		{"mailto is not a URL to visit", Config{UserAgent: "bot/1.0 (mailto:ops@example.org)"}, true},
		{"CRLF", Config{UserAgent: testUA + "\r\nX-Injected: 1"}, true},
		{"NUL", Config{UserAgent: testUA + "\x00"}, true},
		{"negative connect timeout", Config{UserAgent: testUA, ConnectTimeout: -1}, true},
		{"negative header timeout", Config{UserAgent: testUA, HeaderTimeout: -time.Second}, true},
		{"negative total timeout", Config{UserAgent: testUA, TotalTimeout: -time.Second}, true},
		{"negative DNS TTL", Config{UserAgent: testUA, DNSCacheTTL: -time.Second}, true},
		{"negative body cap", Config{UserAgent: testUA, MaxBodyBytes: -1}, true},
		{"negative decoded cap", Config{UserAgent: testUA, MaxDecodedBytes: -1}, true},
		{"negative idle conns", Config{UserAgent: testUA, MaxIdleConns: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			err := cfg.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			if _, nerr := New(tt.cfg); (nerr != nil) != tt.wantErr || (nerr != nil && !errors.Is(nerr, ErrInvalidConfig)) {
				t.Errorf("New() = %v, want error %v", nerr, tt.wantErr)
			}
		})
	}

	cfg := Config{UserAgent: testUA}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{
		UserAgent: testUA, ConnectTimeout: DefaultConnectTimeout, HeaderTimeout: DefaultHeaderTimeout,
		TotalTimeout: DefaultTotalTimeout, MaxBodyBytes: DefaultMaxBodyBytes, MaxDecodedBytes: DefaultMaxDecodedBytes,
		DNSCacheTTL: DefaultDNSCacheTTL, MaxIdleConns: DefaultMaxIdleConns,
	}
	if cfg.Resolver != nil || fmt.Sprintf("%+v", cfg) != fmt.Sprintf("%+v", want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", cfg, want)
	}
}

func TestRegisterFlags(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs, "fetch.")
	err := fs.Parse([]string{
		"-fetch.user-agent=" + testUA, "-fetch.max-body-bytes=1000", "-fetch.header-timeout=3s", "-fetch.allow-private-networks",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.UserAgent != testUA || cfg.MaxBodyBytes != 1000 || cfg.HeaderTimeout != 3*time.Second || !cfg.AllowPrivate ||
		cfg.TotalTimeout != DefaultTotalTimeout || cfg.MaxDecodedBytes != DefaultMaxDecodedBytes || cfg.DNSCacheTTL != DefaultDNSCacheTTL {
		t.Errorf("flags gave %+v", cfg)
	}
	for _, name := range []string{"user-agent", "connect-timeout", "header-timeout", "total-timeout", "max-body-bytes",
		"max-decoded-bytes", "allow-private-networks", "dns-cache-ttl", "max-idle-conns"} {
		if fs.Lookup("fetch."+name) == nil {
			t.Errorf("flag fetch.%s not registered", name)
		}
	}
}

func TestIdleBudget(t *testing.T) {
	for _, c := range []struct {
		n         int
		openFiles uint64
		want      int
	}{
		{4096, 0, 4096},       // limit unknown
		{4096, 1 << 20, 4096}, // plenty of descriptors
		{4096, 1024, 512},     // a common soft limit: half of it
		{100, 1024, 100},      // a small pool stays
		{4096, 1, 1},          // never zero
	} {
		if got := idleBudget(c.n, c.openFiles); got != c.want {
			t.Errorf("idleBudget(%d, %d) = %d, want %d", c.n, c.openFiles, got, c.want)
		}
	}
	if openFilesLimit() == 0 {
		t.Log("open-files limit unknown here")
	}
}

// A response says where the time before its request was written went: the
// name's resolution and the connect on a new connection, none of either on
// a reused one.
func TestDoConnectStages(t *testing.T) {
	site := newTestSite(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(site.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	const lookup = 20 * time.Millisecond
	c := newClient(t, func(cfg *Config) {
		cfg.Resolver = func(ctx context.Context, host string) ([]netip.Addr, error) {
			time.Sleep(lookup) // a lower bound of the DNS stage, whatever the machine
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		cfg.DNSCacheTTL = time.Minute
	})
	url := "http://stages.test:" + port + "/page"
	first := mustDo(t, c, Request{URL: url})
	if first.DNS < lookup || first.Dial <= 0 || first.Send < 0 {
		t.Errorf("new connection: DNS %v (want at least %v), dial %v (want > 0), send %v", first.DNS, lookup, first.Dial, first.Send)
	}
	again := mustDo(t, c, Request{URL: url})
	if again.DNS != 0 || again.Dial != 0 || again.Send < 0 {
		t.Errorf("reused connection: DNS %v, dial %v (want 0, 0), send %v", again.DNS, again.Dial, again.Send)
	}
}
