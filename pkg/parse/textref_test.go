package parse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refTextBuilder is textBuilder as it was before it copied runs: word by
// word, rune by rune where a word is invalid or does not fit. FuzzTextBuilder
// holds the two to the same output.
type refTextBuilder struct {
	buf   []byte
	max   int
	space bool
	full  bool
}

func (t *refTextBuilder) boundary() { t.space = true }

func (t *refTextBuilder) write(s []byte) {
	for i := 0; i < len(s) && !t.full; {
		if c := s[i]; c < utf8.RuneSelf && asciiSpace[c] {
			t.space = true
			i++
			continue
		} else if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRune(s[i:]); unicode.IsSpace(r) {
				t.space = true
				i += size
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

func (t *refTextBuilder) addWord(w []byte, valid bool) {
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
		r, size := utf8.DecodeRune(w[k:])
		k += size
		t.add(r, utf8.RuneLen(r))
	}
}

func (t *refTextBuilder) add(r rune, n int) {
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

// FuzzTextBuilder feeds the same text to textBuilder and refTextBuilder in
// pieces, with word boundaries between some of them (as tags give), and
// requires the same text. cuts chooses where the pieces end: each byte is
// the length of the next piece, with a boundary after it when odd.
func FuzzTextBuilder(f *testing.F) {
	f.Add([]byte("Plain prose, with words.  And\ttabs\r\nand lines."), []byte{7, 12, 3}, 40)
	f.Add([]byte("caf\u00e9\u00a0cr\u00e8me \u3000wide\u2028x \xff\xfe bad\xe6\x9d end"), []byte{1, 2, 9}, 17)
	f.Add([]byte("aaaaaaa bbbbbbbb  cccccccc dddddddd \x00\x01 eeeeeeeeeeeeeeeeeeeeeeee"), []byte{16, 8}, 1000)
	f.Add([]byte(" x y z  q  "), []byte{}, 3)
	f.Fuzz(func(t *testing.T, text, cuts []byte, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := textBuilder{max: max}
		want := refTextBuilder{max: max}
		rest := text
		for _, c := range cuts {
			n := min(int(c>>1), len(rest))
			got.write(rest[:n])
			want.write(rest[:n])
			rest = rest[n:]
			if c&1 != 0 {
				got.boundary()
				want.boundary()
			}
		}
		got.write(rest)
		want.write(rest)
		if g, w := got.String(), string(want.buf); g != w {
			t.Fatalf("text %q in pieces %v, max %d: got %q, want %q", text, cuts, max, g, w)
		}
		if got.full != want.full {
			t.Fatalf("text %q in pieces %v, max %d: full %v, want %v", text, cuts, max, got.full, want.full)
		}
	})
}

// textSamples are text tokens as pages give them: prose (single spaces, one
// token per paragraph), markup indentation, and non-Latin prose.
func textSamples() map[string][][]byte {
	prose := [][]byte{}
	z := prosePage(24 << 10)
	for _, p := range bytes.Split(z, []byte("<p>"))[1:] {
		p, _, _ = bytes.Cut(p, []byte("</p>"))
		prose = append(prose, p, []byte("\n"))
	}
	var indented [][]byte
	for i := range 400 {
		indented = append(indented, []byte("\n    "), []byte(fmt.Sprintf("Item %d", i)), []byte("\n  "))
	}
	cyr := strings.NewReplacer("a", "а", "b", "б", "c", "ц", "d", "д", "e", "е", "i", "и", "l", "л", "n", "н", "o", "о", "r", "р", "s", "с", "t", "т", "u", "у")
	var cyrillic [][]byte
	for _, p := range prose {
		cyrillic = append(cyrillic, []byte(cyr.Replace(string(p))))
	}
	return map[string][][]byte{"prose": prose, "indented": indented, "cyrillic": cyrillic}
}

func TestTextBuilderMatchesReference(t *testing.T) {
	for name, tokens := range textSamples() {
		for _, max := range []int{DefaultMaxTextSize, 1000, 1001, 1002, 1003} {
			got := textBuilder{max: max}
			want := refTextBuilder{max: max}
			for _, tok := range tokens {
				got.write(tok)
				want.write(tok)
			}
			if got.String() != string(want.buf) {
				t.Errorf("%s, max %d: text differs from the reference", name, max)
			}
		}
	}
}

// BenchmarkTextBuilder compares textBuilder with refTextBuilder on the same
// text tokens.
func BenchmarkTextBuilder(b *testing.B) {
	for name, tokens := range textSamples() {
		size := 0
		for _, tok := range tokens {
			size += len(tok)
		}
		b.Run(name+"/ref", func(b *testing.B) {
			b.SetBytes(int64(size))
			buf := make([]byte, 0, size)
			for b.Loop() {
				t := refTextBuilder{buf: buf, max: DefaultMaxTextSize}
				for _, tok := range tokens {
					t.write(tok)
				}
			}
		})
		b.Run(name+"/new", func(b *testing.B) {
			b.SetBytes(int64(size))
			buf := make([]byte, 0, size)
			for b.Loop() {
				t := textBuilder{buf: buf, max: DefaultMaxTextSize}
				for _, tok := range tokens {
					t.write(tok)
				}
			}
		})
	}
}
