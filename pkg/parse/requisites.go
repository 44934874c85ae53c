package parse

import (
	"bytes"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page requisites are what a browser fetches to display a page (Heritrix's
// "embeds"): stylesheets, images, scripts, fonts, favicons, posters. An
// archive without them replays as bare text. They are collected only when
// Options.MaxRequisites is set, and a <link> that names one (a stylesheet,
// an icon, a preload) is then a requisite instead of a link: it is fetched
// for the page, not crawled as one.

// DefaultMaxCSSRefs bounds the references CSSRefs returns for one stylesheet.
const DefaultMaxCSSRefs = 200

var reqAttrs = []string{"src", "srcset", "poster", "data", "type"}

// requisiteRel reports whether a <link>'s rel names something the page
// needs to display, rather than a page to crawl.
func requisiteRel(rel string) bool {
	for _, tok := range strings.Fields(rel) {
		switch tok {
		case "stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed", "mask-icon", "preload", "modulepreload", "manifest":
			return true
		}
	}
	return false
}

// requisiteElement collects the requisites of an element that has any (the
// caller knows it has attributes).
func (p *htmlParser) requisiteElement(z *html.Tokenizer, a atom.Atom) {
	var v [5]string
	found := attrs(z, reqAttrs, v[:])
	src, srcset, poster, data, typ := v[0], v[1], v[2], v[3], v[4]
	if a == atom.Input && !strings.EqualFold(trimASCIISpace(typ), "image") {
		return // only an image button shows what src names
	}
	if found&1 != 0 {
		p.addRequisite(src)
	}
	if found&2 != 0 && (a == atom.Img || a == atom.Source) {
		for _, ref := range srcsetURLs(srcset) {
			p.addRequisite(ref)
		}
	}
	if found&4 != 0 && a == atom.Video {
		p.addRequisite(poster)
	}
	if found&8 != 0 && a == atom.Object {
		p.addRequisite(data)
	}
}

// isRequisiteElement reports whether an element may load a requisite by
// its attributes.
func isRequisiteElement(a atom.Atom) bool {
	switch a {
	case atom.Img, atom.Source, atom.Script, atom.Video, atom.Audio, atom.Track, atom.Embed, atom.Object, atom.Input:
		return true
	}
	return false
}

// addRequisite keeps a reference as found: it is resolved in finish, when
// the document's base is known.
func (p *htmlParser) addRequisite(ref string) {
	ref = trimASCIISpace(ref)
	if ref == "" || ref == "#" || hasSkippedScheme(ref) {
		return
	}
	if len(p.reqRefs) >= p.opt.MaxRequisites {
		p.doc.RequisitesDropped++
		return
	}
	p.reqRefs = append(p.reqRefs, ref)
}

// resolveRequisites resolves the collected references against the final
// base, dropping duplicates and those that name no http(s) URL.
func (p *htmlParser) resolveRequisites() {
	if len(p.reqRefs) == 0 {
		return
	}
	seen := make(map[string]struct{}, len(p.reqRefs))
	for _, ref := range p.reqRefs {
		u, res := p.resolve(ref)
		if res != refOK {
			if res != refSkip {
				p.doc.RequisitesDropped++
			}
			continue
		}
		if _, dup := seen[u]; dup {
			continue
		}
		seen[u] = struct{}{}
		p.doc.Requisites = append(p.doc.Requisites, u)
	}
	p.reqRefs = nil
}

// srcsetURLs returns the URLs of a srcset attribute (HTML's "parse a srcset
// attribute", without the descriptors, which the crawler does not need).
func srcsetURLs(s string) []string {
	var out []string
	for len(s) > 0 {
		// Skip white space and commas before a candidate.
		i := 0
		for i < len(s) && (isASCIISpace(s[i]) || s[i] == ',') {
			i++
		}
		s = s[i:]
		if s == "" {
			break
		}
		j := 0
		for j < len(s) && !isASCIISpace(s[j]) {
			j++
		}
		u := strings.TrimRight(s[:j], ",")
		descriptorsFollow := !strings.HasSuffix(s[:j], ",")
		s = s[j:]
		if u != "" {
			out = append(out, u)
		}
		if !descriptorsFollow {
			continue
		}
		// Descriptors run to the next comma outside parentheses.
		depth := 0
		k := 0
		for ; k < len(s); k++ {
			if c := s[k]; c == '(' {
				depth++
			} else if c == ')' && depth > 0 {
				depth--
			} else if c == ',' && depth == 0 {
				break
			}
		}
		s = s[k:]
	}
	return out
}

// CSSRefs returns the references of a stylesheet, as written, in order:
// the targets of url(...) and of @import "...", at most max of them (0 =
// DefaultMaxCSSRefs), and how many more there were. Comments are skipped.
// It is a scanner, not a CSS parser: it finds what a browser would load
// from any stylesheet a real site serves, and on anything else it returns
// at most max strings without failing.
func CSSRefs(css []byte, max int) (refs []string, dropped int) {
	if max <= 0 {
		max = DefaultMaxCSSRefs
	}
	add := func(ref string) {
		ref = strings.TrimSpace(ref)
		if ref == "" || strings.HasPrefix(ref, "#") || hasSkippedScheme(ref) {
			return
		}
		if len(refs) >= max {
			dropped++
			return
		}
		refs = append(refs, ref)
	}
	for i := 0; i < len(css); {
		c := css[i]
		switch {
		case c == '/' && i+1 < len(css) && css[i+1] == '*':
			end := bytes.Index(css[i+2:], []byte("*/"))
			if end < 0 {
				return refs, dropped
			}
			i += 2 + end + 2
		case c == '"' || c == '\'':
			// A string outside url() and @import is no reference.
			_, n := cssString(css[i:])
			i += n
		case c == '@' && hasPrefixFold(css[i+1:], "import"):
			var s string
			var ok bool
			if s, i, ok = quotedAfterSpace(css, i+len("@import")); ok {
				add(s)
			}
			// @import url(...) is taken by the url( case next.
		case (c == 'u' || c == 'U') && hasPrefixFold(css[i:], "url(") && (i == 0 || !isNameByte(css[i-1])):
			var s string
			var ok bool
			if s, i, ok = quotedAfterSpace(css, i+len("url(")); ok {
				add(s)
				continue
			}
			end := i
			for end < len(css) && css[end] != ')' {
				if css[end] == '\\' {
					end++ // an escaped ')' belongs to the URL
				}
				end++
			}
			if end >= len(css) {
				return refs, dropped
			}
			add(cssUnescape(string(css[i:end])))
			i = end + 1
		default:
			i++
		}
	}
	return refs, dropped
}

// quotedAfterSpace skips white space from i and reads the quoted string
// there, if there is one; next is where the scan goes on.
func quotedAfterSpace(css []byte, i int) (s string, next int, ok bool) {
	for i < len(css) && isASCIISpace(css[i]) {
		i++
	}
	if i < len(css) && (css[i] == '"' || css[i] == '\'') {
		s, n := cssString(css[i:])
		return s, i + n, true
	}
	return "", i, false
}

// cssString reads a quoted string at the start of b and returns its value
// and the bytes it took (to the closing quote, or an unescaped newline, or
// the end of b, as CSS ends a bad string).
func cssString(b []byte) (string, int) {
	q := b[0]
	var sb strings.Builder
	i := 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == q:
			return cssUnescape(sb.String()), i + 1
		case c == '\n':
			return "", i
		case c == '\\' && i+1 < len(b):
			sb.WriteByte(c)
			sb.WriteByte(b[i+1])
			i += 2
			continue
		}
		sb.WriteByte(c)
		i++
	}
	return cssUnescape(sb.String()), i
}

// cssUnescape removes CSS backslash escapes of single characters; hex
// escapes are kept as they are, since real references do not use them.
func cssUnescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && !isHexDigit(s[i+1]) && s[i+1] != '\n' {
			i++
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

// ResolveCSSRefs resolves a stylesheet's references against its URL and
// returns the absolute http(s) URLs among them, each once. References that
// do not resolve are counted in dropped.
func ResolveCSSRefs(cssURL string, refs []string) (urls []string, dropped int) {
	base, err := whatwg.Parse(cssURL)
	if err != nil {
		return nil, len(refs)
	}
	seen := make(map[string]struct{}, len(refs))
	for _, ref := range refs {
		if len(ref) > maxRefBytes || tooCostly(ref) {
			dropped++
			continue
		}
		u, err := base.Parse(ref)
		if err != nil {
			dropped++
			continue
		}
		if s := u.Scheme(); s != "http" && s != "https" {
			continue
		}
		h := u.Href(true) // without the fragment: one resource
		if _, dup := seen[h]; dup {
			continue
		}
		seen[h] = struct{}{}
		urls = append(urls, h)
	}
	return urls, dropped
}
