// Package pdftest writes small, valid PDF files for tests: pages of text in
// a standard font, link annotations, a document title, and the odd forms a
// reader must survive (compressed content, a password).
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// Doc describes a PDF to write.
type Doc struct {
	Title string
	Pages []string // one line of text each (ASCII)
	Links []string // URIs, as link annotations on the first page
	// Compress stores the content streams with FlateDecode.
	Compress bool
	// Deflated replaces the content stream of page i (from 0) with these
	// bytes, declared FlateDecode: a stream that inflates to what a test
	// wants (a bomb).
	Deflated map[int][]byte
	// PrevLoop makes the trailer's /Prev name its own cross-reference
	// table: a reader that follows it without remembering loops.
	PrevLoop bool
	// Encrypted adds a standard security handler whose user password is
	// not empty: a reader without the password reads nothing.
	Encrypted bool
}

// escape writes s as a PDF literal string's content.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}

// Make returns the PDF file.
func Make(d Doc) []byte {
	var objs []string // object i+1
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	catalog := add("") // filled below
	pagesObj := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var annots []string
	for _, l := range d.Links {
		annots = append(annots, fmt.Sprintf("%d 0 R", add(fmt.Sprintf("<< /Type /Annot /Subtype /Link /Rect [72 700 300 720] /Border [0 0 0] /A << /S /URI /URI (%s) >> >>", escape(l)))))
	}
	var kids []string
	for i, text := range d.Pages {
		content := fmt.Sprintf("BT /F1 12 Tf 72 740 Td (%s) Tj ET", escape(text))
		stream := "<< /Length %d >>\nstream\n%s\nendstream"
		body := content
		if d.Compress {
			var b bytes.Buffer
			w := zlib.NewWriter(&b)
			w.Write([]byte(content))
			w.Close()
			body = b.String()
			stream = "<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream"
		}
		if raw, ok := d.Deflated[i]; ok {
			body = string(raw)
			stream = "<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream"
		}
		c := add(fmt.Sprintf(stream, len(body), body))
		extra := ""
		if i == 0 && len(annots) > 0 {
			extra = " /Annots [" + strings.Join(annots, " ") + "]"
		}
		kids = append(kids, fmt.Sprintf("%d 0 R", add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R%s >>", pagesObj, font, c, extra))))
	}
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	info := add(fmt.Sprintf("<< /Title (%s) /Producer (pdftest) >>", escape(d.Title)))
	trailerExtra := ""
	if d.Encrypted {
		// RC4 40-bit, revision 2, with O and U values no empty password
		// matches.
		enc := add("<< /Filter /Standard /V 1 /R 2 /O <" + strings.Repeat("41", 32) + "> /U <" + strings.Repeat("42", 32) + "> /P -44 >>")
		trailerExtra = fmt.Sprintf(" /Encrypt %d 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]", enc)
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	if d.PrevLoop {
		trailerExtra += fmt.Sprintf(" /Prev %d", xref)
	}
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, info, trailerExtra, xref)
	return b.Bytes()
}
