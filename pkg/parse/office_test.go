package parse

import (
	"archive/zip"
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/officetest"
)

func TestParseOffice(t *testing.T) {
	for _, format := range []string{FormatDOCX, FormatODT} {
		body := officetest.Make(officetest.Doc{Format: format, Title: "Puffin <notes>",
			Paragraphs: []string{"Burrows on cliffs.", "Second paragraph: sand eels"},
			Links:      []string{"http://b.example/next.odt", "/relative.html", "mailto:x@example.org"}})
		d, err := ParseOffice(body, format, "http://a.example/docs/notes."+format, nil, Options{})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if d.Title != "Puffin <notes>" || !strings.HasPrefix(d.Text, "Burrows on cliffs. Second paragraph: sand eels") || d.Unread != "" || d.HTML {
			t.Errorf("%s: title %q, text %q, unread %q, HTML %v", format, d.Title, d.Text, d.Unread, d.HTML)
		}
		var links []string
		for _, l := range d.Links {
			links = append(links, l.URL)
		}
		if !slices.Equal(links, []string{"http://b.example/next.odt", "http://a.example/relative.html"}) {
			t.Errorf("%s: links %v, want the http(s) ones resolved against the document's URL", format, links)
		}
		checkPDF(t, d)

		if _, err := ParseOffice(body, format, "not a url", nil, Options{}); !errors.Is(err, ErrBadPageURL) {
			t.Errorf("%s: bad page URL: %v", format, err)
		}
	}
}

func TestParseOfficeBadInput(t *testing.T) {
	for _, format := range []string{FormatDOCX, FormatODT} {
		locked := officetest.Make(officetest.Doc{Format: format, Paragraphs: []string{"zebra"}, Encrypted: true})
		if _, err := ParseOffice(locked, format, "http://a.example/e."+format, nil, Options{}); !errors.Is(err, ErrOfficeEncrypted) || DocReason(err) != ReasonOfficeEncrypted {
			t.Errorf("%s encrypted: %v (reason %q), want ErrOfficeEncrypted", format, err, DocReason(err))
		}
		good := officetest.Make(officetest.Doc{Format: format, Paragraphs: []string{"text"}})
		other := officetest.Make(officetest.Doc{Format: map[string]string{FormatDOCX: FormatODT, FormatODT: FormatDOCX}[format], Paragraphs: []string{"text"}})
		for name, body := range map[string][]byte{
			"empty":        nil,
			"html":         []byte("<html>not a zip</html>"),
			"truncated":    good[:len(good)/2],
			"other format": other,
		} {
			if _, err := ParseOffice(body, format, "http://a.example/b."+format, nil, Options{}); !errors.Is(err, ErrOfficeBroken) || DocReason(err) != ReasonOfficeBroken {
				t.Errorf("%s %s: %v (reason %q), want ErrOfficeBroken", format, name, err, DocReason(err))
			}
		}
	}
}

