package warc

import (
	"fmt"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field is one named field of a WARC record header.
type Field struct {
	Name  string
	Value string
}

// Header holds a record's named fields in the order they appear. Names compare
// case-insensitively, as WARC 1.1 requires; order and repeats are kept because
// some fields (WARC-Concurrent-To) may legitimately occur more than once. The
// zero value is an empty header ready to use.
type Header struct {
	fields []Field
}

// Get returns the value of the first field named name, or "" if there is none.
func (h *Header) Get(name string) string {
	for _, f := range h.fields {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Values returns the values of every field named name, in order.
func (h *Header) Values(name string) []string {
	var vs []string
	for _, f := range h.fields {
		if strings.EqualFold(f.Name, name) {
			vs = append(vs, f.Value)
		}
	}
	return vs
}

// Set replaces the value of the first field named name and drops any repeats,
// or appends the field if it is absent.
func (h *Header) Set(name, value string) {
	found := false
	kept := h.fields[:0]
	for _, f := range h.fields {
		if strings.EqualFold(f.Name, name) {
			if found {
				continue
			}
			found = true
			f.Value = value
		}
		kept = append(kept, f)
	}
	h.fields = kept
	if !found {
		h.fields = append(h.fields, Field{Name: name, Value: value})
	}
}

// Add appends a field, keeping any existing fields of the same name.
func (h *Header) Add(name, value string) {
	h.fields = append(h.fields, Field{Name: name, Value: value})
}

// Del removes every field named name.
func (h *Header) Del(name string) {
	kept := h.fields[:0]
	for _, f := range h.fields {
		if !strings.EqualFold(f.Name, name) {
			kept = append(kept, f)
		}
	}
	h.fields = kept
}

// Len returns the number of fields, counting repeats.
func (h *Header) Len() int { return len(h.fields) }

// All yields every field as name, value in order.
func (h *Header) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, f := range h.fields {
			if !yield(f.Name, f.Value) {
				return
			}
		}
	}
}

// clone returns a copy that shares nothing with h.
func (h *Header) clone() Header {
	return Header{fields: append([]Field(nil), h.fields...)}
}

// appendTo serializes the fields as "Name: value\r\n" lines. It refuses names
// that are not tokens and values that contain CR, LF or other control bytes,
// since either would let a crawled URL inject fields or break framing. It also
// refuses values that would not read back as written: invalid UTF-8 (WARC 1.1
// headers are UTF-8, and other readers decode them as such) and leading or
// trailing white space, which readers trim.
func (h *Header) appendTo(buf []byte) ([]byte, error) {
	for _, f := range h.fields {
		if !validName(f.Name) {
			return buf, fmt.Errorf("header field name %q: %w", f.Name, ErrInvalidRecord)
		}
		if !validValue(f.Value) {
			return buf, fmt.Errorf("header field %s value %q: %w", f.Name, f.Value, ErrInvalidRecord)
		}
		if !utf8.ValidString(f.Value) {
			return buf, fmt.Errorf("header field %s value %q: not UTF-8: %w", f.Name, f.Value, ErrInvalidRecord)
		}
		if padded(f.Value) {
			return buf, fmt.Errorf("header field %s value %q: leading or trailing white space: %w", f.Name, f.Value, ErrInvalidRecord)
		}
		buf = append(buf, f.Name...)
		buf = append(buf, ':', ' ')
		buf = append(buf, f.Value...)
		buf = append(buf, '\r', '\n')
	}
	return buf, nil
}

// validName reports whether s is an RFC 2616 token, the grammar WARC field
// names follow.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// padded reports whether s starts or ends with white space. Our reader trims
// only SP and HT, as WARC 1.1 says; others (warcio.js uses String.trim) trim
// any Unicode space and the byte order mark, so the writer refuses all of them.
func padded(s string) bool {
	if s == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return isPad(first) || isPad(last)
}

func isPad(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }
