package fetch

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkDo measures whole fetches of a 20 KiB page from a loopback
// server over keep-alive connections: request rendering, the capped read,
// decoding and the WARC record copy. The server's work is included, so the
// numbers are a floor for the client's own throughput.
func BenchmarkDo(b *testing.B) {
	const pageSize = 20 << 10
	line := []byte("<p>twenty kibibytes of polite crawling</p>\n")
	page := bytes.Repeat(line, pageSize/len(line)+1)[:pageSize]
	gzipped := mustEncode("gzip", page)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		body := page
		if r.URL.Path == "/gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			body = gzipped
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	for _, bc := range []struct{ name, path string }{{"identity", "/page"}, {"gzip", "/gzip"}} {
		b.Run(bc.name, func(b *testing.B) {
			c := newClient(b, nil)
			req := Request{URL: srv.URL + bc.path}
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				resp, err := c.Do(b.Context(), req)
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.Body) != len(page) {
					b.Fatalf("body %d bytes, want %d", len(resp.Body), len(page))
				}
				n++
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkDoOverCap measures fetches of bodies past the default caps:
// compression bombs cut at MaxDecodedBytes and identity bodies cut at
// MaxBodyBytes, with and without a Content-Length. B/op is the figure to
// watch: a capped body should cost about its cap once, not a series of
// doublings and copies on the way there.
func BenchmarkDoOverCap(b *testing.B) {
	srv := overCapSite(b)
	paths := []string{"/huge", "/huge?chunked=1"}
	for _, coding := range bombCodings {
		paths = append(paths, "/bomb/"+coding)
	}
	for _, path := range paths {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			c := newClient(b, nil)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Do(b.Context(), Request{URL: srv.URL + path})
				if err != nil {
					b.Fatal(err)
				}
				if !resp.Truncated {
					b.Fatalf("%s: body of %d bytes not truncated", path, len(resp.Body))
				}
			}
		})
	}
}
