package warc

import (
	"bytes"
	"fmt"
	"strings"
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
	// Protocol and TLSVersion are the exchange's WARC-Protocol identifiers
	// ("h2", "http/1.1"; "tls/1.3"), CipherSuite the IANA name of its TLS
	// cipher suite, written on every record of the exchange. Each is left
	// out when empty: unknown, or not TLS.
	Protocol    string
	TLSVersion  string
	CipherSuite string
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
	for _, id := range [...]string{c.Protocol, c.TLSVersion, c.CipherSuite} {
		if !validIdentifier(id) {
			return fmt.Errorf("capture of %s: protocol identifier %q: %w", c.TargetURI, id, ErrInvalidRecord)
		}
	}
	return nil
}

// validIdentifier reports whether s can be a WARC-Protocol or
// WARC-Cipher-Suite value: one name of letters, digits and "/._-". Anything
// else (a list, a space) would be read as something other than one name.
func validIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || strings.IndexByte("/._-", c) >= 0) {
			return false
		}
	}
	return true
}

func (c *Capture) date() time.Time {
	if c.Date.IsZero() {
		return time.Now()
	}
	return c.Date
}

// captureRecords builds the request record (nil when the capture has no raw
// request) and the response record.
func captureRecords(c *Capture) (req, resp *Record, payloadDigest string) {
	payloadDigest = PayloadDigest(c.RawResponse)
	req, resp = exchangeRecords(c, TypeResponse, c.RawResponse, 14)
	resp.Header.Add(FieldContentType, contentHTTPRes)
	resp.Header.Add(FieldBlockDigest, sha1Digest(c.RawResponse))
	resp.Header.Add(FieldPayloadDigest, payloadDigest)
	if c.Truncated != "" {
		resp.Header.Add(FieldTruncated, c.Truncated)
	}
	return req, resp, payloadDigest
}

// exchangeRecords starts the records of one HTTP exchange: the answer record
// of type typ (response or revisit) with the fields every answer begins
// with, and the request record when c has a raw request, each pointing at
// the other through WARC-Concurrent-To so tools can pair them from either
// side. The caller adds the answer's other fields; fields is room for all of
// them plus the Content-Length the encoder sets.
func exchangeRecords(c *Capture, typ string, block []byte, fields int) (req, answer *Record) {
	date := FormatDate(c.date())
	answerID := newRecordID()
	// One allocation for both records and one per header.
	recs := new([2]Record)
	answer = &recs[1]
	startRecord(answer, c, typ, answerID, date, block, fields)
	if len(c.RawRequest) == 0 {
		return nil, answer
	}
	reqID := newRecordID()
	answer.Header.Add(FieldConcurrentTo, reqID)
	req = &recs[0]
	startRecord(req, c, TypeRequest, reqID, date, c.RawRequest, 12)
	req.Header.Add(FieldConcurrentTo, answerID)
	req.Header.Add(FieldContentType, contentHTTPReq)
	req.Header.Add(FieldBlockDigest, sha1Digest(c.RawRequest))
	return req, answer
}

