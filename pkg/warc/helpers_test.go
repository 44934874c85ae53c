package warc

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testDate has sub-second precision so that tests see whether WARC-Date keeps
// it (to the microsecond).
var testDate = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// labelledSHA1 computes a WARC digest from scratch, so tests do not check the
// writer's digests with the writer's own helper.
func labelledSHA1(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// newWriter starts a SegmentWriter in a fresh temporary directory unless cfg
// names one, and closes it when the test ends.
func newWriter(tb testing.TB, cfg SegmentConfig) *SegmentWriter {
	tb.Helper()
	if cfg.Dir == "" {
		cfg.Dir = tb.TempDir()
	}
	w, err := NewSegmentWriter(cfg)
	if err != nil {
		tb.Fatalf("NewSegmentWriter: %v", err)
	}
	tb.Cleanup(func() { _ = w.Close() })
	return w
}

// readResult is everything a Reader returned for one input.
type readResult struct {
	recs    []*Record
	offsets []int64 // Reader.Offset for each record
	err     error   // io.EOF on a clean end
}

func readAll(r io.Reader) readResult {
	return readAllLimit(r, DefaultMaxBlockSize)
}

func readAllLimit(r io.Reader, maxBlock int64) readResult {
	var res readResult
	rd := NewReader(r)
	rd.SetMaxBlockSize(maxBlock)
	for {
		rec, err := rd.Next()
		if err != nil {
			res.err = err
			return res
		}
		res.recs = append(res.recs, rec)
		res.offsets = append(res.offsets, rd.Offset())
	}
}

// readPath reads a whole file and fails the test unless it ends cleanly.
func readPath(tb testing.TB, path string) readResult {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	res := readAll(f)
	if res.err != io.EOF {
		tb.Fatalf("read %s: after %d records: %v", filepath.Base(path), len(res.recs), res.err)
	}
	return res
}

// memberLengths turns the member offsets of a file into member lengths.
func memberLengths(offsets []int64, size int64) []int64 {
	lengths := make([]int64, len(offsets))
	for i, off := range offsets {
		end := size
		if i+1 < len(offsets) {
			end = offsets[i+1]
		}
		lengths[i] = end - off
	}
	return lengths
}

// segments lists the .warc.gz files in dir, in name (and so serial) order.
func segments(tb testing.TB, dir string) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

// sameRecord reports whether two records have the same fields, in the same
// order, and the same block.
func sameRecord(a, b *Record) bool {
	return slices.Equal(a.Header.fields, b.Header.fields) && bytes.Equal(a.Block, b.Block)
}

// exchangeTypes lists the records of a segment that holds one exchange: its
// warcinfo, the request if there is one, and the answer record.
func exchangeTypes(answer string, withRequest bool) []string {
	if withRequest {
		return []string{TypeWarcinfo, TypeRequest, answer}
	}
	return []string{TypeWarcinfo, answer}
}

func types(recs []*Record) []string {
	ts := make([]string, len(recs))
	for i, r := range recs {
		ts[i] = r.Type()
	}
	return ts
}

// pseudoRandom returns n reproducible, incompressible bytes.
func pseudoRandom(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func gzipped(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// gunzipped decompresses every member of a .warc.gz into one plain .warc.
func gunzipped(tb testing.TB, b []byte) []byte {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return plain
}

func rawRequest(uri string) []byte {
	host, path := "example.com", "/"
	if rest, ok := strings.CutPrefix(uri, "http://"); ok {
		host, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: crawlcluster-test\r\nAccept-Encoding: gzip\r\n\r\n")
}

func rawResponse(headers string, body []byte) []byte {
	return append([]byte("HTTP/1.1 200 OK\r\n"+headers+"\r\n"), body...)
}

// htmlPage is a compressible page of roughly n bytes.
func htmlPage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<!doctype html><html><head><title>test page</title></head><body>\n")
	for i := 0; b.Len() < n-16; i++ {
		fmt.Fprintf(&b, "<p id=\"p%d\">Paragraph %d links to <a href=\"/page/%d\">page %d</a>.</p>\n", i, i, i*7%1000, i*7%1000)
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// chunked frames body in HTTP/1.1 chunks of at most size bytes.
func chunked(body []byte, size int) []byte {
	var b bytes.Buffer
	for len(body) > 0 {
		n := min(size, len(body))
		fmt.Fprintf(&b, "%x\r\n", n)
		b.Write(body[:n])
		b.WriteString("\r\n")
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.Bytes()
}

// sentinel reports whether err wraps one of the Reader's error classes.
func sentinel(err error) bool {
	for _, s := range []error{ErrMalformed, ErrTruncated, ErrCorrupt, ErrTooLarge} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// conditionalRequest is rawRequest with the validators a recrawl sends for a
// page it holds with ETag etag.
func conditionalRequest(uri, etag string) []byte {
	r := rawRequest(uri)
	r = r[: len(r)-2 : len(r)-2] // before the blank line, without sharing
	return append(r, "If-None-Match: "+etag+"\r\nIf-Modified-Since: Fri, 14 Mar 2025 15:09:26 GMT\r\n\r\n"...)
}

// notModifiedResponse is a 304 head as pkg/fetch records it.
func notModifiedResponse(etag string) []byte {
	return []byte("HTTP/1.1 304 Not Modified\r\nDate: Sat, 15 Mar 2025 15:09:26 GMT\r\nEtag: " + etag + "\r\nContent-Length: 0\r\n\r\n")
}

// revisitedCapture is the capture that revisit tests refer to, a day before
// testDate, with ETag "v1", and its payload.
func revisitedCapture() (Capture, []byte) {
	body := htmlPage(2 << 10)
	return Capture{
		TargetURI:   "http://example.com/a",
		Date:        testDate.Add(-24 * time.Hour),
		RawRequest:  rawRequest("http://example.com/a"),
		RawResponse: rawResponse("Content-Type: text/html\r\nETag: \"v1\"\r\n", body),
	}, body
}

// withOriginal starts a writer in a fresh folder with the capture original,
// which a revisit test refers to. It returns the writer, the folder, the
// original's Location and the Location to give the revisit, with the record
// ID and payload digest left out as asked.
func withOriginal(t *testing.T, original Capture, noID, noDigest bool) (w *SegmentWriter, dir string, orig, ref Location) {
	t.Helper()
	dir = t.TempDir()
	w = newWriter(t, SegmentConfig{Dir: dir})
	orig, err := w.WriteCapture(original)
	if err != nil {
		t.Fatal(err)
	}
	ref = orig
	if noID {
		ref.RecordID = ""
	}
	if noDigest {
		ref.PayloadDigest = ""
	}
	return w, dir, orig, ref
}

// checkRefused checks that a refused revisit returned err and no Location,
// and that nothing of it reached the segment holding its original.
func checkRefused(t *testing.T, w *SegmentWriter, dir string, orig, loc Location, err, want error) {
	t.Helper()
	if !errors.Is(err, want) || loc != (Location{}) {
		t.Fatalf("write = %+v, %v; want error %v", loc, err, want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res := readPath(t, filepath.Join(dir, orig.File))
	if got := types(res.recs); !slices.Equal(got, exchangeTypes(TypeResponse, true)) {
		t.Errorf("records after refused revisit: %v", got)
	}
}
