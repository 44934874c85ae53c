package parse

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
)

// encodingChoice is the outcome of the HTML encoding sniffing algorithm.
// certain mirrors the spec's "confidence": a tentative choice may still be
// overridden by a <meta charset> found while parsing.
type encodingChoice struct {
	enc     encoding.Encoding
	name    string // WHATWG name
	certain bool
	bom     int // leading bytes to drop before decoding
}

var boms = []struct {
	bom  []byte
	name string
}{
	{[]byte{0xef, 0xbb, 0xbf}, "utf-8"},
	{[]byte{0xfe, 0xff}, "utf-16be"},
	{[]byte{0xff, 0xfe}, "utf-16le"},
}

// detectEncoding follows the order of the HTML spec: BOM, transport-layer
// charset, then a prescan of the first 1024 bytes for <meta>, then (beyond
// the spec, like Firefox and Chromium) a UTF-8 validity heuristic, then
// windows-1252. XHTML is XML: it takes its XML declaration or UTF-8.
func detectEncoding(body []byte, contentType string) encodingChoice {
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) {
			e, name := charset.Lookup(b.name)
			return encodingChoice{enc: e, name: name, certain: true, bom: len(b.bom)}
		}
	}
	if label := charsetParam(contentType); label != "" {
		if e, name := charset.Lookup(label); e != nil {
			return encodingChoice{enc: e, name: name, certain: true}
		}
	}
	if mediaType(contentType) == "application/xhtml+xml" {
		if e, name := charset.Lookup(xmlDeclEncoding(body)); e != nil {
			return encodingChoice{enc: e, name: name, certain: true}
		}
		e, name := charset.Lookup("utf-8")
		return encodingChoice{enc: e, name: name, certain: true}
	}
	e, name, certain := charset.DetermineEncoding(body, "")
	if !certain && name == "windows-1252" && isUTF8(body) {
		// DetermineEncoding only looks at the first 1024 bytes, so a page
		// whose head is ASCII falls back to windows-1252 even when its text
		// is UTF-8. A <meta> declaring windows-1252 still wins: the choice
		// stays tentative, so metaElement asks for a second pass.
		e, name = charset.Lookup("utf-8")
	}
	return encodingChoice{enc: e, name: name, certain: certain}
}

// isUTF8 reports whether body is valid UTF-8 with at least one non-ASCII
// character. A rune cut off at the end (a truncated fetch) does not count
// against it.
func isUTF8(body []byte) bool {
	for i := len(body) - 1; i >= 0 && i >= len(body)-utf8.UTFMax; i-- {
		if c := body[i]; c < utf8.RuneSelf {
			break
		} else if utf8.RuneStart(c) {
			if !utf8.FullRune(body[i:]) {
				body = body[:i]
			}
			break
		}
	}
	ascii := true
	for _, c := range body {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	return !ascii && utf8.Valid(body)
}

// decode converts body to UTF-8. UTF-8 input is returned as is: invalid
// sequences are replaced later, only in the strings that leave the package.
// So is ASCII in an encoding that leaves ASCII as it is, which spares a
// copy of the body (windows-1252 is what an undeclared ASCII page gets).
func decode(body []byte, c encodingChoice) ([]byte, error) {
	body = body[c.bom:]
	if c.name == "utf-8" || keepsASCII(c.name) && isASCII(body) {
		return body, nil
	}
	out, err := c.enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("decode body as %s: %w", c.name, err)
	}
	return out, nil
}

