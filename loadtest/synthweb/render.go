package synthweb

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/fnv"
	"html"
	"math/rand/v2"
	"strings"
	"time"
)

// link is one <a> on a page.
type link struct {
	href string
	text string
	rel  string
}

// pageSpec is everything renderPage needs; head holds extra <head> markup
// (meta robots, rel=canonical).
type pageSpec struct {
	title, description string
	docTitle           string // <title> when it differs from the heading (title)
	head               []string
	paragraphs         []string
	links              []link
}

func renderPage(s pageSpec) []byte {
	var b bytes.Buffer
	size := 512
	for _, p := range s.paragraphs {
		size += len(p) + 8
	}
	b.Grow(size + 80*len(s.links))
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(html.EscapeString(cmp.Or(s.docTitle, s.title)))
	b.WriteString("</title>\n<meta name=\"description\" content=\"")
	b.WriteString(html.EscapeString(s.description))
	b.WriteString("\">\n")
	for _, h := range s.head {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	b.WriteString("</head>\n<body>\n<h1>")
	b.WriteString(html.EscapeString(s.title))
	b.WriteString("</h1>\n")
	for _, p := range s.paragraphs {
		b.WriteString("<p>")
		b.WriteString(html.EscapeString(p))
		b.WriteString("</p>\n")
	}
	if len(s.links) > 0 {
		b.WriteString("<ul>\n")
		for _, l := range s.links {
			b.WriteString("<li><a href=\"")
			b.WriteString(html.EscapeString(l.href))
			b.WriteByte('"')
			if l.rel != "" {
				b.WriteString(" rel=\"")
				b.WriteString(html.EscapeString(l.rel))
				b.WriteByte('"')
			}
			b.WriteByte('>')
			b.WriteString(html.EscapeString(l.text))
			b.WriteString("</a></li>\n")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
}

// textPage fills a spec with generated prose of about n bytes.
func textPage(g *textGen, n int, links []link) pageSpec {
	paras := g.paragraphs(n)
	desc, _, _ := strings.Cut(paras[0], ".")
	return pageSpec{title: g.title(), description: desc + ".", paragraphs: paras, links: links}
}

// pathRNG seeds a generator from the web seed, the host and a path, so that
// every page's text is deterministic and different.
func pathRNG(seed int64, hostIdx int, path string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s", hostIdx, path)
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

func sitemapURLSet(locs []string) []byte {
	urls := make([]sitemapURL, len(locs))
	for i, l := range locs {
		urls[i].loc = l
	}
	return sitemapURLs(urls)
}

// sitemapURL is one <url> of a urlset; a zero lastmod is left out.
type sitemapURL struct {
	loc     string
	lastmod time.Time
}

// sitemapURLs renders a urlset. A <lastmod> has the instant to the
// nanosecond: the W3C datetime profile allows fractions of a second, and
// with compressed time a page can change twice within one.
func sitemapURLs(urls []sitemapURL) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, u := range urls {
		if u.lastmod.IsZero() {
			fmt.Fprintf(&b, "  <url><loc>%s</loc></url>\n", html.EscapeString(u.loc))
			continue
		}
		fmt.Fprintf(&b, "  <url><loc>%s</loc><lastmod>%s</lastmod></url>\n",
			html.EscapeString(u.loc), u.lastmod.UTC().Format(time.RFC3339Nano))
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func sitemapIndex(locs []string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		fmt.Fprintf(&b, "  <sitemap><loc>%s</loc></sitemap>\n", html.EscapeString(l))
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}

// pdfBody is a tiny but well-formed PDF: the crawler must store it without
// trying to parse it as HTML.
const pdfBody = "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" +
	"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n" +
	"trailer << /Root 1 0 R >>\n%%EOF\n"
