package warc

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/warciotest"
)

// TestWarcioReadsOurFiles has webrecorder's warcio.js, a reader that shares no
// code or assumptions with this package, parse a segment the writer produced,
// and checks that it sees the records, targets and member boundaries the
// writer reported, with digests that verify.
//
// It needs node and `npm ci --prefix tools/warcio-check`; without them it
// skips, unless CRAWLER_REQUIRE_WARCIO=1 (as in CI) turns that into a failure.
func TestWarcioReadsOurFiles(t *testing.T) {
	path, written := writeEveryKind(t, "warcio-compat-test")
	var wantTypes, wantTargets []string
	for _, r := range written {
		wantTypes = append(wantTypes, r.typ)
		if r.target != "" {
			wantTargets = append(wantTargets, r.target)
		}
	}
	got := warciotest.Check(t, path)

	// Our own reader supplies the IDs and offsets of the records that no
	// Location names (warcinfo, requests).
	ours := readPath(t, path)
	lengths := memberLengths(ours.offsets, fileSize(t, path))

	if got.Records != len(wantTypes) || len(got.Members) != len(wantTypes) {
		t.Fatalf("warcio read %d records (%d members), the writer wrote %d", got.Records, len(got.Members), len(wantTypes))
	}
	wantCount := map[string]int{}
	for _, typ := range wantTypes {
		wantCount[typ]++
	}
	if fmt.Sprint(got.Types) != fmt.Sprint(wantCount) {
		t.Errorf("warcio types %v, want %v", got.Types, wantCount)
	}
	if !slices.Equal(got.Targets, wantTargets) {
		t.Errorf("warcio targets:\n%q\nwant:\n%q", got.Targets, wantTargets)
	}
	for i, m := range got.Members {
		if m.Type != wantTypes[i] || m.ID != ours.recs[i].ID() || m.Offset != ours.offsets[i] || m.Length != lengths[i] {
			t.Errorf("member %d: warcio sees %s %s at %d+%d; written %s %s at %d+%d",
				i, m.Type, m.ID, m.Offset, m.Length, wantTypes[i], ours.recs[i].ID(), ours.offsets[i], lengths[i])
		}
		w := written[i]
		checkConnection(t, "warcio", i, w, m.Protocols, m.CipherSuite)
		checkConnection(t, "our reader", i, w, ours.recs[i].Header.Values(FieldProtocol), ours.recs[i].Header.Get(FieldCipherSuite))
		// The h2 head's status line ("HTTP/1.1 200 ", no reason phrase)
		// parses like any other.
		if w.typ == TypeResponse && m.Status != http.StatusOK {
			t.Errorf("member %d (%s): warcio reads HTTP status %d", i, w.target, m.Status)
		}
	}
	for _, r := range written {
		if r.loc.RecordID == "" {
			continue
		}
		i := slices.IndexFunc(got.Members, func(m warciotest.Member) bool { return m.ID == r.loc.RecordID })
		if i < 0 {
			t.Errorf("warcio did not see record %s (%s)", r.loc.RecordID, r.target)
			continue
		}
		if m := got.Members[i]; m.Offset != r.loc.Offset || m.Length != r.loc.Length {
			t.Errorf("%s: warcio sees the member at %d+%d, Location says %d+%d", r.target, m.Offset, m.Length, r.loc.Offset, r.loc.Length)
		}
	}
	if len(got.PayloadDigestMismatches) != 0 {
		t.Errorf("payload digest mismatches: %s", got.PayloadDigestMismatches)
	}
	if len(got.BlockDigestMismatches) != 0 {
		t.Errorf("block digest mismatches: %s", got.BlockDigestMismatches)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warcio warnings: %q", got.Warnings)
	}
}

// writtenRecord is one record of the segment writeEveryKind writes, as the
// writer reported it.
type writtenRecord struct {
	typ, target string
	loc         Location // zero for the records no Location names (warcinfo, requests)
	profile     string   // of a revisit
	refersTo    string   // a revisit's original
	protocols   []string // WARC-Protocol values, in order
	cipherSuite string   // WARC-Cipher-Suite
}

// writeEveryKind writes one segment with every kind of record the crawler
// writes, for the independent readers to check, and returns its path and
// its records in order, starting with the warcinfo record.
func writeEveryKind(t *testing.T, software string) (string, []writtenRecord) {
	t.Helper()
	dir := t.TempDir()
	w := newWriter(t, SegmentConfig{Dir: dir, Software: software})
	written := []writtenRecord{{typ: TypeWarcinfo}}
	exchange := func(c Capture, answer string, loc Location, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("write %s %s: %v", answer, c.TargetURI, err)
		}
		var protocols []string
		for _, p := range []string{c.Protocol, c.TLSVersion} {
			if p != "" {
				protocols = append(protocols, p)
			}
		}
		if len(c.RawRequest) > 0 {
			written = append(written, writtenRecord{typ: TypeRequest, target: c.TargetURI, protocols: protocols, cipherSuite: c.CipherSuite})
		}
		written = append(written, writtenRecord{typ: answer, target: c.TargetURI, loc: loc, protocols: protocols, cipherSuite: c.CipherSuite})
	}
	capture := func(c Capture) Location {
		t.Helper()
		loc, err := w.WriteCapture(c)
		exchange(c, TypeResponse, loc, err)
		return loc
	}

	// Every response has at least one header line: warcio.js 2.4.11 looks
	// for CRLFCRLF after the status line, so it takes the body of a response
	// without headers ("HTTP/1.1 200 OK\r\n\r\nbody") for headers, and its
	// payload digest then disagrees with ours, which is the correct one.
	page := htmlPage(8 << 10)
	gzPage := gzipped(t, page)
	homeResp := rawResponse("Content-Type: text/html\r\nContent-Length: "+strconv.Itoa(len(page))+"\r\n", page)
	home := capture(Capture{
		TargetURI: "http://example.com/", Date: testDate, IP: "192.0.2.1",
		RawRequest: rawRequest("http://example.com/"), RawResponse: homeResp,
	})
	capture(Capture{
		TargetURI: "http://example.com/gz", Date: testDate, IP: "192.0.2.1",
		RawRequest:  rawRequest("http://example.com/gz"),
		RawResponse: rawResponse("Content-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: "+strconv.Itoa(len(gzPage))+"\r\n", gzPage),
	})
	// The payload digest covers the chunk framing, as warcio's does.
	capture(Capture{
		TargetURI: "http://example.com/chunked", Date: testDate, IP: "192.0.2.1",
		RawRequest:  rawRequest("http://example.com/chunked"),
		RawResponse: rawResponse("Content-Type: text/html\r\nTransfer-Encoding: chunked\r\n", chunked(page, 1000)),
	})
	capture(Capture{
		TargetURI: "http://example.com/big.bin", Date: testDate, IP: "2001:db8::1",
		RawRequest:  rawRequest("http://example.com/big.bin"),
		RawResponse: rawResponse("Content-Type: application/octet-stream\r\nContent-Length: 10485760\r\n", pseudoRandom(7, 16<<10)),
		Truncated:   "length",
	})
	capture(Capture{
		TargetURI: "http://example.com/robots.txt", Date: testDate,
		RawResponse: rawResponse("Content-Type: text/plain\r\n", []byte("User-agent: *\nDisallow:\n")),
	})
	capture(Capture{
		TargetURI: "http://example.com/café?q=日本", Date: testDate,
		RawRequest:  rawRequest("http://example.com/caf%C3%A9?q=%E6%97%A5"),
		RawResponse: rawResponse("Content-Type: text/plain; charset=utf-8\r\n", []byte("café 日本")),
	})
	// Fetched by the crawler's client: HTTP/2 over TLS, whose head is
	// rendered as HTTP/1.1 with an empty reason phrase, and plain HTTP/1.1.
	h2, plain := fetchedCaptures(t)
	capture(h2)
	capture(plain)

	revisit := Capture{TargetURI: "http://example.com/", Date: testDate.Add(time.Hour), IP: "192.0.2.1", RawResponse: homeResp}
	loc, err := w.WriteRevisit(revisit, home, "http://example.com/", testDate)
	exchange(revisit, TypeRevisit, loc, err)
	written[len(written)-1].profile, written[len(written)-1].refersTo = ProfileIdenticalPayload, home.RecordID
	notModified := Capture{
		TargetURI: "http://example.com/", Date: testDate.Add(2 * time.Hour), IP: "192.0.2.1",
		RawRequest:  conditionalRequest("http://example.com/", `"abc"`),
		RawResponse: notModifiedResponse(`"abc"`),
	}
	loc, err = w.WriteNotModified(notModified, home, "http://example.com/", testDate)
	exchange(notModified, TypeRevisit, loc, err)
	written[len(written)-1].profile, written[len(written)-1].refersTo = ProfileServerNotModified, home.RecordID

	meta := &Record{Block: []byte("outlink: http://example.com/gz\r\noutlink: http://example.com/chunked\r\n")}
	meta.Header.Add(FieldType, TypeMetadata)
	meta.Header.Add(FieldTargetURI, "http://example.com/")
	meta.Header.Add(FieldConcurrentTo, home.RecordID)
	meta.Header.Add(FieldContentType, contentFields)
	if loc, err = w.WriteRecord(meta); err != nil {
		t.Fatalf("WriteRecord: %v", err)
	}
	written = append(written, writtenRecord{typ: TypeMetadata, target: "http://example.com/", loc: loc})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := segments(t, dir)
	if len(files) != 1 {
		t.Fatalf("segments %v, want one", files)
	}
	return files[0], written
}

// checkConnection compares the WARC-Protocol values and WARC-Cipher-Suite a
// reader found on record i with what was written.
func checkConnection(t *testing.T, reader string, i int, w writtenRecord, protocols []string, cipherSuite string) {
	t.Helper()
	if !slices.Equal(protocols, w.protocols) || cipherSuite != w.cipherSuite {
		t.Errorf("record %d (%s %s): %s reads WARC-Protocol %q, WARC-Cipher-Suite %q; written %q, %q",
			i, w.typ, w.target, reader, protocols, cipherSuite, w.protocols, w.cipherSuite)
	}
}
