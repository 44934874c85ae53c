package robots

import (
	"strings"
	"testing"
)

// TestAllowedPathMatching covers how one rule matches request targets: the
// path-matching table of Google's robots.txt specification, the special
// characters of RFC 9309 section 2.2.3, and query strings.
func TestAllowedPathMatching(t *testing.T) {
	runPathCases(t, []pathCase{
		// Google's table of example path matches.
		{
			name:  "google / matches everything",
			body:  star("Disallow: /"),
			deny:  []string{"/", "/fish", "/a/b/c.html", "/?q=1"},
			allow: []string{"/robots.txt"},
		},
		{
			name: "google /* equals /",
			body: star("Disallow: /*"),
			deny: []string{"/", "/fish", "/a/b/c.html", "/?q=1"},
		},
		{
			name:  "google /$ matches only the root",
			body:  star("Disallow: /$"),
			deny:  []string{"/", ""},
			allow: []string{"/a", "/?q=1", "/index.html"},
		},
		{
			name:  "google /fish",
			body:  star("Disallow: /fish"),
			deny:  []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			allow: []string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"},
		},
		{
			name:  "google /fish* equals /fish",
			body:  star("Disallow: /fish*"),
			deny:  []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			allow: []string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"},
		},
		{
			name:  "google /fish/",
			body:  star("Disallow: /fish/"),
			deny:  []string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"},
			allow: []string{"/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"},
		},
		{
			name:  "google fish/ equals /fish/",
			body:  star("Disallow: fish/"),
			deny:  []string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"},
			allow: []string{"/fish", "/fish.html", "/Fish/Salmon.asp"},
		},
		{
			name:  "google /*.php",
			body:  star("Disallow: /*.php"),
			deny:  []string{"/index.php", "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/filename.php/"},
			allow: []string{"/", "/windows.PHP"},
		},
		{
			name:  "google /*.php$",
			body:  star("Disallow: /*.php$"),
			deny:  []string{"/filename.php", "/folder/filename.php"},
			allow: []string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"},
		},
		{
			name:  "google /fish*.php",
			body:  star("Disallow: /fish*.php"),
			deny:  []string{"/fish.php", "/fishheads/catfish.php?parameters"},
			allow: []string{"/Fish.PHP", "/fish.html"},
		},
		// RFC 9309 section 2.2.3, special characters.
		{
			name:  "rfc 2.2.3 $ ends the pattern",
			body:  star("Disallow: /this/path/exactly$"),
			deny:  []string{"/this/path/exactly", "/this/path/exactly#fragment"},
			allow: []string{"/this/path/exactly/", "/this/path/exactly?x=1", "/this/path"},
		},
		{
			name:  "rfc 2.2.3 * matches any run of octets",
			body:  star("Disallow: /this/*/exactly"),
			deny:  []string{"/this/a/exactly", "/this/a/b/exactly", "/this//exactly", "/this/a/exactly/more"},
			allow: []string{"/this/exactly", "/that/a/exactly"},
		},
		{
			name:  "rfc 2.2.3 %2A matches a literal *",
			body:  star("Disallow: /path/file-with-a-%2A.html"),
			deny:  []string{"/path/file-with-a-*.html", "/path/file-with-a-%2A.html", "/path/file-with-a-%2a.html"},
			allow: []string{"/path/file-with-a-x.html", "/path/file-with-a-.html"},
		},
		{
			name:  "rfc 2.2.3 %24 matches a literal $",
			body:  star("Disallow: /path/foo-%24"),
			deny:  []string{"/path/foo-$", "/path/foo-%24", "/path/foo-$/bar"},
			allow: []string{"/path/foo-", "/path/foo-x"},
		},
		{
			name:  "$ in the middle is a literal",
			body:  star("Disallow: /price$list"),
			deny:  []string{"/price$list", "/price%24list", "/price$list/2"},
			allow: []string{"/price", "/pricelist", "/price$"},
		},
		{
			name:  "only the last of two $ anchors",
			body:  star("Disallow: /a$$"),
			deny:  []string{"/a$"},
			allow: []string{"/a", "/a$b"},
		},
		{
			name:  "pattern starting with * (rfc 5.1)",
			body:  star("Disallow: *.gif$"),
			deny:  []string{"/a.gif", "/x/y/z.gif", "/.gif"},
			allow: []string{"/a.gif?size=2", "/a.gifs", "/a.GIF"},
		},
		{
			name:  "several wildcards",
			body:  star("Disallow: /*/private/*.pdf$"),
			deny:  []string{"/a/private/b.pdf", "/a/b/private/c/d.pdf", "/x/private/.pdf"},
			allow: []string{"/private/b.pdf", "/a/private/b.pdf?dl=1", "/a/public/b.pdf"},
		},
		{
			name:  "anchored wildcard needs the tail after the middle part",
			body:  star("Disallow: /a*a$"),
			deny:  []string{"/aa", "/abca", "/a/a"},
			allow: []string{"/a", "/ab"},
		},
		// Query strings are part of what rules match.
		{
			name:  "any query string",
			body:  star("Disallow: /*?"),
			deny:  []string{"/?", "/a?b=1", "/a/b?"},
			allow: []string{"/", "/a", "/a/b"},
		},
		{
			name:  "query prefix",
			body:  star("Disallow: /search?q="),
			deny:  []string{"/search?q=", "/search?q=fish&page=2"},
			allow: []string{"/search", "/search?page=2&q=fish", "/search/q="},
		},
		{
			name:  "query parameter anywhere",
			body:  star("Disallow: /*?*sessionid="),
			deny:  []string{"/a?sessionid=1", "/a/b?x=1&sessionid=2"},
			allow: []string{"/a?x=1", "/sessionid=1"},
		},
		{
			name:  "fragment is not part of the target",
			body:  star("Disallow: /a$"),
			deny:  []string{"/a#top"},
			allow: []string{"/b#top", "/a/b#"},
		},
		{
			name:  "target without leading slash",
			body:  star("Disallow: /a"),
			deny:  []string{"a", "a/b", "a?x"},
			allow: []string{"b"},
		},
		{
			name:  "rule without leading slash",
			body:  star("Disallow: private/"),
			deny:  []string{"/private/", "/private/x"},
			allow: []string{"/x/private/"},
		},
	})
}

