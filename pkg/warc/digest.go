package warc

import (
	"bytes"
	"crypto/sha1"
	"encoding/base32"
)

// PayloadDigest returns "sha1:BASE32" of the HTTP payload of rawResponse: the
// entity body exactly as received, after the blank line that ends the headers
// (so a chunked body is digested with its chunk framing, as warcio does). A
// response without a header terminator has an empty payload.
func PayloadDigest(rawResponse []byte) string {
	_, body := splitHTTP(rawResponse)
	return sha1Digest(body)
}

// sha1Digest is the labelled digest form WARC-Block-Digest and
// WARC-Payload-Digest use.
func sha1Digest(b []byte) string {
	sum := sha1.Sum(b)
	const label = "sha1:"
	var s [len(label) + 32]byte // base32 of 20 bytes is 32 characters
	copy(s[:], label)
	base32.StdEncoding.Encode(s[len(label):], sum[:])
	return string(s[:])
}

// splitHTTP splits a raw HTTP message into its head (start line and headers,
// including the blank line) and its body. It accepts bare LF line endings,
// which some servers send.
func splitHTTP(raw []byte) (head, body []byte) {
	crlf := bytes.Index(raw, []byte("\r\n\r\n"))
	// A bare-LF terminator only wins if it starts before the CRLF one, so
	// look for it in the head alone rather than through the whole body.
	end := len(raw)
	if crlf >= 0 {
		end = crlf + 1
	}
	lf := bytes.Index(raw[:end], []byte("\n\n"))
	switch {
	case crlf >= 0 && (lf < 0 || crlf < lf):
		return raw[:crlf+4], raw[crlf+4:]
	case lf >= 0:
		return raw[:lf+2], raw[lf+2:]
	default:
		return raw, nil
	}
}
