package parse

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlcluster/crawler/internal/cputime"
)

// benchPage builds a typical article page of about 50 KiB with about 200
// links: head with stylesheets and inline script, navigation, body text with
// inline links, a footer, and a sprinkle of skipped schemes.
func benchPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Crawling politely: an article — Example News</title>
<meta name="description" content="A long article about crawling the web politely, with many links.">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="https://news.example.com/2024/05/crawling-politely">
`)
	for i := range 6 {
		fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"/static/css/site-%d.css?v=20240501\">\n", i)
	}
	b.WriteString("<script>\n")
	for i := range 60 {
		fmt.Fprintf(&b, "  window.dataLayer.push({event: 'view', id: %d, html: '<a href=\"/not-a-link-%d\">x</a>'});\n", i, i)
	}
	b.WriteString("</script>\n<style>\n")
	for i := range 40 {
		fmt.Fprintf(&b, ".c%d { margin: %dpx; color: #%06x; }\n", i, i, i*4099)
	}
	b.WriteString("</style></head>\n<body><header><nav><ul>\n")
	for i := range 40 {
		fmt.Fprintf(&b, "<li><a href=\"/section/%d/\" class=\"nav\">Section %d</a></li>\n", i, i)
	}
	b.WriteString("</ul></nav></header>\n<main><article><h1>Crawling politely</h1>\n")
	words := strings.Fields("the crawler fetches pages from many hosts while keeping each host's load low and honouring robots.txt rules — politeness matters, ça va sans dire, und zwar überall")
	for p := range 80 {
		b.WriteString("<p>")
		for w := range 55 {
			b.WriteString(words[(p*7+w)%len(words)])
			b.WriteByte(' ')
			if w == 20 {
				fmt.Fprintf(&b, `<a href="../related/story-%d.html">related story %d</a> `, p, p)
			}
			if w == 40 && p%3 == 0 {
				fmt.Fprintf(&b, `<a href="https://other%d.example.org/path/to/page?ref=news&id=%d" rel="nofollow">source</a> `, p%9, p)
			}
		}
		b.WriteString("</p>\n")
		if p%13 == 0 {
			fmt.Fprintf(&b, "<figure><img src=\"/img/%d.jpg\" alt=\"figure %d\"><figcaption>Figure %d</figcaption></figure>\n", p, p, p)
		}
	}
	b.WriteString("</article><aside><ul>\n")
	for i := range 40 {
		fmt.Fprintf(&b, "<li><a href=\"//cdn.example.net/t/%d\">Tag %d</a></li>\n", i, i)
	}
	b.WriteString("</ul></aside></main>\n<footer>\n")
	for i := range 30 {
		fmt.Fprintf(&b, "<a href=\"/about/page-%d\">About %d</a> | ", i, i)
	}
	b.WriteString(`<a href="mailto:news@example.com">mail</a> <a href="javascript:void(0)">top</a>
