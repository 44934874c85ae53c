package parse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// FuzzParse holds Parse to what the parser tier relies on for any body and
// headers: no panic, no error for a good page URL, bounded outputs, absolute
// http(s) links and valid UTF-8 text.
func FuzzParse(f *testing.F) {
	for _, fx := range fixtures {
		body, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, fx.contentType, strings.Join(fx.xRobots, ","))
	}
	f.Add([]byte(`<svg><a xlink:href="//x.example/?é"><noscript><a href="/n">`), "", "otherbot: noindex, fuzzbot: nofollow")
	f.Add([]byte("\xff\xfe<\x00a\x00 \x00h\x00r\x00e\x00f\x00=\x00x\x00>\x00"), "text/html", "none")
	f.Add([]byte(`<base href="?é"><a href="&#x1F600;?&#26085;">`), "text/html; charset=windows-1252", "")
	f.Add([]byte(`<meta charset="iso-2022-jp"><a href="?`+"\x1b$BF|\x1b(B"+`">`), "text/html", "")
	f.Add([]byte(`<template><meta charset=koi8-r></template><meta http-equiv=refresh content="0;url='http://r.example/'">`), "", "")

	f.Add([]byte(`<link rel=stylesheet href=a.css><img src=b.png srcset="c.png 2x, d.png"><style>x{y:url(e.png)}</style>`), "text/html", "")

	opt := Options{MaxLinks: 20, MaxTextSize: 512, RobotsAgent: "FuzzBot", MaxRequisites: 20}
	f.Fuzz(func(t *testing.T, body []byte, contentType, xRobots string) {
		d, err := Parse(body, contentType, pageURL, strings.Split(xRobots, "\n"), opt)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		checkInvariants(t, d, opt.withDefaults())
		if !utf8.ValidString(d.Text) {
			t.Fatalf("Text is not valid UTF-8: %q", d.Text)
		}
		for _, l := range d.Links {
			checkURL(t, l.URL)
		}
		if len(d.Requisites) > opt.MaxRequisites {
			t.Fatalf("%d requisites, max %d", len(d.Requisites), opt.MaxRequisites)
		}
		for _, u := range d.Requisites {
			checkURL(t, u)
		}
		for _, u := range []string{d.Canonical, d.RefreshURL} {
			if u != "" {
				checkURL(t, u)
			}
		}

		// The same with tokens cut at a few bytes, so that inputs of any
		// size take the ways on after an overlong token.
		short := opt
		short.maxToken = 16
		d, err = Parse(body, contentType, pageURL, strings.Split(xRobots, "\n"), short)
		if err != nil {
			t.Fatalf("Parse with tokens cut at %d bytes: %v", short.maxToken, err)
		}
		checkInvariants(t, d, short.withDefaults())
		if !utf8.ValidString(d.Text) {
			t.Fatalf("Text is not valid UTF-8 with tokens cut at %d bytes: %q", short.maxToken, d.Text)
		}
		for _, l := range d.Links {
			checkURL(t, l.URL)
		}
	})
}

// checkURL requires an absolute http(s) URL that the WHATWG parser reads
// back unchanged, so the caller's normalizer sees what a browser would.
func checkURL(t *testing.T, s string) {
	t.Helper()
	u, err := whatwg.Parse(s)
	if err != nil {
		t.Fatalf("link %q does not parse: %v", s, err)
	}
	if sc := u.Scheme(); (sc != "http" && sc != "https") || u.Hostname() == "" || !isAbsHTTP(s) {
		t.Fatalf("link %q is not absolute http(s)", s)
	}
	if h := u.Href(false); h != s {
		t.Fatalf("link %q reads back as %q", s, h)
	}
	if !utf8.ValidString(s) {
		t.Fatalf("link %q is not valid UTF-8", s)
	}
}

// FuzzResolvePlainPath holds the resolver's fast path to the WHATWG parser:
// whatever it resolves, the parser resolves to the same URL.
func FuzzResolvePlainPath(f *testing.F) {
	for _, ref := range []string{"/p/12.html", "p/12.html", "12.html", "http://127.0.1.4:39983/p/5.html", "https://a.example:8443/", "a:b", "/a/./b", "/a/../b", "//host/x", "/x?y", "/x#y", "/a%20b", "/a b", "/~u/(1)!$&'*+,;=:@", "/a\\b", "/", "/.", "/..%2e",
		"../x/./y/..", "./", "..", "a/..", "/../../a//b/.", "//x/y", "//x:8080/y?q=1", "//X/y", "?b=1&c=/d?", "?", "/a?b'", "/a?%41",
		"https://a.example/x?y", "http://a.example?x", "p/12.html?x=1&y=2"} {
		f.Add("http://example.com/dir/page.html", ref)
		f.Add("https://127.0.1.4:8443/", ref)
	}
	f.Add("http://user:pw@example.com/", "/x")
	f.Add("ftp://example.com/", "/x")
	f.Add("http://127.0.1.4:39983/p/3.html", "x")
	f.Add("https://a.example:8443/", "?q")
	f.Fuzz(func(t *testing.T, baseURL, ref string) {
		base, err := whatwg.Parse(baseURL)
		if urlnorm.IsCanonical(baseURL) {
			// The page URL's parts without the parser (newPageAddr).
			if err != nil {
				t.Fatalf("canonical %q does not parse: %v", baseURL, err)
			}
			if got, want := canonicalBase(baseURL), plainBaseOf(base); got != want {
				t.Fatalf("canonicalBase(%q) = %+v, parser gives %+v", baseURL, got, want)
			}
		}
		if err != nil {
			return
		}
		got, ok := resolvePlainPath(plainBaseOf(base), ref)
		if !ok {
			return
		}
		u, err := base.Parse(ref)
		if err != nil {
			t.Fatalf("fast path resolved %q against %q to %q; the parser fails: %v", ref, baseURL, got, err)
		}
		if want := u.Href(false); got != want {
			t.Fatalf("resolve %q against %q: fast path %q, parser %q", ref, baseURL, got, want)
		}
	})
}
