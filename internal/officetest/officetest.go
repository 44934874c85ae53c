// Package officetest writes small, valid office documents (docx, odt) for
// tests: paragraphs of text, hyperlinks, a title, and the forms a reader must
// refuse (a password).
package officetest

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
)

// Doc describes a document to write.
type Doc struct {
	Format     string // "docx" or "odt"
	Title      string
	Paragraphs []string
	Links      []string // hyperlinks, a paragraph each after the text
	// Encrypted writes what a password gives: for docx a compound file
	// (its signature and no package), for odt a content.xml the manifest
	// lists as encrypted.
	Encrypted bool
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Make returns the file.
func Make(d Doc) []byte {
	if d.Format == "docx" && d.Encrypted {
		return append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 504)...)
	}
	var files [][2]string
	switch d.Format {
	case "docx":
		var body, rels strings.Builder
		for _, p := range d.Paragraphs {
			fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, esc(p))
		}
		for i, l := range d.Links {
			fmt.Fprintf(&body, `<w:p><w:hyperlink r:id="rIdL%d"><w:r><w:t>link %d</w:t></w:r></w:hyperlink></w:p>`, i, i)
			fmt.Fprintf(&rels, `<Relationship Id="rIdL%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="%s" TargetMode="External"/>`, i, esc(l))
		}
		files = [][2]string{
			{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
			{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
			{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>` + body.String() + `</w:body></w:document>`},
			{"word/_rels/document.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>` + rels.String() + `</Relationships>`},
			{"docProps/core.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>` + esc(d.Title) + `</dc:title></cp:coreProperties>`},
		}
	case "odt":
		var body strings.Builder
		for _, p := range d.Paragraphs {
			fmt.Fprintf(&body, `<text:p text:style-name="P1">%s</text:p>`, esc(p))
		}
		for i, l := range d.Links {
			fmt.Fprintf(&body, `<text:p><text:a xlink:type="simple" xlink:href="%s">link %d</text:a></text:p>`, esc(l), i)
		}
		content := `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3"><office:automatic-styles/><office:body><office:text>` + body.String() + `</office:text></office:body></office:document-content>`
		entry := `<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>`
		if d.Encrypted {
			content = "\x8f\x13encrypted bytes\x00\xff"
			entry = `<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml" manifest:size="1000"><manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="AAAA"><manifest:algorithm manifest:algorithm-name="Blowfish CFB" manifest:initialisation-vector="AAAA"/></manifest:encryption-data></manifest:file-entry>`
		}
		files = [][2]string{
			{"mimetype", "application/vnd.oasis.opendocument.text"},
			{"META-INF/manifest.xml", `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>` + entry + `</manifest:manifest>`},
			{"content.xml", content},
			{"meta.xml", `<?xml version="1.0" encoding="UTF-8"?><office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>` + esc(d.Title) + `</dc:title></office:meta></office:document-meta>`},
		}
	default:
		panic("officetest: format " + d.Format)
	}
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i, f := range files {
		method := zip.Deflate
		if i == 0 && f[0] == "mimetype" {
			method = zip.Store // ODF wants it first and stored
		}
		fw, err := w.CreateHeader(&zip.FileHeader{Name: f[0], Method: method})
		if err != nil {
			panic(err)
		}
		_, _ = fw.Write([]byte(f[1]))
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}
