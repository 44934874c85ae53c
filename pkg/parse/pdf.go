package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// PDF documents are read with github.com/ledongthuc/pdf: pure Go, no
// dependencies, maintained, and it extracts text through each font's
// encoding and ToUnicode map (rsc.io/pdf, which it continues, reads the
// structure only; pdfcpu validates and rewrites PDFs but leaves text to its
// callers). The library panics on malformed input and decodes streams
// without a bound, so every call here runs under recover, each page's
// content is measured before it is interpreted, and the whole document has
// a time budget.

// Bounds of a PDF's reading.
const (
	maxPDFPageContent = 16 << 20 // bytes of one page's decoded content streams
	maxPDFContent     = 64 << 20 // of all pages'
)

// Variables for the tests, which lower them.
var (
	maxPDFPages   = 1000
	pdfTimeBudget = 5 * time.Second
)

// maxPDFReads bounds the bytes the library may read from the file, however
// often it reads the same ones: it reads objects anew at every use and
// follows references without remembering where it has been, so a /Prev
// chain or a page tree that loops would read forever (FuzzParsePDF found
// both). Running out, or past the time budget, ends the reading as a
// broken file does.
const maxPDFReads = 512 << 20

// budgetReader is the file as the library reads it, within the bounds.
type budgetReader struct {
	r        io.ReaderAt
	left     int64
	deadline time.Time
	// stopped is the bound that ended the reading, so that the reason
	// recorded is that bound's and not a broken file's.
	stopped string
}

func (b *budgetReader) ReadAt(p []byte, off int64) (int, error) {
	b.left -= int64(len(p))
	if b.left < 0 {
		b.stopped = ReasonPDFTooLarge
		panic(errPDFStop) // the library's callers and ours recover
	}
	if time.Now().After(b.deadline) {
		b.stopped = ReasonPDFTimeLimit
		panic(errPDFStop)
	}
	return b.r.ReadAt(p, off)
}

// Reasons a document was not read, or read in part: stable strings, which
// the parser records on the document's capture (store.Capture.DocReason)
// and counts, and docs/data.md lists.
const (
	ReasonPDFTruncated = "pdf_truncated" // cut short by the fetch's body limits: not read (the parser's)
	ReasonPDFEncrypted = "pdf_encrypted"
	ReasonPDFBroken    = "pdf_broken"
	// A bound of the reading was hit: the pages read before it are kept.
	ReasonPDFPageLimit = "pdf_page_limit" // more than maxPDFPages pages
	ReasonPDFTooLarge  = "pdf_too_large"  // a page's or the document's decoded content, or the reads, past their bound
	ReasonPDFTimeLimit = "pdf_time_limit" // pdfTimeBudget spent
)

// Reasons a PDF yields no document, for the parser's records. A bound hit
// before anything was read (ErrPDFTooLarge, ErrPDFTimeLimit) is one too.
var (
	ErrPDFEncrypted = errors.New(ReasonPDFEncrypted) // a password is needed to read it
	ErrPDFBroken    = errors.New(ReasonPDFBroken)    // not a PDF the library can read
	ErrPDFTooLarge  = errors.New(ReasonPDFTooLarge)
	ErrPDFTimeLimit = errors.New(ReasonPDFTimeLimit)
)

// DocReason returns the reason a document's parser error stands for (one
// of the Reason constants), "" for an error that is none of them.
func DocReason(err error) string {
	for _, e := range []error{ErrPDFEncrypted, ErrPDFBroken, ErrPDFTooLarge, ErrPDFTimeLimit, ErrOfficeEncrypted, ErrOfficeBroken, ErrOfficeTooLarge} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return ""
}

// stopError is the error of a reading that a bound ended, else broken.
func stopError(stopped string) error {
	switch stopped {
	case ReasonPDFTooLarge:
		return ErrPDFTooLarge
	case ReasonPDFTimeLimit:
		return ErrPDFTimeLimit
	}
	return ErrPDFBroken
}

