package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the current output")

const pageURL = "http://example.com/dir/page.html"

// fixture is one file of testdata/ as the fetcher would hand it over.
type fixture struct {
	file        string
	contentType string
	xRobots     []string
	opt         Options
	golden      string // testdata/<golden>.golden.json; default: file without extension
	check       func(t *testing.T, d *Document)
}

var fixtures = []fixture{
	{file: "plain.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "Title", d.Title, "Plain")
		wantEq(t, "Text", d.Text, "Plain page a")
		wantLinks(t, d, "http://example.com/a")
		// Pure ASCII with no declaration: the spec's default, harmless for
		// the text; it only matters for the queries of links.
		wantEq(t, "Charset", d.Charset, "windows-1252")
	}},
	{file: "links.html", contentType: "text/html; charset=utf-8", check: func(t *testing.T, d *Document) {
		wantEq(t, "Title", d.Title, "Links & things")
		wantEq(t, "Description", d.Description, "A page full of links.")
		wantEq(t, "Language", d.Language, "en-GB")
		wantEq(t, "Canonical", d.Canonical, "http://example.com/dir/page.html?canon=1")
		wantLinks(t, d,
			"http://example.com/static/site.css",
			"http://example.com/dir/page.html?canon=1",
			"http://example.com/second-canonical",
			"http://example.com/dir/relative.html",
			"http://example.com/root",
			"http://example.com/up",
			"http://example.com/dir/page.html?q=1",
			"http://cdn.example.net/x",
			"https://other.example.org/Path",
			"http://example.com/trimmed",
			"http://example.com/entity?a=1&b=2",
			"http://example.com/dir/page.html#section",
			"http://example.com/nf",
			"http://example.com/ugc",
			"http://example.com/sponsored",
			"http://example.com/area",
			"http://example.com/frame.html",
			"http://example.com/dir/frame2.html",
			"http://example.com/dup",
			"http://example.com/noscript-link",
			"http://example.com/svg-link",
		)
		wantEq(t, "len(Rejected)", len(d.Rejected), 2) // "exa mple.com", "[::1"
		for _, hidden := range []string{"STYLE", "SCRIPT", "IFRAME", "NOSCRIPT", "TEMPLATE", "SVG", "TEXTAREA"} {
			if strings.Contains(d.Text, hidden) {
				t.Errorf("Text contains %s: %q", hidden, d.Text)
			}
		}
		if !strings.HasPrefix(d.Text, "Heading First bolder paragraph. Second paragraph rel") {
			t.Errorf("Text = %q, want inline tags joined, block tags separated", d.Text)
		}
	}},
	{file: "base.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantLinks(t, d,
			"https://cdn.example.org/assets/img/a.png",
			"https://cdn.example.org/abs",
			"https://example.com/keep",
			"https://cdn.example.org/assets/canon")
		wantEq(t, "Canonical", d.Canonical, "https://cdn.example.org/assets/canon")
	}},
	{file: "base_late.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantLinks(t, d,
			"http://base.example.org/b/feed.xml",
			"http://base.example.org/b/early",
			"http://base.example.org/b/late")
	}},
	{file: "base_javascript.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantLinks(t, d, "http://example.com/dir/x")
	}},
	{file: "broken.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "Title", d.Title, "Broken <b>page")
		// The comment hides its link; a tag cut off by the end of input is
		// dropped, as in browsers.
		wantLinks(t, d,
			"http://example.com/unquoted",
			"http://example.com/single",
			"http://example.com/three",
			"http://example.com/after-comment",
			"http://example.com/cell")
	}},
	{file: "document.pdf", contentType: "application/pdf", check: wantNotHTML},
	{file: "document.pdf", contentType: "", golden: "document_sniffed", check: wantNotHTML},
	{file: "notes.txt", contentType: "text/plain; charset=utf-8", xRobots: []string{"noindex"}, check: func(t *testing.T, d *Document) {
		wantNotHTML(t, d)
		wantEq(t, "NoIndex", d.NoIndex, true)
	}},
	{file: "notes.txt", contentType: "", golden: "notes_sniffed", check: func(t *testing.T, d *Document) {
		wantEq(t, "HTML", d.HTML, true)
		wantLinks(t, d, "http://example.com/not-parsed")
	}},
	{file: "lang_meta.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "Language", d.Language, "nb")
	}},
	{file: "latin1_header_vs_meta.html", contentType: "text/html; charset=ISO-8859-1", check: func(t *testing.T, d *Document) {
		// The header beats <meta charset="utf-8">.
		wantEq(t, "Charset", d.Charset, "windows-1252")
		wantEq(t, "Title", d.Title, "Café crème")
		wantEq(t, "Text", d.Text, "¿Qué?")
	}},
	{file: "meta_late.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		// The <meta> lies beyond the 1024-byte prescan: a second pass.
		wantEq(t, "Charset", d.Charset, "koi8-r")
		wantEq(t, "Title", d.Title, "Привет, мир")
		wantEq(t, "Text", d.Text, "Текст")
	}},
	{file: "refresh.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "RefreshURL", d.RefreshURL, "http://example.com/moved/here?x=1")
	}},
	{file: "refresh_self.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		// The first refresh reloads the page itself; the second is ignored.
		wantEq(t, "RefreshURL", d.RefreshURL, "")
	}},
	{file: "robots_agent.html", contentType: "text/html", opt: Options{RobotsAgent: " MyBot "}, check: func(t *testing.T, d *Document) {
		wantRobots(t, d, true, false, true)
	}},
	{file: "robots_agent.html", contentType: "text/html", golden: "robots_agent_other", opt: Options{RobotsAgent: "somebot"}, check: func(t *testing.T, d *Document) {
		wantRobots(t, d, false, false, false)
	}},
	{file: "robots_noindex_nofollow.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantRobots(t, d, true, true, false)
		// Links are still reported; following them is the caller's call.
		wantLinks(t, d, "http://example.com/still-listed")
	}},
	{file: "robots_none.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantRobots(t, d, true, true, false)
	}},
	{file: "robots_spaces.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantRobots(t, d, false, false, true)
	}},
	{file: "shift_jis.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "Charset", d.Charset, "shift_jis")
		wantEq(t, "Title", d.Title, "日本語のページ")
		wantEq(t, "Text", d.Text, "こんにちは世界 s")
		// Path in UTF-8, query in the page's encoding, as browsers do.
		wantLinks(t, d, "http://example.com/%E6%A4%9C%E7%B4%A2?q=%93%8C%8B%9E")
	}},
	{file: "shift_jis_header.html", contentType: "text/html; charset=Shift_JIS", check: func(t *testing.T, d *Document) {
		wantEq(t, "Charset", d.Charset, "shift_jis")
		wantEq(t, "Title", d.Title, "日本語のページ")
	}},
	{file: "shift_jis_header.html", contentType: "text/html", golden: "shift_jis_undeclared", check: func(t *testing.T, d *Document) {
		// Without the header nothing says Shift_JIS: windows-1252, as in a
		// browser without a detector. Garbled but valid UTF-8.
		wantEq(t, "Charset", d.Charset, "windows-1252")
		if !utf8.ValidString(d.Title) || d.Title == "日本語のページ" {
			t.Errorf("Title = %q", d.Title)
		}
	}},
	{file: "utf8_bom.html", contentType: "text/html; charset=windows-1252", check: func(t *testing.T, d *Document) {
		// The BOM beats both the header and the <meta>.
		wantEq(t, "Charset", d.Charset, "utf-8")
		wantEq(t, "Title", d.Title, "Café ☃")
		wantEq(t, "Text", d.Text, "BOM æøå")
	}},
	{file: "utf8_nodecl.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "Charset", d.Charset, "utf-8")
		wantEq(t, "Title", d.Title, "Blåbær")
		wantEq(t, "Text", d.Text, "Smørbrød")
	}},
	{file: "windows1252_nodecl.html", contentType: "text/html", check: func(t *testing.T, d *Document) {
		wantEq(t, "Charset", d.Charset, "windows-1252")
		wantEq(t, "Title", d.Title, "“Quoted” café")
		wantEq(t, "Text", d.Text, "Price €5 – naïve q")
		wantLinks(t, d, "http://example.com/s?q=caf%E9")
	}},
	{file: "xhtml.xhtml", contentType: "application/xhtml+xml", check: func(t *testing.T, d *Document) {
		wantEq(t, "Charset", d.Charset, "utf-8")
		wantEq(t, "Title", d.Title, "Grüße")
		wantEq(t, "Language", d.Language, "de") // xml:lang
		wantLinks(t, d, "http://example.com/dir/next.xhtml")
	}},
	{file: "xhtml_decl.xhtml", contentType: "application/xhtml+xml", check: func(t *testing.T, d *Document) {
		wantEq(t, "Charset", d.Charset, "windows-1252") // ISO-8859-1 is a label of windows-1252
		wantEq(t, "Title", d.Title, "Grüße")
	}},
}

