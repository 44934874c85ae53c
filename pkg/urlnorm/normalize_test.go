package urlnorm

import (
	"errors"
	"strings"
	"testing"

	wurl "github.com/nlnwa/whatwg-url/url"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            error
	}{
		// Case folding.
		{"scheme and host lowercased", "HTTP://WWW.Example.COM/Path", "http://www.example.com/Path", nil},
		{"path case kept", "http://example.com/A/b/C", "http://example.com/A/b/C", nil},
		{"https kept", "HTTPS://example.com", "https://example.com/", nil},
		// IDN.
		{"IDN to punycode", "http://bücher.de/", "http://xn--bcher-kva.de/", nil},
		{"IDN uppercase", "http://BÜCHER.de/", "http://xn--bcher-kva.de/", nil},
		{"punycode kept", "http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/", nil},
		{"uppercase punycode lowercased", "http://XN--BCHER-KVA.DE/", "http://xn--bcher-kva.de/", nil},
		{"IDN with ideographic full stop", "http://bücher\u3002de/", "http://xn--bcher-kva.de/", nil},
		{"IDN host, path and query", "http://例え.テスト/パス?キー=値", "http://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9?%E3%82%AD%E3%83%BC=%E5%80%A4", nil},
		{"invalid punycode rejected", "http://xn--a.com/", "", ErrInvalid},
		{"percent-encoded host decoded", "http://%65xample.com/", "http://example.com/", nil},
		// Trailing dots: one is the DNS root and is dropped, more leave an
		// empty label and are rejected (canonicalHost says why).
		{"trailing dot on host", "http://example.com./a", "http://example.com/a", nil},
		{"two trailing dots", "http://example.com../a", "", ErrInvalid},
		{"three trailing dots", "http://a.../", "", ErrInvalid},
		{"numeric-looking last label, two dots", "http://foo.09..", "", ErrInvalid},
		{"numeric-looking last label, two dots and port", "http://foo.09..:8080/x", "", ErrInvalid},
		{"numeric-looking last label, one dot", "http://foo.09.", "", ErrInvalid},
		{"numeric-looking last label", "http://foo.09/", "", ErrInvalid},
		{"hex-looking last label, two dots", "http://foo.0x../", "", ErrInvalid},
		{"last label with digits is a name", "http://foo.1e./", "http://foo.1e/", nil},
		{"IPv4 with trailing dot", "http://1.2.3.4./", "http://1.2.3.4/", nil},
		{"IPv4 with trailing dot, no path", "http://1.2.3.4.", "http://1.2.3.4/", nil},
		{"IPv4 with two trailing dots is no address", "http://1.2.3.4../", "", ErrInvalid},
		{"IPv4 with three trailing dots", "http://1.2.3.4...", "", ErrInvalid},
		{"short IPv4 with trailing dot", "http://0x7f.1.", "http://127.0.0.1/", nil},
		{"short IPv4 with two trailing dots", "http://0x7f.1../", "", ErrInvalid},
		{"one number with trailing dot", "http://1./", "http://0.0.0.1/", nil},
		{"one number with two trailing dots", "http://1../", "", ErrInvalid},
		{"five numbers with trailing dot", "http://1.2.3.4.5./", "", ErrInvalid},
		{"leading dot", "http://.example.com/", "", ErrInvalid},
		{"one dot for host", "http://.", "", ErrNoHost},
		{"two dots for host", "http://..", "", ErrNoHost},
		{"IPv6 with trailing dot", "http://[::1]./", "", ErrInvalid},
		{"IPv6 with two trailing dots", "http://[::1]../", "", ErrInvalid},
		{"IPv4-mapped IPv6", "http://[::FFFF:1.2.3.4]/", "http://[::ffff:102:304]/", nil},
		{"IDN with trailing dot", "http://bücher.de./", "http://xn--bcher-kva.de/", nil},
		{"IDN with two trailing dots", "http://bücher.de../", "", ErrInvalid},
		{"IDN with trailing ideographic full stop", "http://bücher\u3002de\u3002/", "http://xn--bcher-kva.de/", nil},
		{"IDN with two trailing ideographic full stops", "http://bücher.de\u3002\u3002/", "", ErrInvalid},
		{"punycode with two trailing dots", "http://xn--bcher-kva.de../", "", ErrInvalid},
		{"encoded trailing dot", "http://example.com%2e/", "http://example.com/", nil},
		{"encoded trailing dot on IPv4", "http://1.2.3.4%2E/", "http://1.2.3.4/", nil},
		{"encoded two trailing dots on IPv4", "http://1.2.3.4%2e%2e/", "", ErrInvalid},
		{"encoded dots, numeric-looking last label", "http://foo%2e09%2e%2e/", "", ErrInvalid},
		{"encoded empty label", "http://a%2e%2eb/", "", ErrInvalid},
		{"encoded dot for host", "http://%2e/", "", ErrNoHost},
		// Ports.
		{"default http port removed", "http://example.com:80/", "http://example.com/", nil},
		{"default https port removed", "https://example.com:443/", "https://example.com/", nil},
		{"non-default port kept", "http://example.com:8080/", "http://example.com:8080/", nil},
		{"https on 80 keeps port", "https://example.com:80/", "https://example.com:80/", nil},
		{"leading zeros in port", "http://example.com:0080/", "http://example.com/", nil},
		{"empty port removed", "http://example.com:/a", "http://example.com/a", nil},
		{"port 0 rejected", "http://example.com:0/", "", ErrInvalid},
		{"port out of range", "http://example.com:65536/", "", ErrInvalid},
		// Paths and dot segments.
		{"empty path becomes slash", "http://example.com", "http://example.com/", nil},
		{"dot segments", "http://example.com/a/./b/../c", "http://example.com/a/c", nil},
		{"dot-dot past root", "http://example.com/../../a", "http://example.com/a", nil},
		{"encoded dot segments", "http://example.com/a/%2e%2E/b", "http://example.com/b", nil},
		{"trailing dot-dot keeps slash", "http://example.com/a/b/..", "http://example.com/a/", nil},
		{"trailing dot keeps slash", "http://example.com/a/b/./", "http://example.com/a/b/", nil},
		{"dot segments in query untouched", "http://example.com/a?b=../c", "http://example.com/a?b=../c", nil},
		{"backslash is slash", "http://example.com\\a\\b", "http://example.com/a/b", nil},
		{"double slash kept", "http://example.com//a", "http://example.com//a", nil},
		// Fragments and userinfo.
		{"fragment dropped", "http://example.com/a#section", "http://example.com/a", nil},
		{"empty fragment dropped", "http://example.com/a?b=1#", "http://example.com/a?b=1", nil},
		{"fragment with query-like text dropped", "http://example.com/a#b?c=1", "http://example.com/a", nil},
		{"tracking name in fragment ignored", "http://example.com/?a=1&fbclid=x#utm_source=y", "http://example.com/?a=1", nil},
		{"userinfo dropped", "http://user:pass@example.com/", "http://example.com/", nil},
		// Percent-encoding.
		{"unreserved decoded", "http://example.com/%41%62%2D%5F%7e", "http://example.com/Ab-_~", nil},
		{"hex uppercased", "http://example.com/a%2fb%3a", "http://example.com/a%2Fb%3A", nil},
		{"reserved slash kept encoded", "http://example.com/a%2Fb", "http://example.com/a%2Fb", nil},
		{"reserved raw kept raw", "http://example.com/a:b@c;d=e!", "http://example.com/a:b@c;d=e!", nil},
		{"space encoded", "http://example.com/a b", "http://example.com/a%20b", nil},
		{"pipe encoded", "http://example.com/a|b", "http://example.com/a%7Cb", nil},
		{"pipe spellings agree", "http://example.com/a%7cb", "http://example.com/a%7Cb", nil},
		{"non-ASCII path as UTF-8", "http://example.com/café", "http://example.com/caf%C3%A9", nil},
		{"non-ASCII query as UTF-8", "http://example.com/?q=ü", "http://example.com/?q=%C3%BC", nil},
		{"stray percent encoded", "http://example.com/100%", "http://example.com/100%25", nil},
		{"bad escape encoded", "http://example.com/%zz?%g1", "http://example.com/%25zz?%25g1", nil},
		{"encoded query delimiters kept", "http://example.com/?a=%26%3D", "http://example.com/?a=%26%3D", nil},
		{"query unreserved decoded", "http://example.com/?%61=%7E", "http://example.com/?a=~", nil},
		{"query hex uppercased", "http://example.com/?q=%c3%bc&e=%3d", "http://example.com/?e=%3D&q=%C3%BC", nil},
		{"query space encoded", "http://example.com/?q=a b", "http://example.com/?q=a%20b", nil},
		// Query.
		{"query sorted", "http://example.com/?b=2&a=1&c=3", "http://example.com/?a=1&b=2&c=3", nil},
		{"query sort stable for repeats", "http://example.com/?b=1&a=2&b=0&a=1", "http://example.com/?a=2&a=1&b=1&b=0", nil},
		{"query sorted by bytes, uppercase first", "http://example.com/?B=1&a=2&A=3", "http://example.com/?A=3&B=1&a=2", nil},
		{"query sorted after unescaping names", "http://example.com/?%62=1&a=2", "http://example.com/?a=2&b=1", nil},
		{"empty query removed", "http://example.com/a?", "http://example.com/a", nil},
		{"empty params removed", "http://example.com/?&a=1&&b=2&", "http://example.com/?a=1&b=2", nil},
		{"valueless param kept", "http://example.com/?flag&a=1", "http://example.com/?a=1&flag", nil},
		{"plus kept", "http://example.com/?q=a+b", "http://example.com/?q=a+b", nil},
		// Tracking and session removal.
		{"utm removed", "http://example.com/p?utm_source=x&id=3&UTM_Medium=y", "http://example.com/p?id=3", nil},
		{"click ids removed", "http://example.com/?gclid=1&fbclid=2&msclkid=3&q=go", "http://example.com/?q=go", nil},
		{"session ids removed case-insensitively", "http://example.com/?PHPSESSID=abc&JSessionID=d&sid=1", "http://example.com/", nil},
		{"encoded tracking name removed", "http://example.com/?utm%5Fsource=x&a=1", "http://example.com/?a=1", nil},
		{"similar names kept", "http://example.com/?sidebar=1&utm=2", "http://example.com/?sidebar=1&utm=2", nil},
		{"valueless tracking param removed", "http://example.com/?utm_source&a=1", "http://example.com/?a=1", nil},
		{"tracking prefix as path param removed", "http://example.com/a;utm_source=x", "http://example.com/a", nil},
		{"jsessionid path param removed", "http://example.com/shop/cart.jsp;jsessionid=0A1B2C?item=4", "http://example.com/shop/cart.jsp?item=4", nil},
		{"other path params kept", "http://example.com/a;v=1;JSESSIONID=x;w=2/b", "http://example.com/a;v=1;w=2/b", nil},
		{"path param strip resolves dots", "http://example.com/a/b/..;jsessionid=1/c", "http://example.com/a/c", nil},
		// IP hosts.
		{"IPv4", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/", nil},
		{"IPv4 hex and short form", "http://0x7f.1/", "http://127.0.0.1/", nil},
		{"IPv6 compressed and lowercased", "http://[2001:DB8:0:0:0:0:0:1]:443/", "http://[2001:db8::1]:443/", nil},
		{"IPv6 default port", "https://[::1]:443/x", "https://[::1]/x", nil},
		{"IPv6 unclosed", "http://[::1/", "", ErrInvalid},
		// Rejections.
		{"javascript rejected", "javascript:alert(1)", "", ErrScheme},
		{"mailto rejected", "mailto:someone@example.com", "", ErrScheme},
		{"data rejected", "data:text/html,<b>x</b>", "", ErrScheme},
		{"ftp rejected", "ftp://example.com/file", "", ErrScheme},
		{"unparsable other scheme", "ws://[bad/", "", ErrScheme},
		{"relative without base", "/just/a/path", "", ErrInvalid},
		{"no host", "http://", "", ErrNoHost},
		{"only port", "http://:80/", "", ErrNoHost},
		{"only dots for host", "http://.../", "", ErrNoHost},
		{"forbidden host char", "http://exa mple.com/", "", ErrInvalid},
		{"host char DNS cannot hold", "http://a{b}.com/", "", ErrInvalid},
		{"empty label", "http://a..b.com/", "", ErrInvalid},
		{"too long", "http://example.com/" + strings.Repeat("a", 2100), "", ErrTooLong},
		{"too long after encoding", "http://example.com/" + strings.Repeat("é", 700), "", ErrTooLong},
		{"huge input", "http://example.com/" + strings.Repeat("a/../", 5000), "", ErrTooLong},
		{"whitespace trimmed", "  http://example.com/a\n ", "http://example.com/a", nil},
		{"tabs and newlines removed", "http://exa\tmple.com/a\nb", "http://example.com/ab", nil},
	}
	n := New(DefaultPolicy())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := n.Normalize(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Normalize(%q) = %q, %v; want error %v", tc.in, got, err, tc.err)
				}
				if got != "" {
					t.Errorf("Normalize(%q) returned %q with an error", tc.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Normalize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			again, err := n.Normalize(got)
			if err != nil || again != got {
				t.Errorf("not idempotent: Normalize(%q) = %q, %v", got, again, err)
			}
		})
	}
}

