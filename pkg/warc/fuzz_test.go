package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

// fuzzMaxBlock is the block limit FuzzReader sets: records claiming more must
// fail with ErrTooLarge before the reader allocates for them.
const fuzzMaxBlock = 4 << 10

// FuzzReader feeds arbitrary bytes, as they are and wrapped in gzip, to the
// Reader. It must never panic, hand out a block over its limit or one that
// disagrees with Content-Length, and every error must be one of its classes.
func FuzzReader(f *testing.F) {
	_, sample, locs := writeSample(f)
	plain := gunzipped(f, sample)
	f.Add(sample, false)
	f.Add(sample[:locs[1].Offset+locs[1].Length/2], false)
	f.Add(plain, false)
	f.Add(plain, true)
	f.Add(plain[:len(plain)/3], true)
	for _, s := range []string{
		"",
		"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n",
		"WARC/1.0\nWARC-Type: metadata\nX: a\n b\nContent-Length: 0\n\n\n\n",
		"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 99999999\r\n\r\nabc",
		"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: -1\r\n\r\n",
		"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}

	f.Fuzz(func(t *testing.T, data []byte, wrap bool) {
		in := data
		if wrap {
			in = fastGzip(data)
		}
		r := NewReader(bytes.NewReader(in))
		r.SetMaxBlockSize(fuzzMaxBlock)
		var recs []*Record
		for n := 0; ; n++ {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !sentinel(err) {
					t.Fatalf("record %d: error %v wraps none of the Reader's errors", n, err)
				}
				if _, again := r.Next(); again != err {
					t.Fatalf("error not sticky: %v, then %v", err, again)
				}
				break
			}
			if int64(len(rec.Block)) > fuzzMaxBlock {
				t.Fatalf("record %d: %d-byte block over the %d limit", n, len(rec.Block), fuzzMaxBlock)
			}
			if cl, err := strconv.ParseInt(rec.Header.Get(FieldContentLength), 10, 64); err != nil || cl != int64(len(rec.Block)) {
				t.Fatalf("record %d: Content-Length %q for a %d-byte block", n, rec.Header.Get(FieldContentLength), len(rec.Block))
			}
			if rec.Type() == "" {
				t.Fatalf("record %d without WARC-Type", n)
			}
			if n > len(in) {
				t.Fatalf("more records than input bytes")
			}
			recs = append(recs, rec)
		}

		// The same bytes read as plain WARC must give the same records; in
		// one gzip member the last of them may be withheld when damage
		// follows it, since its checksum then cannot vouch for it.
		if !wrap || bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			return
		}
		plain := readAllLimit(bytes.NewReader(data), fuzzMaxBlock)
		withheld := len(plain.recs) - len(recs)
		if withheld < 0 || withheld > 1 || (plain.err == io.EOF && withheld != 0) {
			t.Fatalf("%d records in gzip, %d plain (%v)", len(recs), len(plain.recs), plain.err)
		}
		for i, rec := range recs {
			if !sameRecord(rec, plain.recs[i]) {
				t.Fatalf("record %d differs between gzip and plain", i)
			}
		}
	})
}

