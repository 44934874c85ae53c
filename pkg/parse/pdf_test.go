package parse

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/crawlcluster/crawler/internal/pdftest"
)

func TestParsePDF(t *testing.T) {
	d, err := ParsePDF(pdftest.Make(pdftest.Doc{
		Title: "Walrus (field guide)",
		Pages: []string{"Tusks and whiskers.", "Second page: pinnipeds"},
		Links: []string{"http://b.example/next.pdf", "/relative.html", "mailto:x@example.org", "http://[::1"},
	}), "http://a.example/docs/guide.pdf", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Walrus (field guide)" || d.Text != "Tusks and whiskers. Second page: pinnipeds" || d.HTML {
		t.Errorf("title %q, text %q, HTML %v", d.Title, d.Text, d.HTML)
	}
	var links []string
	for _, l := range d.Links {
		links = append(links, l.URL)
	}
	if !slices.Equal(links, []string{"http://b.example/next.pdf", "http://a.example/relative.html"}) || len(d.Rejected) != 1 {
		t.Errorf("links %v, rejected %v: want the http(s) ones resolved against the PDF's URL, the broken one rejected", links, d.Rejected)
	}
	checkPDF(t, d)

	compressed, err := ParsePDF(pdftest.Make(pdftest.Doc{Pages: []string{"deflated text"}, Compress: true}), "http://a.example/c.pdf", nil, Options{})
	if err != nil || compressed.Text != "deflated text" {
		t.Errorf("compressed content: %+v, %v", compressed, err)
	}
}

func TestParsePDFBadInput(t *testing.T) {
	encrypted := pdftest.Make(pdftest.Doc{Pages: []string{"secret"}, Encrypted: true})
	if _, err := ParsePDF(encrypted, "http://a.example/e.pdf", nil, Options{}); !errors.Is(err, ErrPDFEncrypted) || DocReason(err) != ReasonPDFEncrypted {
		t.Errorf("encrypted: %v (reason %q), want ErrPDFEncrypted", err, DocReason(err))
	}
	// A /Prev chain that loops ends when the reads run out of budget, or
	// the time, whichever comes first on the machine.
	if _, err := ParsePDF(pdftest.Make(pdftest.Doc{Pages: []string{"loop"}, PrevLoop: true}), "http://a.example/l.pdf", nil, Options{}); !errors.Is(err, ErrPDFTooLarge) && !errors.Is(err, ErrPDFTimeLimit) {
		t.Errorf("a looping /Prev: %v, want ErrPDFTooLarge or ErrPDFTimeLimit", err)
	}
	good := pdftest.Make(pdftest.Doc{Pages: []string{"text"}})
	for name, body := range map[string][]byte{
		"empty":     nil,
		"html":      []byte("<html>not a pdf</html>"),
		"truncated": good[:len(good)/2],
		"header":    []byte("%PDF-1.4\n"),
	} {
		if _, err := ParsePDF(body, "http://a.example/b.pdf", nil, Options{}); !errors.Is(err, ErrPDFBroken) || DocReason(err) != ReasonPDFBroken {
			t.Errorf("%s: %v (reason %q), want ErrPDFBroken", name, err, DocReason(err))
		}
	}
	if _, err := ParsePDF(good, "not a url", nil, Options{}); !errors.Is(err, ErrBadPageURL) {
		t.Errorf("bad page URL: %v", err)
	}
}

// TestParsePDFBomb: a page whose few kilobytes of deflate inflate past the
// bound is skipped, not read into memory; the other pages are read.
func TestParsePDFBomb(t *testing.T) {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	zeros := make([]byte, 1<<20)
	for range (maxPDFPageContent >> 20) + 1 {
		w.Write(zeros)
	}
	w.Close()
	bomb := pdftest.Make(pdftest.Doc{Pages: []string{"BOMBPAGE", "kept page"}, Deflated: map[int][]byte{0: z.Bytes()}})
	d, err := ParsePDF(bomb, "http://a.example/bomb.pdf", nil, Options{})
	if err != nil {
		t.Fatalf("%v (%d bytes of deflate)", err, z.Len())
	}
	if !strings.Contains(d.Text, "kept page") || strings.Contains(d.Text, "BOMB") || d.Unread != ReasonPDFTooLarge {
		t.Errorf("text %.100q, unread %q: want the second page only, and %s", d.Text, d.Unread, ReasonPDFTooLarge)
	}
}

