package urlnorm

import (
	"net/url"
	"strings"
	"testing"

	wurl "github.com/nlnwa/whatwg-url/url"
)

// fuzzHosts are seeds for the host rules: trailing dots (one is the DNS root,
// more are rejected), names whose last label looks numeric, IPv4 spellings,
// IPv6 literals, IDNs and percent-encoded dots.
var fuzzHosts = []string{
	"http://foo.09..", "http://foo.09.", "http://foo.09../x", "http://0x7f.1.", "http://0x7f.1../",
	"http://1.2.3.4./", "http://1.2.3.4../", "http://1.2.3.4...", "http://1./", "http://1../",
	"http://a..b/", "http://..", "http://.", "http://a./", "http://a../", "http://.a/",
	"http://[::1]./", "http://[::ffff:1.2.3.4]/", "http://[::1]:8080/", "http://[v1.x]/",
	"http://bücher.de./", "http://bücher.de../", "http://bücher\u3002de\u3002/", "http://xn--bcher-kva.de../",
	"http://foo%2e09%2e%2e/", "http://1.2.3.4%2e/", "http://1.2.3.4%2e%2e/", "http://a%2e%2eb/", "http://%2e/",
	"http://foo.1e/", "http://foo.0x../", "http://1.2.3.4.5./", "http://foo.09..:8080/",
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "HTTP://Ex.com:80/a/./b/../c?b=2&a=1#f",
		"http://bücher.de/%e4?ä=1", "https://[::1]:443/x;jsessionid=1",
		"http://0x7f.1/%zz?%%41", "javascript:alert(1)", "//x/y", "http://a/b/..;sid=1/c",
		"http://e.com/?utm_source=x&&a", "http://e.com/a%2Fb%7c|{}`^", "http://e.com./\\a",
	} {
		f.Add(s, "b")
	}
	for _, s := range fuzzHosts {
		f.Add(s, "b")
		f.Add("http://example.com/", s)
	}
	n := New(DefaultPolicy())
	parser := wurl.NewParser()
	f.Fuzz(func(t *testing.T, raw, ref string) {
		// check holds one result to checkCanonical; parsed is what the WHATWG
		// parser made of the same input, nil if it refused it.
		check := func(what, in, got string, err error, parsed *wurl.Url) {
			t.Helper()
			if err != nil {
				if Reason(err) == "" {
					t.Fatalf("%s %q: error without reason: %v", what, in, err)
				}
				if got != "" {
					t.Fatalf("%s %q: %q returned with error %v", what, in, got, err)
				}
				return
			}
			if parsed == nil {
				t.Fatalf("%s %q = %q, but the WHATWG parser refuses the input", what, in, got)
			}
			out := checkCanonical(t, n, parser, what+" "+in, got)
			if was, is := hostKind(parser, parsed), hostKind(parser, out); was != is {
				t.Fatalf("%s %q = %q: host %q was a %s, is now a %s", what, in, got, parsed.Hostname(), was, is)
			}
		}
		parsedRaw, _ := parser.Parse(raw)
		got, err := n.Normalize(raw)
		check("Normalize", raw, got, err, parsedRaw)

		base, _ := parser.Parse("http://example.com/a/b?c=d")
		parsedRef, _ := base.Parse(raw)
		got, err = n.Resolve("http://example.com/a/b?c=d", raw)
		check("Resolve ref", raw, got, err, parsedRef)

		var parsedBoth *wurl.Url
		if parsedRaw != nil {
			parsedBoth, _ = parsedRaw.Parse(ref)
		}
		got, err = n.Resolve(raw, ref)
		check("Resolve base", raw+" ref "+ref, got, err, parsedBoth)
	})
}

// hostKind names what the WHATWG parser takes a URL's host for. It parses
// the serialized host afresh: a URL resolved from a relative reference keeps
// its base's host but not the parser's IPv4/IPv6 flags.
func hostKind(parser wurl.Parser, u *wurl.Url) string {
	h, err := parser.Parse("http://" + u.Hostname() + "/")
	switch {
	case err != nil:
		return "host the parser refuses"
	case h.IsIPv4():
		return "IPv4 address"
	case h.IsIPv6():
		return "IPv6 address"
	}
	return "name"
}

// checkCanonical holds a normalized URL to the package's promises: it
// normalizes to itself (with and without the fast path, and resolved as an
// absolute link), and both the WHATWG parser and net/url (which the fetcher
// uses) parse it again into the same scheme, host and URL.
func checkCanonical(t *testing.T, n *Normalizer, parser wurl.Parser, what, got string) *wurl.Url {
	t.Helper()
	if again, err := n.normalize(got); err != nil || again != got {
		t.Fatalf("%s = %q: not idempotent: normalize gives %q, %v", what, got, again, err)
	}
	if again, err := n.Normalize(got); err != nil || again != got {
		t.Fatalf("%s = %q: not idempotent: Normalize gives %q, %v", what, got, again, err)
	}
	if again, err := n.Resolve("https://other.example/x/", got); err != nil || again != got {
		t.Fatalf("%s = %q: resolved as a link it gives %q, %v", what, got, again, err)
	}
	authority := Authority(got)
	if authority == "" {
		t.Fatalf("%s = %q: no authority", what, got)
	}

	w, err := parser.Parse(got)
	if err != nil {
		t.Fatalf("%s = %q: WHATWG parser cannot parse it again: %v", what, got, err)
	}
	if !httpScheme(w.Scheme()) {
		t.Fatalf("%s = %q: WHATWG scheme %q", what, got, w.Scheme())
	}
	if host := w.Host(); host != authority {
		t.Fatalf("%s = %q: WHATWG parser reads host %q, want %q", what, got, host, authority)
	}
	if href := w.Href(true); href != got {
		t.Fatalf("%s = %q: WHATWG parser serializes it as %q", what, got, href)
	}

	u, err := url.Parse(got)
	if err != nil {
		t.Fatalf("%s = %q: net/url cannot parse it: %v", what, got, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Fatalf("%s = %q: net/url scheme %q", what, got, u.Scheme)
	}
	if u.User != nil || u.Fragment != "" || strings.Contains(got, "#") {
		t.Fatalf("%s = %q: userinfo or fragment left", what, got)
	}
	if u.Host != authority {
		t.Fatalf("%s = %q: net/url reads host %q, want %q", what, got, u.Host, authority)
	}
	if s := u.String(); s != got {
		t.Fatalf("%s = %q: net/url serializes it as %q (what the fetcher would request)", what, got, s)
	}
	return w
}

// FuzzFastPath holds the fast path to the full normalization: whatever it
// accepts as canonical, the WHATWG-based path returns unchanged.
func FuzzFastPath(f *testing.F) {
	for _, s := range fastPathCases {
		f.Add(s.url)
	}
	for _, s := range fuzzHosts {
		f.Add(s)
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
