package robots

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// rfc9309Example is the example file of RFC 9309 section 5.1, with its
// closing "EOF" marker, which is no record and must be skipped.
const rfc9309Example = `User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
`

// googleGroups is the grouping example of Google's robots.txt parser tests:
// rules before any user-agent line belong to no group, blank lines end
// nothing, and a user-agent line after rules starts a new group.
const googleGroups = `allow: /foo/bar/

user-agent: FooBot
disallow: /
allow: /x/
user-agent: BarBot
disallow: /
allow: /y/


allow: /w/
user-agent: BazBot

user-agent: FooBot
allow: /z/
disallow: /
`

// TestGroupSelection covers RFC 9309 section 2.2.1: which groups a crawler
// obeys, how groups for one agent merge, and where groups begin and end.
func TestGroupSelection(t *testing.T) {
	runPathCases(t, []pathCase{
		{
			name:  "rfc 5.1 foobot",
			body:  rfc9309Example,
			agent: "foobot",
			allow: []string{"/example/page.html", "/example/allowed.gif", "/robots.txt"},
			deny:  []string{"/", "/example/", "/example/other.html", "/publications/", "/a.gif"},
		},
		{
			name:  "rfc 5.1 barbot",
			body:  rfc9309Example,
			agent: "barbot",
			allow: []string{"/", "/example/other.html", "/a.gif", "/publications/"},
			deny:  []string{"/example/page.html", "/example/page.html?x"},
		},
		{
			name:  "rfc 5.1 bazbot shares the barbot group",
			body:  rfc9309Example,
			agent: "BazBot/2.1",
			allow: []string{"/", "/example/other.html"},
			deny:  []string{"/example/page.html"},
		},
		{
			name:  "rfc 5.1 quxbot has an empty group",
			body:  rfc9309Example,
			agent: "quxbot",
			allow: []string{"/", "/example/page.html", "/a.gif", "/example/"},
		},
		{
			name:  "rfc 5.1 other crawlers use the * group",
			body:  rfc9309Example,
			agent: "OtherBot",
			allow: []string{"/", "/a.gif?x=1", "/publications/", "/publications/a.gif", "/EOF"},
			deny:  []string{"/a.gif", "/x/y.gif", "/example/", "/example/page.html"},
		},
		{
			name:  "google groups FooBot",
			body:  googleGroups,
			agent: "FooBot",
			allow: []string{"/x/", "/z/"},
			deny:  []string{"/", "/y/", "/w/", "/foo/bar/"},
		},
		{
			name:  "google groups BarBot",
			body:  googleGroups,
			agent: "BarBot",
			allow: []string{"/y/", "/w/"},
			deny:  []string{"/", "/x/", "/z/", "/foo/bar/"},
		},
		{
			name:  "google groups BazBot",
			body:  googleGroups,
			agent: "BazBot",
			allow: []string{"/z/"},
			deny:  []string{"/", "/x/", "/y/", "/foo/bar/"},
		},
		{
			name:  "agent matches case-insensitively",
			body:  "User-agent: FOOBOT\nDisallow: /x\n",
			agent: "foobot",
			deny:  []string{"/x"},
		},
		{
			name: "user-agent value reduced to its product token",
			body: "User-agent: FooBot/1.0 (+https://example.com/bot)\nDisallow: /x\n",
			deny: []string{"/x"},
		},
		{
			name:  "crawler user-agent string reduced to its product token",
			body:  "User-agent: foobot\nDisallow: /x\n",
			agent: "FooBot/1.2 (+https://example.com/bot)",
			deny:  []string{"/x"},
		},
		{
			name:  "prefix of the token is no match",
			body:  "User-agent: Foo\nDisallow: /\n\nUser-agent: FooBotNews\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n",
			allow: []string{"/", "/a"},
			deny:  []string{"/star"},
		},
		{
			name:  "specific group replaces the * group",
			body:  "User-agent: *\nDisallow: /star\n\nUser-agent: FooBot\nDisallow: /foo\n",
			allow: []string{"/star"},
			deny:  []string{"/foo"},
		},
		{
			name:  "groups for the same agent merge",
			body:  "User-agent: FooBot\nDisallow: /a\n\nUser-agent: BarBot\nDisallow: /b\n\nUser-agent: foobot\nDisallow: /c\nAllow: /c/open\n",
			allow: []string{"/b", "/c/open"},
			deny:  []string{"/a", "/c"},
		},
		{
			name:  "* groups merge",
			body:  "User-agent: *\nDisallow: /a\n\nUser-agent: BarBot\nDisallow: /b\n\nUser-agent: *\nDisallow: /c\n",
			allow: []string{"/b"},
			deny:  []string{"/a", "/c"},
		},
		{
			name: "* sharing a group with another agent",
			body: "User-agent: BarBot\nUser-agent: *\nDisallow: /x\n",
			deny: []string{"/x"},
		},
		{
			name:  "rules before the first user-agent are ignored",
			body:  "Disallow: /\nAllow: /y\n\nUser-agent: *\nDisallow: /y\n",
			allow: []string{"/", "/a"},
			deny:  []string{"/y"},
		},
		{
			name:  "empty disallow is a rule and ends the group's user-agent lines",
			body:  "User-agent: FooBot\nDisallow:\nUser-agent: BarBot\nDisallow: /\n",
			allow: []string{"/", "/a"},
		},
		{
			name: "sitemap does not end a group",
			body: "User-agent: FooBot\nSitemap: https://example.com/sitemap.xml\nUser-agent: *\nDisallow: /\n",
			deny: []string{"/"},
		},
		{
			name: "unknown record does not end a group",
			body: "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n",
			deny: []string{"/"},
		},
		{
			name: "crawl-delay does not end a group",
			body: "User-agent: FooBot\nCrawl-delay: 5\nUser-agent: *\nDisallow: /\n",
			deny: []string{"/"},
		},
		{
			name: "* followed by a comment or junk is global",
			body: "User-agent: * # everyone\nDisallow: /a\n\nUser-agent: *\tand more\nDisallow: /b\n",
			deny: []string{"/a", "/b"},
		},
		{
			name:  "user-agent without a token matches nobody",
			body:  "User-agent: 2bot\nDisallow: /a\n\nUser-agent:\nDisallow: /b\n\nUser-agent: *foo\nDisallow: /c\n",
			allow: []string{"/a", "/b", "/c"},
		},
		{
			name:  "crawler without a token uses the * group",
			body:  "User-agent: *\nDisallow: /star\n",
			agent: "2bot/1.0",
			deny:  []string{"/star"},
		},
		{
			name:  "empty file",
			body:  "",
			allow: []string{"/", "/a"},
		},
		{
			name:  "no user-agent line",
			body:  "# nothing for anyone\nDisallow: /\n",
			allow: []string{"/", "/a"},
		},
	})
}