func TestParseFixtures(t *testing.T) {
	used := map[string]bool{}
	for _, f := range fixtures {
		used[f.file] = true
		golden := f.golden
		if golden == "" {
			golden = strings.TrimSuffix(f.file, filepath.Ext(f.file))
		}
		t.Run(golden, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", f.file))
			if err != nil {
				t.Fatal(err)
			}
			d, err := Parse(body, f.contentType, pageURL, f.xRobots, f.opt)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			f.check(t, d)
			checkInvariants(t, d, f.opt.withDefaults())
			compareGolden(t, filepath.Join("testdata", golden+".golden.json"), d)
		})
	}

	// Every input in testdata/ is covered by a case.
	inputs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		name := filepath.Base(in)
		if st, err := os.Stat(in); err != nil || st.IsDir() || strings.HasSuffix(name, ".golden.json") {
			continue
		}
		if !used[name] {
			t.Errorf("testdata/%s has no case in fixtures", name)
		}
	}
}

func compareGolden(t *testing.T, path string, d *Document) {
	t.Helper()
	got, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Document differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// checkInvariants holds every Document to its documented bounds.
func checkInvariants(t *testing.T, d *Document, opt Options) {
	t.Helper()
	if len(d.Links) > opt.MaxLinks {
		t.Errorf("%d links, MaxLinks %d", len(d.Links), opt.MaxLinks)
	}
	for name, s := range map[string]string{"Text": d.Text, "Title": d.Title, "Description": d.Description, "Language": d.Language, "Headings": d.Headings} {
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8: %q", name, s)
		}
		if s != strings.TrimSpace(s) || strings.Contains(s, "  ") {
			t.Errorf("%s is not collapsed: %q", name, s)
		}
	}
	if len(d.Headings) > maxHeadingsBytes {
		t.Errorf("headings of %d bytes, over the %d-byte cap", len(d.Headings), maxHeadingsBytes)
	}
	if len(d.Text) > opt.MaxTextSize || len(d.Title) > maxTitleBytes || len(d.Description) > maxDescriptionBytes || len(d.Language) > maxLanguageBytes {
		t.Errorf("output over its cap: text %d, title %d, description %d, language %d",
			len(d.Text), len(d.Title), len(d.Description), len(d.Language))
	}
	for _, l := range d.Links {
		if !isAbsHTTP(l.URL) {
			t.Errorf("link %q is not absolute http(s)", l.URL)
		}
		if !slices.Contains([]string{"a", "area", "link", "iframe", "frame"}, l.Tag) {
			t.Errorf("link %q has tag %q", l.URL, l.Tag)
		}
		if len(l.Rel) > maxRelBytes || !utf8.ValidString(l.Rel) {
			t.Errorf("link %q has rel %q", l.URL, l.Rel)
		}
	}
	for name, u := range map[string]string{"Canonical": d.Canonical, "RefreshURL": d.RefreshURL} {
		if u != "" && !isAbsHTTP(u) {
			t.Errorf("%s %q is not absolute http(s)", name, u)
		}
	}
	if len(d.Rejected) > opt.MaxLinks {
		t.Errorf("%d rejected references, MaxLinks %d", len(d.Rejected), opt.MaxLinks)
	}
	for _, r := range d.Rejected {
		if r.Reason != "url_too_long" && r.Reason != "invalid_url" || r.Ref == "" || r.Ref != trimASCIISpace(r.Ref) {
			t.Errorf("rejected %+v", r)
		}
		if r.Reason == "url_too_long" != (len(r.Ref) > maxRefBytes) {
			t.Errorf("rejected %d bytes as %s", len(r.Ref), r.Reason)
		}
	}
	if !d.HTML && (len(d.Links) > 0 || len(d.Rejected) > 0 || d.Text != "" || d.Title != "" || d.Charset != "") {
		t.Errorf("non-HTML document has HTML output: %+v", d)
	}
}

func isAbsHTTP(u string) bool {
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(u, "https://")
	}
	return ok && rest != "" && rest[0] != '/'
}

func wantEq[T comparable](t *testing.T, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %#v, want %#v", field, got, want)
	}
}

func wantLinks(t *testing.T, d *Document, want ...string) {
	t.Helper()
	got := linkURLs(d)
	if !slices.Equal(got, want) {
		t.Errorf("links:\n got  %q\n want %q", got, want)
	}
}

func linkURLs(d *Document) []string {
	urls := make([]string, 0, len(d.Links))
	for _, l := range d.Links {
		urls = append(urls, l.URL)
	}
	return urls
}

