package warc

import (
	"fmt"
	"time"
)

// Capture is one HTTP exchange as the fetcher saw it.
type Capture struct {
	TargetURI   string
	Date        time.Time
	IP          string
	RawRequest  []byte // request line + headers
	RawResponse []byte // status line + headers + body as received
	// Truncated is the WARC-Truncated reason ("length", "time", ...) when the
	// fetcher stopped reading the body early; empty for a complete body.
	Truncated string
}

// Location says where a record lives, so the metadata store can find it again.
type Location struct {
	File          string // segment file name (base name)
	Offset        int64  // byte offset of the gzip member holding the response (or revisit) record
	Length        int64  // compressed length of that member
	RecordID      string // "<urn:uuid:...>"
	PayloadDigest string // "sha1:BASE32" of the HTTP payload (entity body as received)
}

func (c *Capture) validate() error {
	if c.TargetURI == "" {
		return fmt.Errorf("capture without target URI: %w", ErrInvalidRecord)
	}
	if len(c.RawResponse) == 0 {
		return fmt.Errorf("capture of %s without response: %w", c.TargetURI, ErrInvalidRecord)
	}
	return nil
}

func (c *Capture) date() time.Time {
	if c.Date.IsZero() {
		return time.Now()
	}
	return c.Date
}

// captureRecords builds the request record (nil when the capture has no raw
// request) and the response record, each pointing at the other through
// WARC-Concurrent-To so tools can pair them from either side.
func captureRecords(c *Capture) (req, resp *Record, payloadDigest string) {
	date := FormatDate(c.date())
	reqID, respID := newRecordID(), newRecordID()
	payloadDigest = PayloadDigest(c.RawResponse)

	// One allocation for both records and one per header: room for every
	// field below plus the Content-Length the encoder sets.
	recs := new([2]Record)
	resp = &recs[1]
	resp.Block = c.RawResponse
	resp.Header.fields = make([]Field, 0, 11)
	resp.Header.Add(FieldType, TypeResponse)
	resp.Header.Add(FieldRecordID, respID)
	resp.Header.Add(FieldDate, date)
	resp.Header.Add(FieldTargetURI, c.TargetURI)
	if c.IP != "" {
		resp.Header.Add(FieldIPAddress, c.IP)
	}
	if len(c.RawRequest) > 0 {
		resp.Header.Add(FieldConcurrentTo, reqID)
	}
	resp.Header.Add(FieldContentType, contentHTTPRes)
	resp.Header.Add(FieldBlockDigest, sha1Digest(c.RawResponse))
	resp.Header.Add(FieldPayloadDigest, payloadDigest)
	if c.Truncated != "" {
		resp.Header.Add(FieldTruncated, c.Truncated)
	}

	if len(c.RawRequest) > 0 {
		req = &recs[0]
		req.Block = c.RawRequest
		req.Header.fields = make([]Field, 0, 9)
		req.Header.Add(FieldType, TypeRequest)
		req.Header.Add(FieldRecordID, reqID)
		req.Header.Add(FieldDate, date)
		req.Header.Add(FieldTargetURI, c.TargetURI)
		if c.IP != "" {
			req.Header.Add(FieldIPAddress, c.IP)
		}
		req.Header.Add(FieldConcurrentTo, respID)
		req.Header.Add(FieldContentType, contentHTTPReq)
		req.Header.Add(FieldBlockDigest, sha1Digest(c.RawRequest))
	}
	return req, resp, payloadDigest
}

// revisitRecord builds an identical-payload-digest revisit record. Its block is
// the response head only; the payload lives in the original record.
func revisitRecord(c *Capture, original Location, originalURI string, originalDate time.Time) (*Record, string, error) {
	if original.RecordID == "" || originalURI == "" || originalDate.IsZero() {
		return nil, "", fmt.Errorf("revisit of %s without original record ID, URI and date: %w", c.TargetURI, ErrInvalidRecord)
	}
	head, body := splitHTTP(c.RawResponse)
	// A 304 Not Modified has no body: the digest can only come from the
	// original. With a body, the digests must agree, or this is not a revisit.
	digest := original.PayloadDigest
	if len(body) > 0 {
		got := sha1Digest(body)
		if digest != "" && digest != got {
			return nil, "", fmt.Errorf("revisit of %s: payload digest %s differs from original %s: %w", c.TargetURI, got, digest, ErrInvalidRecord)
		}
		digest = got
	}
	if digest == "" {
		return nil, "", fmt.Errorf("revisit of %s without payload digest: %w", c.TargetURI, ErrInvalidRecord)
	}
	rec := &Record{Block: head}
	rec.Header.Add(FieldType, TypeRevisit)
	rec.Header.Add(FieldRecordID, newRecordID())
	rec.Header.Add(FieldDate, FormatDate(c.date()))
	rec.Header.Add(FieldTargetURI, c.TargetURI)
	if c.IP != "" {
		rec.Header.Add(FieldIPAddress, c.IP)
	}
	rec.Header.Add(FieldProfile, ProfileIdenticalPayload)
	rec.Header.Add(FieldRefersTo, original.RecordID)
	rec.Header.Add(FieldRefersToTargetURI, originalURI)
	rec.Header.Add(FieldRefersToDate, FormatDate(originalDate))
	rec.Header.Add(FieldContentType, contentHTTPRes)
	rec.Header.Add(FieldBlockDigest, sha1Digest(head))
	rec.Header.Add(FieldPayloadDigest, digest)
	return rec, digest, nil
}
