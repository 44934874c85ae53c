package warc

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// captureCases are HTTP exchanges as the fetcher hands them over, each with the
// payload (entity body as received) its WARC-Payload-Digest must cover.
func captureCases(t testing.TB) []struct {
	name    string
	capture Capture
	payload []byte
} {
	page := htmlPage(6 << 10)
	gzPage := gzipped(t, page)
	chunkedPage := chunked(page[:3000], 1024)
	partial := pseudoRandom(1, 4096)
	large := pseudoRandom(2, 3<<20+17) // over the Reader's 1 MiB read chunk
	tricky := []byte("\r\n\r\nWARC/1.1\r\nWARC-Type: response\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n")
	return []struct {
		name    string
		capture Capture
		payload []byte
	}{
		{
			name: "request and response",
			capture: Capture{
				TargetURI:   "http://example.com/index.html",
				Date:        testDate,
				IP:          "192.0.2.7",
				RawRequest:  rawRequest("http://example.com/index.html"),
				RawResponse: rawResponse("Content-Type: text/html\r\nContent-Length: "+strconv.Itoa(len(page))+"\r\n", page),
			},
			payload: page,
		},
		{
			name: "response without request",
			capture: Capture{
				TargetURI:   "http://example.com/robots.txt",
				Date:        testDate,
				RawResponse: rawResponse("Content-Type: text/plain\r\n", []byte("User-agent: *\nDisallow: /private\n")),
			},
			payload: []byte("User-agent: *\nDisallow: /private\n"),
		},
		{
			name: "large body",
			capture: Capture{
				TargetURI:   "http://example.com/large.bin",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/large.bin"),
				RawResponse: rawResponse("Content-Type: application/octet-stream\r\nContent-Length: "+strconv.Itoa(len(large))+"\r\n", large),
			},
			payload: large,
		},
		{
			name: "truncated body",
			capture: Capture{
				TargetURI:   "http://example.com/big.bin",
				Date:        testDate,
				IP:          "2001:db8::1",
				RawRequest:  rawRequest("http://example.com/big.bin"),
				RawResponse: rawResponse("Content-Type: application/octet-stream\r\nContent-Length: 1048576\r\n", partial),
				Truncated:   "length",
			},
			payload: partial,
		},
		{
			name: "chunked transfer encoding keeps its framing",
			capture: Capture{
				TargetURI:   "http://example.com/chunked",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/chunked"),
				RawResponse: rawResponse("Content-Type: text/html\r\nTransfer-Encoding: chunked\r\n", chunkedPage),
			},
			payload: chunkedPage,
		},
		{
			name: "gzip content encoding stays compressed",
			capture: Capture{
				TargetURI:   "http://example.com/gz",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/gz"),
				RawResponse: rawResponse("Content-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: "+strconv.Itoa(len(gzPage))+"\r\n", gzPage),
			},
			payload: gzPage,
		},
		{
			name: "chunked and gzip encoded",
			capture: Capture{
				TargetURI:   "http://example.com/gz-chunked",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/gz-chunked"),
				RawResponse: rawResponse("Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", chunked(gzPage, 512)),
			},
			payload: chunked(gzPage, 512),
		},
		{
			name: "bare LF head",
			capture: Capture{
				TargetURI:   "http://example.com/lf",
				Date:        testDate,
				RawResponse: []byte("HTTP/1.0 200 OK\nContent-Type: text/plain\n\nline 1\n\nline 2\n"),
			},
			payload: []byte("line 1\n\nline 2\n"),
		},
		{
			name: "no body",
			capture: Capture{
				TargetURI:   "http://example.com/empty",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/empty"),
				RawResponse: []byte("HTTP/1.1 204 No Content\r\nServer: test\r\n\r\n"),
			},
			payload: nil,
		},
		{
			name: "connection lost inside the head",
			capture: Capture{
				TargetURI:   "http://example.com/hangup",
				Date:        testDate,
				RawResponse: []byte("HTTP/1.1 200 OK\r\nContent-Ty"),
				Truncated:   "disconnect",
			},
			payload: nil,
		},
		{
			name: "body that looks like WARC framing",
			capture: Capture{
				TargetURI:   "http://example.com/tricky",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/tricky"),
				RawResponse: rawResponse("Content-Type: text/plain\r\n", tricky),
			},
			payload: tricky,
		},
		{
			name: "UTF-8 IRI target",
			capture: Capture{
				TargetURI:   "http://example.com/straße?q=ü&x=日本",
				Date:        testDate,
				RawRequest:  rawRequest("http://example.com/stra%C3%9Fe?q=%C3%BC&x=%E6%97%A5%E6%9C%AC"),
				RawResponse: rawResponse("Content-Type: text/plain; charset=utf-8\r\n", []byte("grüß")),
			},
			payload: []byte("grüß"),
		},
	}
}

