package sitemap

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Limits bound the work and memory one sitemap file may cost. Zero or negative
// fields take the values of DefaultLimits.
type Limits struct {
	MaxURLs         int   // entries delivered per file; sitemaps.org allows 50,000
	MaxDecodedBytes int64 // bytes per file after decompression; sitemaps.org allows 50 MB; also the gzip-bomb cap
}

// Protocol limits from sitemaps.org.
const (
	defaultMaxURLs         = 50_000
	defaultMaxDecodedBytes = 50 << 20 // 52,428,800
)

// DefaultLimits returns the sitemaps.org per-file limits.
func DefaultLimits() Limits {
	return Limits{MaxURLs: defaultMaxURLs, MaxDecodedBytes: defaultMaxDecodedBytes}
}

func (l Limits) withDefaults() Limits {
	if l.MaxURLs <= 0 {
		l.MaxURLs = defaultMaxURLs
	}
	if l.MaxDecodedBytes <= 0 {
		l.MaxDecodedBytes = defaultMaxDecodedBytes
	}
	return l
}

// Kind is the format Parse recognised.
type Kind int

const (
	// KindUnknown means the body is not a sitemap (an HTML error page, an
	// RSS feed, an empty body); Parse returns ErrUnknownFormat with it.
	KindUnknown Kind = iota
	// KindURLSet is an XML <urlset>: entries are pages to crawl.
	KindURLSet
	// KindIndex is an XML <sitemapindex>: entries are sitemaps to fetch.
	KindIndex
	// KindText is a plain-text sitemap, one URL per line: entries are pages.
	KindText
)

// String returns a short lower-case name, stable enough for logs and metric labels.
func (k Kind) String() string {
	switch k {
	case KindURLSet:
		return "urlset"
	case KindIndex:
		return "sitemapindex"
	case KindText:
		return "text"
	default:
		return "unknown"
	}
}

// Entry is one <url> of a urlset, one <sitemap> of an index, or one line of a
// text sitemap.
type Entry struct {
	Loc        string    // trimmed and as written: an absolute http(s) URL; the caller normalizes
	LastMod    time.Time // UTC; zero when absent or not a W3C datetime
	ChangeFreq string    // lower-case protocol value ("daily", ...); "" when absent or invalid
	Priority   float64   // 0.0-1.0; -1 when absent or invalid
}

// Result summarises one Parse call. It is meaningful also when Parse returns
// an error: the entries counted were delivered and stand.
type Result struct {
	Kind      Kind
	Entries   int    // entries passed to fn, including one whose fn call failed
	Skipped   int    // invalid entries: missing, relative, non-http(s) or over-long loc
	Truncated bool   // a limit was hit; the reason is in Reason
	Reason    string // ReasonMaxURLs, ReasonMaxDecodedBytes, or ""
}

// Truncation reasons reported in Result.Reason.
const (
	ReasonMaxURLs         = "max_urls"
	ReasonMaxDecodedBytes = "max_decoded_bytes"
)

var (
	// ErrUnknownFormat means the body is neither sitemap XML nor a text
	// sitemap (another XML root, UTF-16, an undecodable charset, empty).
	ErrUnknownFormat = errors.New("not a sitemap")
	// ErrMalformed means the XML broke off or stopped parsing part-way; the
	// error text says where. Entries delivered before that point stand.
	ErrMalformed = errors.New("malformed sitemap")
)

// errStop ends a parse early without an error (the MaxURLs limit).
var errStop = errors.New("stop")

// Parse streams r (it must not buffer the whole document), detects gzip by
// magic bytes and decompresses with the decoded-size cap, detects XML urlset /
// sitemapindex / plain text, and calls fn for each entry in document order.
// fn returning an error stops the parse and that error is returned (wrapped).
// Malformed XML after some valid entries: the entries already delivered
// stand, and the error (ErrMalformed) describes the position.
//
// Hitting a limit is not an error: Parse stops, delivers nothing past the
// limit (in particular no URL cut off mid-way) and sets Result.Truncated.
func Parse(r io.Reader, lim Limits, fn func(Entry) error) (Result, error) {
	lim = lim.withDefaults()
	if fn == nil {
		fn = func(Entry) error { return nil }
	}
	p := &parser{lim: lim, fn: fn}
	err := p.run(r)
	switch {
	case errors.Is(err, errStop):
		err = nil
	case errors.Is(err, errDecodedLimit):
		p.res.Truncated, p.res.Reason = true, ReasonMaxDecodedBytes
		err = nil
	}
	return p.res, err
}

// parser carries the state of one Parse call.
type parser struct {
	lim Limits
	fn  func(Entry) error
	res Result
}

func (p *parser) run(r io.Reader) error {
	br, err := openBody(r, p.lim.MaxDecodedBytes)
	if err != nil {
		return err
	}
	kind, err := sniff(br)
	if err != nil {
		return err
	}
	if kind == KindText {
		p.res.Kind = KindText
		return p.parseText(br)
	}
	return p.parseXML(br)
}

// deliver validates e and hands it to fn, enforcing MaxURLs. Invalid entries
// are counted, not delivered.
func (p *parser) deliver(e Entry) error {
	if !validLoc(e.Loc) {
		p.res.Skipped++
		return nil
	}
	if p.res.Entries >= p.lim.MaxURLs {
		p.res.Truncated, p.res.Reason = true, ReasonMaxURLs
		return errStop
	}
	p.res.Entries++
	if err := p.fn(e); err != nil {
		return fmt.Errorf("sitemap: handle %s entry %d (%s): %w", p.res.Kind, p.res.Entries, e.Loc, err)
	}
	return nil
}