// keepsASCII reports whether the WHATWG encoding name decodes every byte
// below 0x80 to the same character: all but UTF-16, ISO-2022-JP (whose
// escapes are ASCII bytes) and the replacement encoding.
func keepsASCII(name string) bool {
	switch name {
	case "utf-16be", "utf-16le", "iso-2022-jp", "replacement":
		return false
	}
	return true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lookupDeclared resolves a charset label met in a <meta> while parsing, as
// the spec's "change the encoding" step does: UTF-16 in a document that was
// readable as ASCII means UTF-8, and x-user-defined means windows-1252.
func lookupDeclared(label string) (encoding.Encoding, string) {
	e, name := charset.Lookup(label)
	switch name {
	case "utf-16be", "utf-16le":
		return charset.Lookup("utf-8")
	case "x-user-defined":
		return charset.Lookup("windows-1252")
	}
	return e, name
}

// metaCharsetLabel returns the charset a <meta> element declares, the way the
// prescan reads it: a charset attribute, or http-equiv=content-type with a
// charset= in content.
func metaCharsetLabel(charsetAttr, httpEquiv, content string) string {
	if charsetAttr != "" {
		return strings.TrimSpace(charsetAttr)
	}
	if !strings.EqualFold(strings.TrimSpace(httpEquiv), "content-type") {
		return ""
	}
	return charsetFromContent(content)
}

// charsetFromContent implements the spec's "extracting a character encoding
// from a meta element".
func charsetFromContent(s string) string {
	lower := strings.ToLower(s)
	for {
		i := strings.Index(lower, "charset")
		if i < 0 {
			return ""
		}
		lower, s = lower[i+len("charset"):], s[i+len("charset"):]
		t := strings.TrimLeft(s, " \t\n\f\r")
		if !strings.HasPrefix(t, "=") {
			continue
		}
		t = strings.TrimLeft(t[1:], " \t\n\f\r")
		if t == "" {
			return ""
		}
		if q := t[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(t[1:], q)
			if end < 0 {
				return ""
			}
			return t[1 : 1+end]
		}
		if end := strings.IndexAny(t, "; \t\n\f\r"); end >= 0 {
			return t[:end]
		}
		return t
	}
}

// xmlDeclEncoding returns the encoding named in a leading XML declaration.
func xmlDeclEncoding(body []byte) string {
	if len(body) > 1024 {
		body = body[:1024]
	}
	if !bytes.HasPrefix(body, []byte("<?xml")) {
		return ""
	}
	end := bytes.Index(body, []byte("?>"))
	if end < 0 {
		return ""
	}
	decl := string(body[:end])
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	q := rest[0]
	j := strings.IndexByte(rest[1:], q)
	if j < 0 {
		return ""
	}
	return rest[1 : 1+j]
}

// queryEncoding returns the encoding in which a browser showing a page
// decoded with c percent-encodes the query of a URL found on it (the URL
// Standard's "encoding", after HTML's "get an output encoding"), or nil for
// UTF-8.
func queryEncoding(c encodingChoice) encoding.Encoding {
	switch c.name {
	case "utf-8", "utf-16be", "utf-16le", "replacement":
		return nil
	}
	// Not c.enc: charset.Lookup wraps encoders to write HTML numeric
	// references for what they cannot encode, unescaped.
	e, err := htmlindex.Get(c.name)
	if err != nil {
		return nil
	}
	return e
}

// encodeQuery percent-encodes the non-ASCII characters of the query of a
// reference in e, as a browser does for a link on a page in a legacy
// encoding ("percent-encode after encoding" in the URL Standard): a
// character e cannot represent becomes its HTML numeric reference,
// "%26%23NNN%3B". The rest of the reference (path, host, fragment) is left
// to the URL parser, which always uses UTF-8 there; so is a query that is
// ASCII, which is all of them on most pages.
//
// The URL parser's own encoding override is not used: it applies to the
// path, the fragment and the host as well, and turns unmappable characters
// into NUL.
func encodeQuery(ref string, e encoding.Encoding) string {
	if e == nil {
		return ref
	}
	end := strings.IndexByte(ref, '#')
	if end < 0 {
		end = len(ref)
	}
	q := strings.IndexByte(ref[:end], '?')
	if q < 0 {
		return ref
	}
	query := ref[q+1 : end]
	i := firstNonASCII(query)
	if i < 0 {
		return ref
	}
	var b strings.Builder
	b.Grow(len(ref) + 3*len(query))
	b.WriteString(ref[:q+1+i])
	for query = query[i:]; query != ""; {
		if query[0] < utf8.RuneSelf {
			b.WriteByte(query[0])
			query = query[1:]
			continue
		}
		// Encode each run of non-ASCII characters in one go, so that a
		// stateful encoding (ISO-2022-JP) switches back to ASCII after it.
		n := firstASCII(query)
		if n < 0 {
			n = len(query)
		}
		encodeRun(&b, query[:n], e)
		query = query[n:]
	}
	b.WriteString(ref[end:])
	return b.String()
}

func encodeRun(b *strings.Builder, run string, e encoding.Encoding) {
	if out, err := e.NewEncoder().String(run); err == nil {
		percentEncodeQuery(b, out)
		return
	}
	for _, r := range run {
		out, err := e.NewEncoder().String(string(r))
		if err != nil {
			b.WriteString("%26%23")
			b.WriteString(strconv.Itoa(int(r)))
			b.WriteString("%3B")
			continue
		}
		percentEncodeQuery(b, out)
	}
}

// percentEncodeQuery writes s percent-encoded with the URL Standard's
// special-query percent-encode set.
func percentEncodeQuery(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c > '~' || c == '"' || c == '#' || c == '\'' || c == '<' || c == '>':
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
}

func firstNonASCII(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

func firstASCII(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			return i
		}
	}
	return -1
}