func wantRobots(t *testing.T, d *Document, noIndex, noFollow, noArchive bool) {
	t.Helper()
	if d.NoIndex != noIndex || d.NoFollow != noFollow || d.NoArchive != noArchive {
		t.Errorf("noindex, nofollow, noarchive = %v, %v, %v; want %v, %v, %v",
			d.NoIndex, d.NoFollow, d.NoArchive, noIndex, noFollow, noArchive)
	}
}

func wantNotHTML(t *testing.T, d *Document) {
	t.Helper()
	wantEq(t, "HTML", d.HTML, false)
	if len(d.Links) != 0 || d.Text != "" {
		t.Errorf("non-HTML body parsed: %d links, text %q", len(d.Links), d.Text)
	}
}

// parseString parses an inline page with a UTF-8 Content-Type.
func parseString(t *testing.T, page string, opt Options) *Document {
	t.Helper()
	d, err := Parse([]byte(page), "text/html; charset=utf-8", pageURL, nil, opt)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	checkInvariants(t, d, opt.withDefaults())
	return d
}

func TestParseLinks(t *testing.T) {
	tests := []struct {
		name        string
		page        string
		want        []Link
		invalid     int
		canonical   string
		refresh     string
		docNoFollow bool
	}{
		{
			name: "each link element",
			page: `<a href="/a">a</a><map><area href="/area"></map><link rel="icon" href="/favicon.ico">
				<iframe src="/iframe"></iframe><frameset><frame src="/frame"></frameset>`,
			want: []Link{
				{URL: "http://example.com/a", Tag: "a"},
				{URL: "http://example.com/area", Tag: "area"},
				{URL: "http://example.com/favicon.ico", Tag: "link", Rel: "icon"},
				{URL: "http://example.com/iframe", Tag: "iframe"},
				{URL: "http://example.com/frame", Tag: "frame"},
			},
		},
		{
			name: "attribute without a URL is no link",
			page: `<a name="x">x</a><iframe srcdoc="<a href=/in-srcdoc>"></iframe><frame><area alt="x"><link rel="stylesheet">
				<a src="/a-src">wrong attribute</a><iframe href="/iframe-href"></iframe>`,
		},
		{
			name: "relative, absolute and protocol-relative",
			page: `<a href="sibling">1</a><a href="./dot/../x">2</a><a href="../../../../above-root">3</a>
				<a href="//other.example.net">4</a><a href="https://secure.example.org:8443/p?q#f">5</a>
				<a href="?only=query">6</a><a href="HTTP://EXAMPLE.COM:80/Case">7</a><a href="http:no-slashes">8</a>`,
			want: []Link{
				{URL: "http://example.com/dir/sibling", Tag: "a"},
				{URL: "http://example.com/dir/x", Tag: "a"},
				{URL: "http://example.com/above-root", Tag: "a"},
				{URL: "http://other.example.net/", Tag: "a"},
				{URL: "https://secure.example.org:8443/p?q#f", Tag: "a"},
				{URL: "http://example.com/dir/page.html?only=query", Tag: "a"},
				{URL: "http://example.com/Case", Tag: "a"},
				{URL: "http://example.com/dir/no-slashes", Tag: "a"}, // same scheme: relative, per WHATWG
			},
		},
		{
			name: "whitespace, tabs and newlines in references",
			page: "<a href=\"\n\t /a\tb\nc \">x</a><a href=\"java\nscript:alert(1)\">js</a>",
			want: []Link{{URL: "http://example.com/abc", Tag: "a"}},
		},
		{
			name: "other schemes are skipped, not invalid",
			page: `<a href="javascript:void(0)">1</a><a href=" JAVASCRIPT:x">2</a><a href="mailto:a@example.com">3</a>
				<a href="tel:+1">4</a><a href="data:text/html,x">5</a><a href="ftp://example.com/f">6</a>
				<a href="about:blank">7</a><a href="ws://example.com/">8</a><a href="">9</a><a href="#">10</a>
				<iframe src="about:srcdoc"></iframe>`,
		},
		{
			name: "references that are no URL are counted",
			page: `<a href="http://exa mple.com/">1</a><a href="https://[::1">2</a><a href="http://a:99999/">3</a>
				<a href="http://">4</a><a href="https://ok.example/">ok</a>`,
			want:    []Link{{URL: "https://ok.example/", Tag: "a"}},
			invalid: 4,
		},
		{
			name: "rel nofollow marks the link only",
			page: `<a href="/nf" rel="external NOFOLLOW">1</a><a href="/ugc" rel="ugc">2</a>
				<a href="/sp" rel=" sponsored ">3</a><a href="/nfx" rel="nofollowx">4</a><link rel="nofollow" href="/l">`,
			want: []Link{
				{URL: "http://example.com/nf", Tag: "a", Rel: "external nofollow", NoFollow: true},
				{URL: "http://example.com/ugc", Tag: "a", Rel: "ugc"},
				{URL: "http://example.com/sp", Tag: "a", Rel: "sponsored"},
				{URL: "http://example.com/nfx", Tag: "a", Rel: "nofollowx"},
				{URL: "http://example.com/l", Tag: "link", Rel: "nofollow", NoFollow: true},
			},
		},
		{
			name:        "meta nofollow marks the document, not the links",
			page:        `<meta name="robots" content="nofollow"><a href="/x">x</a>`,
			want:        []Link{{URL: "http://example.com/x", Tag: "a"}},
			docNoFollow: true,
		},
		{
			name: "first duplicate attribute wins",
			page: `<a href="/first" href="/second" rel="a" rel="nofollow">x</a>`,
			want: []Link{{URL: "http://example.com/first", Tag: "a", Rel: "a"}},
		},
		{
			name: "relative base",
			page: `<base href="/other/"><a href="x">x</a>`,
			want: []Link{{URL: "http://example.com/other/x", Tag: "a"}},
		},
		{
			name: "base without href does not count",
			page: `<base target="_top"><base href="http://b.example/"><a href="x">x</a>`,
			want: []Link{{URL: "http://b.example/x", Tag: "a"}},
		},
		{
			name: "invalid base falls back to the page URL",
			page: `<base href="http://[bad/"><a href="x">x</a>`,
			want: []Link{{URL: "http://example.com/dir/x", Tag: "a"}},
		},
		{
			name:      "late base applies to earlier links, canonical and refresh",
			page:      `<link rel=canonical href=c><meta http-equiv=refresh content="0;url=r"><a href="a">a</a><a href="http://abs.example/">abs</a><base href="https://late.example/b/">`,
			canonical: "https://late.example/b/c",
			refresh:   "https://late.example/b/r",
			want: []Link{
				{URL: "https://late.example/b/c", Tag: "link", Rel: "canonical"},
				{URL: "https://late.example/b/a", Tag: "a"},
				{URL: "http://abs.example/", Tag: "a"},
			},
		},
		{
			name: "late base to another scheme drops earlier relative links",
			page: `<a href="a">a</a><a href="http://abs.example/">abs</a><base href="ftp://files.example/">`,
			want: []Link{{URL: "http://abs.example/", Tag: "a"}},
		},
		{
			name: "base in template is inert",
			page: `<template><base href="http://t.example/"></template><a href="x">x</a>`,
			want: []Link{{URL: "http://example.com/dir/x", Tag: "a"}},
		},
		{
			name: "template content is ignored, also nested and after it",
			page: `<template><a href="/t1"></a><template><a href="/t2"></a></template><a href="/t3"></a></template><a href="/after">x</a>`,
			want: []Link{{URL: "http://example.com/after", Tag: "a"}},
		},
		{
			name: "noscript links count",
			page: `<noscript><a href="/ns">x</a><img src="/pixel.gif"><iframe src="/ns-frame"></iframe></noscript>`,
			want: []Link{{URL: "http://example.com/ns", Tag: "a"}, {URL: "http://example.com/ns-frame", Tag: "iframe"}},
		},
		{
			name: "script, style and textarea content is not markup",
			page: `<script>var a = '<a href="/s">';</script><style>/* <a href="/c"> */</style><textarea><a href="/t"></textarea><title><a href="/title"></title>`,
		},
		{
			name: "svg links, xlink:href only inside svg",
			page: `<svg><a xlink:href="/x"><text>x</text></a><a href="/h" xlink:href="/ignored"></a></svg><a xlink:href="/outside">o</a>`,
			want: []Link{{URL: "http://example.com/x", Tag: "a"}, {URL: "http://example.com/h", Tag: "a"}},
		},
		{
			name:      "first canonical wins, rel is a token list",
			page:      `<link rel="alternate canonical" href="/c1"><link rel="canonical" href="/c2"><a rel="canonical" href="/not-link">`,
			canonical: "http://example.com/c1",
			want: []Link{
				{URL: "http://example.com/c1", Tag: "link", Rel: "alternate canonical"},
				{URL: "http://example.com/c2", Tag: "link", Rel: "canonical"},
				{URL: "http://example.com/not-link", Tag: "a", Rel: "canonical"},
			},
		},
		{
			name: "canonical to another scheme is dropped",
			page: `<link rel="canonical" href="javascript:x">`,
		},
		{
			name: "IDN hosts and non-ASCII paths in UTF-8",
			page: `<a href="http://bücher.example/straße?q=ü#ö">x</a>`,
			want: []Link{{URL: "http://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC#%C3%B6", Tag: "a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseString(t, tt.page, Options{})
			if !slices.Equal(d.Links, tt.want) {
				t.Errorf("links:\n got  %+v\n want %+v", d.Links, tt.want)
			}
			wantEq(t, "len(Rejected)", len(d.Rejected), tt.invalid)
			wantEq(t, "Canonical", d.Canonical, tt.canonical)
			wantEq(t, "RefreshURL", d.RefreshURL, tt.refresh)
			wantEq(t, "NoFollow", d.NoFollow, tt.docNoFollow)
		})
	}
}

func TestParseHeadings(t *testing.T) {
	tests := []struct{ name, page, want string }{
		{"h1 to h3 in order", "<h1>Top</h1><p>body</p><h2>Second <b>bold</b></h2><h3>Third</h3>", "Top Second bold Third"},
		{"lower levels are body only", "<h4>four</h4><h5>five</h5><h6>six</h6>", ""},
		{"nested and unclosed", "<h1>a<h2>b</h2>c</h1>d<h3>e", "a b c e"},
		{"template headings are not the page's", "<template><h1>t</h1></template>body", ""},
		{"stray end tags", "</h1></h2>text<h1>x</h1>", "x"},
		{"capped", "<h1>" + strings.Repeat("word ", 1000) + "</h1>", strings.Repeat("word ", 1000)[:maxHeadingsBytes]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.page), "text/html", "http://example.org/", nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Headings != tt.want {
				t.Errorf("Headings = %q, want %q", d.Headings, tt.want)
			}
			checkInvariants(t, d, Options{}.withDefaults())
		})
	}
}

