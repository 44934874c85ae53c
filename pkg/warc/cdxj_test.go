package warc

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSURT(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.Example.com/Docs/Page.html":  "com,example)/docs/page.html",
		"https://www2.example.com":               "com,example)/",
		"https://example.com:8443/a?b=2&a=1&a=0": "com,example:8443)/a?a=1&a=0&b=2",
		"http://example.com:80/":                 "com,example)/",
		"http://127.0.0.1:41309/s/site.css":      "1,0,0,127:41309)/s/site.css",
		"http://wwwx.example.com/":               "com,example,wwwx)/",
		"urn:pageinfo:http://example.com/":       "urn:pageinfo:http://example.com/",
		"http://example.com/a%20b?q=%2F":         "com,example)/a%20b?q=%2f",
	} {
		if got := SURT(in); got != want {
			t.Errorf("SURT(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSegmentIndex writes captures, an identical-payload revisit of
// another URL and a server-not-modified revisit, rolls the segment and
// holds its CDXJ index to the file: sorted, one line per response and
// revisit record with its URL, 14-digit date, status, type, payload digest
// and the member's offset and length as the Reader finds them, and every
// revisit's original findable by its WARC-Refers-To-Target-URI and
// WARC-Refers-To-Date with the same digest.
func TestSegmentIndex(t *testing.T) {
	dir, w, orig, body, origLoc := originalWritten(t)
	for i, u := range []string{"http://www.example.com/z", "http://example.com/b?y=1&x=2", "http://cdn.example.org/logo.png"} {
		c := Capture{TargetURI: u, Date: testDate.Add(time.Duration(i) * time.Second), RawRequest: rawRequest(u),
			RawResponse: rawResponse("Content-Type: image/png\r\n", []byte("png "+u))}
		if i == 0 {
			c.RawResponse = []byte("HTTP/1.1 404 Not Found\r\nContent-Type: text/html; charset=utf-8\r\n\r\nnone")
		}
		if _, err := w.WriteCapture(c); err != nil {
			t.Fatal(err)
		}
	}
	writeCopy(t, w, body, origLoc, orig)
	nm := Capture{TargetURI: orig.TargetURI, Date: testDate.Add(time.Hour), RawRequest: conditionalRequest(orig.TargetURI, `"v1"`),
		RawResponse: notModifiedResponse(`"v1"`)}
	if _, err := w.WriteNotModified(nm, origLoc, orig.TargetURI, orig.Date); err != nil {
		t.Fatal(err)
	}
	segs := []string{rolledSegment(t, w, dir)}
	entries := readIndex(t, filepath.Join(dir, IndexName(filepath.Base(segs[0]))))
	fromFile, err := IndexFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	SortIndex(fromFile)
	checkIndex(t, segs[0], entries)
	if len(fromFile) != len(entries) {
		t.Fatalf("IndexFile gives %d entries, the writer %d", len(fromFile), len(entries))
	}
	for i := range entries {
		if fromFile[i] != entries[i] {
			t.Errorf("entry %d: IndexFile %+v, writer %+v", i, fromFile[i], entries[i])
		}
	}
	byStatus := map[string]int{}
	for _, e := range entries {
		byStatus[e.Mime+" "+e.Status]++
	}
	if byStatus["text/html 404"] != 1 || byStatus["image/png 200"] != 2 || byStatus["warc/revisit 200"] != 1 || byStatus["warc/revisit 304"] != 1 {
		t.Errorf("mime and status of the entries: %v", byStatus)
	}
}

func readIndex(t *testing.T, path string) []IndexEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []IndexEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		e, err := ParseIndexLine(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkIndex holds entries to the WARC file they index: see TestSegmentIndex.
func checkIndex(t *testing.T, path string, entries []IndexEntry) {
	t.Helper()
	res := readPath(t, path)
	lengths := memberLengths(res.offsets, fileSize(t, path))
	type at struct{ off, n string }
	byPlace := map[at]IndexEntry{}
	for i, e := range entries {
		if i > 0 {
			prev := entries[i-1]
			if prev.Key > e.Key || prev.Key == e.Key && prev.Timestamp > e.Timestamp {
				t.Errorf("line %d (%s %s) sorts before line %d (%s %s)", i, e.Key, e.Timestamp, i-1, prev.Key, prev.Timestamp)
			}
		}
		if _, dup := byPlace[at{e.Offset, e.Length}]; dup {
			t.Errorf("two lines for the record at %s", e.Offset)
		}
		byPlace[at{e.Offset, e.Length}] = e
	}
	indexed := 0
	for i, rec := range res.recs {
		typ := rec.Type()
		if typ != TypeResponse && typ != TypeRevisit {
			continue
		}
		indexed++
		e, ok := byPlace[at{strconv.FormatInt(res.offsets[i], 10), strconv.FormatInt(lengths[i], 10)}]
		if !ok {
			t.Errorf("%s record of %s at %d (%d bytes) has no line", typ, rec.Header.Get(FieldTargetURI), res.offsets[i], lengths[i])
			continue
		}
		d, _ := rec.Date()
		if e.URL != rec.Header.Get(FieldTargetURI) || e.Key != SURT(e.URL) || e.Timestamp != d.UTC().Format("20060102150405") ||
			"sha1:"+e.Digest != rec.Header.Get(FieldPayloadDigest) || e.File != filepath.Base(path) {
			t.Errorf("line %+v does not match its %s record %v", e, typ, rec.Header)
		}
		if typ == TypeRevisit {
			target, err := ParseDate(rec.Header.Get(FieldRefersToDate))
			if err != nil {
				t.Errorf("revisit of %s: WARC-Refers-To-Date: %v", e.URL, err)
				continue
			}
			found := false
			for _, o := range entries {
				found = found || o.URL == rec.Header.Get(FieldRefersToTargetURI) && o.Timestamp == target.UTC().Format("20060102150405") &&
					o.Digest == e.Digest && o.Mime != "warc/revisit"
			}
			if !found {
				t.Errorf("the original of the revisit of %s (%s at %s) is not in the index", e.URL, rec.Header.Get(FieldRefersToTargetURI), target)
			}
		}
	}
	if indexed != len(entries) {
		t.Errorf("%d lines for %d response and revisit records", len(entries), indexed)
	}
}

// FuzzIndexLine: ParseIndexLine takes any line without a panic, and a line
// it reads renders back to an entry it reads the same.
func FuzzIndexLine(f *testing.F) {
	f.Add([]byte(`com,example)/ 20250314150926 {"url":"http://example.com/","mime":"text/html","status":"200","digest":"AB","length":"10","offset":"0","filename":"a.warc.gz"}`))
	f.Add([]byte(`x 1 {}`))
	f.Add([]byte(`k 20250314150926 {"url":"\u2028"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseIndexLine(line)
		if err != nil {
			return
		}
		out, err := e.Line()
		if err != nil {
			t.Fatalf("Line of a parsed entry: %v", err)
		}
		again, err := ParseIndexLine(out)
		if err != nil {
			t.Fatalf("re-read %q: %v", out, err)
		}
		if again != e {
			t.Fatalf("round trip: %+v, then %+v", e, again)
		}
	})
}

// TestSegmentIndexAsIndexFile holds the index a SegmentWriter keeps packed
// while the segment is open to the lines IndexFile and WriteIndex make of
// the same records, byte for byte: every indexed kind (responses, both
// revisit profiles, resources), with and without status and digest, the
// forms the packing keeps aside (a digest other than SHA-1, a status that is
// not a number), the same key at several dates (some whose offset moves
// them out of the years 0000-9999) and captures within one second, whose
// lines keep the order they were written in. A field IndexEntry gains
// without the packed form gaining it fails here.
func TestSegmentIndexAsIndexFile(t *testing.T) {
	dir, w, orig, body, origLoc := originalWritten(t)
	page := "http://www.Example.com/p?b=2&a=1"
	for i, resp := range []string{
		"HTTP/1.1 404 Not Found\r\nContent-Type: text/html; charset=utf-8\r\n\r\nnone",
		"HTTP/1.1 200 OK\r\n\r\nno content type",
		"not an HTTP answer",
		"HTTP/1.1 2x0 Odd\r\nCONTENT-TYPE: Text/Plain\r\n\r\nodd",
		"HTTP/1.1 \xff\x00\xfe Bytes\r\n\r\nbytes",
	} {
		// Two captures a millisecond apart share a timestamp.
		c := Capture{TargetURI: page, Date: testDate.Add(time.Duration(i%2) * time.Millisecond), RawRequest: rawRequest(page), RawResponse: []byte(resp)}
		if _, err := w.WriteCapture(c); err != nil {
			t.Fatal(err)
		}
	}
	writeCopy(t, w, body, origLoc, orig)
	nm := Capture{TargetURI: orig.TargetURI, Date: testDate.Add(time.Hour), RawResponse: notModifiedResponse(`"v1"`)}
	if _, err := w.WriteNotModified(nm, origLoc, orig.TargetURI, orig.Date); err != nil {
		t.Fatal(err)
	}
	noDigest := origLoc
	noDigest.PayloadDigest = ""
	if _, err := w.WriteNotModified(nm, noDigest, orig.TargetURI, orig.Date); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ date, mime, digest string }{
		{"2025-03-14T15:09:26Z", "image/png", labelledSHA1([]byte("png"))},
		{"2025-03-14T15:09:26.5Z", "", ""},
		{"9999-12-31T23:00:00-05:00", "text/plain", "sha256:" + strings.Repeat("ab", 32)},
		{"0000-01-01T00:30:00+01:00", "Application/JSON; q=1", "sha1:" + strings.ToLower(labelledSHA1([]byte("x"))[5:])},
		{"0000-01-01T00:00:00Z", "text/plain", strings.TrimPrefix(labelledSHA1([]byte("y")), "sha1:")},
		{"2000-01-01T00:00:00Z", "text/plain", "sha1:" + labelledSHA1([]byte("z"))},
	} {
		rec := &Record{Block: []byte("resource " + r.date)}
		rec.Header.Add(FieldType, TypeResource)
		rec.Header.Add(FieldTargetURI, "urn:test:resource")
		rec.Header.Add(FieldDate, r.date)
		for name, v := range map[string]string{FieldContentType: r.mime, FieldPayloadDigest: r.digest} {
			if v != "" {
				rec.Header.Add(name, v)
			}
		}
		if _, err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	meta := &Record{Block: []byte("outlinks")}
	meta.Header.Add(FieldType, TypeMetadata)
	meta.Header.Add(FieldTargetURI, page)
	if _, err := w.WriteRecord(meta); err != nil {
		t.Fatal(err)
	}
	segs := []string{rolledSegment(t, w, dir)}
	got, err := os.ReadFile(filepath.Join(dir, IndexName(filepath.Base(segs[0]))))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := IndexFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := WriteIndex(&want, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the writer's index:\n%s\nIndexFile and WriteIndex:\n%s", got, want.Bytes())
	}
	if n := bytes.Count(got, []byte("\n")); n != 15 {
		t.Errorf("%d lines, want 15 (1 + 5 captures, 3 revisits, 6 resources):\n%s", n, got)
	}
	for _, part := range []string{`"status":"-"`, `"status":"2x0"`, `"digest":"sha256:`, `"mime":"unk"`, "\n100000101", "\n-0001"} {
		if !bytes.Contains(got, []byte(part)) && !bytes.Contains(got, []byte(" "+strings.TrimPrefix(part, "\n"))) {
			t.Errorf("no line with %s:\n%s", part, got)
		}
	}
}

// writeCopy writes a revisit of orig, at origLoc, for another URL whose
// page has orig's body.
func writeCopy(t *testing.T, w *SegmentWriter, body []byte, origLoc Location, orig Capture) {
	t.Helper()
	dup := Capture{TargetURI: "http://example.com/copy", Date: testDate, RawRequest: rawRequest("http://example.com/copy"),
		RawResponse: rawResponse("Content-Type: text/html\r\n", body)}
	if _, err := w.WriteRevisit(dup, origLoc, orig.TargetURI, orig.Date); err != nil {
		t.Fatal(err)
	}
}

// rolledSegment closes w's segment and returns it, the only one in dir.
func rolledSegment(t *testing.T, w *SegmentWriter, dir string) string {
	t.Helper()
	if err := w.Roll(); err != nil {
		t.Fatal(err)
	}
	segs := segments(t, dir)
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	return segs[0]
}

// originalWritten returns a writer on a fresh dir that has written the
// capture revisits refer to, its body and where it went.
func originalWritten(t *testing.T) (dir string, w *SegmentWriter, orig Capture, body []byte, loc Location) {
	t.Helper()
	dir = t.TempDir()
	w = newWriter(t, SegmentConfig{Dir: dir})
	orig, body = revisitedCapture()
	loc, err := w.WriteCapture(orig)
	if err != nil {
		t.Fatal(err)
	}
	return dir, w, orig, body, loc
}
