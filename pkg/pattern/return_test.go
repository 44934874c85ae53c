package pattern

import (
	"net/url"
	"strings"
	"testing"
)

func TestReturnsTo(t *testing.T) {
	for _, tc := range []struct {
		u, parent string
		want      bool
	}{
		{"http://a/signin?back=%2Fc%2Fx", "http://a/c/x", true},
		{"http://a/login?next=/c/x", "http://a/c/x", true},                      // written unescaped
		{"http://a/login?next=%2F%2Fa%2Fc%2Fx", "http://a/c/x", true},           // protocol-relative
		{"http://a/login?to=http%3A%2F%2FA%2Fc%2Fx&t=1", "http://a/c/x", true},  // absolute, host in capitals
		{"http://a/join?back=%2Fs%3Fb%3D2%26a%3D1", "http://a/s?a=1&b=2", true}, // parameters in another order
		{"http://a/join?back=%2Fs%3Fb%3D%252Fx", "http://a/s?b=%2Fx", true},     // nested
		{"http://a/login?next=%2F", "http://a/", true},                          // the home page
		{"http://a/login?next=%2Fc%2Fy", "http://a/c/x", false},                 // another page
		{"http://a/login?next=http%3A%2F%2Fb%2Fc%2Fx", "http://a/c/x", false},   // another host
		{"http://a/login", "http://a/c/x", false},                               // no query
		{"http://a/c/x?page=2", "http://a/c/x", false},                          // no address
		{"http://a/login?next=%ZZ", "http://a/c/x", false},                      // no escape
		{"http://a/signin?back=%2Fc%2Fx", "", false},                            // a seed
	} {
		if got := returnsTo(tc.u, tc.parent); got != tc.want {
			t.Errorf("returnsTo(%s, %s) = %v, want %v", tc.u, tc.parent, got, tc.want)
		}
	}
}

// FuzzReturnsTo: any input is answered; a link made by escaping its page's
// path and query into a parameter returns to it.
func FuzzReturnsTo(f *testing.F) {
	f.Add("/c/x", "back", "http://a/signin?t=1")
	f.Add("/s?b=%2Fx&a=1", "next", "http://a/login")
	f.Add("/", "u", "http://a/share?x")
	f.Fuzz(func(t *testing.T, self, name, link string) {
		parent := "http://a" + self
		_ = returnsTo(link, parent)
		_ = returnsTo(parent, link)
		_ = Neighbours(link, parent)
		if !strings.HasPrefix(self, "/") || strings.HasPrefix(self, "//") || strings.ContainsAny(self, "#\x00") || strings.Contains(link, "#") || name == "" || strings.ContainsAny(name, "=&?#%") {
			return
		}
		sep := "?"
		if strings.Contains(link, "?") {
			sep = "&"
		}
		u := "http://a/r" + sep + name + "=" + url.QueryEscape(self)
		if strings.Contains(link, "?") {
			u = link + sep + name + "=" + url.QueryEscape(self)
		}
		if !returnsTo(u, parent) {
			t.Errorf("returnsTo(%q, %q) = false", u, parent)
		}
	})
}