func TestParseMetadata(t *testing.T) {
	tests := []struct {
		name                     string
		page                     string
		title, desc, lang, text  string
		noIndex, noFol, noArchiv bool
		agent                    string
	}{
		{
			name:  "title whitespace and entities",
			page:  "<title>\n  A &amp; B\t&lt;C&gt;&nbsp; </title>",
			title: "A & B <C>",
		},
		{
			name:  "first title wins and is not text",
			page:  "<title>One</title><body><title>Two</title>body",
			title: "One", text: "body",
		},
		{
			name:  "svg title is ignored before the page title",
			page:  `<body><svg><title>icon</title><desc>d</desc></svg><title>Page</title>text`,
			title: "Page", text: "text",
		},
		{
			name:  "svg title is ignored after the page title",
			page:  `<head><title>Page</title></head><body><svg viewBox="0 0 1 1"><title>icon</title></svg>text</body>`,
			title: "Page", text: "text",
		},
		{
			name:  "mathml is no text",
			page:  `<p>x</p><math><mi>y</mi></math><p>z</p>`,
			text:  "x z",
			title: "",
		},
		{
			name: "self-closing svg ends at once",
			page: `<svg/><p>visible</p>`,
			text: "visible",
		},
		{
			name:  "html element breaks out of an unclosed svg",
			page:  `<body><svg><path d="M0 0"><p>para <script>var s = "<a href='/fake'>";</script></p><title>T</title>tail`,
			title: "T", text: "para tail",
		},
		{
			name: "font breaks out only with color, face or size",
			page: `<svg><font>in</font><font color="red">out</font>`,
			text: "out",
		},
		{
			name: "description: first, collapsed, name case-insensitive",
			page: `<meta name="DESCRIPTION" content=" first
				 line "><meta name="description" content="second">`,
			desc: "first line",
		},
		{
			name: "html lang beats meta content-language",
			page: `<html lang=" pt-BR "><meta http-equiv="content-language" content="en">`,
			lang: "pt-BR",
		},
		{
			name: "meta content-language when html has none",
			page: `<html><meta http-equiv="Content-Language" content="fr-CA, en">`,
			lang: "fr-CA",
		},
		{
			name: "text: inline tags join words, block tags separate them",
			page: `<div>a<b>b</b>c</div><div>d</div><span>e</span><em>f</em><br>g<p>h&nbsp;i</p><td>j</td>`,
			text: "abc d ef g h i j",
		},
		{
			name: "text: noscript, iframe, noembed, noframes hidden; xmp and plaintext shown",
			page: `<noscript>ns</noscript><iframe>if</iframe><noembed>ne</noembed><noframes>nf</noframes><xmp><b>x</b></xmp><plaintext><i>p`,
			text: "<b>x</b> <i>p",
		},
		{
			name:    "meta robots list forms",
			page:    `<meta name="robots" content="NOINDEX,nofollow"><meta name="robots" content="index follow">`,
			noIndex: true, noFol: true,
		},
		{
			name:     "nocache is noarchive",
			page:     `<meta name="robots" content="nocache">`,
			noArchiv: true,
		},
		{
			name:    "meta for our agent",
			page:    `<meta name="crawlbot" content="noindex"><meta name="googlebot" content="nofollow">`,
			agent:   "CrawlBot",
			noIndex: true,
		},
		{
			name: "meta for an agent when we have none",
			page: `<meta name="crawlbot" content="noindex">`,
		},
		{
			name: "meta robots inside template is inert",
			page: `<template><meta name="robots" content="noindex"></template>`,
		},
		{
			name: "unknown directives are ignored",
			page: `<meta name="robots" content="max-snippet:0, noimageindex, notranslate">`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseString(t, tt.page, Options{RobotsAgent: tt.agent})
			wantEq(t, "Title", d.Title, tt.title)
			wantEq(t, "Description", d.Description, tt.desc)
			wantEq(t, "Language", d.Language, tt.lang)
			if tt.text != "" || tt.title != "" || tt.desc != "" || tt.lang != "" {
				wantEq(t, "Text", d.Text, tt.text)
			}
			wantRobots(t, d, tt.noIndex, tt.noFol, tt.noArchiv)
			if strings.Contains(d.Text, "fake") || len(d.Links) > 0 {
				t.Errorf("links %v, text %q", d.Links, d.Text)
			}
		})
	}
}

