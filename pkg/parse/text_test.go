package parse

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// collapseReference is collapse spelled out: every invalid byte becomes
// U+FFFD, white space runs become one space, no leading or trailing space,
// and the result is the longest prefix on a rune boundary within max bytes.
func collapseReference(s string, max int) string {
	var runes []rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		runes = append(runes, r)
		i += size
	}
	var words []string
	var w []rune
	for _, r := range runes {
		if unicode.IsSpace(r) {
			if len(w) > 0 {
				words = append(words, string(w))
				w = nil
			}
			continue
		}
		w = append(w, r)
	}
	if len(w) > 0 {
		words = append(words, string(w))
	}
	full := strings.Join(words, " ")
	out := []byte{}
	for _, r := range full {
		if len(out)+utf8.RuneLen(r) > max {
			break
		}
		out = utf8.AppendRune(out, r)
	}
	return strings.TrimRight(string(out), " ")
}

func TestCollapse(t *testing.T) {
	for _, tc := range []struct {
		in  string
		max int
	}{
		{"", 10}, {"  a  b\t\nc ", 100}, {"abc def", 5}, {"abc def", 4}, {"abc def", 3},
		{"caf\u00e9\u00a0cr\u00e8me\u0085x", 100}, {"a\xffb \xfe", 100}, {"\u3000wide\u3000space\u3000", 8},
		{"x\u2028y", 100}, {"\xc3", 1}, {"ab\xc3\xa9", 3},
	} {
		if got, want := collapse(tc.in, tc.max), collapseReference(tc.in, tc.max); got != want {
			t.Errorf("collapse(%q, %d) = %q, want %q", tc.in, tc.max, got, want)
		}
	}
}

func FuzzCollapse(f *testing.F) {
	f.Add("  a  b\t\nc ", 100)
	f.Add("caf\u00e9\u00a0cr\u00e8me\u0085x\xff", 9)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		if got, want := collapse(s, max), collapseReference(s, max); got != want {
			t.Fatalf("collapse(%q, %d) = %q, want %q", s, max, got, want)
		}
	})
}

func TestResolvePlainPath(t *testing.T) {
	base, err := whatwg.Parse("http://127.0.1.4:39983/p/3.html")
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"/p/12.html":         "http://127.0.1.4:39983/p/12.html",
		"/":                  "http://127.0.1.4:39983/",
		"/a;b=c/d:e":         "http://127.0.1.4:39983/a;b=c/d:e",
		"p/12.html":          "http://127.0.1.4:39983/p/p/12.html",
		"12.html":            "http://127.0.1.4:39983/p/12.html",
		"http://a.example/x": "http://a.example/x",
		"HTTP://a.example/x": "", // not canonical: the parser's
		"a:b/c":              "", // colon: could be a scheme
		"./x":                "", // dot segment
		"//x/y":              "", // network-path
		"/a/../b":            "", // dot segment
		"/a?b":               "", // query
		"/a%2F":              "", // escape
	} {
		got, ok := resolvePlainPath(base, ref)
		if ok != (want != "") || got != want {
			t.Errorf("resolvePlainPath(%q) = %q, %v; want %q", ref, got, ok, want)
		}
	}
}
