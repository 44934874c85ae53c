package sitemap

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"
)

// maxFieldBytes caps what is kept of one element's text; a longer loc is
// then rejected by validLoc instead of growing without bound.
const maxFieldBytes = maxLocBytes + 1

func (p *parser) parseXML(r io.Reader) error {
	d := xml.NewDecoder(bufio.NewReaderSize(&markupGuard{r: r}, readBufSize))
	// Non-strict mode keeps unescaped '&' in query strings (the most common
	// sitemap error) as written instead of failing the file; unclosed tags
	// still end the parse at EOF. Entity declarations are never expanded by
	// encoding/xml, and nothing is ever fetched, so XXE and billion-laughs
	// documents yield only literal "&name;" text.
	d.Strict = false
	d.CharsetReader = charsetReader

	item, err := p.readRoot(d)
	if err != nil {
		return err
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return p.xmlErr(d, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != item || isExtension(t.Name.Space) {
				if err := d.Skip(); err != nil {
					return p.xmlErr(d, err)
				}
				continue
			}
			e, err := readEntry(d)
			if err != nil {
				return p.xmlErr(d, err)
			}
			if err := p.deliver(e); err != nil {
				return err
			}
		case xml.EndElement:
			// The root closed; whatever follows it is not part of the sitemap.
			return nil
		}
	}
}

// readRoot sets the kind from the root element and returns the name of the
// entry elements under it.
func (p *parser) readRoot(d *xml.Decoder) (string, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				return "", fmt.Errorf("sitemap: %w: no root element", ErrUnknownFormat)
			}
			return "", p.xmlErr(d, err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue // prolog: declaration, comments, DOCTYPE, whitespace
		}
		switch start.Name.Local {
		case "urlset":
			p.res.Kind = KindURLSet
			return "url", nil
		case "sitemapindex":
			p.res.Kind = KindIndex
			return "sitemap", nil
		}
		return "", fmt.Errorf("sitemap: %w: root element <%s>", ErrUnknownFormat, start.Name.Local)
	}
}

// readEntry reads the children of one <url> or <sitemap> up to its end tag.
// Only direct children count: extensions nest their own <loc> (image:loc)
// one level down, and those must not replace the page's location.
func readEntry(d *xml.Decoder) (Entry, error) {
	var loc, lastmod, changefreq, priority strings.Builder
	var field *strings.Builder
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return Entry{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			field = nil
			if depth != 1 || isExtension(t.Name.Space) {
				continue
			}
			switch t.Name.Local {
			case "loc":
				field = &loc
			case "lastmod":
				field = &lastmod
			case "changefreq":
				field = &changefreq
			case "priority":
				field = &priority
			}
			if field != nil && field.Len() > 0 {
				field = nil // a repeated element: the first one wins
			}
		case xml.EndElement:
			depth--
			field = nil
			if depth < 0 {
				return Entry{
					Loc:        strings.TrimSpace(loc.String()),
					LastMod:    parseLastMod(lastmod.String()),
					ChangeFreq: parseChangeFreq(changefreq.String()),
					Priority:   parsePriority(priority.String()),
				}, nil
			}
		case xml.CharData:
			if field != nil && depth == 1 {
				room := maxFieldBytes - field.Len()
				if len(t) > room {
					t = t[:room]
				}
				field.Write(t)
			}
		}
	}
}

// isExtension reports whether an element belongs to a sitemap extension
// (image, video, news, mobile, xhtml alternates) rather than to the protocol.
// Undeclared prefixes arrive as the prefix itself.
func isExtension(space string) bool {
	switch space {
	case "", "http://www.sitemaps.org/schemas/sitemap/0.9":
		return false
	case "image", "video", "news", "mobile", "xhtml", "http://www.w3.org/1999/xhtml":
		return true
	}
	return strings.HasPrefix(space, "http://www.google.com/schemas/sitemap-")
}

// charsetReader converts declared non-UTF-8 encodings (ISO-8859-1, windows-1252
// and the other WHATWG labels) to UTF-8.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	r, err := charset.NewReaderLabel(label, input)
	if err != nil {
		return nil, fmt.Errorf("%w: unsupported encoding %q", ErrUnknownFormat, label)
	}
	return r, nil
}

// xmlErr classifies an error out of the XML decoder: limits pass through for
// Parse to turn into truncation, syntax errors become ErrMalformed with the
// position, and anything else is a read error.
func (p *parser) xmlErr(d *xml.Decoder, err error) error {
	line, col := d.InputPos()
	var syn *xml.SyntaxError
	switch {
	case errors.Is(err, errDecodedLimit), errors.Is(err, ErrUnknownFormat):
		return err
	case errors.As(err, &syn), errors.Is(err, ErrMalformed), err == io.EOF:
		msg := err.Error()
		if syn != nil {
			msg = syn.Msg
		} else if err == io.EOF {
			msg = "unexpected end of document"
		}
		return fmt.Errorf("sitemap: parse %s: %w at line %d, column %d after %d entries: %s",
			p.res.Kind, ErrMalformed, line, col, p.res.Entries, strings.TrimPrefix(msg, ErrMalformed.Error()+": "))
	}
	return fmt.Errorf("sitemap: parse %s at line %d, column %d: %w", p.res.Kind, line, col, err)
}
