package pattern

import (
	"fmt"
	"testing"
)

// BenchmarkDescribeAdmit: URLs decided per second by one host's admission
// (Describe, then Admit, parking what is held), over a mix of a site's
// sections and a generated space, as the fetcher's admission runs it.
func BenchmarkDescribeAdmit(b *testing.B) {
	cfg := DefaultConfig()
	const n = 4096
	found := make([]Found, n)
	for i := range found {
		switch i % 4 {
		case 0: // an article found on its section's index
			found[i] = Found{URL: fmt.Sprintf("http://h.example/news/%d-story-%d.html", i, i%97), Parent: "http://h.example/news/"}
		case 1: // a documentation page found on another
			found[i] = Found{URL: fmt.Sprintf("http://h.example/docs/page-%s.html", word(i)), Parent: fmt.Sprintf("http://h.example/docs/page-%s.html", word(i/2))}
		case 2: // a facet refinement
			found[i] = Found{URL: fmt.Sprintf("http://h.example/shop?color=c%d&size=s%d", i%13, i%7), Parent: fmt.Sprintf("http://h.example/shop?color=c%d", i%13), ParentHops: 1, ParentOrigin: KeyOf("/shop")}
		default: // a print variant
			found[i] = Found{URL: fmt.Sprintf("http://h.example/news/%d-story.html?print=1", i), Parent: fmt.Sprintf("http://h.example/news/%d-story.html", i)}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	h := NewHost[int]()
	for i := 0; i < b.N; i++ {
		if i%n == 0 && i > 0 {
			h = NewHost[int]() // a fresh host now and then, as a crawl meets new ones
		}
		f := found[i%n]
		c := h.Describe(cfg, f)
		hash := int64(KeyOf(f.URL))
		if d := h.Admit(cfg, hash, c); !d.Admit {
			h.Park(cfg, d, hash, c, i)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkObserveRelinks: verdicts decided per second when each carries
// the parser's most relinks (32 known URLs of the host, of other sections
// than the page's), the per-link work of Observe.
func BenchmarkObserveRelinks(b *testing.B) {
	cfg := DefaultConfig()
	h := NewHost[int]()
	const sections, pages = 8, 256
	url := func(i int) string { return fmt.Sprintf("http://h.example/s%d/page-%s.html", i%sections, word(i)) }
	for i := range pages {
		u := url(i)
		c := h.Describe(cfg, Found{URL: u, Parent: "http://h.example/"})
		if d := h.Admit(cfg, int64(KeyOf(u)), c); d.Admit {
			h.Observe(cfg, Verdict{URL: u, Hash: int64(KeyOf(u)), Grounded: c.Grounded})
		}
	}
	verdicts := make([]Verdict, pages)
	for i := range verdicts {
		v := Verdict{URL: url(i), Hash: int64(KeyOf(url(i))), Grounded: true, Duplicate: i%3 == 0}
		for j := range 32 {
			v.Relinks = append(v.Relinks, url(i+1+j*7))
		}
		verdicts[i] = v
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Observe(cfg, verdicts[i%pages])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verdicts/s")
}

// BenchmarkSnapshot: a host's saved admission state, as the fetcher writes
// it for every host whose state changed, every -host-save-interval, for a
// host whose 2,048 URLs made it a few hundred spaces.
func BenchmarkSnapshot(b *testing.B) {
	cfg := DefaultConfig()
	h := NewHost[int]()
	for i := range 2048 {
		f := Found{URL: fmt.Sprintf("http://h.example/s%d/%s/page-%d.html", i%61, word(i%17), i), Parent: fmt.Sprintf("http://h.example/s%d/", i%61)}
		c := h.Describe(cfg, f)
		hash := int64(KeyOf(f.URL))
		if d := h.Admit(cfg, hash, c); !d.Admit {
			h.Park(cfg, d, hash, c, i)
			continue
		}
		h.Observe(cfg, Verdict{URL: f.URL, Hash: hash, Grounded: c.Grounded, Origin: c.Origin, Duplicate: i%5 == 0})
	}
	b.ReportAllocs()
	for b.Loop() {
		h.version++ // changed since the last save
		if _, ok := h.Snapshot(); !ok {
			b.Fatal("no snapshot")
		}
	}
}
