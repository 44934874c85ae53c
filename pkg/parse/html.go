package parse

import (
	"bytes"
	"sync"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/encoding"
)

// parseHTML decodes and tokenizes body. A tentative encoding may be replaced
// once by the first <meta> charset met while tokenizing (the spec's "change
// the encoding"), which catches declarations beyond the 1024-byte prescan.
func parseHTML(body []byte, enc encodingChoice, page *pageAddr, opt Options) (*Document, error) {
	for attempt := 0; ; attempt++ {
		decoded, err := decode(body, enc)
		if err != nil {
			return nil, err
		}
		p := newHTMLParser(enc, page, opt)
		buf := textBufs.Get().(*[]byte)
		// Text is at most the page's size: a buffer that large takes
		// one allocation instead of a series of doublings.
		if n := min(len(decoded), opt.MaxTextSize); cap(*buf) < n {
			*buf = make([]byte, 0, n)
		}
		p.text.buf = (*buf)[:0]
		p.tokenize(decoded)
		if p.reparse != nil && attempt == 0 {
			putTextBuf(buf, p.text.buf)
			enc = *p.reparse
			continue
		}
		d := p.finish()
		putTextBuf(buf, p.text.buf)
		return d, nil
	}
}

// textBufs holds text buffers (*[]byte) for reuse: the text of a page is
// copied out into Document.Text, so its buffer can serve the next page,
// which saves allocating and clearing one buffer the size of the page.
var textBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledText bounds the buffers kept in textBufs.
const maxPooledText = 1 << 20

func putTextBuf(p *[]byte, buf []byte) {
	if cap(buf) > maxPooledText {
		return
	}
	*p = buf[:0]
	textBufs.Put(p)
}

// htmlParser holds the state of one pass of the tokenizer over a document.
type htmlParser struct {
	opt   Options
	enc   encodingChoice
	query encoding.Encoding // for the non-ASCII characters of link queries; nil for UTF-8
	page  *pageAddr
	base  *whatwg.Url // nil until the first <base href>
	// basePlain is plainBaseOf(base), once base is set.
	basePlain plainBase
	doc       *Document

	// unresolved holds the raw reference of each entry of doc.Links while no
	// <base> has been seen, because a later <base> applies to them too.
	unresolved []string
	baseSeen   bool

	text          textBuilder
	headings      textBuilder
	headingDepth  int       // inside <h1>-<h3>: its text also goes to headings
	raw           atom.Atom // raw-text element whose content the next text token is
	templateDepth int
	foreignDepth  int // inside <svg> or <math>

	robots                             directives
	titleSeen, descSeen, canonicalSeen bool
	refreshSeen                        bool
	canonicalRef, refreshRef           string
	reqRefs                            []string // requisites as found, resolved in finish
	htmlLang, metaLang                 string

	encodingSettled bool            // a <meta> charset has been considered
	reparse         *encodingChoice // set when that <meta> asks for another encoding
}

func newHTMLParser(enc encodingChoice, page *pageAddr, opt Options) *htmlParser {
	return &htmlParser{
		opt:   opt,
		enc:   enc,
		query: queryEncoding(enc),
		page:  page,
		doc:   &Document{HTML: true, Charset: enc.name},
		text:  textBuilder{max: opt.MaxTextSize},
		// Headings are a short summary that a search ranks above the
		// body; a page of a thousand headings is not.
		headings: textBuilder{max: maxHeadingsBytes},
	}
}

