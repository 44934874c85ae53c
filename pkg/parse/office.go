package parse

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
)

// Office documents (docx, odt) are zip files of XML, read with the standard
// library's archive/zip and encoding/xml: the Go module proxy serves no
// well-kept pure-Go reader of either (baliance.com/gooxml is not served, the
// others are young or unmaintained), and text and hyperlinks are all the
// parser needs of them, a few elements of one part each. A zip is a bomb
// waiting to happen, so the entries are counted, each part is read through
// a limit whatever its header claims, and the whole has a time budget.

// Bounds of an office document's reading.
const (
	maxOfficeEntries = 10_000  // files in the zip
	maxOfficePart    = 8 << 20 // uncompressed bytes read of one part; the decoder may hold twice that in one token
	maxOfficeTokens  = 4 << 20 // XML tokens of one part
)

// officeTimeBudget is a variable for the tests, which spend it at once.
var officeTimeBudget = 5 * time.Second

// Reasons an office document was not read, or read in part (see the PDF's).
const (
	ReasonOfficeTruncated = "office_truncated" // cut short by the fetch's body limits: its zip directory is at the end (the parser's)
	ReasonOfficeEncrypted = "office_encrypted"
	ReasonOfficeBroken    = "office_broken"
	ReasonOfficeTooLarge  = "office_too_large"  // too many entries, or a part past its bound
	ReasonOfficeTimeLimit = "office_time_limit" // officeTimeBudget spent
)

var (
	ErrOfficeEncrypted = errors.New(ReasonOfficeEncrypted) // a password is needed to read it
	ErrOfficeBroken    = errors.New(ReasonOfficeBroken)    // not a zip, or no text part the parser can read
	ErrOfficeTooLarge  = errors.New(ReasonOfficeTooLarge)
)

// Office formats.
const (
	FormatDOCX = "docx"
	FormatODT  = "odt"
)