// TestTrailingDotsError checks that a host with more than one trailing dot is
// refused with a message that says so, not with a generic parse failure.
func TestTrailingDotsError(t *testing.T) {
	n := New(DefaultPolicy())
	for _, in := range []string{"http://foo.09..", "http://1.2.3.4../", "http://bücher.de../"} {
		_, err := n.Normalize(in)
		if Reason(err) != "invalid_url" || !strings.Contains(err.Error(), "more than one trailing dot") {
			t.Errorf("Normalize(%q): %v; want invalid_url saying more than one trailing dot", in, err)
		}
	}
}

// TestDefaultPolicyStripsEveryName removes each tracking and session name of
// DefaultPolicy in any case, from the query and as a path parameter, keeping
// the parameters around it.
func TestDefaultPolicyStripsEveryName(t *testing.T) {
	n := New(DefaultPolicy())
	p := DefaultPolicy()
	names := append([]string(nil), p.StripParams...)
	for _, prefix := range p.StripPrefixes {
		names = append(names, prefix+"anything")
	}
	for _, name := range names {
		for _, spelled := range []string{name, strings.ToUpper(name)} {
			for _, in := range []string{
				"http://example.com/p?z=1&" + spelled + "=v&a=2",
				"http://example.com/p;" + spelled + "=v?z=1&a=2",
			} {
				got, err := n.Normalize(in)
				if err != nil || got != "http://example.com/p?a=2&z=1" {
					t.Errorf("Normalize(%q) = %q, %v; want http://example.com/p?a=2&z=1", in, got, err)
				}
			}
		}
	}
	if len(p.StripParams) == 0 || len(p.StripPrefixes) == 0 {
		t.Fatal("DefaultPolicy strips nothing")
	}
}

