package warc

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/cputime"
)

// benchCapture is a typical fetch: a 30 KiB HTML page and its request.
func benchCapture() Capture {
	page := htmlPage(30 << 10)
	return Capture{
		TargetURI:   "http://example.com/articles/2025/03/14/a-typical-page.html",
		Date:        testDate,
		IP:          "192.0.2.44",
		RawRequest:  rawRequest("http://example.com/articles/2025/03/14/a-typical-page.html"),
		RawResponse: rawResponse("Content-Type: text/html; charset=utf-8\r\nContent-Length: "+strconv.Itoa(len(page))+"\r\n", page),
		// Most sites answer over HTTP/2 and TLS: the most fields a record gets.
		Protocol: "h2", TLSVersion: "tls/1.3", CipherSuite: "TLS_AES_128_GCM_SHA256",
	}
}

// BenchmarkWriteCapture measures a capture's way to disk: building both
// records, digests, gzip and the write (without fsync, which Flush does per
// batch). MB/s counts HTTP bytes captured.
func BenchmarkWriteCapture(b *testing.B) {
	c := benchCapture()
	benchSerialAndParallel(b, c, func(b *testing.B) func() error {
		w := newWriter(b, SegmentConfig{MaxSize: 256 << 20})
		return func() error {
			_, err := w.WriteCapture(c)
			return err
		}
	})
}

