package urlkind

import "testing"

func TestNamesRoundTrip(t *testing.T) {
	for k := Page; k <= Requisite; k++ {
		got, ok := Parse(k.String())
		if !ok || got != k {
			t.Errorf("Parse(%q) = %v, %v; want %v", k.String(), got, ok, k)
		}
	}
	// The store column and the wire format spell these; a rename would
	// strand every stored row.
	want := map[Kind]string{Page: "page", Sitemap: "sitemap", Subresource: "subresource", Robots: "robots", Requisite: "requisite"}
	for k, n := range want {
		if k.String() != n {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), n)
		}
	}
}

func TestParseUnknown(t *testing.T) {
	if k, ok := Parse(""); !ok || k != Page {
		t.Errorf(`Parse("") = %v, %v; want page, true`, k, ok)
	}
	for _, s := range []string{"verdict", "settled", "PAGE", "x"} {
		if k, ok := Parse(s); ok || k != Page {
			t.Errorf("Parse(%q) = %v, %v; want page, false", s, k, ok)
		}
	}
	if s := Kind(200).String(); s != "page" {
		t.Errorf("unknown kind String = %q", s)
	}
}
