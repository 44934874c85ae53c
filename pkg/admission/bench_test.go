package admission

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// mix is a poll's worth of URLs as a crawl of many sites sends them: a
// site's articles and documentation found on its own pages, sitemap
// entries, facet refinements and print variants (generated spaces), links
// to hosts out of scope, a requisite, and links found twice in the poll.
func mix(n int) []URL {
	out := make([]URL, 0, n)
	for i := 0; len(out) < n; i++ {
		host := fmt.Sprintf("h%d.example", i%16)
		base := "http://" + host
		var u URL
		switch i % 8 {
		case 0, 1:
			u = URL{URL: fmt.Sprintf("%s/news/%d-story-%d.html", base, i, i%97), Parent: base + "/news/", Depth: 2}
		case 2:
			u = URL{URL: fmt.Sprintf("%s/docs/page-%d.html", base, i), Parent: fmt.Sprintf("%s/docs/page-%d.html", base, i/2), Depth: 3}
		case 3:
			u = URL{URL: fmt.Sprintf("%s/archive/%d.html", base, i), Listed: true, Depth: 1}
		case 4:
			u = URL{URL: fmt.Sprintf("%s/shop?color=c%d&size=s%d", base, i%13, i%7), Parent: fmt.Sprintf("%s/shop?color=c%d", base, i%13), Depth: 4, ParentHops: 1}
		case 5:
			u = URL{URL: fmt.Sprintf("%s/news/%d-story.html?print=1", base, i), Parent: fmt.Sprintf("%s/news/%d-story.html", base, i), Depth: 3}
		case 6:
			host = fmt.Sprintf("elsewhere%d.example", i%5)
			u = URL{URL: fmt.Sprintf("http://%s/ad/%d", host, i), Parent: base + "/", Depth: 2}
		default:
			u = URL{URL: fmt.Sprintf("%s/static/site-%d.css", base, i%3), Parent: base + "/", Depth: 2, Kind: urlkind.Requisite}
		}
		u.Host, u.Hash, u.Partition = host, store.HashURL(u.URL), int32(i%256)
		out = append(out, u)
	}
	return out
}

// BenchmarkDecide: URLs decided per second by Decide and Budget together, a
// poll of 512 URLs at a time, over the mix above, as the fetcher's admission
// runs them (without the seen-URL check, which is the store's).
func BenchmarkDecide(b *testing.B) {
	const poll = 512
	urls := mix(poll * 8)
	d := newDecider(true)
	for i := range 16 {
		d.rules.AddSeedHost(fmt.Sprintf("h%d.example", i))
	}
	hosts := map[string]*Host{}
	lookup := func(h string) *Host { return hosts[h] }
	var op operator
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += poll {
		if i%(len(urls)*4) == 0 {
			clear(hosts) // fresh hosts now and then, as a crawl meets new ones
		}
		p := d.Poll()
		fresh := make([]Candidate, 0, poll)
		for j := i; j < i+poll && j < b.N; j++ {
			u := urls[j%len(urls)]
			h := hosts[u.Host]
			if h == nil {
				h = &Host{}
				hosts[u.Host] = h
			}
			if v := p.Decide(u, h, 0, op, now); v.Outcome == Admitted {
				fresh = append(fresh, v.Candidate)
			}
		}
		d.Budget(fresh, nil, nil, lookup, now)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkHeldBytes: the live heap a host's budgets keep per URL they hold
// back (parked), over hosts that each hold a generated chain of 200 pages
// (B/held). At 10,000 hosts the held URLs were half the crawl's live heap.
func BenchmarkHeldBytes(b *testing.B) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	hosts := make([]Host, b.N)
	held := 0
	for i := range hosts {
		d := newDecider(true)
		_, ex := chain(d, &hosts[i], 200)
		held += len(ex)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(before))/float64(max(held, 1)), "B/held")
	runtime.KeepAlive(hosts)
}