func TestResolve(t *testing.T) {
	const base = "http://example.com/dir/page.html?x=1#top"
	tests := []struct {
		name, base, ref, want string
		err                   error
	}{
		{"relative file", base, "other.html", "http://example.com/dir/other.html", nil},
		{"parent", base, "../up.html", "http://example.com/up.html", nil},
		{"parent past root", base, "../../../../x", "http://example.com/x", nil},
		{"absolute path", base, "/root?b=2&a=1", "http://example.com/root?a=1&b=2", nil},
		{"protocol-relative", base, "//Other.Example.org/x#f", "http://other.example.org/x", nil},
		{"protocol-relative on https", "https://example.com/", "//cdn.example.com:443/a", "https://cdn.example.com/a", nil},
		{"query only", base, "?q=2", "http://example.com/dir/page.html?q=2", nil},
		{"fragment only", base, "#other", "http://example.com/dir/page.html?x=1", nil},
		{"empty ref", base, "", "http://example.com/dir/page.html?x=1", nil},
		{"absolute ref", base, "HTTPS://Example.NET:443", "https://example.net/", nil},
		{"dot ref", base, ".", "http://example.com/dir/", nil},
		{"ref with whitespace", base, "  next.html\n", "http://example.com/dir/next.html", nil},
		{"tracking removed", base, "a?utm_campaign=x", "http://example.com/dir/a", nil},
		{"javascript ref", base, "javascript:void(0)", "", ErrScheme},
		{"mailto ref", base, "mailto:a@example.com", "", ErrScheme},
		{"data ref", base, "data:image/png;base64,AAAA", "", ErrScheme},
		{"tel ref", base, "tel:+4712345678", "", ErrScheme},
		{"bad ref host", base, "http://[::1", "", ErrInvalid},
		{"ref host with trailing dot", base, "//1.2.3.4./a", "http://1.2.3.4/a", nil},
		{"ref host with two trailing dots", base, "//1.2.3.4../a", "", ErrInvalid},
		{"ref host ending in a number, two dots", base, "//foo.09../", "", ErrInvalid},
		{"base host with two trailing dots", "http://foo.09../", "a", "", ErrInvalid},
		{"base host with trailing dot", "http://example.com./d/", "a", "http://example.com/d/a", nil},
		{"relative base", "/dir/", "a", "", ErrInvalid},
		{"non-http base", "ftp://example.com/", "a", "", ErrScheme},
	}
	n := New(DefaultPolicy())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := n.Resolve(tc.base, tc.ref)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Resolve(%q, %q) = %q, %v; want error %v", tc.base, tc.ref, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q, %q): %v", tc.base, tc.ref, err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q, %q)\n got %q\nwant %q", tc.base, tc.ref, got, tc.want)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		in     string
		want   string
		err    error
	}{
		{"zero policy strips nothing", Policy{}, "http://e.com/?utm_source=a&sid=1", "http://e.com/?sid=1&utm_source=a", nil},
		{"custom exact name", Policy{StripParams: []string{"Ref"}}, "http://e.com/?ref=a&refx=b", "http://e.com/?refx=b", nil},
		{"custom prefix", Policy{StripPrefixes: []string{"pk_"}}, "http://e.com/?PK_campaign=a&pk=b", "http://e.com/?pk=b", nil},
		{"custom prefix applies to path params", Policy{StripPrefixes: []string{"s_"}}, "http://e.com/a;s_id=1", "http://e.com/a", nil},
		{"max length exact fits", Policy{MaxLength: 20}, "http://e.com/1234567", "http://e.com/1234567", nil},
		{"max length one over", Policy{MaxLength: 20}, "http://e.com/12345678", "", ErrTooLong},
		{"zero max length means default", Policy{}, "http://e.com/" + strings.Repeat("a", 2035), "http://e.com/" + strings.Repeat("a", 2035), nil},
		{"default max length enforced", Policy{}, "http://e.com/" + strings.Repeat("a", 2036), "", ErrTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New(tc.policy).Normalize(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %q, %v; want error %v", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestReason(t *testing.T) {
	n := New(DefaultPolicy())
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"ok", "http://example.com/", ""},
		{"invalid", "not a url", "invalid_url"},
		{"scheme", "mailto:x@example.com", "unsupported_scheme"},
		{"too long", "http://example.com/" + strings.Repeat("x", 3000), "url_too_long"},
		{"no host", "https://", "no_host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := n.Normalize(tc.in)
			if got := Reason(err); got != tc.want {
				t.Errorf("Reason(%v) = %q, want %q", err, got, tc.want)
			}
		})
	}
	if got := Reason(errors.New("other")); got != "invalid_url" {
		t.Errorf("Reason(foreign error) = %q, want invalid_url", got)
	}
}