func TestParseXRobotsTag(t *testing.T) {
	tests := []struct {
		name                        string
		header                      []string
		agent                       string
		noIndex, noFollow, noArchiv bool
	}{
		{name: "none"},
		{name: "plain", header: []string{"noindex"}, noIndex: true},
		{name: "list", header: []string{"noindex, nofollow, noarchive"}, noIndex: true, noFollow: true, noArchiv: true},
		{name: "case and spaces", header: []string{"  NoIndex ,  NOFOLLOW  "}, noIndex: true, noFollow: true},
		{name: "none is noindex nofollow", header: []string{"none"}, noIndex: true, noFollow: true},
		{name: "all is nothing", header: []string{"all"}},
		{name: "several headers", header: []string{"noindex", "noarchive"}, noIndex: true, noArchiv: true},
		{name: "other agent does not apply", header: []string{"otherbot: noindex"}, agent: "crawlbot"},
		{name: "other agent and no agent of ours", header: []string{"otherbot: noindex"}},
		{name: "our agent applies", header: []string{"CrawlBot: noindex, nofollow"}, agent: "crawlbot", noIndex: true, noFollow: true},
		{name: "agent match is case-insensitive", header: []string{"crawlbot: noarchive"}, agent: "CRAWLBOT", noArchiv: true},
		{name: "items before an agent apply to all", header: []string{"noarchive, otherbot: noindex"}, agent: "crawlbot", noArchiv: true},
		{name: "agent scope runs to the next agent", header: []string{"otherbot: noindex, crawlbot: nofollow"}, agent: "crawlbot", noFollow: true},
		{name: "agent scope ends with the header", header: []string{"otherbot: noindex", "nofollow"}, agent: "crawlbot", noFollow: true},
		{name: "unavailable_after is no agent", header: []string{"unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"}, agent: "crawlbot", noIndex: true},
		{name: "max-snippet is no agent", header: []string{"max-snippet: 20, noarchive"}, noArchiv: true},
		{name: "agent-like word that is not a product token", header: []string{"bad bot: noindex"}, noIndex: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ct := range []string{"text/html", "image/png"} {
				d, err := Parse([]byte("<p>x</p>"), ct, pageURL, tt.header, Options{RobotsAgent: tt.agent})
				if err != nil {
					t.Fatal(err)
				}
				if d.NoIndex != tt.noIndex || d.NoFollow != tt.noFollow || d.NoArchive != tt.noArchiv {
					t.Errorf("%s: noindex, nofollow, noarchive = %v, %v, %v; want %v, %v, %v", ct,
						d.NoIndex, d.NoFollow, d.NoArchive, tt.noIndex, tt.noFollow, tt.noArchiv)
				}
			}
		})
	}

	t.Run("header and meta add up", func(t *testing.T) {
		d, err := Parse([]byte(`<meta name=robots content=noarchive>`), "text/html", pageURL, []string{"noindex"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		wantRobots(t, d, true, false, true)
	})
}

func TestParseCharsets(t *testing.T) {
	asciiHead := "<html><head><title>t</title><!--" + strings.Repeat("padding ", 140) + "--></head>"
	tests := []struct {
		name        string
		body        []byte
		contentType string
		charset     string
		text        string
		links       []string
	}{
		{
			name:        "shift_jis from meta, query in shift_jis",
			body:        sjis(t, `<meta charset="shift_jis"><p>東京</p><a href="/東京?q=東京&r=&#8364;">x</a>`),
			contentType: "text/html",
			charset:     "shift_jis",
			text:        "東京 x",
			// € is not in Shift_JIS: an HTML numeric reference, as browsers send.
			links: []string{"http://example.com/%E6%9D%B1%E4%BA%AC?q=%93%8C%8B%9E&r=%26%238364%3B"},
		},
		{
			name:        "windows-1252 without declaration",
			body:        []byte("<p>na\xefve \x93q\x94</p><a href=\"/caf\xe9?q=caf\xe9#caf\xe9\">x</a>"),
			contentType: "text/html",
			charset:     "windows-1252",
			text:        "naïve “q” x",
			// Only the query takes the page's encoding; path and fragment are UTF-8.
			links: []string{"http://example.com/caf%C3%A9?q=caf%E9#caf%C3%A9"},
		},
		{
			name:        "windows-1252 page, character outside it",
			body:        []byte(`<a href="/?q=&#26085;&#x1F600;">x</a><a href="http://b&#252;cher.example/">idn</a>`),
			contentType: "text/html",
			charset:     "windows-1252",
			text:        "xidn", // <a> is inline
			links:       []string{"http://example.com/?q=%26%2326085%3B%26%23128512%3B", "http://xn--bcher-kva.example/"},
		},
		{
			name:        "utf-8 after an ascii head longer than the prescan",
			body:        []byte(asciiHead + "<body>Smørbrød</body>"),
			contentType: "text/html",
			charset:     "utf-8",
			text:        "Smørbrød",
		},
		{
			name:        "utf-8 body truncated inside a rune",
			body:        []byte(asciiHead + "<body>Smørbrød \xc3"),
			contentType: "text/html",
			charset:     "utf-8",
			text:        "Smørbrød \uFFFD",
		},
		{
			name:        "late meta declaring windows-1252 beats valid utf-8",
			body:        []byte(asciiHead + `<meta charset="iso-8859-1"><body>é</body>`),
			contentType: "text/html",
			charset:     "windows-1252",
			text:        "Ã©",
		},
		{
			name:        "header beats meta",
			body:        []byte(`<meta charset="shift_jis"><p>caf` + "\xe9</p>"),
			contentType: "text/html; charset=latin1",
			charset:     "windows-1252",
			text:        "café",
		},
		{
			name:        "quoted header charset, junk parameters",
			body:        []byte("<p>\xe6</p>"),
			contentType: `text/html;;foo; charset="ISO-8859-15" ;x`,
			charset:     "iso-8859-15",
			text:        "æ",
		},
		{
			name:        "unknown header charset falls back to sniffing",
			body:        []byte(`<meta charset="koi8-r"><p>` + "\xf4\xc5\xcb\xd3\xd4</p>"),
			contentType: "text/html; charset=x-no-such",
			charset:     "koi8-r",
			text:        "Текст",
		},
		{
			name:        "meta http-equiv content-type",
			body:        []byte(`<meta http-equiv="Content-Type" content="text/html; charset='koi8-r'"><p>` + "\xf4\xc5\xcb\xd3\xd4</p>"),
			contentType: "text/html",
			charset:     "koi8-r",
			text:        "Текст",
		},
		{
			name:        "meta utf-16 in an ascii document means utf-8",
			body:        []byte(`<meta charset="utf-16"><p>ascii</p>`),
			contentType: "text/html",
			charset:     "utf-8",
			text:        "ascii",
		},
		{
			name:        "late meta x-user-defined means windows-1252",
			body:        []byte(asciiHead + `<meta charset="x-user-defined"><p>` + "\xe9</p>"),
			contentType: "text/html",
			charset:     "windows-1252",
			text:        "é",
		},
		{
			name:        "utf-8 bom beats header",
			body:        []byte("\xef\xbb\xbf<p>\xc3\xa9</p>"),
			contentType: "text/html; charset=koi8-r",
			charset:     "utf-8",
			text:        "é",
		},
		{
			name:        "utf-16le bom",
			body:        utf16le("\ufeff<title>Überschrift</title><a href=\"/ä?q=ä\">x</a>"),
			contentType: "text/html",
			charset:     "utf-16le",
			text:        "x",
			links:       []string{"http://example.com/%C3%A4?q=%C3%A4"},
		},
		{
			name:        "utf-16be bom, odd length",
			body:        append(utf16be("\ufeff<p>ok</p>"), 'x'),
			contentType: "text/html",
			charset:     "utf-16be",
			text:        "ok \uFFFD",
		},
		{
			name:        "invalid utf-8 declared as utf-8",
			body:        []byte("<title>a\xffb</title><p>c\xc3(d</p>"),
			contentType: "text/html; charset=utf-8",
			charset:     "utf-8",
			text:        "c\uFFFD(d",
		},
		{
			name:        "replacement encoding",
			body:        []byte("<p>anything</p>"),
			contentType: "text/html; charset=iso-2022-kr",
			charset:     "replacement",
			text:        "\uFFFD",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(tt.body, tt.contentType, pageURL, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, d, Options{}.withDefaults())
			wantEq(t, "Charset", d.Charset, tt.charset)
			wantEq(t, "Text", d.Text, tt.text)
			if got := linkURLs(d); tt.links != nil && !slices.Equal(got, tt.links) {
				t.Errorf("links:\n got  %q\n want %q", got, tt.links)
			}
		})
	}
}

