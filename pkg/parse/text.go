package parse

import (
	"unicode"
	"unicode/utf8"
)

// textBuilder accumulates text with runs of white space collapsed to one
// space, no leading or trailing space, invalid UTF-8 replaced by U+FFFD, and
// at most max bytes. Once full it ignores further input, so a huge page costs
// tokenizing time but no memory beyond max.
type textBuilder struct {
	buf   []byte
	max   int
	space bool // a separator is owed before the next visible rune
	full  bool
}

// boundary marks a word break, e.g. at a block-level tag.
func (t *textBuilder) boundary() { t.space = true }

func (t *textBuilder) write(s []byte) {
	for i := 0; i < len(s) && !t.full; {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
				t.space = true
				continue
			}
			t.add(rune(c), 1)
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		if unicode.IsSpace(r) {
			t.space = true
			continue
		}
		// DecodeRune gives RuneError for invalid bytes; it encodes as U+FFFD.
		t.add(r, utf8.RuneLen(r))
	}
}

func (t *textBuilder) writeString(s string) {
	// The conversion does not escape: write only reads s.
	t.write([]byte(s))
}

func (t *textBuilder) add(r rune, n int) {
	sep := 0
	if t.space && len(t.buf) > 0 {
		sep = 1
	}
	if len(t.buf)+sep+n > t.max {
		t.full = true
		return
	}
	if sep == 1 {
		t.buf = append(t.buf, ' ')
	}
	t.space = false
	t.buf = utf8.AppendRune(t.buf, r)
}

func (t *textBuilder) String() string { return string(t.buf) }

// collapse returns s with white space collapsed and capped at max bytes.
func collapse(s string, max int) string {
	t := textBuilder{max: max}
	t.writeString(s)
	return t.String()
}