func TestWriteCaptureRoundTrip(t *testing.T) {
	for _, tt := range captureCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w := newWriter(t, SegmentConfig{Dir: dir, Software: "warc-test/1.0"})
			loc, err := w.WriteCapture(tt.capture)
			if err != nil {
				t.Fatalf("WriteCapture: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			files := segments(t, dir)
			if len(files) != 1 || filepath.Base(files[0]) != loc.File {
				t.Fatalf("segments %v, Location.File %q", files, loc.File)
			}
			res := readPath(t, files[0])

			c := tt.capture
			wantTypes := []string{TypeWarcinfo, TypeResponse}
			if len(c.RawRequest) > 0 {
				wantTypes = []string{TypeWarcinfo, TypeRequest, TypeResponse}
			}
			if got := types(res.recs); !slices.Equal(got, wantTypes) {
				t.Fatalf("record types %v, want %v", got, wantTypes)
			}
			resp := res.recs[len(res.recs)-1]
			date := FormatDate(testDate)

			checkFields(t, resp, map[string]string{
				FieldTargetURI:     c.TargetURI,
				FieldDate:          date,
				FieldIPAddress:     c.IP,
				FieldContentType:   "application/http;msgtype=response",
				FieldContentLength: strconv.Itoa(len(c.RawResponse)),
				FieldBlockDigest:   labelledSHA1(c.RawResponse),
				FieldPayloadDigest: labelledSHA1(tt.payload),
				FieldTruncated:     c.Truncated,
			})
			if !bytes.Equal(resp.Block, c.RawResponse) {
				t.Errorf("response block differs from RawResponse")
			}
			if got, err := resp.Date(); err != nil || !got.Equal(testDate.Truncate(time.Microsecond)) {
				t.Errorf("Date() = %v, %v; want %v", got, err, testDate.Truncate(time.Microsecond))
			}
			if loc.RecordID != resp.ID() || !strings.HasPrefix(loc.RecordID, "<urn:uuid:") {
				t.Errorf("Location.RecordID %q, record has %q", loc.RecordID, resp.ID())
			}
			if loc.PayloadDigest != labelledSHA1(tt.payload) {
				t.Errorf("Location.PayloadDigest %q, want %q", loc.PayloadDigest, labelledSHA1(tt.payload))
			}
			if loc.Offset != res.offsets[len(res.offsets)-1] {
				t.Errorf("Location.Offset %d, reader found the response at %d", loc.Offset, res.offsets[len(res.offsets)-1])
			}
			if end := loc.Offset + loc.Length; end != fileSize(t, files[0]) {
				t.Errorf("Location ends at %d, file at %d", end, fileSize(t, files[0]))
			}

			if len(c.RawRequest) > 0 {
				req := res.recs[1]
				checkFields(t, req, map[string]string{
					FieldTargetURI:     c.TargetURI,
					FieldDate:          date,
					FieldIPAddress:     c.IP,
					FieldContentType:   "application/http;msgtype=request",
					FieldContentLength: strconv.Itoa(len(c.RawRequest)),
					FieldBlockDigest:   labelledSHA1(c.RawRequest),
					FieldPayloadDigest: "",
					FieldTruncated:     "",
				})
				if !bytes.Equal(req.Block, c.RawRequest) {
					t.Errorf("request block differs from RawRequest")
				}
				if got := req.Header.Values(FieldConcurrentTo); !slices.Equal(got, []string{resp.ID()}) {
					t.Errorf("request WARC-Concurrent-To %v, want [%s]", got, resp.ID())
				}
				if got := resp.Header.Values(FieldConcurrentTo); !slices.Equal(got, []string{req.ID()}) {
					t.Errorf("response WARC-Concurrent-To %v, want [%s]", got, req.ID())
				}
				if req.ID() == resp.ID() {
					t.Errorf("request and response share ID %s", req.ID())
				}
			} else if got := resp.Header.Values(FieldConcurrentTo); got != nil {
				t.Errorf("response without request has WARC-Concurrent-To %v", got)
			}

			// Every member, and the Location itself, reads back on its own.
			lengths := memberLengths(res.offsets, fileSize(t, files[0]))
			for i, rec := range res.recs {
				got, err := ReadAt(files[0], res.offsets[i], lengths[i])
				if err != nil {
					t.Fatalf("ReadAt member %d: %v", i, err)
				}
				if !sameRecord(got, rec) {
					t.Errorf("ReadAt member %d differs from the sequential read", i)
				}
			}
			got, err := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length)
			if err != nil {
				t.Fatalf("ReadAt(Location): %v", err)
			}
			if !sameRecord(got, resp) {
				t.Errorf("ReadAt(Location) differs from the response record")
			}
		})
	}
}