// IsPDF reports whether the body is a PDF: by its Content-Type, or by its
// signature when the type says nothing useful.
func IsPDF(contentType string, body []byte) bool {
	if !bytes.HasPrefix(body, []byte("%PDF-")) && !declaredAs(contentType, "application/pdf", "application/x-pdf") {
		return false // neither sniffed nor declared: the usual page, its header's parameters not parsed
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch strings.ToLower(mt) {
	case "application/pdf", "application/x-pdf":
		return true
	case "", "application/octet-stream", "binary/octet-stream":
		return bytes.HasPrefix(body, []byte("%PDF-"))
	}
	return false
}

// errPDFStop ends the interpretation of a page whose text is complete, or
// when the time budget is spent.
var errPDFStop = errors.New("stop")

// ParsePDF reads a PDF's text (its pages', in order, white space collapsed,
// at most Options.MaxTextSize), its title and subject (the document
// information dictionary's), and the URIs of its link annotations, resolved
// against pageURL; X-Robots-Tag directives apply as to a page. It returns ErrPDFEncrypted or ErrPDFBroken (wrapped) when
// it reads nothing, ErrPDFTooLarge or ErrPDFTimeLimit when a bound ends the
// reading before the first page, and ErrBadPageURL for a page URL that is
// not absolute http(s). A page that breaks off or is too large is skipped;
// what the other pages hold is kept, and Document.Unread says which bound
// left pages unread.
func ParsePDF(body []byte, pageURL string, xRobotsTag []string, opt Options) (doc *Document, err error) {
	opt = opt.withDefaults()
	page, err := newPageAddr(pageURL)
	if err != nil {
		return nil, err
	}
	robots := headerDirectives(xRobotsTag, opt.RobotsAgent)
	deadline := time.Now().Add(pdfTimeBudget)
	br := &budgetReader{r: bytes.NewReader(body), left: maxPDFReads, deadline: deadline}
	r, err := pdf.NewReader(br, int64(len(body)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) {
			return nil, fmt.Errorf("%w: %v", ErrPDFEncrypted, err)
		}
		return nil, fmt.Errorf("%w: %v", stopError(br.stopped), err)
	}
	p := &pdfReader{r: r, br: br, doc: &Document{}, text: textBuilder{max: opt.MaxTextSize}, deadline: deadline,
		html: newHTMLParser(encodingChoice{name: "utf-8"}, page, opt)}
	if err := p.read(); err != nil {
		return nil, err
	}
	p.doc.NoIndex, p.doc.NoFollow, p.doc.NoArchive = robots.noIndex, robots.noFollow, robots.noArchive
	return p.doc, nil
}

type pdfReader struct {
	r        *pdf.Reader
	br       *budgetReader
	doc      *Document
	text     textBuilder
	html     *htmlParser // resolves and bounds the links, as on a page
	content  int64       // decoded content bytes read so far
	deadline time.Time
}

func (p *pdfReader) read() (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("%w: %v", stopError(p.br.stopped), x)
		}
	}()
	info := p.r.Trailer().Key("Info")
	p.doc.Title = collapse(info.Key("Title").Text(), maxTitleBytes)
	p.doc.Description = collapse(info.Key("Subject").Text(), maxDescriptionBytes)
	n := p.r.NumPage()
	if n > maxPDFPages {
		n = maxPDFPages
		p.unread(ReasonPDFPageLimit)
	}
	for i := 1; i <= n; i++ {
		if !time.Now().Before(p.deadline) {
			p.unread(ReasonPDFTimeLimit)
			break
		}
		p.page(i)
		p.text.boundary()
	}
	p.doc.Text = p.text.String()
	p.doc.Links, p.doc.Rejected, p.doc.LinksDropped = p.html.doc.Links, p.html.doc.Rejected, p.html.doc.LinksDropped
	return nil
}

// unread records the first bound that left part of the document unread.
func (p *pdfReader) unread(reason string) {
	if p.doc.Unread == "" {
		p.doc.Unread = reason
	}
}

// page adds one page's text and links; a page that breaks off keeps what
// it gave.
func (p *pdfReader) page(i int) {
	defer func() {
		if recover() != nil && p.br.stopped != "" {
			p.unread(p.br.stopped)
		}
	}()
	pg := p.r.Page(i)
	if pg.V.IsNull() {
		return
	}
	p.links(pg)
	contents := pg.V.Key("Contents")
	if contents.IsNull() || p.text.full {
		return
	}
	if !p.measure(contents) {
		p.unread(ReasonPDFTooLarge)
		return
	}
	enc := map[string]pdf.TextEncoding{}
	for _, name := range pg.Fonts() {
		f := pg.Font(name)
		enc[name] = f.Encoder()
	}
	var cur pdf.TextEncoding
	show := func(v pdf.Value) {
		if v.Kind() != pdf.String {
			return
		}
		s := v.RawString()
		if cur != nil {
			s = cur.Decode(s)
		}
		p.text.write([]byte(s))
	}
	pdf.Interpret(contents, func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT", "ET", "T*", "Td", "TD", "Tm", "'", "\"":
			p.text.boundary()
		case "Tf":
			if len(args) == 2 {
				cur = enc[args[0].Name()]
			}
		}
		switch op {
		case "Tj", "'", "\"":
			if len(args) > 0 {
				show(args[len(args)-1])
			}
		case "TJ":
			if len(args) == 1 {
				for j := 0; j < args[0].Len(); j++ {
					x := args[0].Index(j)
					if x.Kind() != pdf.String && x.Float64() < -200 {
						// A wide gap between glyphs is a space between words.
						p.text.boundary()
					}
					show(x)
				}
			}
		}
		if p.text.full {
			panic(errPDFStop)
		}
		if time.Now().After(p.deadline) {
			p.br.stopped = ReasonPDFTimeLimit
			panic(errPDFStop)
		}
	})
}

// measure reports whether a page's content streams decode within the
// bounds, counting them against the document's: the library would hold a
// token of any length, and a few kilobytes of deflate inflate to gigabytes.
func (p *pdfReader) measure(contents pdf.Value) bool {
	streams := []pdf.Value{contents}
	if contents.Kind() == pdf.Array {
		streams = streams[:0]
		for i := 0; i < contents.Len(); i++ {
			streams = append(streams, contents.Index(i))
		}
	}
	var n int64
	for _, s := range streams {
		rc := s.Reader()
		m, _ := io.Copy(io.Discard, io.LimitReader(rc, maxPDFPageContent+1-n))
		rc.Close()
		n += m
		if n > maxPDFPageContent {
			return false
		}
	}
	p.content += n
	return p.content <= maxPDFContent
}

// links adds the URIs of the page's link annotations.
func (p *pdfReader) links(pg pdf.Page) {
	annots := pg.V.Key("Annots")
	for i := 0; i < annots.Len(); i++ {
		a := annots.Index(i)
		if a.Key("Subtype").Name() != "Link" {
			continue
		}
		if uri := a.Key("A").Key("URI"); uri.Kind() == pdf.String {
			p.html.addLink("a", uri.RawString(), "")
		}
	}
}
