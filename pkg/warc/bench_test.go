package warc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
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
	}
}

// BenchmarkWriteCapture measures a capture's way to disk: building both
// records, digests, gzip and the write (without fsync, which Flush does per
// batch). MB/s counts HTTP bytes captured.
func BenchmarkWriteCapture(b *testing.B) {
	c := benchCapture()
	b.Run("serial", func(b *testing.B) {
		w := newWriter(b, SegmentConfig{MaxSize: 256 << 20})
		b.SetBytes(int64(len(c.RawRequest) + len(c.RawResponse)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.WriteCapture(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		w := newWriter(b, SegmentConfig{MaxSize: 256 << 20})
		b.SetBytes(int64(len(c.RawRequest) + len(c.RawResponse)))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := w.WriteCapture(c); err != nil {
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