// checkFields compares single-valued fields; "" means the field is absent.
func checkFields(t *testing.T, rec *Record, want map[string]string) {
	t.Helper()
	for name, v := range want {
		got := rec.Header.Values(name)
		switch {
		case v == "" && got != nil:
			t.Errorf("%s record: %s = %q, want none", rec.Type(), name, got)
		case v != "" && !slices.Equal(got, []string{v}):
			t.Errorf("%s record: %s = %q, want %q", rec.Type(), name, got, v)
		}
	}
	if got := rec.Header.Get(FieldContentLength); got != strconv.Itoa(len(rec.Block)) {
		t.Errorf("%s record: Content-Length %s for a %d-byte block", rec.Type(), got, len(rec.Block))
	}
	if got := rec.Header.Get(FieldBlockDigest); got != labelledSHA1(rec.Block) {
		t.Errorf("%s record: WARC-Block-Digest %s, block hashes to %s", rec.Type(), got, labelledSHA1(rec.Block))
	}
}

func TestWriteCaptureDefaultsDateToNow(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, SegmentConfig{Dir: dir})
	before := time.Now().Truncate(time.Microsecond)
	loc, err := w.WriteCapture(Capture{TargetURI: "http://example.com/", RawResponse: rawResponse("", nil)})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	rec, err := ReadAt(filepath.Join(dir, loc.File), loc.Offset, loc.Length)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rec.Date()
	if err != nil || got.Before(before) || got.After(after) {
		t.Errorf("WARC-Date %v (%v), want between %v and %v", got, err, before, after)
	}
}

func TestWriteRevisit(t *testing.T) {
	original, body := revisitedCapture()
	origDate := original.Date
	notModified := []byte("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n")
	sameBody := rawResponse("Content-Type: text/html\r\nETag: \"v1\"\r\n", body)

	tests := []struct {
		name     string
		response []byte
		uri      string
		// original Location fields to blank out before the call
		noID, noDigest bool
		wantErr        error
	}{
		{name: "304 without body", response: notModified},
		{name: "unchanged body", response: sameBody},
		{name: "unchanged body at another URI", response: sameBody, uri: "http://mirror.example.com/a"},
		{name: "unchanged body, original digest unknown", response: sameBody, noDigest: true},
		{name: "changed body", response: rawResponse("Content-Type: text/html\r\n", []byte("new")), wantErr: ErrInvalidRecord},
		{name: "no original record ID", response: notModified, noID: true, wantErr: ErrInvalidRecord},
		{name: "304 and original digest unknown", response: notModified, noDigest: true, wantErr: ErrInvalidRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dir, origLoc, ref := withOriginal(t, original, tt.noID, tt.noDigest)
			uri := tt.uri
			if uri == "" {
				uri = original.TargetURI
			}
			c := Capture{TargetURI: uri, Date: testDate, IP: "192.0.2.9", RawResponse: tt.response}
			loc, err := w.WriteRevisit(c, ref, original.TargetURI, origDate)
			if tt.wantErr != nil {
				checkRefused(t, w, dir, origLoc, loc, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("WriteRevisit: %v", err)
			}
			if loc.PayloadDigest != origLoc.PayloadDigest || loc.PayloadDigest != labelledSHA1(body) {
				t.Errorf("revisit Location.PayloadDigest %s, original %s", loc.PayloadDigest, origLoc.PayloadDigest)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, loc.File)
			res := readPath(t, path)
			if got := types(res.recs); !slices.Equal(got, []string{TypeWarcinfo, TypeRequest, TypeResponse, TypeRevisit}) {
				t.Fatalf("record types %v", got)
			}
			rev := res.recs[3]
			head, _, _ := bytes.Cut(tt.response, []byte("\r\n\r\n"))
			head = append(head, "\r\n\r\n"...)
			checkFields(t, rev, map[string]string{
				FieldTargetURI:         uri,
				FieldDate:              FormatDate(testDate),
				FieldIPAddress:         "192.0.2.9",
				FieldContentType:       "application/http;msgtype=response",
				FieldProfile:           "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
				FieldRefersTo:          origLoc.RecordID,
				FieldRefersToTargetURI: original.TargetURI,
				FieldRefersToDate:      FormatDate(origDate),
				FieldPayloadDigest:     labelledSHA1(body),
				FieldBlockDigest:       labelledSHA1(head),
				FieldConcurrentTo:      "",
			})
			if !bytes.Equal(rev.Block, head) {
				t.Errorf("revisit block %q, want the response head %q", rev.Block, head)
			}
			if rev.Profile() != ProfileIdenticalPayload {
				t.Errorf("Profile() = %q", rev.Profile())
			}
			if loc.RecordID != rev.ID() || loc.Offset != res.offsets[3] {
				t.Errorf("Location %+v, record %s at %d", loc, rev.ID(), res.offsets[3])
			}
			got, err := ReadAt(path, loc.Offset, loc.Length)
			if err != nil || !sameRecord(got, rev) {
				t.Errorf("ReadAt(Location) = %v; differs from the revisit record", err)
			}
		})
	}
}