func sjis(t *testing.T, s string) []byte {
	t.Helper()
	e := queryEncoding(encodingChoice{name: "shift_jis"})
	out, err := e.NewEncoder().String(s)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(out)
}

func utf16le(s string) []byte {
	var b []byte
	for _, r := range s { // the tests use the BMP only
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

func utf16be(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r>>8), byte(r))
	}
	return b
}

func TestParseBounds(t *testing.T) {
	t.Run("MaxLinks", func(t *testing.T) {
		var page strings.Builder
		for i := range 10 {
			page.WriteString(`<a href="/l` + string(rune('0'+i)) + `">x</a><a href="javascript:x">js</a><a href="http://[">bad</a>`)
		}
		d := parseString(t, page.String(), Options{MaxLinks: 3})
		wantLinks(t, d, "http://example.com/l0", "http://example.com/l1", "http://example.com/l2")
		// Past the limit references are counted, not resolved: the invalid
		// ones there count as dropped. javascript: is never counted.
		wantEq(t, "LinksDropped", d.LinksDropped, 7+8)
		wantEq(t, "len(Rejected)", len(d.Rejected), 2)
	})
	t.Run("MaxLinks with a late base", func(t *testing.T) {
		d := parseString(t, `<a href=a></a><a href=b></a><a href=c></a><base href="http://b.example/">`, Options{MaxLinks: 2})
		wantLinks(t, d, "http://b.example/a", "http://b.example/b")
		wantEq(t, "LinksDropped", d.LinksDropped, 1)
	})
	t.Run("default MaxLinks", func(t *testing.T) {
		page := strings.Repeat(`<a href="/x">x</a>`, DefaultMaxLinks+5)
		d := parseString(t, page, Options{MaxLinks: -1})
		wantEq(t, "len(Links)", len(d.Links), DefaultMaxLinks)
		wantEq(t, "LinksDropped", d.LinksDropped, 5)
	})
	t.Run("text truncated at a rune boundary", func(t *testing.T) {
		d := parseString(t, "<p>ab</p><p>ééé</p>", Options{MaxTextSize: 7})
		wantEq(t, "Text", d.Text, "ab éé") // a third é would make 8 bytes
		d = parseString(t, "<p>ab</p><p>cd</p>", Options{MaxTextSize: 3})
		wantEq(t, "Text", d.Text, "ab") // no trailing separator
	})
	t.Run("default text size", func(t *testing.T) {
		d := parseString(t, "<p>"+strings.Repeat("word ", DefaultMaxTextSize)+"</p>", Options{})
		if len(d.Text) > DefaultMaxTextSize || len(d.Text) < DefaultMaxTextSize-5 {
			t.Errorf("len(Text) = %d, want about %d", len(d.Text), DefaultMaxTextSize)
		}
	})
	t.Run("title, description, language and rel caps", func(t *testing.T) {
		long := strings.Repeat("ø", 2000)
		d := parseString(t, `<html lang="`+long+`"><title>`+long+`</title><meta name=description content="`+long+`"><a rel="`+long+`" href="/x">`, Options{})
		wantEq(t, "len(Title)", len(d.Title), maxTitleBytes)
		wantEq(t, "len(Description)", len(d.Description), maxDescriptionBytes)
		wantEq(t, "len(Language)", len(d.Language), maxLanguageBytes)
		wantEq(t, "len(Rel)", len(d.Links[0].Rel), maxRelBytes)
	})
}