// fastGzip wraps b in one gzip member at the cheapest compression level: the
// fuzzer shapes what is inside the member, not how it is compressed, and a
// fresh gzip.Writer per input would dominate the run time.
func fastGzip(b []byte) []byte {
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	var buf bytes.Buffer
	zw.Reset(&buf)
	_, _ = zw.Write(b) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// FuzzRoundTrip writes arbitrary captures; each is either refused with
// ErrInvalidRecord, for a reason the test can name, or reads back exactly.
func FuzzRoundTrip(f *testing.F) {
	f.Add("http://example.com/", []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\n\r\nhello"), "", "http/1.1")
	f.Add("http://example.com/\r\nWARC-Type: resource", []byte(nil), []byte("HTTP/1.1 200 OK\r\n\r\n"), "", "")
	f.Add("http://example.com/ü ", []byte("x"), []byte("HTTP/1.1 200 OK\n\nWARC/1.1\r\n\r\n"), "length", "h2")
	f.Add("", []byte(nil), []byte(nil), "time", "h2,tls/1.3")
	f.Add("\xff", []byte("\x00"), []byte("\x1f\x8b"), "length\n", "h2\r\nWARC-Type: resource")

	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, uri string, req, resp []byte, truncated, protocol string) {
		c := Capture{TargetURI: uri, Date: testDate, RawRequest: req, RawResponse: resp, Truncated: truncated, Protocol: protocol}
		loc, path, err := writeAlone(t, dir, func(w *SegmentWriter) (Location, error) { return w.WriteCapture(c) })
		if err != nil {
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("WriteCapture: %v, want ErrInvalidRecord or success", err)
			}
			if writable(uri) && writable(truncated) && len(resp) > 0 && oneName(protocol) {
				t.Fatalf("WriteCapture refused a writable capture: %v", err)
			}
			return
		}
		if !writable(uri) || (truncated != "" && !writable(truncated)) || len(resp) == 0 || !oneName(protocol) {
			t.Fatalf("WriteCapture accepted URI %q, truncated %q, protocol %q, %d-byte response", uri, truncated, protocol, len(resp))
		}
		defer os.Remove(path)
		if filepath.Base(path) != loc.File {
			t.Fatalf("OnClose got %s, Location names %s", path, loc.File)
		}

		res := readPath(t, path)
		if got, want := types(res.recs), exchangeTypes(TypeResponse, len(req) > 0); !slices.Equal(got, want) {
			t.Fatalf("record types %v, want %v", got, want)
		}
		got := res.recs[len(res.recs)-1]
		if got.Header.Get(FieldTargetURI) != uri || got.Header.Get(FieldTruncated) != truncated {
			t.Fatalf("read back URI %q, truncated %q", got.Header.Get(FieldTargetURI), got.Header.Get(FieldTruncated))
		}
		if !bytes.Equal(got.Block, resp) || got.Header.Get(FieldBlockDigest) != labelledSHA1(resp) {
			t.Fatalf("response block or its digest differs")
		}
		if len(req) > 0 && (!bytes.Equal(res.recs[1].Block, req) || res.recs[1].Header.Get(FieldTargetURI) != uri) {
			t.Fatalf("request record differs")
		}
		for _, rec := range res.recs[1:] {
			if ps := rec.Header.Values(FieldProtocol); protocol == "" && ps != nil || protocol != "" && !slices.Equal(ps, []string{protocol}) {
				t.Fatalf("%s record: WARC-Protocol %q, written %q", rec.Type(), ps, protocol)
			}
		}
		at, err := ReadAt(path, loc.Offset, loc.Length)
		if err != nil || !sameRecord(at, got) {
			t.Fatalf("ReadAt(Location): %v", err)
		}
	})
}

// oneName says, independently of the writer, whether s can be a
// WARC-Protocol value: empty (left out), or one name without spaces, commas
// or anything else outside letters, digits and "/._-".
var oneName = regexp.MustCompile(`^[A-Za-z0-9/._-]*$`).MatchString