// TestParseLineSyntax covers how lines are read: separators, comments,
// line ends, byte order marks, unknown records and malformed lines.
func TestParseLineSyntax(t *testing.T) {
	long := "/" + strings.Repeat("x", 200<<10)
	runPathCases(t, []pathCase{
		{
			name:  "missing colon",
			body:  "user-agent FooBot\ndisallow /x\n",
			deny:  []string{"/x"},
			allow: []string{"/y"},
		},
		{
			name:  "missing colon with more than two words is ignored",
			body:  "user-agent: FooBot\ndisallow /x /y\n",
			allow: []string{"/x", "/y"},
		},
		{
			name: "missing colon before a value holding a colon",
			body: "User-agent: *\nDisallow /a:b\nDisallow\t/c?u=https://x\n",
			deny: []string{"/a:b", "/c?u=https://x"},
		},
		{
			name:  "colon inside the value",
			body:  star("Disallow: /a:b", "Allow: /a:b:c"),
			deny:  []string{"/a:b"},
			allow: []string{"/a:b:c", "/a"},
		},
		{
			name: "byte order mark",
			body: "\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n",
			deny: []string{"/x"},
		},
		{
			name: "truncated byte order mark",
			body: "\xEF\xBBUser-agent: *\nDisallow: /x\n",
			deny: []string{"/x"},
		},
		{
			name:  "byte order mark inside the file is not skipped",
			body:  "User-agent: *\n\xEF\xBB\xBFDisallow: /x\nDisallow: /y\n",
			allow: []string{"/x"},
			deny:  []string{"/y"},
		},
		{
			name:  "CRLF line ends",
			body:  "User-agent: *\r\nDisallow: /x\r\nAllow: /x/y\r\n",
			deny:  []string{"/x"},
			allow: []string{"/x/y"},
		},
		{
			name:  "CR line ends",
			body:  "User-agent: *\rDisallow: /x\rAllow: /x/y\r",
			deny:  []string{"/x"},
			allow: []string{"/x/y"},
		},
		{
			name:  "mixed line ends",
			body:  "User-agent: FooBot\r\nDisallow: /a\rUser-agent: BarBot\nDisallow: /b\n\r\nUser-agent: FooBot\r\rDisallow: /c",
			deny:  []string{"/a", "/c"},
			allow: []string{"/b"},
		},
		{
			name:  "comments",
			body:  "# robots.txt\nUser-agent: * # all of them\n#Disallow: /y\nDisallow: /x # not /x2?\nDisallow: /p#q\n   # indented comment\n",
			deny:  []string{"/x", "/x2", "/p", "/pq"},
			allow: []string{"/y"},
		},
		{
			name:  "unknown records",
			body:  star("Noindex: /n", "Host: example.com", "Clean-param: ref /c", "Request-rate: 1/5", "Disallow: /d"),
			allow: []string{"/n", "/c"},
			deny:  []string{"/d"},
		},
		{
			name:  "keys are case-insensitive and spacing is free",
			body:  "USER-AGENT : foobot\n  DISALLOW  :   /x   \n\tAllow:\t/x/y\t\n",
			deny:  []string{"/x"},
			allow: []string{"/x/y"},
		},
		{
			name: "misspelled keys",
			body: "useragent: BarBot\nuser agent: FooBot\ndissallow: /a\ndisalow: /b\ndisallaw: /c\n",
			deny: []string{"/a", "/b", "/c"},
		},
		{
			name:  "whitespace-only value is empty",
			body:  star("Disallow:    \t"),
			allow: []string{"/"},
		},
		{
			name:  "very long line",
			body:  star("Disallow: "+long, "Disallow: /after"),
			deny:  []string{long, long + "/more", "/after"},
			allow: []string{long[:len(long)-1]},
		},
		{
			name: "no final line end",
			body: "User-agent: *\nDisallow: /x",
			deny: []string{"/x"},
		},
		{
			name: "binary garbage between records",
			body: "\x00\xff\xfe junk\nUser-agent: *\n:::\n\x00Disallow: /zero\nDisallow: /x\n\xc3\x28: /y\n",
			deny: []string{"/x"},
		},
	})
}

