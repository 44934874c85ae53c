package urlnorm

import "testing"

// benchURLs is a mix like what link extraction produces: mostly clean
// absolute URLs, some with tracking parameters, escapes, IDNs and ports.
var benchURLs = []string{
	"https://www.example.com/",
	"https://www.example.com/news/2024/05/article-title.html",
	"http://example.org/search?q=golang+crawler&page=2",
	"https://shop.example.com/product/12345?utm_source=newsletter&utm_medium=email&ref=home",
	"https://example.com/a/b/../c/./d.html#section-2",
	"HTTP://WWW.EXAMPLE.COM:80/Index.HTML",
	"https://blog.example.net/posts/hello-world/?fbclid=IwAR0abc",
	"https://example.com/path%20with%20spaces/file%2dname.pdf",
	"https://bücher.example/kategorie/roman",
	"http://127.0.0.1:8080/status",
	"https://[2001:db8::1]/ipv6",
	"https://example.com/cart.jsp;jsessionid=0123456789ABCDEF?item=7",
	"https://cdn.example.com/static/js/app.3f2a1b.js",
	"https://example.com/wiki/Caf%c3%a9",
	"https://example.com/?b=2&a=1&c=3&a=0",
	"https://user:pw@example.com/private",
	"https://example.com/images/photo.JPG",
	"https://sub.domain.example.co.uk/a/very/deep/path/to/some/resource",
	"https://example.com/feed.xml?format=rss&lang=en",
	"https://example.com/%7Euser/home",
}

func BenchmarkNormalize(b *testing.B) {
	n := New(DefaultPolicy())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := n.Normalize(benchURLs[i%len(benchURLs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	n := New(DefaultPolicy())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Resolve("https://www.example.com/news/2024/index.html", "../archive/page-2.html?utm_source=x"); err != nil {
			b.Fatal(err)
		}
	}
}