func TestAuthority(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://example.com/a", "example.com"},
		{"https://example.com", "example.com"},
		{"http://127.0.1.2:8080/x?y", "127.0.1.2:8080"},
		{"http://[::1]:8080/", "[::1]:8080"},
		{"https://[::1]/", "[::1]"},
		{"HTTP://Example.COM:80/", "example.com"},
		{"https://example.com:443/", "example.com"},
		{"http://example.com:443/", "example.com:443"},
		{"http://example.com:8080/", "example.com:8080"},
		{"http://u:p@example.com/", "example.com"},
		{"http://example.com?q", "example.com"},
		{"example.com/a", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := Authority(tc.in); got != tc.want {
				t.Errorf("Authority(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNormalizeConcurrent(t *testing.T) {
	n := New(DefaultPolicy())
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 50 {
				got, err := n.Resolve("http://example.com/a/", "../b?utm_source=x&z=1&a=2")
				if err != nil || got != "http://example.com/b?a=2&z=1" {
					t.Errorf("Resolve = %q, %v", got, err)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

var fastPathCases = []struct {
	url  string
	fast bool
}{
	{"http://example.com/", true},
	{"https://www.example.com/a/b.html", true},
	{"http://127.0.1.4:39983/p/14.html", true},
	{"http://a-b.example:8080/x_y~z/(1)!$&'*+,=:@", true},
	{"http://example.com/a//b/", true},
	{"http://example.com", false},          // root path added
	{"HTTP://example.com/", false},         // scheme case
	{"http://Example.com/", false},         // host case
	{"http://example.com:80/", false},      // default port
	{"https://example.com:443/", false},    // default port
	{"http://example.com:080/", false},     // leading zero
	{"http://example.com:99999/", false},   // out of range
	{"http://example.com/a/./b", false},    // dot segment
	{"http://example.com/a/..", false},     // dot segment
	{"http://example.com/a%2fb", false},    // escape
	{"http://example.com/a;sid=1", false},  // path parameter
	{"http://example.com/?b=1&a=2", false}, // query
	{"http://example.com/#f", false},       // fragment
	{"http://example.com/a b", false},      // space
	{"http://example.com/a\\b", false},     // backslash
	{"http://xn--bcher-kva.de/", false},    // A-label
	{"http://ex_ample.com/", false},        // underscore
	{"http://-a.com/", false},              // leading hyphen
	{"http://a..com/", false},              // empty label
	{"http://example.com./", false},        // trailing dot
	{"http://127.1/", false},               // short IPv4
	{"http://127.0.0.01/", false},          // leading zero octet
	{"http://256.0.0.1/", false},           // octet range
	{"http://0x7f.0.0.1/", false},          // hex IPv4
	{"http://a.0x7f/", false},              // ends in a number
	{"http://[::1]/", false},               // IPv6
	{"http://user@example.com/", false},    // userinfo
	{"ftp://example.com/", false},          // scheme
}

func TestFastPath(t *testing.T) {
	n := New(DefaultPolicy())
	for _, tc := range fastPathCases {
		if got := n.canonicalASCII(tc.url); got != tc.fast {
			t.Errorf("canonicalASCII(%q) = %v, want %v", tc.url, got, tc.fast)
		}
		if tc.fast {
			if got, err := n.normalize(tc.url); err != nil || got != tc.url {
				t.Errorf("full normalization of %q = %q (%v), want it unchanged", tc.url, got, err)
			}
		}
	}
}

// TestHostGrid normalizes every host of up to three labels drawn from names,
// numbers in the spellings WHATWG's IPv4 parser reads, IDN forms and empty
// labels, joined by dots in every spelling the parser maps to one (literal,
// percent-encoded, ideographic and fullwidth). Every result must satisfy
// checkCanonical (idempotent, parsed again to itself) and keep the kind of
// host the parser saw in the input: trimming empty labels once turned the
// name "1.2.3.4.." into an IP address and "foo.09.." into a host that no
// longer parsed.
func TestHostGrid(t *testing.T) {
	labels := []string{"", "a", "1", "09", "0x7f", "0X", "1e", "xn--bcher-kva", "ü", "%41", "ＡＢ", "０", "_"}
	seps := []string{".", "%2e", "\u3002", "\uff0e"}
	var hosts []string
	for _, a := range labels {
		hosts = append(hosts, a)
		for _, s := range seps {
			for _, b := range labels {
				hosts = append(hosts, a+s+b)
				for _, c := range labels {
					hosts = append(hosts, a+s+b+"."+c, a+"."+b+s+c)
				}
			}
		}
	}
	if testing.Short() {
		hosts = hosts[:len(hosts)/8]
	}
	n := New(DefaultPolicy())
	parser := wurl.NewParser()
	accepted := 0
	for _, h := range hosts {
		for _, tail := range []string{"", ":8080/x"} {
			raw := "http://" + h + tail
			got, err := n.Normalize(raw)
			if err != nil {
				continue
			}
			accepted++
			in, err := parser.Parse(raw)
			if err != nil {
				t.Fatalf("Normalize(%q) = %q, but the WHATWG parser refuses the input: %v", raw, got, err)
			}
			out := checkCanonical(t, n, parser, "Normalize "+raw, got)
			if was, is := hostKind(parser, in), hostKind(parser, out); was != is {
				t.Fatalf("Normalize(%q) = %q: host %q was a %s, is now a %s", raw, got, in.Hostname(), was, is)
			}
		}
	}
	t.Logf("%d URLs, %d accepted", 2*len(hosts), accepted)
}
