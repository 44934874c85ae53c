package pattern

import (
	"slices"
	"testing"
)

func TestRaised(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[int]()
	const page = "http://a.test/guide/intro.html"
	relinks := []string{
		"http://a.test/blog/2024/post.html", // another section: raised
		"http://a.test/about.html",          // a file at the root is its own family: raised
		"http://a.test/guide/next.html",     // the page's own section: what a space links
		"http://a.test/guide/intro.html?print=1",
		"http://b.test/blog/post.html", // another host: not a relink
	}
	got := h.Raised(cfg, page, relinks)
	want := []string{"http://a.test/blog/2024/post.html", "http://a.test/about.html"}
	if !slices.Equal(got, want) {
		t.Fatalf("Raised = %q, want %q", got, want)
	}
	// A path one segment apart is a neighbour, whatever its family.
	if got := h.Raised(cfg, "http://a.test/tags", []string{"http://a.test/tags/blue"}); len(got) != 0 {
		t.Fatalf("neighbour raised: %q", got)
	}
	if got := h.Raised(cfg, page, nil); got != nil {
		t.Fatalf("no relinks: %q", got)
	}
}
