package parse

import (
	"bytes"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestTagAtom(t *testing.T) {
	// Atoms are offsets and lengths into one table: try them all.
	longest := 0
	for off := range 1 << 16 {
		for n := 1; n < 256; n++ {
			a := atom.Atom(off<<8 | n)
			if s := a.String(); s != "" && atom.Lookup([]byte(s)) == a {
				longest = max(longest, len(s))
			}
		}
	}
	if longest == 0 || longest > maxAtomLen {
		t.Fatalf("longest atom has %d bytes, maxAtomLen is %d", longest, maxAtomLen)
	}
	checkTagAtoms(t, []byte(`<A HREF=x>a</A><p/><p / ><br/ x><DiV	class=y
><foreignObject></FOREIGNOBJECT><svg:a><x-`+"\x00"+`y><a`+"\x00"+`><`+string(bytes.Repeat([]byte("b"), 40))+` c>`))
}

// FuzzTagAtom holds tagAtom to atom.Lookup of TagName, and hasAttr to
// TagName's.
func FuzzTagAtom(f *testing.F) {
	f.Add([]byte(`<A HREF=x>a</A><p/><p / ><br/ x><DiV	class=y`))
	f.Add([]byte(`<script>a</script ><title x=">">t</title><svg><a xlink:href=/x/>`))
	f.Add([]byte("<a\x00 =b><p\r/\fc></p\t>"))
	f.Fuzz(func(t *testing.T, page []byte) {
		checkTagAtoms(t, page)
	})
}

func checkTagAtoms(t *testing.T, page []byte) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			raw := string(z.Raw())
			a, hasAttr := tagAtom(z)
			name, wantAttr := z.TagName()
			if want := atom.Lookup(name); a != want || hasAttr != wantAttr {
				t.Fatalf("tag %q: tagAtom gives %v, %v; TagName %q, %v (atom %v)", raw, a, hasAttr, name, wantAttr, want)
			}
		}
	}
}