// writeAlone makes write the only write to a segment of its own in dir and
// returns the segment's path ("" if write created none) with the result.
func writeAlone(t *testing.T, dir string, write func(*SegmentWriter) (Location, error)) (Location, string, error) {
	var path string
	w, err := NewSegmentWriter(SegmentConfig{Dir: dir, MaxSize: 1, OnClose: func(p string) error { path = p; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	w.sync = func(*os.File) error { return nil } // durability is not under test
	loc, err := write(w)
	if cerr := w.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	return loc, path, err
}

// writable says, independently of the writer, whether s can be a header
// value: UTF-8 without control characters other than tab, and without white
// space at either end (readers trim it).
func writable(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r < ' ' && r != '\t') || r == 0x7f {
			return false
		}
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	pad := func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }
	return !pad(first) && !pad(last)
}

// FuzzNotModified writes arbitrary 304 answers. Each is refused with
// ErrInvalidRecord, for a reason the test can name, or reads back as the
// request and revisit records with the answer as the revisit's block, byte
// for byte. net/http's response parser, not ours, says what a 304 without a
// body is.
func FuzzNotModified(f *testing.F) {
	f.Add("http://example.com/", conditionalRequest("http://example.com/", `"v1"`), notModifiedResponse(`"v1"`), "http://example.com/")
	f.Add("http://example.com/", []byte(nil), []byte("HTTP/1.0 304\n\n"), "http://example.com/other")
	f.Add("http://example.com/", []byte(nil), []byte("HTTP/1.1 304 Not Modified\r\n\r\nbody"), "http://example.com/")
	f.Add("http://example.com/", []byte("x"), []byte("HTTP/1.1 200 OK\r\n\r\n"), "http://example.com/")
	f.Add("http://example.com/", []byte(nil), []byte("HTTP/1.1 304 Not Modified\r\nETag: x\r\n"), "http://example.com/\r\n")

	orig := Location{RecordID: "<urn:uuid:11111111-1111-4111-8111-111111111111>", PayloadDigest: labelledSHA1([]byte("original"))}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, uri string, req, resp []byte, origURI string) {
		c := Capture{TargetURI: uri, Date: testDate, RawRequest: req, RawResponse: resp}
		loc, path, err := writeAlone(t, dir, func(w *SegmentWriter) (Location, error) {
			return w.WriteNotModified(c, orig, origURI, testDate)
		})
		valid := writable(uri) && writable(origURI) && bareNotModified(resp)
		if err != nil {
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("WriteNotModified: %v, want ErrInvalidRecord or success", err)
			}
			if valid {
				t.Fatalf("WriteNotModified refused a writable 304 %q: %v", resp, err)
			}
			return
		}
		if !writable(uri) || !writable(origURI) || !statusNotModified(resp) {
			t.Fatalf("WriteNotModified accepted URI %q, original URI %q, response %q", uri, origURI, resp)
		}
		defer os.Remove(path)

		res := readPath(t, path)
		if got, want := types(res.recs), exchangeTypes(TypeRevisit, len(req) > 0); !slices.Equal(got, want) {
			t.Fatalf("record types %v, want %v", got, want)
		}
		rev := res.recs[len(res.recs)-1]
		if !bytes.Equal(rev.Block, resp) || rev.Header.Get(FieldBlockDigest) != labelledSHA1(resp) {
			t.Fatalf("revisit block %q or its digest differs from the answer %q", rev.Block, resp)
		}
		if rev.Profile() != ProfileServerNotModified || rev.Header.Get(FieldRefersToTargetURI) != origURI ||
			rev.Header.Get(FieldRefersTo) != orig.RecordID || rev.Header.Get(FieldPayloadDigest) != orig.PayloadDigest {
			t.Fatalf("revisit fields differ: %q", rev.Header.fields)
		}
		if len(req) > 0 && (!bytes.Equal(res.recs[1].Block, req) || res.recs[1].Header.Get(FieldConcurrentTo) != rev.ID()) {
			t.Fatalf("request record differs")
		}
		at, err := ReadAt(path, loc.Offset, loc.Length)
		if err != nil || !sameRecord(at, rev) {
			t.Fatalf("ReadAt(Location): %v", err)
		}
	})
}

// bareNotModified says whether resp is a whole 304 response head and nothing
// else: net/http's parser reads a 304 from it, and the head ends at the end
// by the package's framing (net/http also takes LF CR LF for a blank line,
// which splitHTTP, like warcio.js, does not).
func bareNotModified(resp []byte) bool {
	if headEnd(resp) != len(resp) || !bytes.HasSuffix(resp, []byte("\n\n")) && !bytes.HasSuffix(resp, []byte("\r\n\r\n")) {
		return false
	}
	br := bufio.NewReader(bytes.NewReader(resp))
	r, err := http.ReadResponse(br, nil)
	if err != nil || r.StatusCode != http.StatusNotModified {
		return false
	}
	_, err = br.Peek(1)
	return err == io.EOF
}

// statusNotModified says whether resp's status line, as net/http reads it,
// has code 304: net/http is stricter about headers than a WARC writer has
// to be, so an accepted answer is held to the status line only.
func statusNotModified(resp []byte) bool {
	line, _, _ := strings.Cut(string(resp), "\n")
	head := strings.TrimSuffix(line, "\r") + "\r\n\r\n"
	r, err := http.ReadResponse(bufio.NewReader(strings.NewReader(head)), nil)
	return err == nil && r.StatusCode == http.StatusNotModified
}