<iframe src="https://player.example.com/embed/1"></iframe></footer></body></html>
`)
	return []byte(b.String())
}

const benchURL = "https://news.example.com/2024/05/crawling-politely"

func BenchmarkParse(b *testing.B) {
	page := benchPage()
	d, err := Parse(page, "text/html; charset=utf-8", benchURL, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("page %d bytes, %d links", len(page), len(d.Links))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	stopCPU := cputime.Measure(b)
	for b.Loop() {
		if _, err := Parse(page, "text/html; charset=utf-8", benchURL, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	stopCPU()
}

// BenchmarkTreeBuilder does the same work as BenchmarkParse with html.Parse
// and a walk of the tree: the alternative the package comment weighs.
func BenchmarkTreeBuilder(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if n := treeWalk(page); n < 150 {
			b.Fatalf("%d links", n)
		}
	}
}

// treeWalk builds the tree and collects what Parse does: resolved links of
// the same elements, and text outside script, style and title.
func treeWalk(page []byte) (links int) {
	base, err := whatwg.Parse(benchURL)
	if err != nil {
		panic(err)
	}
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		panic(err)
	}
	var text strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			if p := n.Parent; p == nil || (p.DataAtom != atom.Script && p.DataAtom != atom.Style && p.DataAtom != atom.Title) {
				text.WriteString(n.Data)
			}
		case html.ElementNode:
			key := "href"
			if n.DataAtom == atom.Iframe || n.DataAtom == atom.Frame {
				key = "src"
			}
			switch n.DataAtom {
			case atom.A, atom.Area, atom.Link, atom.Iframe, atom.Frame:
				for _, a := range n.Attr {
					if a.Key == key {
						if u, err := base.Parse(a.Val); err == nil && u.Href(false) != "" {
							links++
						}
						break
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return links
}

// BenchmarkParseHostile measures pages built to find the slow paths: 1 MiB of
// nothing but links, and of references the URL parser handles in quadratic
// time (kept out by tooCostly), past and before Options.MaxLinks.
func BenchmarkParseHostile(b *testing.B) {
	pages := []struct {
		name string
		link string
	}{
		{"short-links", `<a href=/a>`},
		{"userinfo", `<a href="http://` + strings.Repeat("@", 200) + `x/">`},
		{"segments", `<a href="` + strings.Repeat(`\a/`, 300) + `">`},
		{"long-refs", `<a href="/` + strings.Repeat("%", maxRefBytes-1) + `">`},
	}
	for _, p := range pages {
		page := []byte(strings.Repeat(p.link, 1<<20/len(p.link)))
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(page, "text/html; charset=utf-8", benchURL, nil, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// prosePage builds a page like the load tests' synthetic web serves (see
// loadtest/synthweb): a short head, about size bytes of generated prose in
// paragraphs, and a handful of links in the forms those pages use.
func prosePage(size int) []byte {
	rng := rand.New(rand.NewPCG(uint64(size), 1))
	onsets := []string{"b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "br", "cl", "st", "tr"}
	vowels := []string{"a", "e", "i", "o", "u", "ai", "ea", "ou"}
	codas := []string{"", "n", "r", "s", "l", "nd", "st"}
	vocab := make([]string, 2000)
	for i := range vocab {
		var w strings.Builder
		for range 1 + rng.IntN(3) {
			w.WriteString(onsets[rng.IntN(len(onsets))])
			w.WriteString(vowels[rng.IntN(len(vowels))])
			w.WriteString(codas[rng.IntN(len(codas))])
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(rng, 1.15, 3, uint64(len(vocab)-1))
	sentence := func(b *strings.Builder) {
		for i := range 6 + rng.IntN(10) {
			w := vocab[zipf.Uint64()]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteByte('.')
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Plain Prose Page</title>\n")
	b.WriteString("<meta name=\"description\" content=\"A page of generated prose.\">\n</head>\n<body>\n<h1>Plain Prose Page</h1>\n")
	for b.Len() < size {
		b.WriteString("<p>")
		for i := range 3 + rng.IntN(4) {
			if i > 0 {
				b.WriteByte(' ')
			}
			sentence(&b)
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("<ul>\n")
	for _, href := range []string{"/p/12.html", "p/13.html", "14.html", "http://127.0.1.3:39983/p/15.html", "/"} {
		fmt.Fprintf(&b, "<li><a href=\"%s\">Page %s</a></li>\n", href, href)
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	return []byte(b.String())
}

// BenchmarkParseProse measures pages like the synthetic web's, whose cost is
// mostly tokenizing and collecting text.
func BenchmarkParseProse(b *testing.B) {
	for _, size := range []int{6 << 10, 24 << 10} {
		page := prosePage(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			stopCPU := cputime.Measure(b)
			for b.Loop() {
				if _, err := Parse(page, "text/html; charset=utf-8", "http://127.0.1.2:39983/p/11.html", nil, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			stopCPU()
		})
	}
}

// BenchmarkParseOverlong measures what a capped 20 MiB body costs the
// parser beyond the body itself (B/op): the tokenizer holds a whole token
// in a buffer it grows by doubling.
func BenchmarkParseOverlong(b *testing.B) {
	for _, p := range overlongPages() {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(p.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(p.body, p.contentType, benchURL, nil, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
