package pattern

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		url, pattern, section string
	}{
		{"http://a.example/", "/", "/"},
		{"http://a.example", "/", "/"},
		{"http://a.example/?page=3", "/?page", "/"},
		{"http://a.example/about.html", "/about.html", "/about.html"},
		{"http://a.example/p/12.html", "/p/{n}.html", "/p"},
		{"http://a.example/calendar/2024/06/", "/calendar/{n}/{n}/", "/calendar"},
		{"http://a.example/events/2024-06-15/", "/events/{n}-{n}-{n}/", "/events"},
		{"http://a.example/agenda?date=2024-06-15", "/agenda?date", "/agenda"},
		{"http://a.example/list/?page=7&sort=asc", "/list/?page&sort", "/list"},
		{"http://a.example/list/?sort=asc&page=7", "/list/?page&sort", "/list"},
		{"http://a.example/shop?size=m&color=red&color=blue", "/shop?color&size", "/shop"},
		{"http://a.example/s/3f9a1c2b7d4e/p/1.html", "/s/{id}/{a}/{n}.html", "/s"},
		{"http://a.example/s/9F86D081884C7D65/x", "/s/{id}/{a}", "/s"},
		{"http://a.example/genindex-A.html", "/genindex-{a}.html", "/genindex-{a}.html"},
		{"http://a.example/w/x/a/b/", "/w/{a}/{a}/{a}/", "/w"},
		{"http://a.example/page;jsessionid=A1B2C3D4E5F6A7B8", "/page;jsessionid", "/page"},
		{"http://a.example/x?sessid=k2j3h4k5j6h7k8j9", "/x?sessid", "/x"},
		{"http://a.example/d/550e8400-e29b-41d4-a716-446655440000", "/d/{id}", "/d"},
		{"http://a.example/t/dGhpcyBpcyBhIHRlc3Q9", "/t/{id}", "/t"},
		{"http://a.example/wiki/Main_Page", "/wiki/Main_Page", "/wiki"},
		{"http://a.example/v2/mp3/", "/v{n}/mp{n}/", "/v{n}"},
		{"http://a.example/deadbeef/", "/deadbeef/", "/deadbeef"}, // a word in hex letters
		{"http://a.example/f%2Fb", "/{a}%2F{a}", "/{a}%2F{a}"},
		{"http://a.example/x#frag/1", "/x", "/x"},
		{"http://a.example/?f[0]=a&f[1]=b", "/?f[{n}]", "/"},
		{"not a url", "/", "/"},
	}
	for _, tt := range tests {
		p, s := Of(tt.url)
		if p != tt.pattern || s != tt.section {
			t.Errorf("Of(%q) = %q, %q; want %q, %q", tt.url, p, s, tt.pattern, tt.section)
		}
	}
}

func TestIsIdentifier(t *testing.T) {
	for tok, want := range map[string]bool{
		"3f9a1c2b":         true,
		"deadbeef":         false,
		"12345678":         false,
		"k2j3h4k5j6h7":     true,
		"k2j3h4k5j6h":      false, // short for a non-hex token
		"article":          false,
		"introduction2023": false, // one digit run is a number, not an id
		"a1b2c3d":          false,
		"ABCDEF0123456789": true,
		"abc_def12345":     false,
	} {
		if got := isIdentifier(tok); got != want {
			t.Errorf("isIdentifier(%q) = %v, want %v", tok, got, want)
		}
	}
}

func FuzzOf(f *testing.F) {
	for _, s := range []string{"http://a.example/p/1.html?x=1&y", "https://a/;;;%", "http://a/?&&=&", "http://a/" + strings.Repeat("9a", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		p, s := Of(u)
		if !strings.HasPrefix(p, "/") || !strings.HasPrefix(s, "/") {
			t.Fatalf("Of(%q) = %q, %q: want paths", u, p, s)
		}
		if !strings.HasPrefix(p, s) {
			t.Fatalf("Of(%q): section %q is not a prefix of pattern %q", u, s, p)
		}
		if p2, _ := Of("http://h" + p); p2 != p && !strings.Contains(p, "#") {
			// Generalizing twice changes nothing: placeholders are stable.
			if strings.Count(p2, "{") != strings.Count(p, "{") {
				t.Fatalf("Of not stable on %q: %q then %q", u, p, p2)
			}
		}
	})
}
