package warc

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"
)

// Record types the crawler writes (WARC 1.1 section 6).
const (
	TypeWarcinfo = "warcinfo"
	TypeRequest  = "request"
	TypeResponse = "response"
	TypeRevisit  = "revisit"
	TypeMetadata = "metadata"
	TypeResource = "resource"
	// TypeConversion holds content made from another record's: the render
	// tier's DOM of a page, referring to the page's response record.
	TypeConversion = "conversion"
)

// Field names used by the writer.
const (
	FieldType              = "WARC-Type"
	FieldRecordID          = "WARC-Record-ID"
	FieldDate              = "WARC-Date"
	FieldContentLength     = "Content-Length"
	FieldContentType       = "Content-Type"
	FieldTargetURI         = "WARC-Target-URI"
	FieldIPAddress         = "WARC-IP-Address"
	FieldConcurrentTo      = "WARC-Concurrent-To"
	FieldBlockDigest       = "WARC-Block-Digest"
	FieldPayloadDigest     = "WARC-Payload-Digest"
	FieldTruncated         = "WARC-Truncated"
	FieldProfile           = "WARC-Profile"
	FieldRefersTo          = "WARC-Refers-To"
	FieldRefersToTargetURI = "WARC-Refers-To-Target-URI"
	FieldRefersToDate      = "WARC-Refers-To-Date"
	FieldFilename          = "WARC-Filename"
	FieldWarcinfoID        = "WARC-Warcinfo-ID"
	// Extensions adopted by the IIPC (iipc/warc-specifications issues 42
	// and 86): the protocols of the exchange, one field per layer, and the
	// TLS cipher suite.
	FieldProtocol    = "WARC-Protocol"
	FieldCipherSuite = "WARC-Cipher-Suite"
)

// Revisit profiles (WARC 1.1 section 6.7): what a revisit record asserts
// about the content it does not repeat.
const (
	// ProfileIdenticalPayload: the payload was fetched again and hashes the
	// same as the original's.
	ProfileIdenticalPayload = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
	// ProfileServerNotModified: the server said the content has not changed
	// (an HTTP 304 answer to a conditional GET); no payload was fetched.
	ProfileServerNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
)

// profileAliases maps the WARC/1.0 spellings of the revisit profiles onto
// the 1.1 URIs. The 1.0 standard's own example leaves out "revisit/", and
// some writers copied it.
var profileAliases = map[string]string{
	"http://netpreserve.org/warc/1.0/revisit/identical-payload-digest": ProfileIdenticalPayload,
	"http://netpreserve.org/warc/1.0/revisit/server-not-modified":      ProfileServerNotModified,
	"http://netpreserve.org/warc/1.0/server-not-modified":              ProfileServerNotModified,
}

const (
	version        = "WARC/1.1"
	contentHTTPReq = "application/http;msgtype=request"
	contentHTTPRes = "application/http;msgtype=response"
	contentFields  = "application/warc-fields"
	// dateLayout is W3C-DTF in UTC; WARC 1.1 allows fractional seconds, which
	// keep captures of one URL within the same second distinguishable.
	dateLayout = "2006-01-02T15:04:05.999999Z"
)

// Record is one WARC record: its named fields and its content block.
type Record struct {
	Header Header // WARC-Type, WARC-Record-ID, WARC-Date, Content-Length, Content-Type, WARC-Target-URI, ...
	Block  []byte
}

// Type returns the WARC-Type field, e.g. "response".
func (r *Record) Type() string { return r.Header.Get(FieldType) }

// ID returns the WARC-Record-ID field, "<urn:uuid:...>".
func (r *Record) ID() string { return r.Header.Get(FieldRecordID) }

// Profile returns the WARC-Profile field of a revisit record, with the
// WARC/1.0 profile URIs mapped onto their 1.1 equivalents, so that comparing
// with ProfileIdenticalPayload and ProfileServerNotModified tells the two
// kinds of revisit apart in files of either version. Any other profile is
// returned as written; a record without the field gives "".
func (r *Record) Profile() string {
	p := r.Header.Get(FieldProfile)
	if p11, ok := profileAliases[p]; ok {
		return p11
	}
	return p
}

// Date parses the WARC-Date field.
func (r *Record) Date() (time.Time, error) { return ParseDate(r.Header.Get(FieldDate)) }

// FormatDate renders t the way the writer puts it in WARC-Date.
func FormatDate(t time.Time) string { return t.UTC().Format(dateLayout) }

// ParseDate parses a WARC-Date value (W3C-DTF, with or without fractional
// seconds).
func ParseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// appendRecordHead serializes the part of rec before its block: version line
// and header, with Content-Length set to the block size. The caller writes the
// block and recordTrailer itself, so large bodies are not copied.
func appendRecordHead(buf []byte, rec *Record) ([]byte, error) {
	buf = append(buf, version...)
	buf = append(buf, '\r', '\n')
	rec.Header.Set(FieldContentLength, strconv.Itoa(len(rec.Block)))
	buf, err := rec.Header.appendTo(buf)
	if err != nil {
		return buf, err
	}
	return append(buf, '\r', '\n'), nil
}

var recordTrailer = []byte("\r\n\r\n")

// newRecordID returns a random (version 4) UUID as a WARC-Record-ID.
func newRecordID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+).
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return "<urn:uuid:" + string(s[:]) + ">"
}