// run consumes tokens until the end of input, until handleStart stops it,
// or until a token too long for the tokenizer's bound (Options.maxToken);
// only then is overlong true.
// In a nested run (the content of <noscript>, which the tokenizer hands
// over as raw text) only links are collected: that markup is what a
// browser without scripts would show.
func (p *htmlParser) run(z *html.Tokenizer, nested bool) (c cut, overlong bool) {
	for {
		tt := z.Next()
		raw := p.raw
		p.raw = 0
		if tt == html.ErrorToken {
			return c, z.Err() == html.ErrBufferExceeded
		}
		n := len(z.Raw())
		c.at += n
		if c.partial = n >= p.opt.maxToken; c.partial {
			c.tt, c.raw = tt, raw
			copy(c.head[:], z.Raw())
		}
		switch tt {
		case html.TextToken:
			if !nested {
				p.handleText(z, raw)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if nested {
				p.handleNestedStart(z)
				continue
			}
			if stop := p.handleStart(z, tt == html.SelfClosingTagToken); stop {
				return c, false
			}
		case html.EndTagToken:
			if !nested {
				p.handleEnd(z)
			}
		}
	}
}

func (p *htmlParser) handleText(z *html.Tokenizer, raw atom.Atom) {
	if p.templateDepth > 0 {
		return
	}
	switch raw {
	case atom.Title:
		if !p.titleSeen {
			p.titleSeen = true
			p.doc.Title = collapse(string(z.Text()), maxTitleBytes)
		}
	case atom.Noscript:
		p.run(html.NewTokenizer(bytes.NewReader(z.Text())), true)
	case atom.Style:
		if p.opt.MaxRequisites > 0 && p.foreignDepth == 0 {
			refs, dropped := CSSRefs(z.Text(), p.opt.MaxRequisites)
			p.doc.RequisitesDropped += dropped
			for _, ref := range refs {
				p.addRequisite(ref)
			}
		}
	case atom.Script, atom.Textarea, atom.Iframe, atom.Noembed, atom.Noframes:
		// Not rendered as page text.
	default: // normal text, <xmp>, <plaintext>
		if p.foreignDepth > 0 {
			return
		}
		if raw == 0 {
			// Text reads character references and turns CR and CRLF into
			// LF; the latter is white space either way, so without an '&'
			// the raw token is the same text and need not be scanned.
			if b := z.Raw(); bytes.IndexByte(b, '&') < 0 {
				p.writeText(b)
				return
			}
		}
		p.writeText(z.Text())
	}
}

func (p *htmlParser) writeText(b []byte) {
	p.text.write(b)
	if p.headingDepth > 0 {
		p.headings.write(b)
	}
}

// handleStart processes a start tag and reports whether tokenizing must stop
// because the document has to be decoded again.
func (p *htmlParser) handleStart(z *html.Tokenizer, selfClosing bool) (stop bool) {
	a, hasAttr := tagAtom(z)
	if !isInline(a) {
		p.text.boundary()
		p.headings.boundary()
	}
	if p.foreignDepth > 0 && breaksOut(z, a, hasAttr) {
		// An HTML element inside SVG or MathML closes it, as in the tree
		// builder, so an unclosed <svg> does not hide the rest of the page.
		// (Integration points such as <foreignObject> are not told apart:
		// HTML there ends the foreign content early, which only shows text.)
		p.foreignDepth = 0
	}
	if p.foreignDepth > 0 {
		// SVG and MathML have no raw-text elements; the tree builder
		// tells the tokenizer the same.
		z.NextIsNotRawText()
	} else if isRawText(a) {
		p.raw = a
	}
	switch a {
	case atom.Svg, atom.Math:
		if !selfClosing {
			p.foreignDepth++
		}
		return false
	case atom.Template:
		if p.foreignDepth == 0 {
			p.templateDepth++
		}
		return false
	case atom.H1, atom.H2, atom.H3:
		// h4-h6 are as often layout as structure: only these are
		// weighed above the body by a search.
		if p.templateDepth == 0 && p.foreignDepth == 0 && !selfClosing {
			p.headingDepth++
			p.headings.boundary()
		}
	}
	if p.templateDepth > 0 || !hasAttr {
		return false
	}
	switch a {
	case atom.A, atom.Area, atom.Link, atom.Iframe, atom.Frame:
		p.linkElement(z, a)
	case atom.Base:
		p.baseElement(z)
	case atom.Meta:
		return p.metaElement(z)
	case atom.Html:
		p.htmlElement(z)
	default:
		if p.opt.MaxRequisites > 0 && isRequisiteElement(a) {
			p.requisiteElement(z, a)
		}
	}
	return false
}

func (p *htmlParser) handleNestedStart(z *html.Tokenizer) {
	a, hasAttr := tagAtom(z)
	if !hasAttr {
		return
	}
	switch a {
	case atom.A, atom.Area, atom.Link, atom.Iframe, atom.Frame:
		p.linkElement(z, a)
	}
}

func (p *htmlParser) handleEnd(z *html.Tokenizer) {
	a, _ := tagAtom(z)
	if !isInline(a) {
		p.text.boundary()
		p.headings.boundary()
	}
	switch a {
	case atom.Svg, atom.Math:
		if p.foreignDepth > 0 {
			p.foreignDepth--
		}
	case atom.Template:
		if p.templateDepth > 0 && p.foreignDepth == 0 {
			p.templateDepth--
		}
	case atom.H1, atom.H2, atom.H3:
		if p.headingDepth > 0 {
			p.headingDepth--
		}
	}
}

// maxAtomLen bounds the length of the names that have an atom
// (TestTagAtom checks it).
const maxAtomLen = 32

// tagAtom returns the atom of the current tag's name (0 if it has none) and
// whether the tag has attributes, as TagName would (an end tag never has).
// It reads the name from Raw, where the tokenizer found it, because TagName
// copies the name on every tag. Before its first attribute a tag has only
// white space and '/' after the name. FuzzTagAtom holds the two to the same
// answers.
func tagAtom(z *html.Tokenizer) (a atom.Atom, hasAttr bool) {
	raw := z.Raw()
	end := len(raw) > 1 && raw[1] == '/'
	i := 1 // after '<' or "</"
	if end {
		i = 2
	}
	var name [maxAtomLen]byte
	n := 0
	for ; i < len(raw) && !tagNameEnd(raw[i]); i++ {
		if n < len(name) {
			c := raw[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			name[n] = c
		}
		n++
	}
	for ; i < len(raw) && !end; i++ {
		if !tagNameEnd(raw[i]) {
			hasAttr = true
			break
		}
	}
	if n > len(name) {
		return 0, hasAttr
	}
	return atom.Lookup(name[:n]), hasAttr
}

// tagNameEnd reports whether c ends a tag name; the same bytes (but '>')
// separate attributes.
func tagNameEnd(c byte) bool {
	switch c {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return true
	}
	return false
}

// attrs reads the values of the named attributes of the current tag into
// vals (same order as names). As in the HTML spec, the first of duplicate
// attributes wins; found reports which names were present.
func attrs(z *html.Tokenizer, names []string, vals []string) (found uint) {
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		for i, n := range names {
			if found&(1<<i) == 0 && string(k) == n {
				found |= 1 << i
				vals[i] = string(v)
				break
			}
		}
	}
	return found
}

var (
	hrefRel      = []string{"href", "rel", "xlink:href"}
	srcOnly      = []string{"src"}
	hrefOnly     = []string{"href"}
	metaAttrs    = []string{"name", "content", "http-equiv", "charset"}
	htmlLangAttr = []string{"lang", "xml:lang"}
)

func (p *htmlParser) linkElement(z *html.Tokenizer, a atom.Atom) {
	var vals [3]string
	var ref, rel string
	switch a {
	case atom.Iframe, atom.Frame:
		if attrs(z, srcOnly, vals[:1]) == 0 {
			return
		}
		ref = vals[0]
	default:
		found := attrs(z, hrefRel, vals[:])
		switch {
		case found&1 != 0:
			ref = vals[0]
		case found&4 != 0 && p.foreignDepth > 0: // SVG 1.1 links
			ref = vals[2]
		default:
			return
		}
		rel = vals[1]
	}
	rel = collapse(lowerASCII(rel), maxRelBytes)
	if a == atom.Link && !p.canonicalSeen && hasToken(rel, "canonical") {
		p.canonicalSeen = true
		p.canonicalRef = ref
	}
	if a == atom.Link && p.opt.MaxRequisites > 0 && requisiteRel(rel) {
		p.addRequisite(ref)
		return
	}
	p.addLink(a.String(), ref, rel)
}

func (p *htmlParser) baseElement(z *html.Tokenizer) {
	var vals [1]string
	if p.baseSeen || attrs(z, hrefOnly, vals[:]) == 0 {
		return
	}
	p.baseSeen = true
	// The spec's "frozen base URL": a bad or data:/javascript: base falls
	// back to the page URL.
	pageURL := p.page.url()
	if pageURL == nil {
		return
	}
	p.base = pageURL
	if ref := trimASCIISpace(vals[0]); !tooCostly(ref) {
		u, err := pageURL.Parse(encodeQuery(ref, p.query))
		if err == nil && u.Scheme() != "data" && u.Scheme() != "javascript" {
			p.base = u
		}
	}
	p.basePlain = plainBaseOf(p.base)
	p.reresolve()
}

func (p *htmlParser) metaElement(z *html.Tokenizer) (stop bool) {
	var v [4]string
	attrs(z, metaAttrs, v[:])
	name, content, httpEquiv, charsetAttr := v[0], v[1], v[2], v[3]

	if !p.enc.certain && !p.encodingSettled {
		if label := metaCharsetLabel(charsetAttr, httpEquiv, content); label != "" {
			if e, n := lookupDeclared(label); e != nil {
				p.encodingSettled = true
				if n != p.enc.name {
					p.reparse = &encodingChoice{enc: e, name: n, certain: true}
					return true
				}
			}
		}
	}

	switch name = lowerASCII(trimASCIISpace(name)); {
	case name == "":
	case name == "robots" || (p.opt.RobotsAgent != "" && name == p.opt.RobotsAgent):
		p.robots.applyList(content)
	case name == "description" && !p.descSeen:
		p.descSeen = true
		p.doc.Description = collapse(content, maxDescriptionBytes)
	}

	switch lowerASCII(trimASCIISpace(httpEquiv)) {
	case "refresh":
		if !p.refreshSeen {
			if ref, ok := refreshTarget(content); ok {
				p.refreshSeen = true
				p.refreshRef = ref
			}
		}
	case "content-language":
		if p.metaLang == "" {
			lang, _, _ := cutByte(content, ',')
			p.metaLang = collapse(lang, maxLanguageBytes)
		}
	}
	return false
}

func (p *htmlParser) htmlElement(z *html.Tokenizer) {
	if p.htmlLang != "" {
		return
	}
	var v [2]string
	attrs(z, htmlLangAttr, v[:])
	lang := collapse(v[0], maxLanguageBytes)
	if lang == "" {
		lang = collapse(v[1], maxLanguageBytes)
	}
	p.htmlLang = lang
}

func (p *htmlParser) finish() *Document {
	d := p.doc
	d.Text = p.text.String()
	d.Headings = p.headings.String()
	d.Language = p.htmlLang
	if d.Language == "" {
		d.Language = p.metaLang
	}
	if p.canonicalSeen {
		if u, res := p.resolve(p.canonicalRef); res == refOK {
			d.Canonical = u
		}
	}
	if p.refreshRef != "" {
		// A refresh is followed like a link; its canonical is a link already.
		switch u, res := p.resolve(p.refreshRef); res {
		case refOK:
			d.RefreshURL = u
		case refInvalid, refTooLong:
			p.reject(p.refreshRef, res, false)
		}
	}
	p.resolveRequisites()
	d.NoIndex = p.robots.noIndex
	d.NoFollow = p.robots.noFollow
	d.NoArchive = p.robots.noArchive
	return d
}

// isRawText reports whether the tokenizer returns the element's content as
// one text token.
func isRawText(a atom.Atom) bool {
	switch a {
	case atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript, atom.Plaintext,
		atom.Script, atom.Style, atom.Textarea, atom.Title, atom.Xmp:
		return true
	}
	return false
}

// breaksOut reports whether a start tag ends foreign content: the list of
// the HTML spec's "in foreign content" insertion mode.
func breaksOut(z *html.Tokenizer, a atom.Atom, hasAttr bool) bool {
	switch a {
	case atom.B, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Center,
		atom.Code, atom.Dd, atom.Div, atom.Dl, atom.Dt, atom.Em, atom.Embed,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Head,
		atom.Hr, atom.I, atom.Img, atom.Li, atom.Listing, atom.Menu, atom.Meta,
		atom.Nobr, atom.Ol, atom.P, atom.Pre, atom.Ruby, atom.S, atom.Small,
		atom.Span, atom.Strong, atom.Strike, atom.Sub, atom.Sup, atom.Table,
		atom.Tt, atom.U, atom.Ul, atom.Var:
		return true
	case atom.Font:
		// Only with one of these attributes; font is not otherwise read,
		// so consuming its attributes here costs nothing.
		for more := hasAttr; more; {
			var k []byte
			k, _, more = z.TagAttr()
			if s := string(k); s == "color" || s == "face" || s == "size" {
				return true
			}
		}
	}
	return false
}

// isInline reports whether an element flows within a line, so its tags do
// not separate words ("<b>bold</b>er" is one word, "<p>a</p><p>b</p>" two).
func isInline(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Big, atom.Cite,
		atom.Code, atom.Data, atom.Del, atom.Dfn, atom.Em, atom.Font, atom.I,
		atom.Ins, atom.Kbd, atom.Label, atom.Mark, atom.Nobr, atom.Q, atom.S,
		atom.Samp, atom.Small, atom.Span, atom.Strike, atom.Strong, atom.Sub,
		atom.Sup, atom.Time, atom.Tt, atom.U, atom.Var, atom.Wbr:
		return true
	}
	return false
}