// TestCrawlDelay covers the forms of Crawl-delay (not in RFC 9309; honoured
// because slowing down is always polite).
func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"integer", "10", 10 * time.Second, true},
		{"zero", "0", 0, true},
		{"decimal", "2.5", 2500 * time.Millisecond, true},
		{"leading dot", ".5", 500 * time.Millisecond, true},
		{"trailing dot", "5.", 5 * time.Second, true},
		{"comment after", "3 # seconds", 3 * time.Second, true},
		{"larger than a day", "99999999", maxCrawlDelay, true},
		{"too many digits for a float64", strings.Repeat("9", 400), maxCrawlDelay, true},
		{"negative", "-1", 0, false},
		{"plus sign", "+1", 0, false},
		{"unit", "10s", 0, false},
		{"exponent", "1e3", 0, false},
		{"comma", "1,5", 0, false},
		{"two dots", "1.2.3", 0, false},
		{"only a dot", ".", 0, false},
		{"word", "fast", 0, false},
		{"NaN", "NaN", 0, false},
		{"Inf", "Inf", 0, false},
		{"hex", "0x10", 0, false},
		{"empty", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := "User-agent: *\nCrawl-delay: " + tc.value + "\n"
			got, ok := Parse([]byte(body)).Group(testAgent).CrawlDelay()
			if got != tc.want || ok != tc.ok {
				t.Errorf("Crawl-delay: %s gives (%v, %v), want (%v, %v)", tc.value, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestCrawlDelayGroups covers which Crawl-delay records apply to a crawler.
func TestCrawlDelayGroups(t *testing.T) {
	tests := []struct {
		name string
		body string
		want time.Duration
		ok   bool
	}{
		{"none", "User-agent: *\nDisallow: /\n", 0, false},
		{"only invalid", "User-agent: *\nCrawl-delay: soon\n", 0, false},
		{"before any user-agent", "Crawl-delay: 5\nUser-agent: *\nDisallow: /x\n", 0, false},
		{"slowest of one group", "User-agent: *\nCrawl-delay: 2\nCrawl-delay: 7\nCrawl-delay: 1\n", 7 * time.Second, true},
		{"slowest of merged groups", "User-agent: FooBot\nCrawl-delay: 2\n\nUser-agent: *\nDisallow: /\n\nUser-agent: foobot\nCrawl-delay: 4\nDisallow: /x\n", 4 * time.Second, true},
		{"* group ignored when a specific group matches", "User-agent: *\nDisallow: /private\nCrawl-delay: 30\n\nUser-agent: FooBot\nDisallow: /x\n", 0, false},
		// Crawl-delay is no rule, so the user-agent line after it continues
		// the group (RFC 9309 section 2.2.4): FooBot shares the * group.
		{"group with only a delay continues", "User-agent: *\nCrawl-delay: 30\n\nUser-agent: FooBot\nDisallow: /x\n", 30 * time.Second, true},
		{"after the rules", "User-agent: FooBot\nDisallow: /x\nCrawl-delay: 3\n", 3 * time.Second, true},
		{"other agent's delay", "User-agent: BarBot\nDisallow: /x\nCrawl-delay: 3\n", 0, false},
		{"misspelled key", "User-agent: *\ncrawldelay: 1\ncrawl delay: 2\n", 2 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Parse([]byte(tc.body)).Group(testAgent).CrawlDelay()
			if got != tc.want || ok != tc.ok {
				t.Errorf("CrawlDelay() = (%v, %v), want (%v, %v)", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSitemaps(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"none", star("Disallow: /"), nil},
		{
			"anywhere in the file",
			"Sitemap: https://example.com/top.xml\nUser-agent: FooBot\nSitemap: https://example.com/in-group.xml\nDisallow: /x\n" +
				"User-agent: *\nDisallow: /\nsitemap: http://cdn.example.org/other.xml # comment\nSITE-MAP: https://example.com/end.xml",
			[]string{"https://example.com/top.xml", "https://example.com/in-group.xml", "http://cdn.example.org/other.xml", "https://example.com/end.xml"},
		},
		{
			"duplicates once, in file order",
			"Sitemap: https://example.com/b.xml\nSitemap: https://example.com/a.xml\nSitemap: https://example.com/b.xml\n",
			[]string{"https://example.com/b.xml", "https://example.com/a.xml"},
		},
		{
			"only absolute http(s)",
			"Sitemap: /relative.xml\nSitemap: ftp://example.com/s.xml\nSitemap: sitemap.xml\nSitemap: https:///nohost.xml\nSitemap: HTTPS://Example.com/ok.xml\n",
			[]string{"HTTPS://Example.com/ok.xml"},
		},
		{
			"missing colon",
			"Sitemap https://example.com/s.xml\n",
			[]string{"https://example.com/s.xml"},
		},
		{
			"non-ASCII URL kept as written",
			"Sitemap: https://ja.example.org/テスト-サイトマップ.xml\n",
			[]string{"https://ja.example.org/テスト-サイトマップ.xml"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(tc.body))
			if got := f.Sitemaps(); !slices.Equal(got, tc.want) {
				t.Errorf("Sitemaps() = %q, want %q", got, tc.want)
			}
			// Callers may keep and change the slice.
			if got := f.Sitemaps(); len(got) > 0 {
				got[0] = "changed"
				if f.Sitemaps()[0] == "changed" {
					t.Errorf("Sitemaps() shares its slice with the File")
				}
			}
		})
	}
	var nilFile *File
	if got := nilFile.Sitemaps(); got != nil {
		t.Errorf("(*File)(nil).Sitemaps() = %q, want nil", got)
	}
}

// TestParseSizeLimit covers MaxSize: a rule wholly inside the first MaxSize
// bytes applies; a line cut by the limit, and anything after, do not.
func TestParseSizeLimit(t *testing.T) {
	// pad returns head followed by comment lines up to exactly n bytes.
	pad := func(head string, n int) string {
		var b strings.Builder
		b.WriteString(head)
		for rem := n - b.Len(); rem > 0; rem = n - b.Len() {
			if rem < 2 {
				b.WriteString("\n")
				continue
			}
			b.WriteString("#" + strings.Repeat("p", min(99, rem-2)) + "\n")
		}
		if b.Len() != n {
			t.Fatalf("pad made %d bytes, want %d", b.Len(), n)
		}
		return b.String()
	}
	head := "User-agent: *\nDisallow: /before\n"
	tests := []pathCase{
		{
			name:  "rule after the limit",
			body:  pad(head, MaxSize) + "Disallow: /after\n",
			deny:  []string{"/before"},
			allow: []string{"/after"},
		},
		{
			name: "rule ending exactly at the limit without a line end",
			body: pad(head, MaxSize-len("Disallow: /edge")) + "Disallow: /edge",
			deny: []string{"/before", "/edge"},
		},
		{
			name: "rule ending exactly at the limit, line end after it",
			body: pad(head, MaxSize-len("Disallow: /edge")) + "Disallow: /edge\nDisallow: /after\n",
			deny: []string{"/before", "/edge"},
		},
		{
			name: "CR at the limit, LF after it",
			body: pad(head, MaxSize-len("Disallow: /edge\r")) + "Disallow: /edge\r\nDisallow: /after\n",
			deny: []string{"/before", "/edge"},
		},
		{
			// Read as "/cut" the rule would disallow more than it says.
			name:  "rule cut by the limit",
			body:  pad(head, MaxSize-len("Disallow: /cut")) + "Disallow: /cutoff\n",
			deny:  []string{"/before"},
			allow: []string{"/cut", "/cutoff"},
		},
		{
			name:  "allow cut by the limit",
			body:  pad(head+"Disallow: /x\n", MaxSize-len("Allow: /x")) + "Allow: /x/y\n",
			deny:  []string{"/x", "/x/y"},
			allow: []string{"/y"},
		},
		{
			name:  "a single line longer than the limit",
			body:  "User-agent: * # " + strings.Repeat("x", MaxSize) + "\nDisallow: /\n",
			allow: []string{"/"},
		},
	}
	runPathCases(t, tests)
	if body := []byte(tests[0].body); len(body) <= MaxSize {
		t.Fatalf("test body has %d bytes, not over MaxSize", len(body))
	}
	if got := len(truncate(bytes.Repeat([]byte("a\n"), MaxSize))); got != MaxSize {
		t.Errorf("truncate kept %d bytes of a long body, want %d", got, MaxSize)
	}
}
