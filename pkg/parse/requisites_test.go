package parse

import (
	"slices"
	"testing"
)

func TestRequisites(t *testing.T) {
	const page = "http://example.com/docs/page.html"
	tests := []struct {
		name  string
		html  string
		max   int
		want  []string
		links []string
		drop  int
	}{
		{
			name: "stylesheet, icon, script, images, poster",
			html: `<html><head><link rel=stylesheet href="/s/main.css"><link rel="shortcut icon" href="favicon.ico">
<script src="app.js"></script><style>body{background:url('bg.png')} @import "more.css";</style></head>
<body><a href="next.html">next</a><img src="a.png" srcset="a-2x.png 2x, a-3x.png 3x">
<picture><source srcset="p.webp 1x,p2.webp 2x"><img src="p.jpg"></picture>
<video poster="poster.jpg"><source src="v.mp4"></video><img src="a.png">
<input type="text" src="not.png"><input type=IMAGE src="button.png"></body></html>`,
			max: 100,
			want: []string{"http://example.com/s/main.css", "http://example.com/docs/favicon.ico", "http://example.com/docs/app.js",
				"http://example.com/docs/bg.png", "http://example.com/docs/more.css", "http://example.com/docs/a.png",
				"http://example.com/docs/a-2x.png", "http://example.com/docs/a-3x.png", "http://example.com/docs/p.webp",
				"http://example.com/docs/p2.webp", "http://example.com/docs/p.jpg", "http://example.com/docs/poster.jpg",
				"http://example.com/docs/v.mp4", "http://example.com/docs/button.png"},
			links: []string{"http://example.com/docs/next.html"},
		},
		{
			name:  "off: a stylesheet link stays a link",
			html:  `<link rel=stylesheet href="/s/main.css"><img src="a.png">`,
			links: []string{"http://example.com/s/main.css"},
		},
		{
			name: "base applies, data and javascript skipped, cap counted",
			html: `<base href="http://cdn.example.org/x/"><img src="data:image/png;base64,AA"><img src="1.png"><img src="2.png"><img src="3.png">`,
			max:  2,
			want: []string{"http://cdn.example.org/x/1.png", "http://cdn.example.org/x/2.png"},
			drop: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.html), "text/html", page, nil, Options{MaxRequisites: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Requisites, tc.want) {
				t.Errorf("requisites\n got %q\nwant %q", d.Requisites, tc.want)
			}
			var links []string
			for _, l := range d.Links {
				links = append(links, l.URL)
			}
			if !slices.Equal(links, tc.links) {
				t.Errorf("links %q, want %q", links, tc.links)
			}
			if d.RequisitesDropped != tc.drop {
				t.Errorf("dropped %d, want %d", d.RequisitesDropped, tc.drop)
			}
		})
	}
}

func TestCSSRefs(t *testing.T) {
	css := `@import url("base.css"); @IMPORT 'print.css' print;
/* url(commented.png) */
@font-face { src: url(fonts/a.woff2) format("woff2"), url( 'fonts/a.woff' ); }
.x { background-image: url(img/x\(1\).png); content: "url(not-a-ref)"; }
.y { background: URL(#frag) , url(data:image/gif;base64,R0l) ; mask: myurl(no.png) }`
	refs, dropped := CSSRefs([]byte(css), 0)
	want := []string{"base.css", "print.css", "fonts/a.woff2", "fonts/a.woff", "img/x(1).png"}
	if !slices.Equal(refs, want) || dropped != 0 {
		t.Fatalf("CSSRefs = %q (%d dropped), want %q", refs, dropped, want)
	}
	refs, dropped = CSSRefs([]byte(css), 2)
	if len(refs) != 2 || dropped != 3 {
		t.Fatalf("capped at 2: %q, %d dropped", refs, dropped)
	}
	urls, bad := ResolveCSSRefs("http://example.com/s/main.css", []string{"../f.woff", "x.png#a", "x.png#b", "http://[::1"})
	if w := []string{"http://example.com/f.woff", "http://example.com/s/x.png"}; !slices.Equal(urls, w) || bad != 1 {
		t.Fatalf("ResolveCSSRefs = %q (%d bad), want %q", urls, bad, w)
	}
}

func TestSrcsetURLs(t *testing.T) {
	for in, want := range map[string][]string{
		"a.png 1x, b.png 2x":                   {"a.png", "b.png"},
		"a.png,b.png":                          {"a.png,b.png"},
		"a.png, b.png":                         {"a.png", "b.png"},
		" a.png 100w (x,y), c.png":             {"a.png", "c.png"},
		"":                                     nil,
		",,, ":                                 nil,
		"data:image/png;base64,AAA= 1x, z.png": {"data:image/png;base64,AAA=", "z.png"},
	} {
		if got := srcsetURLs(in); !slices.Equal(got, want) {
			t.Errorf("srcsetURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCSSRefs: any stylesheet gives at most max references without a
// panic, and resolving them gives absolute http(s) URLs only.
func FuzzCSSRefs(f *testing.F) {
	f.Add([]byte(`@import "a.css"; b{background:url(x.png)} /* url(c) */`), 3)
	f.Add([]byte(`url(`), 1)
	f.Add([]byte(`@import '`), 1)
	f.Add([]byte(`a{b:url("x\"y")}`), 5)
	f.Fuzz(func(t *testing.T, css []byte, max int) {
		max = max%50 + 1
		if max <= 0 {
			max += 50
		}
		refs, _ := CSSRefs(css, max)
		if len(refs) > max {
			t.Fatalf("%d refs, max %d", len(refs), max)
		}
		urls, _ := ResolveCSSRefs("http://example.com/s/main.css", refs)
		for _, u := range urls {
			if !isAbsHTTP(u) {
				t.Fatalf("%q is not absolute http(s)", u)
			}
		}
	})
}
