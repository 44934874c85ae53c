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

// asciiSpace marks the ASCII white space of unicode.IsSpace.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\r': true, '\f': true, '\v': true}

// write scans ASCII byte by byte through a table and decodes only other
// runes: text is most of a page, and this loop was a tenth of parsing.
func (t *textBuilder) write(s []byte) {
	for i := 0; i < len(s) && !t.full; {
		if c := s[i]; c < utf8.RuneSelf && asciiSpace[c] {
			t.space = true
			i++
			continue
		} else if c >= utf8.RuneSelf {
			if n := spaceLen(s[i:]); n > 0 {
				t.space = true
				i += n
				continue
			}
		}
		j, valid := i, true
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if asciiSpace[c] {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRune(s[j:])
			if unicode.IsSpace(r) {
				break
			}
			valid = valid && !(r == utf8.RuneError && size == 1)
			j += size
		}
		t.addWord(s[i:j], valid)
		i = j
	}
}

// spaceLen returns the length of the white-space rune at the start of s, or
// 0 if there is none.
func spaceLen(s []byte) int {
	if c := s[0]; c < utf8.RuneSelf {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			return 1
		}
		return 0
	}
	if r, size := utf8.DecodeRune(s); unicode.IsSpace(r) {
		return size
	}
	return 0
}

// addWord appends a run of non-space runes. A valid word that fits is copied
// in one go; otherwise it goes rune by rune, so that invalid bytes become
// U+FFFD and the cut at max falls on a rune boundary.
func (t *textBuilder) addWord(w []byte, valid bool) {
	sep := 0
	if t.space && len(t.buf) > 0 {
		sep = 1
	}
	if valid && len(t.buf)+sep+len(w) <= t.max {
		if sep == 1 {
			t.buf = append(t.buf, ' ')
		}
		t.space = false
		t.buf = append(t.buf, w...)
		return
	}
	for k := 0; k < len(w) && !t.full; {
		// DecodeRune gives RuneError for invalid bytes; it encodes as U+FFFD.
		r, size := utf8.DecodeRune(w[k:])
		k += size
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