// revisitRecord builds an identical-payload-digest revisit record. Its block is
// the response head only; the payload lives in the original record.
func revisitRecord(c *Capture, original Location, originalURI string, originalDate time.Time) (*Record, string, error) {
	if original.RecordID == "" {
		return nil, "", fmt.Errorf("revisit of %s without original record ID: %w", c.TargetURI, ErrInvalidRecord)
	}
	if err := checkOriginal(c, originalURI, originalDate); err != nil {
		return nil, "", err
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
	addPeer(&rec.Header, c)
	addRefersTo(&rec.Header, ProfileIdenticalPayload, original.RecordID, originalURI, originalDate)
	rec.Header.Add(FieldContentType, contentHTTPRes)
	rec.Header.Add(FieldBlockDigest, sha1Digest(head))
	rec.Header.Add(FieldPayloadDigest, digest)
	return rec, digest, nil
}

// notModifiedRecords builds the records of a 304 Not Modified answer to a
// conditional GET: a server-not-modified revisit record whose block is the
// answer's head, and the request record (nil without a raw request), which
// shows the If-None-Match or If-Modified-Since the server answered.
//
// The profile's payload is the original's (WARC 1.1 section 6.7.3), so the
// original's payload digest, when known, is the revisit's
// WARC-Payload-Digest; without one the field is left out rather than
// computed over the empty body, which would claim the page is empty. The
// original's record ID is only recommended by the standard; the target URI
// and date are what replay tools (pywb) look the original up by, so they are
// required.
func notModifiedRecords(c *Capture, original Location, originalURI string, originalDate time.Time) (req, rev *Record, err error) {
	if err := checkOriginal(c, originalURI, originalDate); err != nil {
		return nil, nil, err
	}
	head, body := splitHTTP(c.RawResponse)
	if !isNotModified(head) {
		return nil, nil, fmt.Errorf("not-modified revisit of %s: %q is not a complete 304 response head: %w", c.TargetURI, clip(head), ErrInvalidRecord)
	}
	if len(body) > 0 {
		// A 304 ends at its head (RFC 9110 section 15.4.5): bytes after it
		// belong to something else, and the profile has no room for them.
		return nil, nil, fmt.Errorf("not-modified revisit of %s: %d bytes after the 304 head: %w", c.TargetURI, len(body), ErrInvalidRecord)
	}
	req, rev = exchangeRecords(c, TypeRevisit, head, 18)
	addRefersTo(&rev.Header, ProfileServerNotModified, original.RecordID, originalURI, originalDate)
	rev.Header.Add(FieldContentType, contentHTTPRes)
	rev.Header.Add(FieldBlockDigest, sha1Digest(head))
	if original.PayloadDigest != "" {
		rev.Header.Add(FieldPayloadDigest, original.PayloadDigest)
	}
	if c.Truncated != "" {
		rev.Header.Add(FieldTruncated, c.Truncated)
	}
	return req, rev, nil
}

// startRecord gives rec its block and the fields that both records of an
// exchange begin with.
func startRecord(rec *Record, c *Capture, typ, id, date string, block []byte, fields int) {
	rec.Block = block
	rec.Header.fields = make([]Field, 0, fields)
	rec.Header.Add(FieldType, typ)
	rec.Header.Add(FieldRecordID, id)
	rec.Header.Add(FieldDate, date)
	rec.Header.Add(FieldTargetURI, c.TargetURI)
	addPeer(&rec.Header, c)
}

// addPeer adds what is known of the server and the connection to it:
// WARC-IP-Address, then WARC-Protocol once per layer, highest first (the
// HTTP version, then TLS), and WARC-Cipher-Suite, as the IIPC extensions
// define them. The extension lets a writer leave out an http/1.1 that the
// target URI and status line already imply (Heritrix 3.10 writes only h2
// and h3); like Browsertrix, StormCrawler and Common Crawl, the crawler
// writes what it knows, so a record says how it travelled without a reader
// having to infer it, and only an unknown protocol goes unsaid.
func addPeer(h *Header, c *Capture) {
	if c.IP != "" {
		h.Add(FieldIPAddress, c.IP)
	}
	if c.Protocol != "" {
		h.Add(FieldProtocol, c.Protocol)
	}
	if c.TLSVersion != "" {
		h.Add(FieldProtocol, c.TLSVersion)
	}
	if c.CipherSuite != "" {
		h.Add(FieldCipherSuite, c.CipherSuite)
	}
}

// checkOriginal refuses a revisit that could not be resolved: without the
// original's URI and date a replay tool cannot find what it confirms.
func checkOriginal(c *Capture, originalURI string, originalDate time.Time) error {
	if originalURI == "" || originalDate.IsZero() {
		return fmt.Errorf("revisit of %s without original URI and date: %w", c.TargetURI, ErrInvalidRecord)
	}
	return nil
}

// addRefersTo adds a revisit's profile and the fields naming its original;
// WARC-Refers-To only when the original's record ID is known.
func addRefersTo(h *Header, profile, id, uri string, date time.Time) {
	h.Add(FieldProfile, profile)
	if id != "" {
		h.Add(FieldRefersTo, id)
	}
	h.Add(FieldRefersToTargetURI, uri)
	h.Add(FieldRefersToDate, FormatDate(date))
}

// isNotModified reports whether head, as splitHTTP returns it, is a whole
// response head (ended by its blank line) with status 304.
func isNotModified(head []byte) bool {
	if !bytes.HasSuffix(head, []byte("\n\n")) && !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		return false
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	proto, rest, _ := bytes.Cut(bytes.TrimSuffix(line, []byte("\r")), []byte(" "))
	// Extra spaces before the code are tolerated, as net/http does.
	code, _, _ := bytes.Cut(bytes.TrimLeft(rest, " "), []byte(" "))
	return len(proto) == len("HTTP/1.1") && bytes.HasPrefix(proto, []byte("HTTP/")) &&
		isDigit(proto[5]) && proto[6] == '.' && isDigit(proto[7]) && string(code) == "304"
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