// TestAllowedPrecedence covers the choice between matching rules: the longest
// pattern wins and Allow wins a tie (RFC 9309 sections 2.2.2 and 5.2 and the
// order-of-precedence examples of Google's specification).
func TestAllowedPrecedence(t *testing.T) {
	runPathCases(t, []pathCase{
		{
			name:  "google allow /p beats disallow /",
			body:  star("Allow: /p", "Disallow: /"),
			allow: []string{"/page", "/p"},
			deny:  []string{"/other", "/"},
		},
		{
			name:  "google equal allow and disallow: allow wins",
			body:  star("Allow: /folder", "Disallow: /folder"),
			allow: []string{"/folder/page", "/folder"},
		},
		{
			name:  "google disallow /*.htm beats allow /page",
			body:  star("Allow: /page", "Disallow: /*.htm"),
			deny:  []string{"/page.htm", "/x.htm"},
			allow: []string{"/page", "/page.php"},
		},
		{
			name:  "google allow /page ties disallow /*.ph",
			body:  star("Allow: /page", "Disallow: /*.ph"),
			allow: []string{"/page.php5"},
			deny:  []string{"/other.php5"},
		},
		{
			name:  "google allow /$ with disallow /",
			body:  star("Allow: /$", "Disallow: /"),
			allow: []string{"/"},
			deny:  []string{"/page.htm", "/?x"},
		},
		{
			name:  "rfc 5.2 longest match",
			body:  "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
			agent: "foobot",
			allow: []string{"/example/page/", "/example/page/allowed.gif", "/example/page"},
			deny:  []string{"/example/page/disallowed.gif", "/example/page/disallowed.gif?x"},
		},
		{
			name:  "order in the file does not matter",
			body:  star("Disallow: /", "Allow: /p"),
			allow: []string{"/page"},
			deny:  []string{"/other"},
		},
		{
			name:  "tie between wildcard rules: allow wins",
			body:  star("Disallow: /*.gif", "Allow: /a*gif"),
			allow: []string{"/a.gif"},
			deny:  []string{"/b.gif"},
		},
		{
			name:  "empty disallow allows everything",
			body:  star("Disallow:"),
			allow: []string{"/", "/a", "/a?b"},
		},
		{
			name:  "empty disallow does not cancel other rules",
			body:  star("Disallow:", "Disallow: /x"),
			allow: []string{"/", "/y"},
			deny:  []string{"/x", "/x/y"},
		},
		{
			name: "empty allow changes nothing",
			body: star("Allow:", "Disallow: /"),
			deny: []string{"/", "/a"},
		},
		{
			name:  "robots.txt is always allowed",
			body:  star("Disallow: /", "Disallow: /robots.txt", "Disallow: /robots.txt$"),
			allow: []string{"/robots.txt", "/robots.txt#x", "/%72obots.txt"},
			deny:  []string{"/robots.txt?x=1", "/robots.txt.bak", "/ROBOTS.TXT"},
		},
		{
			name:  "duplicate rules",
			body:  star("Disallow: /a", "Disallow: /b", "Disallow: /a", "Allow: /a", "Allow: /a"),
			allow: []string{"/a", "/c"},
			deny:  []string{"/b"},
		},
	})
}

