package parse

import (
	"errors"
	"fmt"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Defaults applied by Parse to zero or negative Options fields.
const (
	DefaultMaxLinks    = 5000
	DefaultMaxTextSize = 256 << 10
)

// Caps on metadata strings, in bytes. They keep hostile pages from bloating
// capture rows; real titles and descriptions are far shorter.
const (
	maxTitleBytes       = 1 << 10
	maxDescriptionBytes = 1 << 10
	maxHeadingsBytes    = 2 << 10
	maxLanguageBytes    = 64
	maxRelBytes         = 256
)

// ErrBadPageURL is returned when the page URL is not an absolute http or
// https URL. Such a message is poison: nothing can be resolved against it.
var ErrBadPageURL = errors.New("page URL is not an absolute http(s) URL")

// Options bound the work and output of Parse.
type Options struct {
	MaxLinks    int    // default 5000, for Links and Rejected each; excess dropped unresolved and counted in Document.LinksDropped
	MaxTextSize int    // bytes of main text kept; default 256 KiB
	RobotsAgent string // product token honoured in <meta name=...> and X-Robots-Tag "agent:" forms, besides "robots"
	// MaxRequisites is how many page requisites (requisites.go) to keep;
	// 0 collects none, and stylesheet and icon <link>s stay links.
	MaxRequisites int

	maxToken int // maxTokenBytes, unless a test wants a cut sooner
}

func (o Options) withDefaults() Options {
	if o.MaxLinks <= 0 {
		o.MaxLinks = DefaultMaxLinks
	}
	if o.MaxTextSize <= 0 {
		o.MaxTextSize = DefaultMaxTextSize
	}
	o.RobotsAgent = strings.ToLower(strings.TrimSpace(o.RobotsAgent))
	if o.maxToken <= 0 {
		o.maxToken = maxTokenBytes
	}
	return o
}

// Link is one outgoing reference found on a page.
type Link struct {
	URL      string // absolute http(s), resolved against the base (page URL or <base href>), not otherwise normalized
	Tag      string // "a", "area", "link", "iframe", "frame"
	Rel      string // rel attribute, lowercased and trimmed
	NoFollow bool   // rel contains the token "nofollow" (not ugc or sponsored)
}

// Rejected is a reference on the page that the parser refused to resolve:
// not a URL, or too long or odd to parse safely (over 8 KiB, say). A
// reference to another scheme (mailto:, javascript:, ftp:) is no crawl target
// and is neither a link nor rejected.
type Rejected struct {
	Ref      string // as found, surrounding whitespace trimmed, whole: the caller bounds what it keeps
	Reason   string // urlnorm's reason code: "url_too_long" or "invalid_url"
	NoFollow bool   // rel contains the token "nofollow", as for Link
}

// Document is what the parser tier learns from one fetched body.
type Document struct {
	HTML         bool       // false for non-HTML content types: no links parsed, content still stored by the caller
	Charset      string     // WHATWG name of the encoding used to decode the body, e.g. "utf-8", "windows-1252", "shift_jis"
	Title        string     // first <title> outside SVG/MathML, whitespace collapsed, at most 1 KiB
	Description  string     // <meta name=description>, whitespace collapsed, at most 1 KiB
	Language     string     // <html lang> (or xml:lang), else <meta http-equiv=content-language>
	Canonical    string     // absolute http(s), from the first <link rel=canonical>
	Links        []Link     // in document order, at most Options.MaxLinks
	Rejected     []Rejected // references that name no usable URL, in document order, at most Options.MaxLinks
	LinksDropped int        // references beyond Options.MaxLinks, not resolved (so possibly invalid or not http(s))
	Headings     string     // text of <h1>-<h3>, in document order, whitespace collapsed, at most 2 KiB
	Text         string     // visible text (no script/style/noscript/template/svg), whitespace collapsed, at most Options.MaxTextSize bytes
	NoIndex      bool       // meta robots / X-Robots-Tag noindex (or "none")
	NoFollow     bool       // meta robots / X-Robots-Tag nofollow (or "none"): caller follows no links
	NoArchive    bool       // meta robots / X-Robots-Tag noarchive (or "nocache")
	RefreshURL   string     // absolute http(s) target of the first <meta http-equiv=refresh>
	// Requisites are what the page needs to display (Options.MaxRequisites),
	// absolute http(s), each once, in document order; RequisitesDropped
	// counts those past the cap or that did not resolve.
	Requisites        []string `json:",omitempty"` // omitted: the golden files predate them
	RequisitesDropped int      `json:",omitempty"`
	// Unread says why part of a document (a PDF, docx or odt) was not read, one of the
	// Reason constants (ReasonPDFPageLimit, ...); "" when it was read
	// whole. The text cap (Options.MaxTextSize) is no reason: it is the
	// same for every page.
	Unread string `json:",omitempty"`
}

// Parse reads body (already content-decoded), contentType is the Content-Type
// header value, pageURL the absolute URL the body was fetched from, xRobotsTag
// all X-Robots-Tag header values ("agent: directives" forms are honoured for
// Options.RobotsAgent and for all agents).
//
// A non-HTML body gives a Document with HTML false and only the X-Robots-Tag
// directives set. The only error is ErrBadPageURL (wrapped); malformed bodies
// are parsed as far as they go.
func Parse(body []byte, contentType string, pageURL string, xRobotsTag []string, opt Options) (*Document, error) {
	opt = opt.withDefaults()
	page, err := newPageAddr(pageURL)
	if err != nil {
		return nil, err
	}

	robots := headerDirectives(xRobotsTag, opt.RobotsAgent)

	doc := &Document{}
	if IsHTML(contentType, body) {
		enc := detectEncoding(body, contentType)
		doc, err = parseHTML(body, enc, page, opt)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", pageURL, err)
		}
	}
	doc.NoIndex = doc.NoIndex || robots.noIndex
	doc.NoFollow = doc.NoFollow || robots.noFollow
	doc.NoArchive = doc.NoArchive || robots.noArchive
	return doc, nil
}

