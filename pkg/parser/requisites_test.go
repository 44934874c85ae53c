package parser

import "testing"

// TestIsCSS: a requisite is read for url() and @import when it is a
// stylesheet by its type, or by its name when its type says nothing.
func TestIsCSS(t *testing.T) {
	for _, tc := range []struct {
		ct, url string
		want    bool
	}{
		{"text/css", "http://a/x", true},
		{"Text/CSS; charset=utf-8", "http://a/x.png", true},
		{"", "http://a/s/site.css?v=2", true},
		{"application/octet-stream", "http://a/S.CSS", true},
		{"text/plain", "http://a/x.txt", false},
		{"image/png", "http://a/x.css", false},
		{"text/html", "http://a/fake.css", false},
		{"", "http://a/x.css.png", false},
	} {
		if got := isCSS(tc.ct, tc.url); got != tc.want {
			t.Errorf("isCSS(%q, %q) = %v, want %v", tc.ct, tc.url, got, tc.want)
		}
	}
}

func TestRequisiteFlags(t *testing.T) {
	off := RequisiteFlags{PerPage: 100}
	if off.Limit() != 0 || off.Validate() != nil {
		t.Errorf("off: limit %d, %v", off.Limit(), off.Validate())
	}
	on := RequisiteFlags{Enabled: true, PerPage: 100}
	if on.Limit() != 100 || on.Validate() != nil {
		t.Errorf("on: limit %d, %v", on.Limit(), on.Validate())
	}
	if (RequisiteFlags{Enabled: true}).Validate() == nil {
		t.Error("-requisites with -requisites-per-page 0 validated")
	}
}