// TestAllowedPercentEncoding covers RFC 9309 section 2.2.2: octets outside
// printable ASCII compare percent-encoded, escapes of unreserved characters
// equal the characters, and other escapes stay distinct from their octets.
func TestAllowedPercentEncoding(t *testing.T) {
	runPathCases(t, []pathCase{
		{
			name:  "rfc 2.2.2 plain query",
			body:  star("Disallow: /foo/bar?baz=quz"),
			deny:  []string{"/foo/bar?baz=quz", "/foo/bar?baz=quz&x=1"},
			allow: []string{"/foo/bar?baz=qu", "/foo/bar"},
		},
		{
			// The RFC's table also lists the rule
			// "/foo/bar?baz=https://foo.bar" as matching
			// "...https%3A%2F%2Ffoo.bar"; this package keeps reserved
			// escapes distinct from their octets (as Google's parser does),
			// so each spelling matches only itself.
			name:  "rfc 2.2.2 reserved characters in a query",
			body:  star("Disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar", "Disallow: /q?u=https://foo.bar"),
			deny:  []string{"/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https%3a%2f%2ffoo.bar", "/q?u=https://foo.bar"},
			allow: []string{"/foo/bar?baz=https://foo.bar"},
		},
		{
			name:  "rfc 2.2.2 raw UTF-8 rule matches the encoded path",
			body:  star("Disallow: /foo/bar/ツ"),
			deny:  []string{"/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84", "/foo/bar/ツ", "/foo/bar/ツ/x"},
			allow: []string{"/foo/bar/", "/foo/bar/%E3%83"},
		},
		{
			name: "rfc 2.2.2 encoded rule matches the raw UTF-8 path",
			body: star("Disallow: /foo/bar/%E3%83%84"),
			deny: []string{"/foo/bar/%E3%83%84", "/foo/bar/ツ"},
		},
		{
			name: "rfc 2.2.2 escaped unreserved characters are the characters",
			body: star("Disallow: /foo/bar/%62%61%7A", "Disallow: /q?x=%7Euser"),
			deny: []string{"/foo/bar/baz", "/foo/bar/%62az", "/q?x=~user", "/q?x=%7euser"},
		},
		{
			name: "plain rule matches escaped unreserved path",
			body: star("Disallow: /foo/bar/baz"),
			deny: []string{"/foo/bar/%62%61%7A", "/foo/bar/%62%61%7a"},
		},
		{
			name:  "%2F is not /",
			body:  star("Disallow: /a%2Fb"),
			deny:  []string{"/a%2Fb", "/a%2fb"},
			allow: []string{"/a/b"},
		},
		{
			name:  "/ is not %2F",
			body:  star("Disallow: /a/b"),
			deny:  []string{"/a/b"},
			allow: []string{"/a%2Fb", "/a%2fb"},
		},
		{
			name:  "stray percent signs",
			body:  star("Disallow: /100%", "Disallow: /bad%zz"),
			deny:  []string{"/100%", "/100%25", "/100%/x", "/bad%zz", "/bad%25zz"},
			allow: []string{"/100", "/bad"},
		},
		{
			name:  "space and control octets",
			body:  star("Disallow: /a b", "Disallow: /tab%09"),
			deny:  []string{"/a b", "/a%20b", "/tab\t", "/tab%09"},
			allow: []string{"/a+b", "/ab"},
		},
		{
			name:  "non-ASCII path against ASCII rule",
			body:  star("Disallow: /caf"),
			deny:  []string{"/café", "/caf%C3%A9"},
			allow: []string{"/ca", "/%C3%A9"},
		},
	})
}

// TestMatchLinear guards the no-backtracking claim of rule.match: a pattern
// of many wildcards against a long path that almost matches must not blow up.
func TestMatchLinear(t *testing.T) {
	body := star("Disallow: /" + strings.Repeat("a*", 200) + "b$")
	g := Parse([]byte(body)).Group(testAgent)
	path := "/" + strings.Repeat("a", 100_000)
	if !g.Allowed(path) {
		t.Errorf("Allowed(/aaa...) = false, want true (no b at the end)")
	}
	if g.Allowed(path + "b") {
		t.Errorf("Allowed(/aaa...b) = true, want false")
	}
}

// TestSortRulesDropsDuplicates checks the precedence order and that a
// pattern repeated anywhere in the merged groups is kept once.
func TestSortRulesDropsDuplicates(t *testing.T) {
	body := "User-agent: FooBot\nDisallow: /a\nDisallow: /b\nAllow: /a\nDisallow: /a\n\n" +
		"User-agent: *\nDisallow: /z\n\nUser-agent: foobot\nAllow: /a\nDisallow: /%61\nDisallow: /ccc\n"
	g := Parse([]byte(body)).Group(testAgent)
	var got []string
	for _, r := range g.rules {
		verb := "disallow "
		if r.allow {
			verb = "allow "
		}
		got = append(got, verb+r.pattern)
	}
	want := []string{"disallow /ccc", "allow /a", "disallow /a", "disallow /b"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("rules = %q, want %q", got, want)
	}
}