func TestIsHTML(t *testing.T) {
	html := []byte("<!DOCTYPE html><html><body>x</body></html>")
	pdf := []byte("%PDF-1.4\n<html>")
	png := []byte("\x89PNG\r\n\x1a\n<html>")
	tests := []struct {
		contentType string
		body        []byte
		want        bool
	}{
		{"text/html", nil, true},
		{"text/html; charset=utf-8", pdf, true}, // a declared type is trusted
		{"TEXT/HTML ; charset=\"bad", nil, true},
		{"  text/html", nil, true},
		{"application/xhtml+xml", nil, true},
		{"text/plain", html, false},
		{"application/xml", html, false},
		{"application/octet-stream", html, false},
		{"image/png", png, false},
		{"text/htmlx", html, false},
		{"", html, true},
		{"", []byte("  \n<HTML>"), true},
		{"", []byte("<!-- c --><p>x"), true},
		{"", pdf, false},
		{"", png, false},
		{"", []byte("just text"), false},
		{"", nil, false},
		{"unknown/unknown", html, true},
		{"application/unknown", html, true},
		{"*/*", html, true},
		{"*/*", pdf, false},
	}
	for _, tt := range tests {
		if got := IsHTML(tt.contentType, tt.body); got != tt.want {
			t.Errorf("IsHTML(%q, %q) = %v, want %v", tt.contentType, tt.body, got, tt.want)
		}
	}
}

func TestParseBadPageURL(t *testing.T) {
	for _, u := range []string{"", "/relative", "example.com/x", "ftp://example.com/", "mailto:a@example.com", "http://", "http://exa mple.com/", "javascript:alert(1)"} {
		d, err := Parse([]byte("<a href=x>"), "text/html", u, nil, Options{})
		if !errors.Is(err, ErrBadPageURL) || d != nil {
			t.Errorf("Parse(page %q) = %v, %v; want ErrBadPageURL", u, d, err)
		}
	}
	for _, u := range []string{"https://example.com", "HTTP://Example.COM:8080/a?b#c", " http://example.com/ "} {
		if _, err := Parse([]byte("<a href=x>"), "text/html", u, nil, Options{}); err != nil {
			t.Errorf("Parse(page %q): %v", u, err)
		}
	}
}

// TestKeepsASCII holds keepsASCII, which lets decode skip the decoder on
// an ASCII body, to what each WHATWG encoding's decoder does with the 128
// ASCII bytes.
func TestKeepsASCII(t *testing.T) {
	ascii := make([]byte, utf8.RuneSelf)
	for i := range ascii {
		ascii[i] = byte(i)
	}
	labels := []string{"utf-8", "ibm866", "iso-8859-2", "iso-8859-8-i", "koi8-u", "macintosh",
		"windows-874", "windows-1252", "windows-1258", "x-mac-cyrillic", "gbk", "gb18030", "big5",
		"euc-jp", "iso-2022-jp", "shift_jis", "euc-kr", "iso-2022-kr", "utf-16be", "utf-16le", "x-user-defined"}
	for _, label := range labels {
		e, name := charset.Lookup(label)
		if e == nil {
			t.Fatalf("no encoding for %q", label)
		}
		out, err := e.NewDecoder().Bytes(ascii)
		if same := err == nil && bytes.Equal(out, ascii); keepsASCII(name) != same {
			t.Errorf("keepsASCII(%q) = %v, but its decoder turns ASCII into itself: %v", name, keepsASCII(name), same)
		}
	}
}

func TestRefreshTarget(t *testing.T) {
	tests := []struct {
		content string
		url     string
		ok      bool
	}{
		{"5", "", true},
		{"  0 ", "", true},
		{".5", "", true},
		{"1.5; url=/x", "/x", true},
		{"0;URL=/x", "/x", true},
		{"0, url = '/x y' trailing", "/x y", true},
		{`0; url="/x`, "/x", true},
		{"0 /plain", "/plain", true},
		{"0;url", "url", true},
		{"0; urlx=/y", "urlx=/y", true},
		{"0;", "", true},
		{"", "", false},
		{"url=/x", "", false},
		{"-1; url=/x", "", false},
		{"5x; url=/x", "", false},
	}
	for _, tt := range tests {
		url, ok := refreshTarget(tt.content)
		if url != tt.url || ok != tt.ok {
			t.Errorf("refreshTarget(%q) = %q, %v; want %q, %v", tt.content, url, ok, tt.url, tt.ok)
		}
	}
}