func TestWriteRecord(t *testing.T) {
	dir := t.TempDir()
	w := newWriter(t, SegmentConfig{Dir: dir})

	meta := &Record{Block: []byte("outlink: http://example.com/b\r\noutlink: http://example.com/c\r\nfetchTimeMs: 42\r\n")}
	meta.Header.Add(FieldType, TypeMetadata)
	meta.Header.Add(FieldTargetURI, "http://example.com/a")
	meta.Header.Add(FieldConcurrentTo, "<urn:uuid:11111111-1111-4111-8111-111111111111>")
	meta.Header.Add(FieldConcurrentTo, "<urn:uuid:22222222-2222-4222-8222-222222222222>")
	meta.Header.Add(FieldContentType, "application/warc-fields")
	meta.Header.Add(FieldContentLength, "999999") // stale; the writer must replace it
	metaBefore := meta.Header.clone()

	res := &Record{Block: []byte("User-agent: *\nDisallow:\n")}
	res.Header.Add(FieldType, TypeResource)
	res.Header.Add(FieldRecordID, "<urn:uuid:33333333-3333-4333-8333-333333333333>")
	res.Header.Add(FieldDate, FormatDate(testDate))
	res.Header.Add(FieldTargetURI, "http://example.com/robots.txt")
	res.Header.Add(FieldContentType, "text/plain")
	res.Header.Add(FieldPayloadDigest, labelledSHA1(res.Block))

	empty := &Record{}
	empty.Header.Add(FieldType, TypeMetadata)

	before := time.Now().Truncate(time.Microsecond)
	var locs []Location
	for _, rec := range []*Record{meta, res, empty} {
		loc, err := w.WriteRecord(rec)
		if err != nil {
			t.Fatalf("WriteRecord(%s): %v", rec.Type(), err)
		}
		locs = append(locs, loc)
	}
	if !slices.Equal(meta.Header.fields, metaBefore.fields) {
		t.Errorf("WriteRecord modified its argument: %v", meta.Header.fields)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(dir, locs[0].File)
	got := readPath(t, path)
	if ts := types(got.recs); !slices.Equal(ts, []string{TypeWarcinfo, TypeMetadata, TypeResource, TypeMetadata}) {
		t.Fatalf("record types %v", ts)
	}

	gotMeta := got.recs[1]
	var names []string
	for name, value := range gotMeta.Header.All() {
		names = append(names, name+": "+value)
	}
	wantNames := []string{
		"WARC-Type: metadata",
		"WARC-Target-URI: http://example.com/a",
		"WARC-Concurrent-To: <urn:uuid:11111111-1111-4111-8111-111111111111>",
		"WARC-Concurrent-To: <urn:uuid:22222222-2222-4222-8222-222222222222>",
		"Content-Type: application/warc-fields",
		"Content-Length: " + strconv.Itoa(len(meta.Block)),
		"WARC-Record-ID: " + gotMeta.ID(),
		"WARC-Date: " + gotMeta.Header.Get(FieldDate),
		"WARC-Block-Digest: " + labelledSHA1(meta.Block),
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("metadata fields:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(wantNames, "\n"))
	}
	if d, err := gotMeta.Date(); err != nil || d.Before(before) || d.After(time.Now()) {
		t.Errorf("filled-in WARC-Date %v, %v", d, err)
	}
	if !bytes.Equal(gotMeta.Block, meta.Block) {
		t.Errorf("metadata block %q", gotMeta.Block)
	}

	gotRes := got.recs[2]
	checkFields(t, gotRes, map[string]string{
		FieldRecordID:      "<urn:uuid:33333333-3333-4333-8333-333333333333>",
		FieldDate:          FormatDate(testDate),
		FieldTargetURI:     "http://example.com/robots.txt",
		FieldContentType:   "text/plain",
		FieldPayloadDigest: labelledSHA1(res.Block),
	})
	if locs[1].RecordID != gotRes.ID() || locs[1].PayloadDigest != labelledSHA1(res.Block) {
		t.Errorf("resource Location %+v", locs[1])
	}
	if locs[0].PayloadDigest != "" {
		t.Errorf("metadata Location.PayloadDigest %q, want none", locs[0].PayloadDigest)
	}

	if len(got.recs[3].Block) != 0 || got.recs[3].Header.Get(FieldContentLength) != "0" {
		t.Errorf("empty record: block %q, Content-Length %q", got.recs[3].Block, got.recs[3].Header.Get(FieldContentLength))
	}

	for i, loc := range locs {
		rec, err := ReadAt(path, loc.Offset, loc.Length)
		if err != nil || !sameRecord(rec, got.recs[i+1]) {
			t.Errorf("ReadAt(Location %d) = %v; differs from the sequential read", i, err)
		}
	}
}

// writeSample writes a few captures of every kind, and a revisit of each
// profile, into one closed segment and returns its path, bytes and Locations.
func writeSample(tb testing.TB) (string, []byte, []Location) {
	tb.Helper()
	dir := tb.TempDir()
	w := newWriter(tb, SegmentConfig{Dir: dir})
	var locs []Location
	for i, c := range []Capture{
		{TargetURI: "http://example.com/1", Date: testDate, IP: "192.0.2.1", RawRequest: rawRequest("http://example.com/1"), RawResponse: rawResponse("Content-Type: text/html\r\n", htmlPage(300))},
		{TargetURI: "http://example.com/2", Date: testDate, RawResponse: rawResponse("Transfer-Encoding: chunked\r\n", chunked([]byte("hello, world"), 5))},
		{TargetURI: "http://example.com/3", Date: testDate, RawRequest: rawRequest("http://example.com/3"), RawResponse: rawResponse("", pseudoRandom(3, 200)), Truncated: "length"},
	} {
		loc, err := w.WriteCapture(c)
		if err != nil {
			tb.Fatalf("capture %d: %v", i, err)
		}
		locs = append(locs, loc)
	}
	later := Capture{TargetURI: "http://example.com/1", Date: testDate.Add(time.Hour), RawResponse: rawResponse("Content-Type: text/html\r\n", htmlPage(300))}
	loc, err := w.WriteRevisit(later, locs[0], later.TargetURI, testDate)
	if err != nil {
		tb.Fatalf("revisit: %v", err)
	}
	locs = append(locs, loc)
	later.RawRequest, later.RawResponse = conditionalRequest(later.TargetURI, `"v1"`), notModifiedResponse(`"v1"`)
	if loc, err = w.WriteNotModified(later, locs[0], later.TargetURI, testDate); err != nil {
		tb.Fatalf("not-modified revisit: %v", err)
	}
	locs = append(locs, loc)
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, locs[0].File)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, data, locs
}

func TestReaderTruncatedFile(t *testing.T) {
	path, data, _ := writeSample(t)
	full := readPath(t, path)
	ends := append(slices.Clone(full.offsets[1:]), int64(len(data)))

	// A crash can stop a write anywhere: cut the file at every byte (every
	// 7th with -short).
	step := int64(1)
	if testing.Short() {
		step = 7
	}
	for cut := int64(0); cut < int64(len(data)); cut += step {
		res := readAll(bytes.NewReader(data[:cut]))
		complete := 0
		for complete < len(ends) && ends[complete] <= cut {
			complete++
		}
		if len(res.recs) != complete {
			t.Fatalf("cut at %d: %d records, want the %d complete ones (err %v)", cut, len(res.recs), complete, res.err)
		}
		for i, rec := range res.recs {
			if !sameRecord(rec, full.recs[i]) {
				t.Fatalf("cut at %d: record %d differs", cut, i)
			}
		}
		atBoundary := cut == 0 || slices.Contains(ends, cut)
		switch {
		case atBoundary && res.err != io.EOF:
			t.Fatalf("cut at member boundary %d: %v, want io.EOF", cut, res.err)
		case !atBoundary && !errors.Is(res.err, ErrTruncated):
			t.Fatalf("cut at %d: %v, want ErrTruncated", cut, res.err)
		}
	}

	// Errors are sticky.
	r := NewReader(bytes.NewReader(data[:len(data)-3]))
	for {
		if _, err := r.Next(); err != nil {
			if _, again := r.Next(); again != err {
				t.Errorf("second Next after error = %v, want %v", again, err)
			}
			break
		}
	}
}

func TestReaderCorruptGzip(t *testing.T) {
	_, data, _ := writeSample(t)
	full := readAll(bytes.NewReader(data))
	if full.err != io.EOF {
		t.Fatal(full.err)
	}

	t.Run("every byte flipped", func(t *testing.T) {
		masks := []byte{0x01, 0x80, 0xff}
		if testing.Short() {
			masks = masks[2:]
		}
		for i := range data {
			for _, mask := range masks {
				bad := slices.Clone(data)
				bad[i] ^= mask
				res := readAll(bytes.NewReader(bad))
				if res.err != io.EOF && !sentinel(res.err) {
					t.Fatalf("flip %#x at %d: error %v wraps no sentinel", mask, i, res.err)
				}
				// Whatever is handed out is what was written: CRC-32 and the
				// length check catch the damage before a record is returned.
				if len(res.recs) > len(full.recs) {
					t.Fatalf("flip %#x at %d: %d records from %d", mask, i, len(res.recs), len(full.recs))
				}
				for j, rec := range res.recs {
					if !sameRecord(rec, full.recs[j]) {
						t.Fatalf("flip %#x at %d: record %d returned damaged", mask, i, j)
					}
				}
			}
		}
	})

	second := full.offsets[1]
	third := full.offsets[2]
	tests := []struct {
		name    string
		damage  func(b []byte) []byte
		records int
		want    error
	}{
		{"gzip magic of second member", func(b []byte) []byte { b[second+1] = 0; return b }, 1, ErrCorrupt},
		{"CRC-32 of second member", func(b []byte) []byte { b[third-8] ^= 0x55; return b }, 1, ErrCorrupt},
		{"length of second member", func(b []byte) []byte { b[third-4] ^= 0x01; return b }, 1, ErrCorrupt},
		{"garbage after last member", func(b []byte) []byte { return append(b, "this is not a gzip member"...) }, len(full.recs), ErrCorrupt},
		{"stray gzip bytes after last member", func(b []byte) []byte { return append(b, 0x1f, 0x8b) }, len(full.recs), ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(bytes.NewReader(tt.damage(slices.Clone(data))))
			if len(res.recs) != tt.records || !errors.Is(res.err, tt.want) {
				t.Errorf("%d records, error %v; want %d records, then %v", len(res.recs), res.err, tt.records, tt.want)
			}
		})
	}
}

