package fetcher

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestVerdictRaisesRelinkedURLs: a host's generated URLs are queued last,
// a real article among them; a page of another section links the article
// again (its verdict's relinks): the article is served before the
// generated URLs queued ahead of it, which stay where they were.
func TestVerdictRaisesRelinkedURLs(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.Patterns = pattern.DefaultConfig()
	cfg.RaiseRelinked = true
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.kafka.Close()
	const host = "site.test"
	urls := []string{"http://site.test/search?q=a", "http://site.test/search?q=b", "http://site.test/blog/post.html"}
	for _, u := range urls {
		f.fr.Push(frontier.Item{URL: u, Hash: store.HashURL(u), Host: host, Level: 3})
	}
	f.mu.Lock()
	f.hostOf(host)
	v := queue.Verdict{URL: "http://site.test/guide/", Relinks: []string{"/blog/post.html", "/search?q=b"}}
	recs := []*kgo.Record{{Topic: queue.TopicURLs, Partition: 0, Offset: 1}}
	f.observeVerdicts(recs, []decodedURL{{u: queue.URL{URL: v.URL, Kind: queue.KindVerdict, Verdict: &v}}})
	f.mu.Unlock()

	st, _ := f.fr.Host(host)
	if st.ByLevel[2] != 2 || st.ByLevel[3] != 1 {
		t.Fatalf("by level %v: want the article and the other section's relinked URL a level up", st.ByLevel)
	}
	// Another verdict of a page of the section that generated the search
	// URLs raises nothing.
	w := queue.Verdict{URL: "http://site.test/search?q=c", Relinks: []string{"/search?q=a"}}
	f.mu.Lock()
	f.observeVerdicts([]*kgo.Record{{Topic: queue.TopicURLs, Partition: 0, Offset: 2}}, []decodedURL{{u: queue.URL{URL: w.URL, Kind: queue.KindVerdict, Verdict: &w}}})
	f.mu.Unlock()
	if st, _ := f.fr.Host(host); st.ByLevel[3] != 1 {
		t.Fatalf("by level %v: a relink from the URL's own section raised it", st.ByLevel)
	}
}
