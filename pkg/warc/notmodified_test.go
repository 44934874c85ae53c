package warc

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestWriteNotModified(t *testing.T) {
	original, body := revisitedCapture()
	origDate := original.Date
	conditional := conditionalRequest("http://example.com/a", `"v1"`)
	notModified := notModifiedResponse(`"v1"`)

	tests := []struct {
		name              string
		request, response []byte
		truncated         string
		// what of the original to leave out of the call
		noID, noDigest, noURI, noDate bool
		wantErr                       error
	}{
		{name: "conditional GET", request: conditional, response: notModified},
		{name: "without request", response: notModified},
		{name: "bare LF head without reason phrase", request: conditional, response: []byte("HTTP/1.0 304\nETag: \"v1\"\n\n")},
		{name: "original record ID unknown", request: conditional, response: notModified, noID: true},
		{name: "original payload digest unknown", request: conditional, response: notModified, noDigest: true},
		{name: "truncation is recorded", response: notModified, truncated: "time"},
		{name: "200 answer", request: conditional, response: original.RawResponse, wantErr: ErrInvalidRecord},
		{name: "3040 status", response: []byte("HTTP/1.1 3040 Odd\r\n\r\n"), wantErr: ErrInvalidRecord},
		{name: "not HTTP", response: []byte("ICY 304 Not Modified\r\n\r\n"), wantErr: ErrInvalidRecord},
		{name: "304 with a body", response: append(slices.Clone(notModified), "<html>"...), wantErr: ErrInvalidRecord},
		{name: "304 head cut off", response: notModified[:len(notModified)-2], wantErr: ErrInvalidRecord},
		{name: "no original URI", response: notModified, noURI: true, wantErr: ErrInvalidRecord},
		{name: "no original date", response: notModified, noDate: true, wantErr: ErrInvalidRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dir, origLoc, ref := withOriginal(t, original, tt.noID, tt.noDigest)
			origURI, date := original.TargetURI, origDate
			if tt.noURI {
				origURI = ""
			}
			if tt.noDate {
				date = time.Time{}
			}
			c := Capture{TargetURI: original.TargetURI, Date: testDate, IP: "192.0.2.9", RawRequest: tt.request, RawResponse: tt.response, Truncated: tt.truncated}
			loc, err := w.WriteNotModified(c, ref, origURI, date)
			if tt.wantErr != nil {
				checkRefused(t, w, dir, origLoc, loc, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("WriteNotModified: %v", err)
			}
			if loc.PayloadDigest != ref.PayloadDigest {
				t.Errorf("Location.PayloadDigest %q, want the original's %q", loc.PayloadDigest, ref.PayloadDigest)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, loc.File)
			res := readPath(t, path)
			want := []string{TypeWarcinfo, TypeRequest, TypeResponse, TypeRevisit}
			if tt.request != nil {
				want = []string{TypeWarcinfo, TypeRequest, TypeResponse, TypeRequest, TypeRevisit}
			}
			if got := types(res.recs); !slices.Equal(got, want) {
				t.Fatalf("record types %v, want %v", got, want)
			}
			rev := res.recs[len(res.recs)-1]
			wantRefersTo, wantDigest, wantConcurrent := origLoc.RecordID, labelledSHA1(body), ""
			if tt.noID {
				wantRefersTo = ""
			}
			if tt.noDigest {
				wantDigest = ""
			}
			if tt.request != nil {
				req := res.recs[len(res.recs)-2]
				wantConcurrent = req.ID()
				checkFields(t, req, map[string]string{
					FieldTargetURI:    original.TargetURI,
					FieldDate:         FormatDate(testDate),
					FieldIPAddress:    "192.0.2.9",
					FieldContentType:  "application/http;msgtype=request",
					FieldConcurrentTo: rev.ID(),
				})
				if !bytes.Equal(req.Block, tt.request) {
					t.Errorf("request block %q, want the conditional request %q", req.Block, tt.request)
				}
			}
			checkFields(t, rev, map[string]string{
				FieldTargetURI:         original.TargetURI,
				FieldDate:              FormatDate(testDate),
				FieldIPAddress:         "192.0.2.9",
				FieldContentType:       "application/http;msgtype=response",
				FieldProfile:           "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
				FieldRefersTo:          wantRefersTo,
				FieldRefersToTargetURI: original.TargetURI,
				FieldRefersToDate:      FormatDate(origDate),
				FieldPayloadDigest:     wantDigest,
				FieldConcurrentTo:      wantConcurrent,
				FieldTruncated:         tt.truncated,
			})
			if !bytes.Equal(rev.Block, tt.response) {
				t.Errorf("revisit block %q, want the 304 head %q", rev.Block, tt.response)
			}
			if rev.Profile() != ProfileServerNotModified {
				t.Errorf("Profile() = %q", rev.Profile())
			}
			lengths := memberLengths(res.offsets, fileSize(t, path))
			last := len(res.recs) - 1
			if loc.RecordID != rev.ID() || loc.Offset != res.offsets[last] || loc.Length != lengths[last] {
				t.Errorf("Location %+v, record %s at %d+%d", loc, rev.ID(), res.offsets[last], lengths[last])
			}
			got, err := ReadAt(path, loc.Offset, loc.Length)
			if err != nil || !sameRecord(got, rev) {
				t.Errorf("ReadAt(Location) = %v; differs from the revisit record", err)
			}
		})
	}
}

func TestRecordProfile(t *testing.T) {
	tests := []struct {
		field string // "" for no WARC-Profile
		want  string
	}{
		{"http://netpreserve.org/warc/1.1/revisit/identical-payload-digest", ProfileIdenticalPayload},
		{"http://netpreserve.org/warc/1.0/revisit/identical-payload-digest", ProfileIdenticalPayload},
		{"http://netpreserve.org/warc/1.1/revisit/server-not-modified", ProfileServerNotModified},
		{"http://netpreserve.org/warc/1.0/revisit/server-not-modified", ProfileServerNotModified},
		{"http://netpreserve.org/warc/1.0/server-not-modified", ProfileServerNotModified},
		{"http://example.com/revisit/diff", "http://example.com/revisit/diff"},
		{"", ""},
	}
	for _, tt := range tests {
		rec := &Record{}
		rec.Header.Add(FieldType, TypeRevisit)
		if tt.field != "" {
			rec.Header.Add("warc-profile", tt.field)
		}
		if got := rec.Profile(); got != tt.want {
			t.Errorf("Profile() with WARC-Profile %q = %q, want %q", tt.field, got, tt.want)
		}
	}
	if ProfileIdenticalPayload == ProfileServerNotModified {
		t.Fatal("the two profiles compare equal")
	}
}
