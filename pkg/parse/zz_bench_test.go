package parse

import (
	"bytes"
	"regexp"
	"testing"

	"golang.org/x/net/html"
)

func noLinks() []byte {
	return regexp.MustCompile(`(href|src)="[^"]*"`).ReplaceAll(benchPage(), []byte(`x="y"`))
}

func BenchmarkZParseNoLinks(b *testing.B) {
	page := noLinks()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(page, "text/html; charset=utf-8", benchURL, nil, Options{})
	}
}

func BenchmarkZTreeNoLinks(b *testing.B) {
	page := noLinks()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		html.Parse(bytes.NewReader(page))
	}
}

func BenchmarkZTokenizeOnly(b *testing.B) {
	page := noLinks()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		z := html.NewTokenizer(bytes.NewReader(page))
		for z.Next() != html.ErrorToken {
		}
	}
}