// headerDirectives reads the X-Robots-Tag header values.
func headerDirectives(xRobotsTag []string, agent string) directives {
	var d directives
	for _, v := range xRobotsTag {
		d.applyHeader(v, agent)
	}
	return d
}

// pageAddr is the URL a body was fetched from, the base of its references
// until a <base href>. The crawler's page URLs are mostly in urlnorm's canonical
// form, whose parts resolvePlainPath can take as they stand: the WHATWG
// parser, which costs as much as a tenth of parsing a page, then only runs
// over the page URL if a reference needs it.
type pageAddr struct {
	raw    string
	parsed *whatwg.Url // nil until url is called
	plain  plainBase
}

func newPageAddr(pageURL string) (*pageAddr, error) {
	if urlnorm.IsCanonical(pageURL) {
		return &pageAddr{raw: pageURL, plain: canonicalBase(pageURL)}, nil
	}
	u, err := parsePageURL(pageURL)
	if err != nil {
		return nil, err
	}
	return &pageAddr{raw: pageURL, parsed: u, plain: plainBaseOf(u)}, nil
}

// url returns the parsed page URL. It is nil only if the WHATWG parser
// rejects a URL that urlnorm calls canonical, which it does not do.
func (p *pageAddr) url() *whatwg.Url {
	if p.parsed == nil {
		p.parsed, _ = parsePageURL(p.raw)
	}
	return p.parsed
}

func parsePageURL(pageURL string) (*whatwg.Url, error) {
	u, err := whatwg.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("parse page URL %q: %w: %v", pageURL, ErrBadPageURL, err)
	}
	if s := u.Scheme(); s != "http" && s != "https" {
		return nil, fmt.Errorf("parse page URL %q: %w", pageURL, ErrBadPageURL)
	}
	return u, nil
}