// cfbMagic starts an OLE compound file: what Word writes for a docx with a
// password (the package, encrypted, inside it).
var cfbMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// OfficeFormat says which office format the body is, "" for none: by its
// Content-Type, or by the URL's extension when the type says nothing useful
// (a generic type and a zip's or a compound file's signature).
func OfficeFormat(contentType, rawURL string, body []byte) string {
	if !bytes.HasPrefix(body, []byte("PK\x03\x04")) && !bytes.HasPrefix(body, cfbMagic) &&
		!declaredAs(contentType, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/vnd.oasis.opendocument.text") {
		return "" // neither sniffed nor declared: the usual page, its header's parameters not parsed
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch strings.ToLower(mt) {
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return FormatDOCX
	case "application/vnd.oasis.opendocument.text":
		return FormatODT
	case "", "application/octet-stream", "binary/octet-stream", "application/zip", "application/x-zip-compressed":
		if !bytes.HasPrefix(body, []byte("PK\x03\x04")) && !bytes.HasPrefix(body, cfbMagic) {
			return ""
		}
		path, _, _ := strings.Cut(rawURL, "?")
		path, _, _ = strings.Cut(path, "#")
		switch p := strings.ToLower(path); {
		case strings.HasSuffix(p, ".docx"):
			return FormatDOCX
		case strings.HasSuffix(p, ".odt"):
			return FormatODT
		}
	}
	return ""
}

// ParseOffice reads a docx's or odt's text (its body's paragraphs, white
// space collapsed, at most Options.MaxTextSize), title and description (its
// metadata's) and hyperlinks, resolved against pageURL; X-Robots-Tag
// directives apply as to a page. It returns ErrOfficeEncrypted,
// ErrOfficeBroken or ErrOfficeTooLarge (wrapped) when it reads nothing, and
// ErrBadPageURL for a page URL that is not absolute http(s). A part cut off
// by a bound keeps what it gave, and Document.Unread says which bound.
func ParseOffice(body []byte, format, pageURL string, xRobotsTag []string, opt Options) (*Document, error) {
	opt = opt.withDefaults()
	page, err := newPageAddr(pageURL)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(body, cfbMagic) {
		return nil, fmt.Errorf("%w: a compound file, which an office document is when it has a password", ErrOfficeEncrypted)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if errors.Is(err, zip.ErrInsecurePath) {
		err = nil // the reader is good; only names are read from it, never paths on disk
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOfficeBroken, err)
	}
	if len(zr.File) > maxOfficeEntries {
		return nil, fmt.Errorf("%w: %d entries in the zip, at most %d", ErrOfficeTooLarge, len(zr.File), maxOfficeEntries)
	}
	o := &officeReader{zr: zr, doc: &Document{}, text: textBuilder{max: opt.MaxTextSize},
		deadline: time.Now().Add(officeTimeBudget), html: newHTMLParser(encodingChoice{name: "utf-8"}, page, opt)}
	switch format {
	case FormatDOCX:
		err = o.docx()
	case FormatODT:
		err = o.odt()
	default:
		err = fmt.Errorf("%w: format %q", ErrOfficeBroken, format)
	}
	if err != nil {
		return nil, err
	}
	robots := headerDirectives(xRobotsTag, opt.RobotsAgent)
	o.doc.Text = o.text.String()
	o.doc.Links, o.doc.Rejected, o.doc.LinksDropped = o.html.doc.Links, o.html.doc.Rejected, o.html.doc.LinksDropped
	o.doc.NoIndex, o.doc.NoFollow, o.doc.NoArchive = robots.noIndex, robots.noFollow, robots.noArchive
	return o.doc, nil
}

type officeReader struct {
	zr       *zip.Reader
	doc      *Document
	text     textBuilder
	html     *htmlParser // resolves and bounds the links, as on a page
	deadline time.Time
}

func (o *officeReader) file(name string) *zip.File {
	for _, f := range o.zr.File {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// unread records the first bound that left part of the document unread.
func (o *officeReader) unread(reason string) {
	if o.doc.Unread == "" {
		o.doc.Unread = reason
	}
}

// walk calls fn with each token of part name within the bounds. It reports
// false when the part is missing or is not XML before its first element:
// nothing was read. A part that breaks off later keeps what it gave.
func (o *officeReader) walk(name string, fn func(xml.Token)) (bool, error) {
	f := o.file(name)
	if f == nil {
		return false, nil
	}
	rc, err := f.Open()
	if err != nil {
		return false, fmt.Errorf("%w: %s: %v", ErrOfficeBroken, name, err)
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: maxOfficePart + 1}
	d := xml.NewDecoder(lr)
	d.Strict = false
	d.CharsetReader = func(string, io.Reader) (io.Reader, error) { return nil, errors.New("only UTF-8") }
	started := false
	for n := 0; ; n++ {
		if n >= maxOfficeTokens || lr.N <= 0 {
			o.unread(ReasonOfficeTooLarge)
			return true, nil
		}
		if n%1024 == 0 && time.Now().After(o.deadline) {
			o.unread(ReasonOfficeTimeLimit)
			return true, nil
		}
		tok, err := d.RawToken()
		if err != nil {
			if !started {
				return false, fmt.Errorf("%w: %s: %v", ErrOfficeBroken, name, err)
			}
			if lr.N <= 0 {
				o.unread(ReasonOfficeTooLarge)
			}
			return true, nil
		}
		if _, ok := tok.(xml.StartElement); ok {
			started = true
		}
		fn(tok)
	}
}

// meta reads the title and description of a metadata part: Dublin Core's
// title and description (or subject, which Word's Properties fill in).
func (o *officeReader) meta(name string) {
	var in string
	var title, desc, subject strings.Builder
	_, _ = o.walk(name, func(tok xml.Token) {
		switch t := tok.(type) {
		case xml.StartElement:
			in = t.Name.Local
		case xml.EndElement:
			in = ""
		case xml.CharData:
			switch in {
			case "title":
				if title.Len() < maxTitleBytes*4 {
					title.Write(t)
				}
			case "description":
				if desc.Len() < maxDescriptionBytes*4 {
					desc.Write(t)
				}
			case "subject":
				if subject.Len() < maxDescriptionBytes*4 {
					subject.Write(t)
				}
			}
		}
	})
	o.doc.Title = collapse(title.String(), maxTitleBytes)
	if desc.Len() == 0 {
		desc = subject
	}
	o.doc.Description = collapse(desc.String(), maxDescriptionBytes)
}

// docx reads word/document.xml: w:t runs are text, w:tab and w:br spaces,
// each w:p a paragraph; hyperlinks are the document's relationships of the
// hyperlink type with an external target, in the order the body uses them.
func (o *officeReader) docx() error {
	targets := map[string]string{}
	_, err := o.walk("word/_rels/document.xml.rels", func(tok xml.Token) {
		if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "Relationship" {
			if strings.HasSuffix(attr(t, "Type"), "/hyperlink") && strings.EqualFold(attr(t, "TargetMode"), "External") {
				targets[attr(t, "Id")] = attr(t, "Target")
			}
		}
	})
	if err != nil {
		return err
	}
	inText := false
	ok, err := o.walk("word/document.xml", func(tok xml.Token) {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab", "br", "cr", "p":
				o.text.boundary()
			case "hyperlink":
				if target, ok := targets[attr(t, "id")]; ok {
					o.html.addLink("a", target, "")
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				o.text.boundary()
			}
		case xml.CharData:
			if inText {
				o.text.write(t)
			}
		}
	})
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: no word/document.xml", ErrOfficeBroken)
	}
	o.meta("docProps/core.xml")
	return nil
}

// odt reads content.xml: the character data inside office:body is text,
// text:s, text:tab and text:line-break spaces, each text:p and text:h a
// paragraph; text:a's xlink:href are links. A content.xml the manifest
// lists with encryption data is encrypted.
func (o *officeReader) odt() error {
	encrypted := false
	var entry string
	if _, err := o.walk("META-INF/manifest.xml", func(tok xml.Token) {
		if t, ok := tok.(xml.StartElement); ok {
			switch t.Name.Local {
			case "file-entry":
				entry = attr(t, "full-path")
			case "encryption-data":
				encrypted = encrypted || entry == "content.xml"
			}
		}
	}); err != nil {
		return err
	}
	if encrypted {
		return fmt.Errorf("%w: the manifest lists content.xml as encrypted", ErrOfficeEncrypted)
	}
	depth := 0 // inside office:body
	ok, err := o.walk("content.xml", func(tok xml.Token) {
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "body" || depth > 0 {
				depth++
			}
			switch t.Name.Local {
			case "s", "tab", "line-break", "p", "h":
				o.text.boundary()
			case "a":
				if href := attr(t, "href"); href != "" && depth > 0 {
					o.html.addLink("a", href, "")
				}
			}
		case xml.EndElement:
			if depth > 0 {
				depth--
			}
			if t.Name.Local == "p" || t.Name.Local == "h" {
				o.text.boundary()
			}
		case xml.CharData:
			if depth > 0 {
				o.text.write(t)
			}
		}
	})
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: no content.xml", ErrOfficeBroken)
	}
	o.meta("meta.xml")
	return nil
}

// attr returns the value of the element's attribute of that local name, in
// whatever namespace: RawToken leaves prefixes unresolved.
func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}
