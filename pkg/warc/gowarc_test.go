package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nlnwa/gowarc/v2"
)

// The second independent reader, after warcio.js: nlnwa/gowarc (docs/warc.md
// says why this one). Unlike warcio.js it verifies block and payload digests
// itself and checks every field against the WARC 1.1 grammar and the record
// types that may carry it, so it also catches a field in the wrong record or
// a malformed WARC-Refers-To-Date. It is a test dependency only.

// TestGowarcReadsOurFiles has gowarc read a segment with every kind of
// record the crawler writes under strict validation, where any syntax
// error, spec violation or digest mismatch fails the read, and compares what
// it saw with what the writer reported.
func TestGowarcReadsOurFiles(t *testing.T) {
	path, written := writeEveryKind(t, "gowarc-compat-test")
	got := gowarcRead(t, path)
	if len(got) != len(written) {
		t.Fatalf("gowarc read %d records, the writer wrote %d", len(got), len(written))
	}
	ids := map[string]bool{}
	for _, r := range got {
		ids[r.rec.WarcHeader().Get(gowarc.WarcRecordID)] = true
	}
	for i, g := range got {
		h, w := g.rec.WarcHeader(), written[i]
		if typ := g.rec.Type().String(); typ != w.typ || h.Get(gowarc.WarcTargetURI) != w.target {
			t.Errorf("record %d: gowarc sees %s %q, written %s %q", i, typ, h.Get(gowarc.WarcTargetURI), w.typ, w.target)
			continue
		}
		if w.loc.RecordID != "" && (h.Get(gowarc.WarcRecordID) != w.loc.RecordID || g.offset != w.loc.Offset) {
			t.Errorf("record %d (%s %s): gowarc finds %s at %d, Location says %s at %d",
				i, w.typ, w.target, h.Get(gowarc.WarcRecordID), g.offset, w.loc.RecordID, w.loc.Offset)
		}
		// gowarc has verified the payload digest of a response; a
		// revisit's must be its original's.
		if w.loc.PayloadDigest != "" && h.Get(gowarc.WarcPayloadDigest) != w.loc.PayloadDigest {
			t.Errorf("record %d (%s): WARC-Payload-Digest %s, Location says %s", i, w.typ, h.Get(gowarc.WarcPayloadDigest), w.loc.PayloadDigest)
		}
		checkConnection(t, "gowarc", i, w, h.GetAll(FieldProtocol), h.Get(FieldCipherSuite))
		if b, ok := g.rec.Block().(gowarc.HttpResponseBlock); ok && b.HttpStatusCode() != http.StatusOK && w.typ == TypeResponse {
			t.Errorf("record %d (%s): gowarc reads HTTP status %d", i, w.target, b.HttpStatusCode())
		}
		for _, to := range h.GetAll(gowarc.WarcConcurrentTo) {
			if !ids[to] {
				t.Errorf("record %d (%s): WARC-Concurrent-To %s names no record in the segment", i, w.typ, to)
			}
		}
		if w.typ != TypeRevisit {
			continue
		}
		ref, err := g.rec.RevisitRef()
		if err != nil {
			t.Errorf("record %d: RevisitRef: %v", i, err)
			continue
		}
		refDate, err := time.Parse(time.RFC3339Nano, ref.TargetDate)
		if ref.Profile != w.profile || "<"+ref.TargetRecordId+">" != w.refersTo || ref.TargetUri != "http://example.com/" ||
			err != nil || !refDate.Equal(testDate.Truncate(time.Microsecond)) {
			t.Errorf("record %d: gowarc reads the revisit as %+v, want profile %s referring to %s, http://example.com/ at %s",
				i, *ref, w.profile, w.refersTo, FormatDate(testDate))
		}
	}
	// The request of the 304 is paired with its revisit both ways.
	req, rev := got[len(got)-3].rec.WarcHeader(), got[len(got)-2].rec.WarcHeader()
	if req.Get(gowarc.WarcConcurrentTo) != rev.Get(gowarc.WarcRecordID) || rev.Get(gowarc.WarcConcurrentTo) != req.Get(gowarc.WarcRecordID) {
		t.Errorf("304 request and revisit not linked: %s -> %s, %s -> %s", req.Get(gowarc.WarcRecordID), req.Get(gowarc.WarcConcurrentTo),
			rev.Get(gowarc.WarcRecordID), rev.Get(gowarc.WarcConcurrentTo))
	}
}