func TestCharsetFromContent(t *testing.T) {
	tests := map[string]string{
		"text/html; charset=utf-8":       "utf-8",
		"text/html;charset = 'koi8-r' x": "koi8-r",
		`text/html; CHARSET="a b"`:       "a b",
		"charset=x;y":                    "x",
		"charsetx; charset=y":            "y",
		"charset=":                       "",
		`charset="unterminated`:          "",
		"text/html":                      "",
	}
	for in, want := range tests {
		if got := charsetFromContent(in); got != want {
			t.Errorf("charsetFromContent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestXMLDeclEncoding(t *testing.T) {
	tests := map[string]string{
		`<?xml version="1.0" encoding="ISO-8859-1"?><x/>`: "ISO-8859-1",
		`<?xml version='1.0' encoding = 'utf-16' ?>`:      "utf-16",
		`<?xml version="1.0"?>`:                           "",
		`<?xml encoding=utf-8?>`:                          "",
		` <?xml version="1.0" encoding="koi8-r"?>`:        "",
		`<?xml version="1.0" encoding="koi8-r"`:           "",
	}
	for in, want := range tests {
		if got := xmlDeclEncoding([]byte(in)); got != want {
			t.Errorf("xmlDeclEncoding(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEncodeQuery(t *testing.T) {
	w1252 := queryEncoding(encodingChoice{name: "windows-1252"})
	iso2022jp := queryEncoding(encodingChoice{name: "iso-2022-jp"})
	tests := []struct {
		ref  string
		want string
	}{
		{"/p?q=é", "/p?q=%E9"},
		{"/pé?q=a", "/pé?q=a"},       // the path is the URL parser's business
		{"/p?q=a#é?é", "/p?q=a#é?é"}, // so is the fragment
		{"/p#x?é", "/p#x?é"},         // a '?' after '#' starts no query
		{"?a=é&b=日", "?a=%E9&b=%26%2326085%3B"},
		{"?é日é", "?%E9%26%2326085%3B%E9"},
		{"?q=a b\"é", "?q=a b\"%E9"}, // ASCII is the URL parser's business too
	}
	for _, tt := range tests {
		if got := encodeQuery(tt.ref, w1252); got != tt.want {
			t.Errorf("encodeQuery(%q, windows-1252) = %q, want %q", tt.ref, got, tt.want)
		}
	}
	if got, want := encodeQuery("?q=é", nil), "?q=é"; got != want {
		t.Errorf("encodeQuery with UTF-8 = %q, want %q", got, want)
	}
	// A stateful encoding returns to ASCII after each run.
	if got, want := encodeQuery("?q=日&r=x", iso2022jp), "?q=%1B$BF|%1B(B&r=x"; got != want {
		t.Errorf("encodeQuery(iso-2022-jp) = %q, want %q", got, want)
	}
	if e := queryEncoding(encodingChoice{name: "utf-16le"}); e != nil {
		t.Errorf("queryEncoding(utf-16le) = %v, want UTF-8", e)
	}
}

func TestHasToken(t *testing.T) {
	tests := []struct {
		list, tok string
		want      bool
	}{
		{"nofollow", "nofollow", true},
		{"a nofollow b", "nofollow", true},
		{"a,nofollow", "nofollow", true},
		{"a\tnofollow\n", "nofollow", true},
		{"nofollowx", "nofollow", false},
		{"", "nofollow", false},
	}
	for _, tt := range tests {
		if got := hasToken(tt.list, tt.tok); got != tt.want {
			t.Errorf("hasToken(%q, %q) = %v", tt.list, tt.tok, got)
		}
	}
}

// TestParseRejected: a reference the parser refuses is handed over whole
// with its reason, so the parser tier can record it; past MaxLinks of them
// they are counted as dropped.
func TestParseRejected(t *testing.T) {
	long := "/" + strings.Repeat("a", 10<<10)
	tests := []struct {
		name    string
		page    string
		opt     Options
		want    []Rejected
		dropped int
	}{
		{name: "10 KiB link", page: `<a href=" ` + long + ` ">x</a>`, want: []Rejected{{Ref: long, Reason: "url_too_long"}}},
		{name: "invalid, nofollow", page: `<a rel="nofollow" href="http://[::1">x</a>`, want: []Rejected{{Ref: "http://[::1", Reason: "invalid_url", NoFollow: true}}},
		{name: "other schemes are not rejected", page: `<a href="mailto:a@b.example">m</a><a href="ftp://f.example/">f</a><a href="#">t</a>`},
		{name: "refresh target", page: `<meta http-equiv="refresh" content="0; url=` + long + `">`, want: []Rejected{{Ref: long, Reason: "url_too_long"}}},
		{
			name: "link before a late base", page: `<a href="http://[::1">x</a><base href="http://b.example/">`,
			want: []Rejected{{Ref: "http://[::1", Reason: "invalid_url"}},
		},
		{
			name: "past MaxLinks", opt: Options{MaxLinks: 2},
			page: strings.Repeat(`<a href="http://[">x</a>`, 3) + `<a href="/ok">ok</a>`,
			want: []Rejected{{Ref: "http://[", Reason: "invalid_url"}, {Ref: "http://[", Reason: "invalid_url"}}, dropped: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseString(t, tt.page, tt.opt)
			if !slices.Equal(d.Rejected, tt.want) {
				t.Errorf("rejected %.200v, want %.200v", d.Rejected, tt.want)
			}
			wantEq(t, "LinksDropped", d.LinksDropped, tt.dropped)
		})
	}
}

// TestParseCostlyReferences pins the bounds that keep the URL parser's
// quadratic corners out of reach; BenchmarkParseHostile measures them.
func TestParseCostlyReferences(t *testing.T) {
	tests := []struct {
		name  string
		ref   string
		valid bool
	}{
		{"8 KiB", "/" + strings.Repeat("a", maxRefBytes-1), true},
		{"over 8 KiB", "/" + strings.Repeat("a", maxRefBytes), false},
		{"userinfo at the limit", "http://" + strings.Repeat("u", maxUserinfoBytes) + "@x.example/", true},
		{"userinfo over the limit", "http://" + strings.Repeat("u", maxUserinfoBytes+1) + "@x.example/", false},
		{"many @ in a userinfo", "http://" + strings.Repeat("@", maxUserinfoAts+1) + "x.example/", false},
		{"@ in path segments", "/@user@example.social/" + strings.Repeat("@a/", 50), true},
		{"@ in a long query", "/?" + strings.Repeat("q", 500) + "&mail=a@b.example&" + strings.Repeat("@", 20), true},
		{"@ in a long fragment", "/#" + strings.Repeat("q", 500) + "@", true},
		{"@ after a long path segment", "/" + strings.Repeat("p", 500) + "@", false},
		{"256 path separators", strings.Repeat("/a", maxRefSegments/2) + strings.Repeat(`\b`, maxRefSegments/2), true},
		{"257 path separators", strings.Repeat("/a", maxRefSegments+1), false},
		{"slashes in the query do not count", "/?u=" + strings.Repeat("/", 2*maxRefSegments), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseString(t, `<a href="`+tt.ref+`">x</a>`, Options{})
			if got := len(d.Links) == 1; got != tt.valid || len(d.Rejected) != boolInt(!tt.valid) {
				t.Errorf("links %d, invalid %d; want valid %v", len(d.Links), len(d.Rejected), tt.valid)
			}
			if !tt.valid && d.Rejected[0].Ref != tt.ref {
				t.Errorf("rejected %.40q..., want the reference whole", d.Rejected[0].Ref)
			}
		})
	}
	t.Run("base", func(t *testing.T) {
		d := parseString(t, `<base href="http://`+strings.Repeat("@", 100)+`evil.example/"><a href="x">x</a>`, Options{})
		wantLinks(t, d, "http://example.com/dir/x")
	})
	t.Run("references past MaxLinks are not resolved", func(t *testing.T) {
		// Each would take seconds to parse if it reached the URL parser.
		costly := "http://" + strings.Repeat("a@", 4000) + "x/"
		d := parseString(t, `<a href="/a">a</a>`+strings.Repeat(`<a href="`+costly+`">x</a>`, 3), Options{MaxLinks: 1})
		wantLinks(t, d, "http://example.com/a")
		wantEq(t, "LinksDropped", d.LinksDropped, 3)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
