package parse

import (
	"encoding/binary"
	"math/bits"
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

// write appends s. Text is most of a page, and most of it is already
// collapsed: words of valid UTF-8 between single spaces. So it is copied in
// runs of that shape (see cleanRun) rather than word by word, and only what
// lies between runs (other white space, invalid bytes) is looked at on its
// own.
func (t *textBuilder) write(s []byte) {
	for i := 0; i < len(s) && !t.full; {
		c := s[i]
		if c < utf8.RuneSelf && asciiSpace[c] {
			t.space = true
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if isSpace(r) {
				t.space = true
				i += size
				continue
			}
			if size == 1 { // invalid: DecodeRune gives U+FFFD
				t.addRune(utf8.RuneError)
				i++
				continue
			}
		}
		j := cleanRun(s, i)
		t.addRun(s[i:j])
		i = j
	}
}

// cleanRun returns the end of the run that starts at s[i], a rune that is
// valid UTF-8 and not white space: the run goes on through such runes and
// through single ASCII spaces between them. It ends before any other white
// space, before a space that is not followed by such a rune, before invalid
// UTF-8, or at the end of s; so it never ends with a space.
//
// Eight bytes of ASCII are taken in one step when none of them is a control
// character and no space among them (or just before them) is next to
// another. Otherwise bytes go one at a time up to the first that stopped
// the block.
func cleanRun(s []byte, i int) int {
	const (
		highs = 0x8080808080808080
		lows  = 0x7f7f7f7f7f7f7f7f
	)
	j := i
	prevSpace := false // s[j-1] is a space, taken on trust that a rune follows
scan:
	for {
		limit := len(s)
		for j+8 <= len(s) {
			w := binary.LittleEndian.Uint64(s[j:])
			// Bytes that are not ASCII, or below 0x20 in their low 7 bits.
			bad := (w | ^((w & lows) + 0x6060606060606060)) & highs
			// Spaces: the zero bytes of w^0x2020...
			x := w ^ 0x2020202020202020
			sp := ^(((x & lows) + lows) | x) & highs
			prev := uint64(0)
			if prevSpace {
				prev = 0x80
			}
			bad |= sp & (sp<<8 | prev)
			if bad != 0 {
				limit = j + bits.TrailingZeros64(bad)>>3 + 1
				break
			}
			prevSpace = sp>>63 != 0
			j += 8
		}
		if j >= len(s) {
			break
		}
		for j < limit {
			c := s[j]
			if c == ' ' {
				if prevSpace {
					break scan
				}
				prevSpace = true
				j++
				continue
			}
			if c < utf8.RuneSelf {
				if asciiSpace[c] {
					break scan
				}
				prevSpace = false
				j++
				continue
			}
			r, size := utf8.DecodeRune(s[j:])
			if size == 1 || isSpace(r) {
				break scan
			}
			prevSpace = false
			j += size
		}
	}
	if prevSpace {
		j--
	}
	return j
}

// isSpace is unicode.IsSpace with a shortcut for the letters of most
// scripts: there is no white space in U+0100..U+167F nor above U+3000
// (TestIsSpace checks every rune).
func isSpace(r rune) bool {
	if (r >= 0x100 && r < 0x1680) || r > 0x3000 {
		return false
	}
	return unicode.IsSpace(r)
}

// addRun appends a run found by cleanRun. A run that does not fit is cut at
// the last rune boundary that does, without a trailing space: where adding
// its runes one by one would have stopped.
func (t *textBuilder) addRun(run []byte) {
	sep := 0
	if t.space && len(t.buf) > 0 {
		sep = 1
	}
	if len(t.buf)+sep+len(run) <= t.max {
		if sep == 1 {
			t.buf = append(t.buf, ' ')
		}
		t.space = false
		t.buf = append(t.buf, run...)
		return
	}
	t.full = true
	n := t.max - len(t.buf) - sep // < len(run)
	if n <= 0 {
		return
	}
	for n > 0 && !utf8.RuneStart(run[n]) {
		n--
	}
	if n > 0 && run[n-1] == ' ' {
		n-- // runs have no space before or after a space
	}
	if n > 0 {
		if sep == 1 {
			t.buf = append(t.buf, ' ')
		}
		t.buf = append(t.buf, run[:n]...)
	}
}

// addRune appends one rune (U+FFFD for invalid input) with the separator
// owed, or marks the builder full if they do not fit.
func (t *textBuilder) addRune(r rune) {
	sep := 0
	if t.space && len(t.buf) > 0 {
		sep = 1
	}
	if len(t.buf)+sep+utf8.RuneLen(r) > t.max {
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
	if len(s) <= max && isCollapsed(s) {
		// What a metadata string usually is already: no copy.
		return s
	}
	t := textBuilder{max: max}
	t.write([]byte(s))
	return t.String()
}

// isCollapsed reports whether s is valid UTF-8 with no white space but
// single ASCII spaces between other runes.
func isCollapsed(s string) bool {
	prevSpace := true // no leading space
	for _, r := range s {
		if r == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		if (r < utf8.RuneSelf && asciiSpace[r]) || r == utf8.RuneError || (r >= utf8.RuneSelf && isSpace(r)) {
			// RuneError is also the valid U+FFFD, kept as it is; collapse
			// takes the long way for it.
			return false
		}
		prevSpace = false
	}
	return !prevSpace || s == ""
}