// TestParsePDFBounds: the bounds that leave part of a PDF unread say so in
// Document.Unread, or in the error when nothing was read; a PDF read whole
// says nothing.
func TestParsePDFBounds(t *testing.T) {
	// pdftest writes one flat page tree, which the library reads anew
	// for every page: a thousand pages of it would spend the reads'
	// budget first.
	defer func(n int) { maxPDFPages = n }(maxPDFPages)
	maxPDFPages = 4
	pages := make([]string, maxPDFPages+1)
	for i := range pages {
		pages[i] = fmt.Sprintf("page%d", i+1)
	}
	d, err := ParsePDF(pdftest.Make(pdftest.Doc{Pages: pages}), "http://a.example/long.pdf", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("page%d", maxPDFPages)
	if !strings.HasSuffix(d.Text, " "+last) || d.Unread != ReasonPDFPageLimit {
		t.Errorf("%d pages: text ends %q, unread %q; want it to end at %s, and %s", len(pages), d.Text[max(0, len(d.Text)-20):], d.Unread, last, ReasonPDFPageLimit)
	}
	whole, err := ParsePDF(pdftest.Make(pdftest.Doc{Pages: pages[:3]}), "http://a.example/short.pdf", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Unread != "" {
		t.Errorf("3 pages: unread %q, want read whole", whole.Unread)
	}

	defer func(b time.Duration) { pdfTimeBudget = b }(pdfTimeBudget)
	pdfTimeBudget = 0 // spent before the first read
	_, err = ParsePDF(pdftest.Make(pdftest.Doc{Pages: pages[:3]}), "http://a.example/slow.pdf", nil, Options{})
	if !errors.Is(err, ErrPDFTimeLimit) || DocReason(err) != ReasonPDFTimeLimit {
		t.Errorf("no time: %v (reason %q), want ErrPDFTimeLimit", err, DocReason(err))
	}
}

// TestParsePDFDebian reads the PDFs Debian ships in its doc packages.
func TestParsePDFDebian(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/usr/share/doc/libtasn1-doc/libtasn1.pdf", "Abstract Syntax Notation One"},
		{"/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf", "Shared MIME-info Database"},
	} {
		body, err := os.ReadFile(c.path)
		if err != nil {
			t.Logf("%s: %v (not installed)", c.path, err)
			continue
		}
		d, err := ParsePDF(body, "http://a.example/doc.pdf", nil, Options{})
		if err != nil || !strings.Contains(d.Text, c.want) {
			t.Errorf("%s: %v; text %.200q, want %q in it", c.path, err, d.Text, c.want)
			continue
		}
		checkPDF(t, d)
	}
}

func TestIsPDF(t *testing.T) {
	for _, c := range []struct {
		ct   string
		body string
		want bool
	}{
		{"application/pdf", "", true},
		{"Application/PDF; name=x.pdf", "", true},
		{"application/octet-stream", "%PDF-1.7 ...", true},
		{"", "%PDF-1.7", true},
		{"text/html", "%PDF-1.7", false},
		{"application/octet-stream", "GIF89a", false},
	} {
		if got := IsPDF(c.ct, []byte(c.body)); got != c.want {
			t.Errorf("IsPDF(%q, %q) = %v", c.ct, c.body, got)
		}
	}
}

// checkPDF holds a PDF's Document to the bounds every Document keeps
// (checkInvariants is for HTML).
func checkPDF(t *testing.T, d *Document) {
	t.Helper()
	if len(d.Text) > DefaultMaxTextSize || len(d.Title) > maxTitleBytes || len(d.Description) > maxDescriptionBytes || len(d.Links) > DefaultMaxLinks {
		t.Errorf("over a cap: text %d, title %d, description %d, links %d", len(d.Text), len(d.Title), len(d.Description), len(d.Links))
	}
	for _, s := range []string{d.Text, d.Title, d.Description} {
		if !utf8.ValidString(s) || s != strings.TrimSpace(s) || strings.Contains(s, "  ") {
			t.Errorf("not valid, collapsed UTF-8: %.80q", s)
		}
	}
	for _, l := range d.Links {
		if !isAbsHTTP(l.URL) {
			t.Errorf("link %q is not absolute http(s)", l.URL)
		}
	}
}

// FuzzParsePDF holds ParsePDF to its contract on any input: a Document
// within the bounds or an error with a reason (DocReason), never a panic.
func FuzzParsePDF(f *testing.F) {
	f.Add(pdftest.Make(pdftest.Doc{Title: "t", Pages: []string{"one", "two"}, Links: []string{"/x", "http://b.example/"}}))
	f.Add(pdftest.Make(pdftest.Doc{Pages: []string{"deflated"}, Compress: true}))
	f.Add(pdftest.Make(pdftest.Doc{Pages: []string{"secret"}, Encrypted: true}))
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 1 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := ParsePDF(body, "http://a.example/f.pdf", nil, Options{})
		if err != nil {
			if DocReason(err) == "" {
				t.Fatalf("error %v is none of the documents' reasons", err)
			}
			return
		}
		checkPDF(t, d)
	})
}
