package pattern

import (
	"fmt"
	"strings"
	"testing"
)

func TestViews(t *testing.T) {
	cfg := DefaultConfig()
	h := NewHost[int]()
	learn := func(u string) { h.space(cfg, "http://a"+u, true) }
	for m := 1; m <= 6; m++ {
		for _, v := range []string{"date", "author", "subject"} {
			learn(fmt.Sprintf("/by/2024-%02d/%s.html", m, v))
		}
		learn(fmt.Sprintf("/item/%d/reviews", 100+m))
		learn(fmt.Sprintf("/item/%d/specs", 100+m))
	}
	for i := range 40 { // a documentation tree: its folder folds
		learn(fmt.Sprintf("/docs/9.6/page-%c%c.html", 'a'+i%26, 'a'+i/26))
	}
	for i := range 20 { // translations, each language a section
		learn(fmt.Sprintf("/fr/mod/m%d.html", i))
		learn(fmt.Sprintf("/ja/mod/m%d.html", i))
	}
	learn("/about/team.html")
	learn("/about/history.html")
	for _, tc := range []struct {
		u, parent string
		want      bool
	}{
		{"/by/2024-03/date.html", "/by/2024-03/author.html", true},
		{"/item/103/specs", "/item/103/reviews", true},
		{"/by/2024-03/date.html", "/by/2024-04/date.html", false},   // another record, the same view
		{"/by/2024-03/date.html", "/by/2024-04/author.html", false}, // another record and view
		{"/docs/9.6/page-ab.html", "/docs/9.6/page-cb.html", false}, // pages of a folder of many
		{"/about/team.html", "/about/history.html", false},          // no record
		{"/fr/mod/m3.html", "/ja/mod/m3.html", false},               // translations
		{"/by/2024-03/date.html?o=d", "/by/2024-03/author.html", false},
		{"/by/2024-03/date.html", "/by/2024-03/", false},
		{"/by/2024-03/date.html", "/by/2024-03/date.html", false},
	} {
		u, p := "http://a"+tc.u, "http://a"+tc.parent
		if got := h.views(cfg, u, p); got != tc.want {
			t.Errorf("views(%s, %s) = %v, want %v", tc.u, tc.parent, got, tc.want)
		}
		if got := h.views(cfg, p, u); got != tc.want {
			t.Errorf("views(%s, %s) = %v, want %v (turned round)", tc.parent, tc.u, got, tc.want)
		}
	}
}

// FuzzViews: any pair of URLs and spaces is answered, the same both ways
// round.
func FuzzViews(f *testing.F) {
	f.Add("/by/{n}-{n}/date.html", "/by/{n}-{n}/author.html", "http://a/by/2024-03/date.html", "http://a/by/2024-03/author.html")
	f.Add("/", "/{*}", "http://a", "http://a/x?y")
	f.Fuzz(func(t *testing.T, us, ps, u, p string) {
		if views(us, ps, u, p) != views(ps, us, p, u) {
			t.Errorf("views(%q, %q, %q, %q) depends on the order", us, ps, u, p)
		}
		if views(us, us, u, u) || strings.Contains(u, "{") && views(us, ps, u, p) && us == u {
			t.Errorf("views(%q, %q, %q, %q): a URL is a view of itself, or a space its own key", us, ps, u, p)
		}
	})
}
