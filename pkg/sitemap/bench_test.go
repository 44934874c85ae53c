package sitemap

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParse parses a full-size sitemap: 50,000 URLs, the protocol's
// per-file maximum. MB/s counts decoded bytes, so the gzip case includes
// decompression at the same scale.
func BenchmarkParse(b *testing.B) {
	xmlDoc := []byte(urlset(defaultMaxURLs))
	var text strings.Builder
	for i := range defaultMaxURLs {
		fmt.Fprintf(&text, "http://example.com/%d\n", i)
	}
	textDoc := []byte(text.String())
	cases := []struct {
		name    string
		body    []byte
		decoded int
	}{
		{"urlset", xmlDoc, len(xmlDoc)},
		{"urlset.gz", gzipBytes(b, xmlDoc), len(xmlDoc)},
		{"text", textDoc, len(textDoc)},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(bc.decoded))
			b.ReportAllocs()
			for b.Loop() {
				res, err := Parse(bytes.NewReader(bc.body), Limits{}, nil)
				if err != nil || res.Entries != defaultMaxURLs || res.Truncated {
					b.Fatalf("Parse = %+v, %v", res, err)
				}
			}
		})
	}
}
