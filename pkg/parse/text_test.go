package parse

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
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
		"/p/12.html":            "http://127.0.1.4:39983/p/12.html",
		"/":                     "http://127.0.1.4:39983/",
		"/a;b=c/d:e":            "http://127.0.1.4:39983/a;b=c/d:e",
		"p/12.html":             "http://127.0.1.4:39983/p/p/12.html",
		"12.html":               "http://127.0.1.4:39983/p/12.html",
		"http://a.example/x":    "http://a.example/x",
		"HTTP://a.example/x":    "", // not canonical: the parser's
		"a:b/c":                 "", // colon: could be a scheme
		"./x":                   "http://127.0.1.4:39983/p/x",
		"../x/./y/..":           "http://127.0.1.4:39983/x/",
		"/../../a//b/.":         "http://127.0.1.4:39983/a//b/",
		"//x/y":                 "http://x/y",
		"//x/y?q=1":             "http://x/y?q=1",
		"//X/y":                 "", // not canonical: the parser's
		"/a/../b":               "http://127.0.1.4:39983/b",
		"/a?b":                  "http://127.0.1.4:39983/a?b",
		"?b=1&c=/d?":            "http://127.0.1.4:39983/p/3.html?b=1&c=/d?",
		"https://a.example/x?y": "https://a.example/x?y",
		"/a?b'":                 "", // the parser escapes ' in a query
		"/a#b":                  "", // fragment
		"/a%2F":                 "", // escape
		"/a%2e%2e/b":            "", // escape, here of a dot segment
	} {
		got, ok := resolvePlainPath(plainBaseOf(base), ref)
		if ok != (want != "") || got != want {
			t.Errorf("resolvePlainPath(%q) = %q, %v; want %q", ref, got, ok, want)
		}
		if u, err := base.Parse(ref); ok && (err != nil || u.Href(false) != got) {
			t.Errorf("resolvePlainPath(%q) = %q; the parser gives %v (error %v)", ref, got, u, err)
		}
	}
}

func TestIsSpace(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := isSpace(r), unicode.IsSpace(r); got != want {
			t.Fatalf("isSpace(%U) = %v, unicode.IsSpace %v", r, got, want)
		}
	}
}

// TestResolvePlainPathMatchesParser builds references from the pieces the
// fast path tells apart and requires the parser's answer for every one it
// resolves.
func TestResolvePlainPathMatchesParser(t *testing.T) {
	pieces := []string{"/", "/", "//", "a", "b.html", ".", "..", "?", "=", "&", "'", ":", "@", "x.example", "X", ":8080", "%2e", "#", "\\", "~", "http:", "https://", " "}
	bases := []string{"http://127.0.1.4:39983/p/3.html", "https://a.example/", "http://a.example/d/e/", "http://a.example", "http://u@a.example/x"}
	rng := rand.New(rand.NewPCG(1, 2))
	resolved := 0
	for _, b := range bases {
		base, err := whatwg.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		for range 20000 {
			var ref strings.Builder
			for range 1 + rng.IntN(8) {
				ref.WriteString(pieces[rng.IntN(len(pieces))])
			}
			got, ok := resolvePlainPath(plainBaseOf(base), ref.String())
			if !ok {
				continue
			}
			resolved++
			u, err := base.Parse(ref.String())
			if err != nil || u.Href(false) != got {
				t.Fatalf("resolve %q against %q: fast path %q, parser %v (error %v)", ref.String(), b, got, u, err)
			}
		}
	}
	if resolved < 10000 {
		t.Errorf("only %d references took the fast path", resolved)
	}
}

func TestCanonicalBase(t *testing.T) {
	for _, raw := range []string{
		"http://127.0.1.4:39983/p/3.html", "https://a.example/", "https://a.example:8443/x/y/", "http://a-b.example/~u/(1)",
		"http://a.example:80/", "HTTP://a.example/", "http://a.example", "http://u@a.example/", "http://a.example/?q", // not canonical
	} {
		if !urlnorm.IsCanonical(raw) {
			continue
		}
		u, err := whatwg.Parse(raw)
		if err != nil {
			t.Fatalf("canonical %q does not parse: %v", raw, err)
		}
		if got, want := canonicalBase(raw), plainBaseOf(u); got != want {
			t.Errorf("canonicalBase(%q) = %+v, parser gives %+v", raw, got, want)
		}
	}
}