func TestReaderMalformedPlain(t *testing.T) {
	good := "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n"
	tests := []struct {
		name     string
		input    string
		maxBlock int64
		records  int
		want     error
		// withheld: compressed as one member, the last good record shares
		// its member with the damage and is not handed out.
		withheld bool
	}{
		{"not WARC", "HTTP/1.1 200 OK\r\n\r\n", 0, 0, ErrMalformed, false},
		{"bad version line", good + "WARX/1.1\r\n", 0, 1, ErrMalformed, true},
		{"garbage after a record", good + "garbage\r\n", 0, 1, ErrMalformed, true},
		{"second record truncated", good + good[:20], 0, 1, ErrTruncated, false},
		{"header line without colon", "WARC/1.1\r\nWARC-Type resource\r\n\r\n", 0, 0, ErrMalformed, false},
		{"field name with space", "WARC/1.1\r\nWARC Type: resource\r\n\r\n", 0, 0, ErrMalformed, false},
		{"continuation before any field", "WARC/1.1\r\n continued\r\n\r\n", 0, 0, ErrMalformed, false},
		{"no WARC-Type", "WARC/1.1\r\nContent-Length: 0\r\n\r\n\r\n\r\n", 0, 0, ErrMalformed, false},
		{"no Content-Length", "WARC/1.1\r\nWARC-Type: resource\r\n\r\n\r\n\r\n", 0, 0, ErrMalformed, false},
		{"Content-Length not a number", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3x\r\n\r\nabc\r\n\r\n", 0, 0, ErrMalformed, false},
		{"negative Content-Length", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: -3\r\n\r\nabc\r\n\r\n", 0, 0, ErrMalformed, false},
		{"Content-Length overflows", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 99999999999999999999\r\n\r\n", 0, 0, ErrMalformed, false},
		{"block longer than Content-Length", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 2\r\n\r\nabc\r\n\r\n", 0, 0, ErrMalformed, false},
		{"block shorter than Content-Length", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 9\r\n\r\nabc\r\n\r\n", 0, 0, ErrTruncated, false},
		{"ends before the block", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3\r\n\r\n", 0, 0, ErrTruncated, false},
		{"no trailer", good[:len(good)-4], 0, 0, ErrTruncated, false},
		{"half a trailer", good[:len(good)-2], 0, 0, ErrTruncated, false},
		{"ends in header", "WARC/1.1\r\nWARC-Type: resou", 0, 0, ErrTruncated, false},
		{"ends after version line", "WARC/1.1\r\n", 0, 0, ErrTruncated, false},
		{"block over the limit", good, 2, 0, ErrTooLarge, false},
		{"huge Content-Length, little data", "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1073741824\r\n\r\nabc", 0, 0, ErrTruncated, false},
		{"header line over 1 MiB", "WARC/1.1\r\nWARC-Type: resource\r\nX: " + strings.Repeat("a", 1<<20+1) + "\r\n\r\n", 0, 0, ErrTooLarge, false},
		{"header over 4 MiB", "WARC/1.1\r\nWARC-Type: resource\r\n" + strings.Repeat("X: "+strings.Repeat("a", 1<<19)+"\r\n", 9) + "\r\n", 0, 0, ErrTooLarge, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, compressed := range []bool{false, true} {
				in := []byte(tt.input)
				if compressed {
					in = gzipped(t, in)
				}
				limit := tt.maxBlock
				if limit == 0 {
					limit = DefaultMaxBlockSize
				}
				records := tt.records
				if compressed && tt.withheld {
					records--
				}
				res := readAllLimit(bytes.NewReader(in), limit)
				if len(res.recs) != records || !errors.Is(res.err, tt.want) {
					t.Errorf("gzip %v: %d records, error %v; want %d records, then %v", compressed, len(res.recs), res.err, records, tt.want)
				}
			}
		})
	}
}

func TestReaderPlainWarc(t *testing.T) {
	path, data, locs := writeSample(t)
	full := readPath(t, path)
	plain := gunzipped(t, data)

	res := readAll(bytes.NewReader(plain))
	if res.err != io.EOF {
		t.Fatalf("plain read: %v", res.err)
	}
	if len(res.recs) != len(full.recs) {
		t.Fatalf("%d records from plain, %d from gzip", len(res.recs), len(full.recs))
	}
	for i := range res.recs {
		if !sameRecord(res.recs[i], full.recs[i]) {
			t.Errorf("record %d differs between plain and gzip", i)
		}
		if !bytes.HasPrefix(plain[res.offsets[i]:], []byte("WARC/1.1\r\n")) {
			t.Errorf("plain Offset %d of record %d is not at a version line", res.offsets[i], i)
		}
	}

	// ReadAt works on plain files too, with record offsets and lengths.
	plainPath := filepath.Join(t.TempDir(), "plain.warc")
	if err := os.WriteFile(plainPath, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	lengths := memberLengths(res.offsets, int64(len(plain)))
	for i := range res.recs {
		rec, err := ReadAt(plainPath, res.offsets[i], lengths[i])
		if err != nil || !sameRecord(rec, full.recs[i]) {
			t.Errorf("ReadAt plain record %d: %v", i, err)
		}
	}

	t.Run("whole file in one gzip member", func(t *testing.T) {
		one := readAll(bytes.NewReader(gzipped(t, plain)))
		if one.err != io.EOF || len(one.recs) != len(full.recs) {
			t.Fatalf("%d records, %v", len(one.recs), one.err)
		}
		for i := range one.recs {
			if !sameRecord(one.recs[i], full.recs[i]) || one.offsets[i] != 0 {
				t.Errorf("record %d: differs or offset %d, want 0", i, one.offsets[i])
			}
		}
	})

	t.Run("empty members and blank lines between records", func(t *testing.T) {
		var b []byte
		b = append(b, gzipped(t, nil)...)
		b = append(b, data[:locs[0].Offset]...)
		b = append(b, gzipped(t, []byte("\r\n\n"))...)
		b = append(b, data[locs[0].Offset:]...)
		b = append(b, gzipped(t, nil)...)
		res := readAll(bytes.NewReader(b))
		if res.err != io.EOF || len(res.recs) != len(full.recs) {
			t.Fatalf("%d records, %v", len(res.recs), res.err)
		}
	})

	t.Run("hand-written with bare LF, folded and padded fields", func(t *testing.T) {
		in := "\n" +
			"WARC/1.0\n" +
			"WARC-Type:resource\n" +
			"WARC-Target-URI:  http://example.com/x \t\n" +
			"X-Note: first\n" +
			"  second\n" +
			"\tthird\n" +
			"X-Unicode: \u00a0nbsp kept\u00a0\n" +
			"Content-Length: 2\n" +
			"\n" +
			"hi\n\n"
		res := readAll(strings.NewReader(in))
		if res.err != io.EOF || len(res.recs) != 1 {
			t.Fatalf("%d records, %v", len(res.recs), res.err)
		}
		rec := res.recs[0]
		for name, want := range map[string]string{
			FieldTargetURI: "http://example.com/x",
			"X-Note":       "first second third",
			"X-Unicode":    "\u00a0nbsp kept\u00a0",
		} {
			if got := rec.Header.Get(name); got != want {
				t.Errorf("%s = %q, want %q", name, got, want)
			}
		}
		if string(rec.Block) != "hi" || res.offsets[0] != 1 {
			t.Errorf("block %q at %d", rec.Block, res.offsets[0])
		}
	})

	t.Run("empty input", func(t *testing.T) {
		for _, in := range []string{"", "\r\n\r\n"} {
			if res := readAll(strings.NewReader(in)); res.err != io.EOF || len(res.recs) != 0 {
				t.Errorf("%q: %d records, %v", in, len(res.recs), res.err)
			}
		}
	})
}

func TestReadAtErrors(t *testing.T) {
	path, data, locs := writeSample(t)
	loc := locs[1]
	tests := []struct {
		name           string
		path           string
		offset, length int64
		want           error
	}{
		{"negative offset", path, -1, 10, ErrMalformed},
		{"zero length", path, loc.Offset, 0, ErrMalformed},
		{"length too short", path, loc.Offset, loc.Length - 1, ErrTruncated},
		{"range past the end", path, int64(len(data)), 100, ErrTruncated},
		{"offset inside a member", path, loc.Offset + 1, loc.Length - 1, nil}, // any of the Reader's errors
		{"missing file", filepath.Join(filepath.Dir(path), "nope.warc.gz"), 0, 100, fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := ReadAt(tt.path, tt.offset, tt.length)
			if tt.want == nil && rec == nil && sentinel(err) {
				return
			}
			if rec != nil || !errors.Is(err, tt.want) {
				t.Errorf("ReadAt = %v, %v; want error %v", rec, err, tt.want)
			}
		})
	}

	t.Run("length past the member reads one record", func(t *testing.T) {
		rec, err := ReadAt(path, locs[0].Offset, int64(len(data))-locs[0].Offset)
		if err != nil || rec.ID() != locs[0].RecordID {
			t.Errorf("ReadAt = %v, %v; want record %s", rec, err, locs[0].RecordID)
		}
	})
}
