package wacz

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/warc"
)

// archiveOf writes n captures and a revisit into two segments in a folder,
// the second left without its index (as after a kill), and returns it.
func archiveOf(t *testing.T, n int) Dir {
	t.Helper()
	dir := t.TempDir()
	w, err := warc.NewSegmentWriter(warc.SegmentConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	date := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	var first warc.Location
	for i := range n {
		u := fmt.Sprintf("http://example.com/p%d.html", i)
		body := fmt.Sprintf("<html><title>p%d</title>page %d</html>", i, i)
		c := warc.Capture{TargetURI: u, Date: date.Add(time.Duration(i) * time.Second), RawRequest: []byte("GET /p HTTP/1.1\r\nHost: example.com\r\n\r\n"),
			RawResponse: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body)}
		loc, err := w.WriteCapture(c)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = loc
			c.TargetURI = "http://example.com/copy.html"
			if _, err := w.WriteRevisit(c, first, u, c.Date); err != nil {
				t.Fatal(err)
			}
		}
		if i == n/2 {
			if err := w.Roll(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := Dir(dir).Segments(context.Background())
	if len(segs) != 2 {
		t.Fatalf("segments %v", segs)
	}
	if err := os.Remove(filepath.Join(dir, warc.IndexName(segs[1]))); err != nil {
		t.Fatal(err)
	}
	return Dir(dir)
}

// TestWriteVerify: a package of two segments, one without an index of its
// own, verifies clean; the same package with a byte of a WARC changed, or
// an index line dropped, does not.
func TestWriteVerify(t *testing.T) {
	arc := archiveOf(t, 6)
	pages := []Page{{ID: "1", URL: "http://example.com/p0.html", TS: time.Now(), Title: "p0", Seed: true}}
	var buf bytes.Buffer
	sum, err := Write(context.Background(), &buf, arc, pages, Options{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Segments != 2 || sum.Indexed != 1 || sum.Records != 7 || sum.Pages != 1 {
		t.Errorf("summary %+v; want 2 segments (1 indexed now), 7 lines, 1 page", sum)
	}
	rep, err := Verify(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(rep.Problems) > 0 || rep.Records != 7 || rep.Lines != 7 {
		t.Fatalf("sound package: %+v, %v", rep, err)
	}

	for name, tamper := range map[string]func(name string, b []byte) []byte{
		"payload byte": func(name string, b []byte) []byte {
			if strings.HasPrefix(name, "archive/") {
				b = bytes.Clone(b)
				b[len(b)/2] ^= 0xff
			}
			return b
		},
		"index line dropped": func(name string, b []byte) []byte {
			if name == "indexes/index.cdxj" {
				_, rest, _ := bytes.Cut(b, []byte("\n"))
				return rest
			}
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := rezip(t, buf.Bytes(), tamper)
			rep, err := Verify(bytes.NewReader(bad), int64(len(bad)))
			if err == nil && len(rep.Problems) == 0 {
				t.Fatalf("tampered package verified clean: %+v", rep)
			}
			t.Logf("found: %v %v", err, rep.Problems)
		})
	}
}

// rezip copies a ZIP, passing each file's content through tamper.
func rezip(t *testing.T, b []byte, tamper func(string, []byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(tamper(f.Name, data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
