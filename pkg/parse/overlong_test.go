package parse

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
)

// overlongPages are 20 MiB bodies, what the fetcher keeps of a compression
// bomb at its default cap, each with one token far past maxTokenBytes: a
// bomb's zeros, prose with no markup, raw text, a comment, attributes. A
// link before it and one after tell how far parsing got.
func overlongPages() []struct {
	name, contentType string
	body              []byte
} {
	const size = 20 << 20
	wrap := func(open string, fill byte, close string) []byte {
		head := `<!DOCTYPE html><html><head><title>Overlong</title></head><body><a href="/before">before</a>` + open
		tail := close + `<a href="/after">after</a></body></html>`
		b := bytes.Repeat([]byte{fill}, size)
		copy(b, head)
		copy(b[size-len(tail):], tail)
		return b
	}
	prose := wrap("<p>", ' ', "</p>")
	for i := 100; i < len(prose)-200; i += 6 {
		copy(prose[i:], "words")
	}
	// A cut may fall inside the end tag a raw-text element is looked for
	// by: ends near maxTokenBytes make sure one does.
	nearCut := wrap("<script>", 'x', "</script>")
	for i := maxTokenBytes - 200; i < maxTokenBytes+200; i += 9 {
		copy(nearCut[i:], "</scrip ")
	}
	const html = "text/html; charset=utf-8"
	return []struct {
		name, contentType string
		body              []byte
	}{
		{"zeros", html, wrap("<p>", 0, "</p>")},
		{"zeros-undeclared", "text/html", wrap("<p>", 0, "</p>")},
		{"prose", html, prose},
		{"script", html, wrap("<script>", 'x', "</script>")},
		{"script-end-tags-at-cut", html, nearCut},
		{"textarea", html, wrap("<textarea>", 'x', "</TEXTAREA >")},
		{"comment", html, wrap(`<!-- <a href="/in-comment">`, '-', "->")},
		{"attribute", html, wrap(`<img alt="`, 'x', `">`)},
		{"attribute-of-angles", html, wrap(`<img alt='`, '>', `'>`)},
		{"attribute-names", html, wrap(`<img `, 'x', `>`)},
	}
}

// TestParseOverlong: a token far past maxTokenBytes neither makes the
// tokenizer hold it whole nor hides the links after it. Unbounded, the
// tokenizer's buffer doubled up to 32 MiB for a 20 MiB token and allocated
// 64 MiB on the way; the bound here is 8 MiB, eight times maxTokenBytes.
func TestParseOverlong(t *testing.T) {
	want := []string{"https://news.example.com/before", "https://news.example.com/after"}
	for _, p := range overlongPages() {
		t.Run(p.name, func(t *testing.T) {
			// No collection in between, which would take the pool's text
			// buffer away from the measured parse.
			if _, err := Parse(p.body, p.contentType, benchURL, nil, Options{}); err != nil {
				t.Fatal(err)
			}
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			doc, err := Parse(p.body, p.contentType, benchURL, nil, Options{})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range doc.Links {
				got = append(got, l.URL)
			}
			if !slices.Equal(got, want) {
				t.Errorf("links %q, want %q", got, want)
			}
			if doc.Title != "Overlong" {
				t.Errorf("title %q, want %q", doc.Title, "Overlong")
			}
			if len(doc.Text) > DefaultMaxTextSize {
				t.Errorf("text of %d bytes, over the %d-byte cap", len(doc.Text), DefaultMaxTextSize)
			}
			if allocated, limit := after.TotalAlloc-before.TotalAlloc, uint64(8<<20); allocated > limit {
				t.Errorf("parsing %d bytes allocated %d, want at most %d", len(p.body), allocated, limit)
			}
		})
	}
}

func TestTagEnd(t *testing.T) {
	tests := []struct {
		tag  string
		want int // -1: to the end
	}{
		{`<a href="/x">rest`, len(`<a href="/x">`)},
		{`<a title="a>b" href='c>d'>rest`, len(`<a title="a>b" href='c>d'>`)},
		{`<a title = "a>b">rest`, len(`<a title = "a>b">`)},
		{`<a title=a>b">rest`, len(`<a title=a>`)},
		{`<a b"c>rest`, len(`<a b"c>`)},
		{`<a title="never closed>`, -1},
		{`<a`, -1},
	}
	for _, tt := range tests {
		want := tt.want
		if want < 0 {
			want = len(tt.tag)
		}
		if got := tagEnd([]byte(tt.tag)); got != want {
			t.Errorf("tagEnd(%q) = %d, want %d", tt.tag, got, want)
		}
	}
}