// zipOf writes the named parts, deflated.
func zipOf(t *testing.T, parts map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, body := range parts {
		fw, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParseOfficeBomb: a part that inflates past its bound is read up to
// the bound, not into memory, and says so; a zip of too many entries is
// not read.
func TestParseOfficeBomb(t *testing.T) {
	text := bytes.Repeat([]byte("sandeel "), (maxOfficePart/8)+1024)
	doc := append(append([]byte(`<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>`), text...), `</w:t></w:r></w:p></w:body></w:document>`...)
	bomb := zipOf(t, map[string][]byte{"word/document.xml": doc})
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes: want a small file that inflates", len(bomb))
	}
	d, err := ParseOffice(bomb, FormatDOCX, "http://a.example/bomb.docx", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Unread != ReasonOfficeTooLarge || !strings.HasPrefix(d.Text, "sandeel sandeel") {
		t.Errorf("bomb: unread %q, text %.40q; want the text up to the bound and %s", d.Unread, d.Text, ReasonOfficeTooLarge)
	}
	checkPDF(t, d)

	parts := map[string][]byte{}
	for i := range maxOfficeEntries + 1 {
		parts[string(rune('a'+i%26))+strings.Repeat("x", i/26)] = nil
	}
	if _, err := ParseOffice(zipOf(t, parts), FormatODT, "http://a.example/many.odt", nil, Options{}); !errors.Is(err, ErrOfficeTooLarge) || DocReason(err) != ReasonOfficeTooLarge {
		t.Errorf("%d entries: %v, want ErrOfficeTooLarge", len(parts), err)
	}
}

// TestParseOfficeTimeLimit: a document read when the budget is spent says
// so, with what it read by then (nothing here).
func TestParseOfficeTimeLimit(t *testing.T) {
	defer func(b time.Duration) { officeTimeBudget = b }(officeTimeBudget)
	officeTimeBudget = 0
	d, err := ParseOffice(officetest.Make(officetest.Doc{Format: FormatODT, Paragraphs: []string{"late"}}), FormatODT, "http://a.example/slow.odt", nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Unread != ReasonOfficeTimeLimit || d.Text != "" {
		t.Errorf("no time: unread %q, text %q; want %s and no text", d.Unread, d.Text, ReasonOfficeTimeLimit)
	}
}

func TestOfficeFormat(t *testing.T) {
	zipped := officetest.Make(officetest.Doc{Format: FormatODT})
	for _, c := range []struct {
		ct, url string
		body    []byte
		want    string
	}{
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "http://a.example/x", nil, FormatDOCX},
		{"application/vnd.oasis.opendocument.text; charset=binary", "http://a.example/x", nil, FormatODT},
		{"application/octet-stream", "http://a.example/x.ODT?v=1", zipped, FormatODT},
		{"", "http://a.example/x.docx", zipped, FormatDOCX},
		{"application/octet-stream", "http://a.example/x.docx", []byte("<html>"), ""},
		{"application/zip", "http://a.example/x.zip", zipped, ""},
		{"text/html", "http://a.example/x.docx", zipped, ""},
	} {
		if got := OfficeFormat(c.ct, c.url, c.body); got != c.want {
			t.Errorf("OfficeFormat(%q, %q) = %q, want %q", c.ct, c.url, got, c.want)
		}
	}
}

// FuzzParseOffice holds ParseOffice to its contract on any input: a
// Document within the bounds or an error with a reason, never a panic.
func FuzzParseOffice(f *testing.F) {
	for _, format := range []string{FormatDOCX, FormatODT} {
		f.Add(officetest.Make(officetest.Doc{Format: format, Title: "t", Paragraphs: []string{"one", "two"}, Links: []string{"/x", "http://b.example/"}}), format == FormatODT)
		f.Add(officetest.Make(officetest.Doc{Format: format, Paragraphs: []string{"secret"}, Encrypted: true}), format == FormatODT)
	}
	f.Fuzz(func(t *testing.T, body []byte, odt bool) {
		format := FormatDOCX
		if odt {
			format = FormatODT
		}
		d, err := ParseOffice(body, format, "http://a.example/f."+format, nil, Options{})
		if err != nil {
			if DocReason(err) == "" {
				t.Fatalf("error %v is none of the documents' reasons", err)
			}
			return
		}
		checkPDF(t, d)
	})
}

// BenchmarkParseOffice reads a small docx and a zip bomb of one, to show
// what the bounds cost: the bomb's allocations stay near the small
// document's, whatever it inflates to.
func BenchmarkParseOffice(b *testing.B) {
	text := bytes.Repeat([]byte("sandeel "), (maxOfficePart/8)+1024)
	var z bytes.Buffer
	w := zip.NewWriter(&z)
	fw, _ := w.Create("word/document.xml")
	fw.Write([]byte(`<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>`))
	fw.Write(text)
	w.Close()
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"notes", officetest.Make(officetest.Doc{Format: FormatDOCX, Paragraphs: []string{"Burrows on cliffs.", "Sand eels"}, Links: []string{"/a"}})},
		{"bomb", z.Bytes()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := ParseOffice(c.body, FormatDOCX, "http://a.example/x.docx", nil, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
