package urlnorm

import (
	"net/url"
	"testing"
)

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "HTTP://Ex.com:80/a/./b/../c?b=2&a=1#f",
		"http://bücher.de/%e4?ä=1", "https://[::1]:443/x;jsessionid=1",
		"http://0x7f.1/%zz?%%41", "javascript:alert(1)", "//x/y", "http://a/b/..;sid=1/c",
		"http://e.com/?utm_source=x&&a", "http://e.com/a%2Fb%7c|{}`^", "http://e.com./\\a",
	} {
		f.Add(s, "b")
	}
	n := New(DefaultPolicy())
	f.Fuzz(func(t *testing.T, raw, ref string) {
		check := func(what, got string, err error) {
			if err != nil {
				if Reason(err) == "" {
					t.Fatalf("%s: error without reason: %v", what, err)
				}
				return
			}
			again, err := n.Normalize(got)
			if err != nil {
				t.Fatalf("%s: Normalize(%q) = %q, then Normalize(%q): %v", what, raw, got, got, err)
			}
			if again != got {
				t.Fatalf("%s: not idempotent for %q:\n first %q\nsecond %q", what, raw, got, again)
			}
			u, err := url.Parse(got)
			if err != nil {
				t.Fatalf("%s: net/url cannot parse %q: %v", what, got, err)
			}
			if u.Scheme != "http" && u.Scheme != "https" {
				t.Fatalf("%s: scheme %q in %q", what, u.Scheme, got)
			}
			if u.Host == "" || Authority(got) == "" {
				t.Fatalf("%s: no host in %q", what, got)
			}
		}
		got, err := n.Normalize(raw)
		check("normalize", got, err)
		got, err = n.Resolve("http://example.com/a/b?c=d", raw)
		check("resolve ref", got, err)
		got, err = n.Resolve(raw, ref)
		check("resolve base", got, err)
	})
}

// FuzzFastPath holds the fast path to the full normalization: whatever it
// accepts as canonical, the WHATWG-based path returns unchanged.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastPathCases {
		f.Add(s.url)
	}
	n := New(DefaultPolicy())
	f.Fuzz(func(t *testing.T, raw string) {
		if !n.canonicalASCII(raw) {
			return
		}
		if got, err := n.normalize(raw); err != nil || got != raw {
			t.Fatalf("fast path accepts %q, full normalization gives %q (%v)", raw, got, err)
		}
	})
}
