package admit

import (
	"fmt"
	"testing"
)

// BenchmarkCheck runs Check over a mix of links a crawl meets: in and out of
// scope, with and without queries, dates and media, deep and shallow.
func BenchmarkCheck(b *testing.B) {
	r := New(Config{Scope: ScopeDomain, MaxDepth: 10, MaxHostPages: 100000})
	for i := range 1000 {
		r.AddSeedHost(fmt.Sprintf("www.site%d.example.com", i))
	}
	urls := []string{
		"http://www.site1.example.com/",
		"https://shop.site2.example.com/products/shoes/running/model-x?color=red&size=42",
		"https://www.site3.example.com/blog/2026/05/17/a-post-about-crawling",
		"https://cdn.site4.example.com/img/2024/photo.jpg",
		"http://other.example.org/outside/scope",
		"https://www.site5.example.com/calendar?year=2031&month=4",
		"https://www.site6.example.com/a/b/c/a/b/c/a/b/c",
		"https://www.site7.example.com/search?q=x&page=2&sort=asc&filter=a&filter=b&utm=1&ref=2",
		"https://www.site8.example.com:8443/deep" + path(14),
	}
	c := Candidate{Depth: 3, HostPages: 42, Now: now}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.URL = urls[i%len(urls)]
		r.Check(c)
		i++
	}
}
