package trapweb

import (
	"bytes"
	"html"
	"strings"
)

// link is one <a> of a page: its href as written and its text.
type link struct {
	href string
	text string
}

// spec is what an HTML page is rendered from.
type spec struct {
	title string // <title>
	h1    string
	paras [][]string // paragraphs of tokens
	// joined are the paragraphs as strings, filled in by paraStrings.
	joined []string
	items  []string // <li> text items without links (search result snippets)
	links  []link
	// canonical is the absolute URL the page names canonical ("" for none).
	canonical string
}

const (
	htmlType  = "text/html; charset=utf-8"
	xmlType   = "application/xml"
	plainType = "text/plain; charset=utf-8"
)

// escape is html.EscapeString, without work for the plain words that make
// up nearly all text.
func escape(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '>', '&', '\'', '"', '\r':
			return html.EscapeString(s)
		}
	}
	return s
}

// paraStrings are the paragraphs as strings.
func (s *spec) paraStrings() []string {
	if s.joined == nil {
		s.joined = joinParas(s.paras)
	}
	return s.joined
}

func (s *spec) render() []byte {
	var b bytes.Buffer
	n := 256 + len(s.title) + len(s.h1)
	for _, p := range s.paraStrings() {
		n += len(p) + 8
	}
	for _, l := range s.links {
		n += len(l.href) + len(l.text) + 32
	}
	b.Grow(n)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	b.WriteString(escape(s.title))
	b.WriteString("</title>\n")
	if s.canonical != "" {
		b.WriteString("<link rel=\"canonical\" href=\"" + escape(s.canonical) + "\">\n")
	}
	b.WriteString("</head>\n<body>\n<h1>")
	b.WriteString(escape(s.h1))
	b.WriteString("</h1>\n")
	for _, p := range s.paraStrings() {
		b.WriteString("<p>")
		b.WriteString(p) // vocabulary words: nothing to escape
		b.WriteString("</p>\n")
	}
	if len(s.items) > 0 {
		b.WriteString("<ol>\n")
		for _, it := range s.items {
			b.WriteString("<li>")
			b.WriteString(escape(it))
			b.WriteString("</li>\n")
		}
		b.WriteString("</ol>\n")
	}
	if len(s.links) > 0 {
		b.WriteString("<ul>\n")
		for _, l := range s.links {
			b.WriteString("<li><a href=\"")
			b.WriteString(escape(l.href))
			b.WriteString("\">")
			b.WriteString(escape(l.text))
			b.WriteString("</a></li>\n")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
}

// text is the visible text of the rendered page, white space collapsed:
// heading, paragraphs, items, link texts, in document order.
func (s *spec) text() string {
	var b strings.Builder
	n := len(s.h1)
	for _, p := range s.paraStrings() {
		n += len(p) + 1
	}
	b.Grow(n + 64*len(s.links) + 128*len(s.items))
	add := func(t string) {
		t = strings.TrimSpace(t)
		if t == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	add(s.h1)
	for _, p := range s.paraStrings() {
		add(p)
	}
	for _, it := range s.items {
		add(it)
	}
	for _, l := range s.links {
		add(l.text)
	}
	return b.String()
}

// nearBase returns the word hashes of the text and the votes of its
// features, for nearEdit.
func (s *spec) nearBase() *nearBase {
	words := wordHashes(nil, s.h1)
	off := len(words)
	for _, p := range s.paras {
		for _, w := range p {
			words = wordHashes(words, w)
		}
	}
	for _, it := range s.items {
		words = wordHashes(words, it)
	}
	for _, l := range s.links {
		words = wordHashes(words, l.text)
	}
	return newNearBase(words, off)
}

func joinParas(paras [][]string) []string {
	out := make([]string, len(paras))
	for i, p := range paras {
		out[i] = strings.Join(p, " ")
	}
	return out
}

func cloneParas(p [][]string) [][]string {
	out := make([][]string, len(p))
	for i := range p {
		out[i] = append([]string(nil), p[i]...)
	}
	return out
}

func sitemapURLSet(locs []string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		b.WriteString("  <url><loc>")
		b.WriteString(escape(l))
		b.WriteString("</loc></url>\n")
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func sitemapIndex(locs []string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, l := range locs {
		b.WriteString("  <sitemap><loc>")
		b.WriteString(escape(l))
		b.WriteString("</loc></sitemap>\n")
	}
	b.WriteString("</sitemapindex>\n")
	return b.Bytes()
}