// TestGowarcCatchesDigestMismatch is the control for the test above: gowarc
// must refuse a record whose block or payload digest is wrong, or its passing
// the segment would prove nothing about our digests.
func TestGowarcCatchesDigestMismatch(t *testing.T) {
	path, written := writeEveryKind(t, "gowarc-control-test")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plain := gunzipped(t, data)
	gowarcRead(t, writeFile(t, "intact.warc", plain))
	req := readPath(t, path).recs[1] // the home page's request

	wrong := labelledSHA1([]byte("something else"))
	for name, digest := range map[string]string{
		// The first occurrence is the response's; the revisits repeat it.
		"payload": written[2].loc.PayloadDigest,
		"block":   req.Header.Get(FieldBlockDigest),
	} {
		t.Run(name, func(t *testing.T) {
			bad := bytes.Replace(plain, []byte(digest), []byte(wrong), 1)
			if bytes.Equal(bad, plain) {
				t.Fatalf("digest %s not in the segment", digest)
			}
			// Refused for the digest, not for damage the edit did.
			if _, err := gowarcReadAll(writeFile(t, "bad.warc", bad)); err == nil || !strings.Contains(err.Error(), name+": wrong digest") {
				t.Errorf("gowarc reads a wrong %s digest with error %v", name, err)
			}
		})
	}
}

// gowarcRecord is one record as gowarc read it, with the offset it found it at.
type gowarcRecord struct {
	rec    gowarc.WarcRecord
	offset int64
}

// gowarcRead reads path with gowarc under strict validation and fails the
// test on any error.
func gowarcRead(t *testing.T, path string) []gowarcRecord {
	t.Helper()
	recs, err := gowarcReadAll(path)
	if err != nil {
		t.Fatalf("gowarc reads %s: after %d records: %v", filepath.Base(path), len(recs), err)
	}
	return recs
}

func gowarcReadAll(path string) ([]gowarcRecord, error) {
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []gowarcRecord
	for {
		rec, off, v, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		// Strict validation fails on the first problem, so this is belt
		// and braces should a future version only collect it.
		if !v.Valid() {
			return recs, v
		}
		// Validation read and verified the block; the record keeps no file
		// handles worth holding on to.
		_ = rec.Close()
		recs = append(recs, gowarcRecord{rec: rec, offset: off})
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkWriteCaptureGowarc writes benchCapture the way
// BenchmarkWriteCapture does (request and response record, one gzip member
// each at DefaultLevel, digests, one file up to 256 MiB), with gowarc's
// writer instead of ours: the figure docs/warc.md weighs against ours.
func BenchmarkWriteCaptureGowarc(b *testing.B) {
	c := benchCapture()
	build := func(typ gowarc.RecordType, contentType string, block []byte) (gowarc.WarcRecord, error) {
		rb := gowarc.NewRecordBuilder(typ)
		rb.AddWarcHeader(gowarc.WarcTargetURI, c.TargetURI)
		rb.AddWarcHeaderTime(gowarc.WarcDate, c.Date)
		rb.AddWarcHeader(gowarc.WarcIPAddress, c.IP)
		rb.AddWarcHeader(gowarc.ContentType, contentType)
		if _, err := rb.Write(block); err != nil {
			return nil, err
		}
		rec, _, err := rb.Build()
		return rec, err
	}
	write := func(w *gowarc.WarcFileWriter) error {
		req, err := build(gowarc.Request, contentHTTPReq, c.RawRequest)
		if err != nil {
			return err
		}
		resp, err := build(gowarc.Response, contentHTTPRes, c.RawResponse)
		if err != nil {
			return err
		}
		for _, res := range w.Write(req, resp) {
			if res.Err != nil {
				return res.Err
			}
		}
		return nil
	}
	benchSerialAndParallel(b, c, func(b *testing.B) func() error {
		w := gowarc.NewWarcFileWriter(
			gowarc.WithCompressionLevel(DefaultLevel),
			gowarc.WithMaxFileSize(256<<20),
			gowarc.WithFileNameGenerator(&gowarcNames{dir: b.TempDir()}),
			gowarc.WithAddWarcConcurrentToHeader(true),
			gowarc.WithWarcInfoFunc(func(rb gowarc.WarcRecordBuilder) error {
				_, err := rb.WriteString("software: gowarc-bench\r\n")
				return err
			}),
		)
		b.Cleanup(func() { _ = w.Close() })
		return func() error { return write(w) }
	})
}

// gowarcNames numbers the benchmark's files. gowarc's default
// PatternNameGenerator would put the host's outbound address in each name,
// which it finds by connecting a UDP socket to 8.8.8.8.
type gowarcNames struct {
	dir string
	n   atomic.Int32
}

func (g *gowarcNames) NewWarcfileName() (string, string) {
	return g.dir, fmt.Sprintf("gowarc-bench-%05d.warc", g.n.Add(1))
}
