package parse

import (
	"bytes"
	"mime"
	"strings"
	"testing"
)

// refIsPDF and refOfficeFormat are IsPDF and OfficeFormat as they were
// before declaredAs spared most pages ParseMediaType: the fuzz target holds
// the new ones to them.
func refIsPDF(contentType string, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch strings.ToLower(mt) {
	case "application/pdf", "application/x-pdf":
		return true
	case "", "application/octet-stream", "binary/octet-stream":
		return bytes.HasPrefix(body, []byte("%PDF-"))
	}
	return false
}

func refOfficeFormat(contentType, rawURL string, body []byte) string {
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

var declaredSeeds = []struct{ ct, url, body string }{
	{"text/html; charset=utf-8", "http://h/a.html", "<html>"},
	{"application/pdf", "http://h/a", "no magic"},
	{" Application/PDF ; x=1", "http://h/a", "%PDF-1.7"},
	{"application/pdf; a=1; a=2", "http://h/a.pdf", "%PDF-1.7"},
	{"text/html; a=1; a=2", "http://h/a.pdf", "%PDF-1.7"},
	{"", "http://h/a.docx", "PK\x03\x04"},
	{"application/zip", "http://h/a.ODT?x", "PK\x03\x04"},
	{"application/vnd.oasis.opendocument.text; bad", "http://h/a", ""},
	{"applİcation/pdf", "http://h/a", ""},
	{"text/html garbage", "http://h/a.docx", "PK\x03\x04"},
}

func TestDeclaredAsFastPath(t *testing.T) {
	for _, s := range declaredSeeds {
		if got, want := IsPDF(s.ct, []byte(s.body)), refIsPDF(s.ct, []byte(s.body)); got != want {
			t.Errorf("IsPDF(%q, %q) = %v, want %v", s.ct, s.body, got, want)
		}
		if got, want := OfficeFormat(s.ct, s.url, []byte(s.body)), refOfficeFormat(s.ct, s.url, []byte(s.body)); got != want {
			t.Errorf("OfficeFormat(%q, %q, %q) = %q, want %q", s.ct, s.url, s.body, got, want)
		}
	}
}

func FuzzDeclaredAs(f *testing.F) {
	for _, s := range declaredSeeds {
		f.Add(s.ct, s.url, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, ct, url string, body []byte) {
		if got, want := IsPDF(ct, body), refIsPDF(ct, body); got != want {
			t.Fatalf("IsPDF(%q, %q) = %v, want %v", ct, body, got, want)
		}
		if got, want := OfficeFormat(ct, url, body), refOfficeFormat(ct, url, body); got != want {
			t.Fatalf("OfficeFormat(%q, %q, %q) = %q, want %q", ct, url, body, got, want)
		}
	})
}

func BenchmarkIsDocument(b *testing.B) {
	body := []byte("<!doctype html><html><head><title>t</title></head><body>text</body></html>")
	b.ReportAllocs()
	for b.Loop() {
		IsPDF("text/html; charset=utf-8", body)
		OfficeFormat("text/html; charset=utf-8", "http://h.example/a/b.html", body)
	}
}