// benchSerialAndParallel runs the writes that start sets up for each
// sub-benchmark from one goroutine, then from GOMAXPROCS goroutines at once.
// MB/s counts the HTTP bytes of c.
func benchSerialAndParallel(b *testing.B, c Capture, start func(*testing.B) func() error) {
	b.Run("serial", func(b *testing.B) {
		write := start(b)
		b.SetBytes(int64(len(c.RawRequest) + len(c.RawResponse)))
		b.ReportAllocs()
		for b.Loop() {
			if err := write(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		write := start(b)
		b.SetBytes(int64(len(c.RawRequest) + len(c.RawResponse)))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := write(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkReader reads a segment of 100 captures from memory, compressed
// as the writer stores it and plain. MB/s counts uncompressed WARC bytes, so
// the two are comparable.
func BenchmarkReader(b *testing.B) {
	c := benchCapture()
	dir := b.TempDir()
	w := newWriter(b, SegmentConfig{Dir: dir})
	var loc Location
	for i := range 100 {
		c.TargetURI = fmt.Sprintf("http://example.com/page/%d", i)
		var err error
		if loc, err = w.WriteCapture(c); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	gz, err := os.ReadFile(filepath.Join(dir, loc.File))
	if err != nil {
		b.Fatal(err)
	}

	plain := gunzipped(b, gz)
	for _, in := range []struct {
		name string
		data []byte
	}{
		{"gzip", gz},
		{"plain", plain},
	} {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(in.data))
				n := 0
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 201 {
					b.Fatalf("%d records", n)
				}
			}
		})
	}
}

// benchHTML overrides the pages BenchmarkWriteCaptureHTML archives, e.g. to
// compare levels on a folder of real-world pages:
//
//	go test -run '^$' -bench WriteCaptureHTML -bench.html /some/pages ./pkg/warc
var benchHTML = flag.String("bench.html", "testdata/html", "folder of *.html pages for BenchmarkWriteCaptureHTML")

// htmlCaptures turns every page in dir into a capture shaped like the
// fetcher's: request line and headers as pkg/fetch sends them, a plain 200
// response with the page as its body.
func htmlCaptures(tb testing.TB, dir string) []Capture {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no pages in %s: %v", dir, err)
	}
	cs := make([]Capture, len(paths))
	for i, p := range paths {
		page, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		host := fmt.Sprintf("127.0.1.%d:42571", i%6+1)
		path := fmt.Sprintf("/p/%d.html", i)
		cs[i] = Capture{
			TargetURI: "http://" + host + path,
			Date:      testDate.Add(time.Duration(i) * time.Second),
			IP:        "127.0.1.1",
			RawRequest: []byte("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" +
				"User-Agent: crawlcluster/1.0 (+https://crawlcluster.example/bot)\r\n" +
				"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
				"Accept-Encoding: gzip, br, zstd\r\n\r\n"),
			RawResponse: rawResponse("Content-Length: "+strconv.Itoa(len(page))+"\r\n"+
				"Content-Type: text/html; charset=utf-8\r\n"+
				"Date: Fri, 14 Mar 2025 15:09:26 GMT\r\n", page),
		}
	}
	return cs
}

// capturedBytes returns the compressed size of cs written at level, request
// and response members together.
func capturedBytes(tb testing.TB, cs []Capture, level int) int64 {
	tb.Helper()
	w := newWriter(tb, SegmentConfig{Level: level})
	// The first capture of a segment follows the warcinfo record: start
	// counting at the end of an extra one.
	first, err := w.WriteCapture(cs[0])
	if err != nil {
		tb.Fatal(err)
	}
	last := first
	for _, c := range cs {
		if last, err = w.WriteCapture(c); err != nil {
			tb.Fatal(err)
		}
	}
	if last.File != first.File {
		tb.Fatal("benchmark captures rolled the segment")
	}
	return last.Offset + last.Length - (first.Offset + first.Length)
}

// BenchmarkWriteCaptureHTML writes captures shaped like the crawler's (a
// request record of a few hundred bytes, a response record with a 6-30 KiB
// HTML page) at levels 6 (the crawler's profile was taken at 6) to 1, so
// one run compares them. cpu-ns/op is the process's CPU time per capture,
// steadier than ns/op on a shared machine; gzB/capture is the compressed size
// of both records and HTML-B/capture the page size, for the ratio.
func BenchmarkWriteCaptureHTML(b *testing.B) {
	cs := htmlCaptures(b, *benchHTML)
	var html int64
	for _, c := range cs {
		_, body := splitHTTP(c.RawResponse)
		html += int64(len(body))
	}
	for _, level := range []int{6, 5, 4, 3, 2, 1} {
		b.Run("level="+strconv.Itoa(level), func(b *testing.B) {
			size := capturedBytes(b, cs, level)
			w := newWriter(b, SegmentConfig{Level: level, MaxSize: 1 << 40})
			b.ReportAllocs()
			stopCPU := cputime.Measure(b)
			i := 0
			for b.Loop() {
				if _, err := w.WriteCapture(cs[i%len(cs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			stopCPU()
			b.ReportMetric(float64(size)/float64(len(cs)), "gzB/capture")
			b.ReportMetric(float64(html)/float64(len(cs)), "HTML-B/capture")
		})
	}
}

// BenchmarkIndexBytes measures what a segment's open index holds per
// indexed capture: the live heap after b.N small captures of distinct URLs
// written to one open segment, less the heap before them, per capture (the
// URL string included, since the index keeps it). Run it with a fixed count
// (-benchtime=100000x) to compare builds: the index slice's spare capacity
// depends on the count.
func BenchmarkIndexBytes(b *testing.B) {
	w := newWriter(b, SegmentConfig{MaxSize: 1 << 40})
	resp := rawResponse("Content-Type: text/html; charset=utf-8\r\n", htmlPage(256))
	req := rawRequest("http://example.com/")
	write := func(i int) {
		u := fmt.Sprintf("http://host%05d.example.com/articles/2025/03/page-%d.html", i%10000, i)
		c := Capture{TargetURI: u, Date: testDate, RawRequest: req, RawResponse: resp}
		if _, err := w.WriteCapture(c); err != nil {
			b.Fatal(err)
		}
	}
	write(-1) // opens the segment and fills the encoder pool
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		write(n)
		n++
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "B/capture")
	runtime.KeepAlive(w)
}

// BenchmarkIndexPath measures the index's own work for a segment of 10,000
// captures, per line: what writeRecords does for each indexed record, then
// what writeIndex does at close (to io.Discard).
func BenchmarkIndexPath(b *testing.B) {
	resp := rawResponse("Content-Type: text/html; charset=utf-8\r\n", htmlPage(256))
	recs := make([]*Record, 10000)
	for i := range recs {
		u := fmt.Sprintf("http://host%05d.example.com/articles/2025/03/page-%d.html", (i*7919)%10000, i)
		c := Capture{TargetURI: u, Date: testDate, RawResponse: resp}
		_, recs[i], _ = captureRecords(&c)
	}
	b.ReportAllocs()
	for b.Loop() {
		var index []indexRecord
		for i, rec := range recs {
			src, ok := readIndexSource(rec)
			if !ok {
				b.Fatal("not indexed")
			}
			r, _ := packIndex(src, 1000)
			r.offset = int64(i) * 1000
			index = append(index, r)
		}
		if err := writeIndexRecords(io.Discard, index, "crawl-20250314150926-00001-abcdef.warc.gz", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/line")
}
