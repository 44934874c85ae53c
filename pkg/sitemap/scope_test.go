package sitemap

import "testing"

func TestInScope(t *testing.T) {
	const sm = "http://example.com/dir/sitemap.xml"
	tests := []struct {
		name       string
		sitemap    string
		loc        string
		fromRobots bool
		want       bool
	}{
		{"same directory", sm, "http://example.com/dir/page.html", false, true},
		{"deeper", sm, "http://example.com/dir/sub/page", false, true},
		{"the directory itself", sm, "http://example.com/dir/", false, true},
		{"parent directory", sm, "http://example.com/page", false, false},
		{"sibling directory", sm, "http://example.com/other/page", false, false},
		{"directory name prefix only", sm, "http://example.com/dirx/page", false, false},
		{"dot segments resolved first", sm, "http://example.com/dir/../secret", false, false},
		{"dot segments staying inside", sm, "http://example.com/dir/a/../b", false, true},
		{"root sitemap covers the host", "http://example.com/sitemap.xml", "http://example.com/any/where?q=1", false, true},
		{"other host", sm, "http://attacker.example/dir/page", false, false},
		{"subdomain is another host", sm, "http://www.example.com/dir/page", false, false},
		{"parent domain is another host", "http://www.example.com/sitemap.xml", "http://example.com/", false, false},
		{"other scheme", sm, "https://example.com/dir/page", false, false},
		{"default port equals none", sm, "http://example.com:80/dir/page", false, true},
		{"https default port", "https://example.com:443/sitemap.xml", "https://example.com/a", false, true},
		{"other port", sm, "http://example.com:8080/dir/page", false, false},
		{"host case", sm, "HTTP://EXAMPLE.COM/dir/page", false, true},
		{"path case matters", sm, "http://example.com/DIR/page", false, false},
		{"trailing dot on host", sm, "http://example.com./dir/page", false, true},
		{"IDN and punycode agree", "http://bücher.de/sitemap.xml", "http://xn--bcher-kva.de/buch", false, true},
		{"userinfo does not change the host", sm, "http://example.com@attacker.example/dir/page", false, false},
		{"robots.txt grants the whole host", sm, "http://example.com/other/page", true, true},
		{"robots.txt grants no other host", "http://example.com/robots.txt", "http://attacker.example/", true, false},
		{"robots.txt grants no other scheme", "http://example.com/robots.txt", "https://example.com/", true, false},
		{"relative loc", sm, "/dir/page", false, false},
		{"non-http loc", sm, "ftp://example.com/dir/file", false, false},
		{"opaque loc", sm, "mailto:someone@example.com", false, false},
		{"empty loc", sm, "", false, false},
		{"invalid sitemap URL", "not a url", "http://example.com/", true, false},
		{"sitemap URL without host", "http:///sitemap.xml", "http://example.com/", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InScope(tt.sitemap, tt.loc, tt.fromRobots); got != tt.want {
				t.Errorf("InScope(%q, %q, %v) = %v, want %v", tt.sitemap, tt.loc, tt.fromRobots, got, tt.want)
			}
		})
	}
}
