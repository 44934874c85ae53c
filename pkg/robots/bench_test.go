package robots

import (
	"fmt"
	"strings"
	"testing"
)

// benchBots are the named groups of benchRobots, as a large site lists them.
var benchBots = []string{
	"Googlebot", "Googlebot-Image", "Bingbot", "Slurp", "DuckDuckBot", "Baiduspider",
	"YandexBot", "Sogou", "Exabot", "facebot", "ia_archiver", "AhrefsBot", "SemrushBot",
	"MJ12bot", "DotBot", "PetalBot", "Applebot", "CCBot", "GPTBot", "Bytespider",
	"ClaudeBot", "PerplexityBot", "Amazonbot", "Seznambot", "Qwantify", "archive_org_bot",
	"BLEXBot", "DataForSeoBot", "serpstatbot", "Mediapartners-Google",
}

// benchRobots is a realistic robots.txt of about 20 KiB: comments, thirty
// named groups (some sharing a group, some with Crawl-delay), a large "*"
// group with wildcards and percent-encoding, and sitemaps.
func benchRobots() []byte {
	var b strings.Builder
	b.WriteString("# robots.txt for https://www.example.com/\n# Crawlers: please respect Crawl-delay.\n\n")
	b.WriteString("Sitemap: https://www.example.com/sitemap-index.xml\n\n")
	for i, bot := range benchBots {
		fmt.Fprintf(&b, "User-agent: %s\n", bot)
		if i%4 == 1 {
			continue // shares the next group
		}
		if i%3 == 0 {
			fmt.Fprintf(&b, "Crawl-delay: %d\n", i%7+1)
		}
		switch {
		case i%5 == 4:
			b.WriteString("Disallow: /\n")
		default:
			for j, dir := range []string{"account", "cart", "checkout", "search", "tmp", "admin", "wishlist", "compare", "api/v1", "internal"} {
				fmt.Fprintf(&b, "Disallow: /%s/section-%d/\n", dir, i*10+j)
			}
			fmt.Fprintf(&b, "Disallow: /*?sessionid=*&ref=%d\n", i)
			fmt.Fprintf(&b, "Allow: /search/section-%d/public/\n", i)
			fmt.Fprintf(&b, "Disallow: /*.json$ # api %d\n", i)
		}
		b.WriteString("\n")
	}
	b.WriteString("User-agent: *\n")
	for i := range 300 {
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "Disallow: /catalog/category-%d/*?sort=\n", i)
		case 1:
			fmt.Fprintf(&b, "Disallow: /user/%d/settings/\n", i)
		case 2:
			fmt.Fprintf(&b, "Allow: /catalog/category-%d/featured$\n", i)
		case 3:
			fmt.Fprintf(&b, "Disallow: /caf%%C3%%A9/menu-%d/\n", i)
		case 4:
			fmt.Fprintf(&b, "Disallow: /*/print/%d/*.pdf$\n", i)
		default:
			fmt.Fprintf(&b, "Disallow: /legacy/page-%d.php\n", i)
		}
	}
	b.WriteString("Crawl-delay: 1\n\n")
	for i := range 12 {
		fmt.Fprintf(&b, "Sitemap: https://www.example.com/sitemaps/sitemap-%02d.xml.gz\n", i)
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	body := benchRobots()
	if n := len(body); n < 18<<10 || n > 24<<10 {
		b.Fatalf("benchRobots is %d bytes, want about 20 KiB", n)
	}
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			Parse(body)
		}
	})
	b.Run("Evaluate", func(b *testing.B) {
		p := Policy{Agent: testAgent}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			Evaluate(p, 200, body, nil, testNow, nil)
		}
	})
}

// benchGroup is one group of 200 rules in the proportions of large real
// files: prefixes, wildcards, anchors, allows and percent-encoded paths.
func benchGroup() *Group {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 200 {
		switch i % 10 {
		case 0, 1, 2, 3:
			fmt.Fprintf(&b, "Disallow: /dir%d/sub%d/\n", i, i%7)
		case 4:
			fmt.Fprintf(&b, "Disallow: /*?*sessionid=%d\n", i)
		case 5:
			fmt.Fprintf(&b, "Disallow: /*/print/*.pdf?v=%d\n", i)
		case 6:
			fmt.Fprintf(&b, "Allow: /dir%d/sub%d/public/\n", i-6, (i-6)%7)
		case 7:
			fmt.Fprintf(&b, "Disallow: /page%d.html$\n", i)
		case 8:
			fmt.Fprintf(&b, "Disallow: /caf%%C3%%A9/%d/\n", i)
		default:
			fmt.Fprintf(&b, "Disallow: /catalog/*/reviews?page=%d*\n", i)
		}
	}
	g := Parse([]byte(b.String())).Group(testAgent)
	if n := len(g.rules); n != 200 {
		panic(fmt.Sprintf("benchGroup has %d rules, want 200", n))
	}
	return g
}

// benchPaths are request targets a crawler typically checks, most of them
// allowed (every rule is tried), some denied early, a few needing
// canonicalisation.
var benchPaths = []string{
	"/",
	"/products/widget-123?color=red&size=m",
	"/blog/2024/05/some-post-title/",
	"/search?q=go+robots&page=2",
	"/static/js/app.3f9a2c.js",
	"/dir40/sub5/item-42.html",
	"/dir46/sub5/public/index.html",
	"/page17.html",
	"/docs/print/guide.pdf?v=25",
	"/catalog/shoes/reviews?page=99&sort=new",
	"/café/108/menu",
	"/caf%c3%a9/8/menu",
	"/a?x=1&sessionid=154",
	"/about-us",
}

func BenchmarkAllowed(b *testing.B) {
	g := benchGroup()
	allowed := 0
	for _, p := range benchPaths {
		if g.Allowed(p) {
			allowed++
		}
	}
	if allowed == 0 || allowed == len(benchPaths) {
		b.Fatalf("%d of %d bench paths allowed; want a mix", allowed, len(benchPaths))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g.Allowed(benchPaths[i%len(benchPaths)])
		i++
	}
}
