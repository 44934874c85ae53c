package parse

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
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
	return encodingChoice{enc: e, name: name, certain: certain}
}

// decode converts body to UTF-8. UTF-8 input is returned as is: invalid
// sequences are replaced later, only in the strings that leave the package.
func decode(body []byte, c encodingChoice) ([]byte, error) {
	body = body[c.bom:]
	if c.name == "utf-8" {
		return body, nil
	}
	out, err := c.enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, fmt.Errorf("decode body as %s: %w", c.name, err)
	}
	return out, nil
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

// queryCharmap returns the single-byte charmap of a legacy encoding, which
// the URL parser needs to percent-encode query strings the way a browser
// would on that page. Multi-byte legacy encodings are left to UTF-8.
func queryCharmap(name string) *charmap.Charmap {
	if name == "utf-8" {
		return nil
	}
	e, err := htmlindex.Get(name)
	if err != nil {
		return nil
	}
	cm, _ := e.(*charmap.Charmap)
	return cm
}
