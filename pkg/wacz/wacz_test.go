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

	"github.com/crawlcluster/crawler/internal/s3test"
	"github.com/crawlcluster/crawler/pkg/blob"
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
	files := zipFiles(t, b)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(tamper(f.Name, []byte(files[f.Name])))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestObjectsArchive exports the same archive from a folder and from an S3
// bucket holding its files under their names, as a cluster's parsers put
// them: the two packages verify clean and hold the same index and WARCs.
func TestObjectsArchive(t *testing.T) {
	dir := archiveOf(t, 4)
	ctx := context.Background()
	for _, kind := range []string{"file", "s3"} {
		t.Run(kind, func(t *testing.T) {
			url := "file://" + t.TempDir()
			if kind == "s3" {
				url = s3test.Endpoint(t)
			}
			st, err := blob.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			entries, err := os.ReadDir(string(dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if err := st.Put(ctx, e.Name(), filepath.Join(string(dir), e.Name())); err != nil {
					t.Fatal(err)
				}
			}
			var fromDir, fromStore bytes.Buffer
			if _, err := Write(ctx, &fromDir, dir, nil, Options{}); err != nil {
				t.Fatal(err)
			}
			sum, err := Write(ctx, &fromStore, &Objects{Store: st}, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Segments != 2 || sum.Indexed != 1 {
				t.Errorf("from the store: %+v; want 2 segments, 1 indexed here", sum)
			}
			rep, err := Verify(bytes.NewReader(fromStore.Bytes()), int64(fromStore.Len()))
			if err != nil || len(rep.Problems) > 0 {
				t.Fatalf("package from the store: %+v, %v", rep, err)
			}
			a, b := zipFiles(t, fromDir.Bytes()), zipFiles(t, fromStore.Bytes())
			for _, name := range []string{"indexes/index.cdxj"} {
				if a[name] != b[name] || a[name] == "" {
					t.Errorf("%s differs between the folder's package and the store's", name)
				}
			}
			for name, content := range a {
				if strings.HasPrefix(name, "archive/") && b[name] != content {
					t.Errorf("%s differs between the folder's package and the store's", name)
				}
			}
		})
	}
}

func zipFiles(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
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
		out[f.Name] = string(data)
	}
	return out
}
