package parser

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

func page(fetchID, url, body string, status int, extra ...func(*queue.Page)) queue.Page {
	raw := fmt.Sprintf("HTTP/1.1 %d X\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
	p := queue.Page{
		FetchID: fetchID, URL: url, Host: "a.example", Kind: queue.KindPage, Status: status,
		ContentType: "text/html; charset=utf-8", FetchedAt: time.Now().UTC().Truncate(time.Millisecond),
		RawRequest:  []byte("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"),
		RawResponse: []byte(raw), Body: []byte(body),
	}
	for _, f := range extra {
		f(&p)
	}
	return p
}

func produce(t *testing.T, e *testenv.Env, pages ...queue.Page) {
	t.Helper()
	var recs []*kgo.Record
	for _, p := range pages {
		v, err := queue.EncodePage(p)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: queue.TopicPages, Key: []byte(p.URL), Value: v, Partition: queue.PagePartitionOf(p.URL, queue.PagesPartitions)})
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// admit puts the URLs in the store as the fetcher would have before fetching.
func admit(t *testing.T, e *testenv.Env, urls ...string) {
	t.Helper()
	var rows []store.URL
	for _, u := range urls {
		rows = append(rows, store.URL{Hash: store.HashURL(u), URL: u, Host: "a.example", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()})
	}
	if _, err := e.DB.AdmitURLs(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
}

func captures(t *testing.T, e *testenv.Env) map[string][]store.Capture {
	t.Helper()
	out := map[string][]store.Capture{}
	if err := e.DB.Captures(context.Background(), func(c store.Capture) error {
		out[c.URL] = append(out[c.URL], c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// runParser runs a parser with cfg on e, writing WARC segments to the folder it
// returns, until the test ends.
func runParser(t *testing.T, e *testenv.Env, cfg Config) (segDir string) {
	t.Helper()
	return runParserOn(t, e, cfg, e.DB)
}

// runParserOn is runParser on st instead of e's store.
func runParserOn(t *testing.T, e *testenv.Env, cfg Config, st Store) (segDir string) {
	t.Helper()
	segDir = filepath.Join(e.Dir, "warc")
	seg, err := warc.NewSegmentWriter(warc.SegmentConfig{Dir: segDir, MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, st, seg, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		seg.Close()
	})
	return segDir
}

func TestParserStoresArchivesAndDiscovers(t *testing.T) {
	e := testenv.New(t)
	segDir := runParser(t, e, Config{RobotsAgent: "testbot", BatchSize: 50})

	home := `<html><head><title>Home</title></head><body><p>` + lorem(300, 1) + `</p>
		<a href="/a.html">a</a> <a href="http://b.example/x">b</a> <a rel="nofollow" href="/nf">nf</a>
		<a href="javascript:void(0)">js</a> <a href="http://[::1">bad</a></body></html>`
	copyBody := `<html><body><p>` + lorem(300, 2) + `</p></body></html>`
	nearBody := `<html><body><p>` + lorem(300, 2) + ` extra</p></body></html>`
	noindex := `<html><head><meta name="robots" content="noindex,nofollow"></head><body><a href="/hidden">x</a></body></html>`
	sm := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a.example/from-sitemap</loc></url><url><loc>http://c.example/elsewhere</loc></url></urlset>`
	urls := []string{"http://a.example/", "http://a.example/copy1", "http://a.example/copy2", "http://a.example/near", "http://a.example/old", "http://a.example/noindex", "http://a.example/sitemap.xml"}
	admit(t, e, urls...)
	produce(t, e,
		page("f1", urls[0], home, 200, func(p *queue.Page) {
			p.DurationMS = 123
			p.Protocol, p.TLSVersion, p.CipherSuite = "h2", "tls/1.3", "TLS_AES_128_GCM_SHA256"
		}),
		page("f2", urls[1], copyBody, 200),
		page("f3", urls[2], copyBody, 200),
		page("f4", urls[3], nearBody, 200),
		page("f5", urls[4], "", 301, func(p *queue.Page) { p.Location = "http://a.example/new"; p.Redirects = 5 }),
		page("f6", urls[5], noindex, 200),
		page("f7", urls[6], sm, 200, func(p *queue.Page) { p.Kind = queue.KindSitemap; p.ContentType = "application/xml" }),
	)
	// A poison record must not stop the partition.
	bad := &kgo.Record{Topic: queue.TopicPages, Key: []byte("x"), Value: []byte{9, 9, 9}, Partition: 0}
	if err := e.Kafka.ProduceSync(context.Background(), bad).FirstErr(); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, 20*time.Second, "7 captures", func() bool { return len(captures(t, e)) == 7 })
	caps := captures(t, e)

	// Every capture with content points at a readable WARC record of its URL.
	for u, cs := range caps {
		c := cs[0]
		if u == urls[5] {
			if !c.NoIndex || c.WARCFile != "" {
				t.Errorf("noindex page: NoIndex=%v WARCFile=%q, want no content stored", c.NoIndex, c.WARCFile)
			}
			continue
		}
		rec, err := warc.ReadAt(filepath.Join(segDir, c.WARCFile), c.WARCOffset, c.WARCLength)
		if err != nil {
			t.Fatalf("read WARC of %s: %v", u, err)
		}
		if rec.Header.Get(warc.FieldTargetURI) != u {
			t.Errorf("WARC record for %s names %s", u, rec.Header.Get(warc.FieldTargetURI))
		}
		// The page that came with its connection says so; the others came
		// without (as from a fetcher older than those fields) and say nothing.
		var wantProtocols []string
		wantSuite := ""
		if u == urls[0] {
			wantProtocols, wantSuite = []string{"h2", "tls/1.3"}, "TLS_AES_128_GCM_SHA256"
		}
		if got := rec.Header.Values(warc.FieldProtocol); !slices.Equal(got, wantProtocols) || rec.Header.Get(warc.FieldCipherSuite) != wantSuite {
			t.Errorf("WARC record for %s: WARC-Protocol %q, WARC-Cipher-Suite %q; want %q, %q", u, got, rec.Header.Get(warc.FieldCipherSuite), wantProtocols, wantSuite)
		}
	}
	if caps[urls[0]][0].Title != "Home" {
		t.Errorf("title = %q", caps[urls[0]][0].Title)
	}
	if d := caps[urls[0]][0].Duration; d != 123*time.Millisecond {
		t.Errorf("duration = %v, want the fetch's 123ms", d)
	}
	// Exact duplicate: whichever copy was stored first is the original; the other
	// is a revisit record pointing at it (they may sit on different partitions).
	orig, dup := caps[urls[1]][0], caps[urls[2]][0]
	if orig.RevisitOf != 0 {
		orig, dup = dup, orig
	}
	if orig.RevisitOf != 0 || dup.RevisitOf != orig.ID {
		t.Errorf("copies: RevisitOf %d and %d, IDs %d and %d; want one original and one revisit of it", orig.RevisitOf, dup.RevisitOf, orig.ID, dup.ID)
	}
	if rec, err := warc.ReadAt(filepath.Join(segDir, dup.WARCFile), dup.WARCOffset, dup.WARCLength); err != nil || rec.Type() != warc.TypeRevisit {
		t.Errorf("duplicate's WARC record: err %v, want a revisit record", err)
	}
	// Near duplicate of the copies (one word added), or they of it.
	near := caps[urls[3]][0]
	if near.NearDupOf != orig.ID && near.NearDupOf != dup.ID && orig.NearDupOf != near.ID {
		t.Errorf("near.NearDupOf = %d, copies %d/%d (NearDupOf %d): no near-duplicate link", near.NearDupOf, orig.ID, dup.ID, orig.NearDupOf)
	}

	// Discovered URLs: followable links, the sitemap's in-scope entry; not the
	// nofollow link, not the noindex,nofollow page's link, not the 6th redirect hop.
	// The topic also carries the pages' content verdicts (records of their own
	// for pages with no link to ride on), so read until the candidates are in,
	// not to a count.
	wanted := []string{"http://a.example/a.html", "http://b.example/x", "http://a.example/from-sitemap"}
	recs := e.ConsumeUntil(t, queue.TopicURLs, 10*time.Second, func(recs []*kgo.Record) bool {
		return countURLs(t, recs, wanted...) == len(wanted)
	})
	got := map[string]queue.URL{}
	for _, r := range recs {
		u, err := queue.DecodeURL(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if want := queue.PartitionOf(string(r.Key)); r.Partition != want {
			t.Errorf("%s on partition %d, want %d", u.URL, r.Partition, want)
		}
		got[u.URL] = u
	}
	for _, want := range wanted {
		if _, ok := got[want]; !ok {
			t.Errorf("candidate %s not produced; got %v", want, keys(got))
		}
	}
	for _, not := range []string{"http://a.example/nf", "http://a.example/hidden", "http://a.example/new", "http://c.example/elsewhere"} {
		if _, ok := got[not]; ok {
			t.Errorf("candidate %s produced, must not be", not)
		}
	}
	if d := got["http://a.example/a.html"].Depth; d != 1 {
		t.Errorf("link depth %d, want 1", d)
	}
	info, err := e.DB.URLInfo(context.Background(), "http://a.example/new")
	if err != nil || info.Exclusion == nil || info.Exclusion.Reason != ReasonMaxRedirects {
		t.Errorf("6th redirect hop: info %+v err %v, want exclusion %s", info, err, ReasonMaxRedirects)
	}
	info, err = e.DB.URLInfo(context.Background(), "http://c.example/elsewhere")
	if err != nil || info.Exclusion == nil || info.Exclusion.Reason != ReasonSitemapScope {
		t.Errorf("foreign sitemap entry: info %+v err %v, want exclusion %s", info, err, ReasonSitemapScope)
	}

	// The poison record went to the dead-letter topic with its reason.
	dl := e.Consume(t, queue.TopicDeadLetter, 1, 10*time.Second)
	if len(dl) != 1 {
		t.Fatalf("dead letters: %d, want 1", len(dl))
	}
	var reason string
	for _, h := range dl[0].Headers {
		if h.Key == queue.HeaderReason {
			reason = string(h.Value)
		}
	}
	if reason == "" {
		t.Errorf("dead letter without a reason header: %+v", dl[0].Headers)
	}

	// A replay of a stored fetch (same fetch id) and a second fetch of a stored URL
	// (new fetch id) store nothing new, but the replay still yields its links.
	produce(t, e, page("f1", urls[0], home, 200), page("f9", urls[1], copyBody, 200))
	replayed := []string{"http://a.example/a.html", "http://b.example/x"}
	recs = e.ConsumeUntil(t, queue.TopicURLs, 20*time.Second, func(recs []*kgo.Record) bool {
		return countURLs(t, recs, replayed...) == 2*len(replayed)
	})
	if n := countURLs(t, recs, replayed...); n != 2*len(replayed) {
		t.Errorf("%d records of %v after the replay, want each sent twice", n, replayed)
	}
	for u, cs := range captures(t, e) {
		if len(cs) != 1 {
			t.Errorf("%s stored %d times", u, len(cs))
		}
	}
}

// countURLs counts the records among recs that carry one of urls as their URL.
func countURLs(t *testing.T, recs []*kgo.Record, urls ...string) int {
	t.Helper()
	n := 0
	for _, r := range recs {
		u, err := queue.DecodeURL(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range urls {
			if u.URL == want {
				n++
			}
		}
	}
	return n
}

func keys(m map[string]queue.URL) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// lorem returns n deterministic words; different seeds give unrelated texts.
func lorem(n int, seed uint64) string {
	words := []string{"crawler", "polite", "host", "delay", "robots", "sitemap", "frontier", "queue", "parser", "archive", "record", "segment", "capture", "digest", "shingle", "fingerprint", "band", "index", "offset", "partition"}
	b := make([]byte, 0, n*8)
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[x%uint64(len(words))]...)
	}
	return string(b)
}

// TestRollEachBatchCommitsAfterUpload: in cluster mode a capture may only point at a
// segment whose upload (OnClose) succeeded; a failed upload makes the batch retry.
func TestRollEachBatchCommitsAfterUpload(t *testing.T) {
	e := testenv.New(t)
	var mu sync.Mutex
	uploaded := map[string]bool{}
	calls := 0
	seg, err := warc.NewSegmentWriter(warc.SegmentConfig{Dir: filepath.Join(e.Dir, "warc"), OnClose: func(path string) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return fmt.Errorf("object store unavailable")
		}
		uploaded[filepath.Base(path)] = true
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	p, err := New(Config{RobotsAgent: "testbot", RollEachBatch: true}, e.DB, seg, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = p.Run(ctx) }()
	defer func() { cancel(); wg.Wait() }()

	u := "http://a.example/up"
	admit(t, e, u)
	produce(t, e, page("u1", u, "<html><body>uploaded</body></html>", 200))
	testenv.Eventually(t, 20*time.Second, "capture stored after a retried upload", func() bool { return len(captures(t, e)) == 1 })
	c := captures(t, e)[u][0]
	mu.Lock()
	defer mu.Unlock()
	if !uploaded[c.WARCFile] {
		t.Errorf("capture points at %s, which was not uploaded (uploaded: %v)", c.WARCFile, uploaded)
	}
	if calls < 2 {
		t.Errorf("OnClose called %d times, want the failed upload retried", calls)
	}
}

// TestKnownLinksStayHome: a link to a URL the store holds already is not sent
// to crawl.urls; a new one is.
func TestKnownLinksStayHome(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot"})

	admit(t, e, "http://a.example/", "http://a.example/known.html")
	body := `<html><body><p>` + lorem(50, 3) + `</p><a href="/known.html">k</a> <a href="/new.html">n</a></body></html>`
	produce(t, e, page("f1", "http://a.example/", body, 200))
	// The links are produced after the capture is stored, under load maybe
	// seconds after: wait for the new one, then give a second record that
	// must not come 3 s more.
	testenv.Eventually(t, 20*time.Second, "capture", func() bool { return len(captures(t, e)) == 1 })
	recs := e.ConsumeUntil(t, queue.TopicURLs, 20*time.Second, func(recs []*kgo.Record) bool {
		return countURLs(t, recs, "http://a.example/new.html") > 0
	})
	recs = e.Consume(t, queue.TopicURLs, len(recs)+1, 3*time.Second)
	var got []string
	for _, r := range recs {
		u, err := queue.DecodeURL(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, u.URL)
	}
	if len(got) != 1 || got[0] != "http://a.example/new.html" {
		t.Errorf("produced %v, want only http://a.example/new.html", got)
	}
}

// TestDuplicateAncestry: links found on a duplicate page carry one duplicate
// hop more than the page, links of a distinct page none, and every page's
// content verdict reaches its host's owner once: on a link found on it when
// one is left, else in a record of its own, with how many of its links to
// its host were new, which of them the store knew already, and the other
// URL of its host it names canonical, if any.
func TestDuplicateAncestry(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot"})

	admit(t, e, "http://a.example/", "http://a.example/near.html", "http://a.example/lone.html", "http://a.example/known.html")
	text := lorem(400, 11)
	near := strings.Replace(text, " ", " notwithstanding ", 1)
	// The original is stored before its near duplicate is parsed: parsed
	// side by side, either of the two can be the one that finds the other.
	produce(t, e, page("f1", "http://a.example/", `<html><body><p>`+text+`</p><a href="/a1.html">a</a> <a href="http://b.example/x">b</a></body></html>`, 200))
	testenv.Eventually(t, 20*time.Second, "the original's capture", func() bool { return len(captures(t, e)) == 1 })
	produce(t, e,
		page("f2", "http://a.example/near.html", `<html><body><p>`+near+`</p><a href="/b1.html">b</a></body></html>`, 200, func(p *queue.Page) {
			p.DupHops, p.Hops, p.Origin = 1, 7, 8
		}),
		page("f3", "http://a.example/lone.html", `<html><head><link rel="canonical" href="known.html"></head><body><p>`+lorem(300, 12)+`</p><a href="/known.html">k</a></body></html>`, 200),
	)
	// Four records are due, however the pages fell into batches; once they
	// are in, Consume waits 3 s for a fifth that must not come.
	testenv.Eventually(t, 20*time.Second, "captures", func() bool { return len(captures(t, e)) == 3 })
	e.Consume(t, queue.TopicURLs, 4, 20*time.Second)
	recs := e.Consume(t, queue.TopicURLs, 5, 3*time.Second)
	if len(recs) != 4 {
		t.Errorf("%d records on crawl.urls, want 4", len(recs))
	}
	got := map[string]queue.URL{}
	verdicts := map[string]queue.Verdict{}
	for _, r := range recs {
		u, err := queue.DecodeURL(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if u.Verdict != nil {
			if _, twice := verdicts[u.Verdict.URL]; twice {
				t.Errorf("verdict of %s sent twice", u.Verdict.URL)
			}
			verdicts[u.Verdict.URL] = *u.Verdict
			if u.Kind != queue.KindVerdict && u.Parent != u.Verdict.URL {
				t.Errorf("verdict of %s rides on %s, found on %s", u.Verdict.URL, u.URL, u.Parent)
			}
			if string(r.Key) != "a.example" {
				t.Errorf("verdict of %s keyed %q", u.Verdict.URL, r.Key)
			}
		}
		if u.Kind != queue.KindVerdict {
			got[u.URL] = u
		}
	}
	if u := got["http://a.example/a1.html"]; u.DupHops != 0 {
		t.Errorf("link of a distinct page: %d hops", u.DupHops)
	}
	if u := got["http://a.example/b1.html"]; u.DupHops != 2 {
		t.Errorf("link of a near duplicate reached through 1 hop: %d hops, want 2", u.DupHops)
	}
	if u := got["http://a.example/b1.html"]; u.ParentHops != 7 || u.ParentOrigin != 8 {
		t.Errorf("link of a page admitted with 7 hops from origin 8 carries %d and %d", u.ParentHops, u.ParentOrigin)
	}
	if u := got["http://b.example/x"]; u.Verdict != nil {
		t.Errorf("verdict rides on another host's URL: %+v", u)
	}
	want := map[string]queue.Verdict{
		// Their links to their host were new: the verdicts say which
		// (another host's are no page of the host leading somewhere).
		"http://a.example/":          {URL: "http://a.example/", Fresh: []string{"/a1.html"}},
		"http://a.example/near.html": {URL: "http://a.example/near.html", Duplicate: true, Hops: 7, Origin: 8, DupHops: 1, Fresh: []string{"/b1.html"}},
		// Its one link was known: the verdict says so, for the budgets
		// of the URL's space (a site's pages link each other). It names
		// another URL of its host canonical.
		"http://a.example/lone.html": {URL: "http://a.example/lone.html", Relinks: []string{"/known.html"}, Canonical: "http://a.example/known.html"},
	}
	for u, w := range want {
		if v, ok := verdicts[u]; !ok || !reflect.DeepEqual(v, w) {
			t.Errorf("verdict of %s: %+v (sent %v), want %+v", u, v, ok, w)
		}
	}
}

// TestVerdictAgainstRewriteTarget: a page admitted to judge a rewrite
// (queue.Page.RewriteOf) is compared with its target's stored copy. A copy of
// another variant is a duplicate, but not of its target (Unlike): the
// "No usage of X" page of every class of a Javadoc is no rewrite onto X.
// A copy of the target is a duplicate alike; a target with no stored copy
// leaves the verdict as it would be without one, and says so (NoTarget).
func TestVerdictAgainstRewriteTarget(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot"})

	const x, y, fresh = "http://a.example/x.html", "http://a.example/y.html", "http://a.example/z.html"
	const useX, useY, useZ, printX = "http://a.example/use/x.html", "http://a.example/use/y.html", "http://a.example/use/z.html", "http://a.example/x-print.html"
	const useW, targetW = "http://a.example/use/w.html", "http://a.example/w.html"
	admit(t, e, x, y, fresh, useX, useY, useZ, printX, useW)
	textX := lorem(400, 21)
	html := func(text string) string { return `<html><body><p>` + text + `</p></body></html>` }
	produce(t, e, page("f1", x, html(textX), 200), page("f2", y, html(lorem(400, 22)), 200))
	testenv.Eventually(t, 20*time.Second, "captures of the targets", func() bool { return len(captures(t, e)) == 2 })

	of := func(target string) func(*queue.Page) {
		return func(p *queue.Page) { p.RewriteOf = store.HashURL(target) }
	}
	noUsageText := lorem(60, 23)
	noUsage := html(noUsageText)
	verdicts := map[string]queue.Verdict{}
	wait := func(n int) {
		e.ConsumeUntil(t, queue.TopicURLs, 20*time.Second, func(recs []*kgo.Record) bool {
			for _, r := range recs {
				if u, err := queue.DecodeURL(r.Value); err == nil && u.Verdict != nil {
					verdicts[u.Verdict.URL] = *u.Verdict
				}
			}
			return len(verdicts) == n
		})
	}
	// One after the other: which of two copies is the first decides
	// which is the duplicate.
	produce(t, e, page("f3", useX, noUsage, 200, of(x)))
	wait(3)
	produce(t, e,
		page("f4", useY, noUsage, 200, of(y)),
		page("f5", useZ, noUsage, 200, of(fresh)),
		page("f6", printX, html(strings.Replace(textX, " ", " printable ", 1)), 200, of(x)),
		page("f7", useW, html(noUsageText+" more"), 200, of(targetW)))
	wait(7)
	want := map[string][3]bool{ // duplicate, unlike, no target
		useX:   {false, true, false}, // the first of its content, and not its target's
		useY:   {true, true, false},  // a copy of use/x.html, not of y.html
		useZ:   {true, false, true},  // z.html has no copy: judged on the page alone
		printX: {true, false, false},
		useW:   {true, false, true}, // a near copy of use/x.html
	}
	for u, w := range want {
		v, ok := verdicts[u]
		if !ok {
			t.Errorf("no verdict of %s", u)
			continue
		}
		if v.Duplicate != w[0] || v.Unlike != w[1] || v.NoTarget != w[2] {
			t.Errorf("verdict of %s: duplicate %v, unlike %v, no target %v; want %v", u, v.Duplicate, v.Unlike, v.NoTarget, w)
		}
	}
	// With no target to compare with, the verdict names the page the
	// variant copies, exactly or nearly (any of the copies of the "no
	// usage" page before it: which one the batches decide): its rewrite is
	// judged by whether another rewrite explains the copy
	// (pattern.Verdict.DupOf).
	for u, want := range map[string][]string{useX: {""}, useY: {""}, printX: {""}, useZ: {useX, useY}, useW: {useX, useY, useZ}} {
		if got := verdicts[u].DupOf; !slices.Contains(want, got) {
			t.Errorf("verdict of %s names %q as the page it copies, want one of %q", u, got, want)
		}
	}
}

// TestSitemapLastmodBringsVisitForward: a sitemap <lastmod> newer than a
// stored copy plans the URL's visit now under the adaptive policy, and the
// listing dates the change that visit finds; the uniform policy, the
// baseline, keeps its fixed interval.
func TestSitemapLastmodBringsVisitForward(t *testing.T) {
	for _, kind := range []string{recrawl.Adaptive, recrawl.Uniform} {
		t.Run(kind, func(t *testing.T) {
			e := testenv.New(t)
			pol := recrawl.DefaultPolicy()
			pol.Kind = kind
			runParser(t, e, Config{RobotsAgent: "testbot", Recrawl: pol})

			const u, sm = "http://a.example/p.html", "http://a.example/sitemap.xml"
			admit(t, e, u, sm)
			t0 := time.Now().UTC().Truncate(time.Second).Add(-10 * time.Minute)
			produce(t, e, page("f1", u, `<html><body><p>`+lorem(80, 5)+`</p></body></html>`, 200, func(p *queue.Page) { p.FetchedAt = t0 }))
			hash := store.HashURL(u)
			planned := func() store.URLHistory {
				h, err := e.DB.URLHistories(context.Background(), []int64{hash})
				if err != nil {
					t.Fatal(err)
				}
				return h[0]
			}
			testenv.Eventually(t, 10*time.Second, "page stored", func() bool { return planned().State == store.StateStored })
			first := planned().Recrawl.NextFetchAt
			if first.IsZero() {
				t.Fatal("no visit planned after the first fetch")
			}
			lm := t0.Add(5 * time.Minute)
			lastmod := lm.Format(time.RFC3339)
			xml := `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
				`<url><loc>` + u + `</loc><lastmod>` + lastmod + `</lastmod></url></urlset>`
			produce(t, e, page("f2", sm, xml, 200, func(p *queue.Page) {
				p.Kind = queue.KindSitemap
				p.ContentType = "application/xml"
				p.RawResponse = []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s", len(xml), xml))
			}))
			testenv.Eventually(t, 10*time.Second, "sitemap stored", func() bool {
				h, err := e.DB.URLHistories(context.Background(), []int64{store.HashURL(sm)})
				return err == nil && h[0].State == store.StateStored
			})
			if kind == recrawl.Adaptive {
				// The listing is planned after the batch's pages are
				// stored (Parser.modified): wait for it, not for the
				// sitemap's own row (a CI run under load read the plan
				// in between).
				testenv.Eventually(t, 10*time.Second, "listing kept", func() bool { return !planned().SitemapSeenAt.IsZero() })
			}
			next := planned().Recrawl.NextFetchAt
			switch moved := next.Before(first); {
			case kind == recrawl.Adaptive && !moved:
				t.Errorf("adaptive: next visit %v, want brought forward from %v by the lastmod", next, first)
			case kind == recrawl.Uniform && moved:
				t.Errorf("uniform: next visit moved from %v to %v; the baseline ignores lastmod", first, next)
			}
			if kind == recrawl.Uniform {
				return
			}
			h := planned()
			if !h.SitemapLastMod.Equal(lm) || h.SitemapSeenAt.IsZero() {
				t.Fatalf("listing kept: lastmod %v seen %v; want %v and the sitemap's fetch", h.SitemapLastMod, h.SitemapSeenAt, lm)
			}
			// The visit finds the page changed: the listing dates the
			// change to a second either side of its lastmod, unchanged
			// from there to the sitemap's fetch.
			if c, err := e.DB.ClaimRevisits(context.Background(), []store.Claim{{Hash: hash, Due: h.Recrawl.NextFetchAt}}); err != nil || !c[0] {
				t.Fatalf("claim the revisit: %v, %v", c, err)
			}
			produce(t, e, page("f3", u, `<html><body><p>`+lorem(80, 9)+`</p></body></html>`, 200, func(p *queue.Page) { p.FetchedAt = h.SitemapSeenAt.Add(time.Second) }))
			testenv.Eventually(t, 10*time.Second, "revisit stored", func() bool { return planned().Recrawl.FetchCount == 2 })
			r := planned().Recrawl
			if r.ChangeCount != 1 || r.ChangedTime != 2*time.Second || r.Unchanged != h.SitemapSeenAt.Sub(lm.Add(time.Second)) {
				t.Errorf("history after the dated change: %d changes, changed %v, unchanged %v; want 1, 2s, %v",
					r.ChangeCount, r.ChangedTime, r.Unchanged, h.SitemapSeenAt.Sub(lm.Add(time.Second)))
			}
		})
	}
}

// TestRedirectRevisits: a permanent redirect is not revisited (its target
// is the page), a temporary one is, ever more rarely, and the members of a
// loop of temporary redirects are not revisited once the loop is found.
func TestRedirectRevisits(t *testing.T) {
	e := testenv.New(t)
	pol := recrawl.DefaultPolicy()
	runParser(t, e, Config{RobotsAgent: "testbot", Recrawl: pol})
	const moved, la, lb = "http://a.example/moved", "http://a.example/loop/a", "http://a.example/loop/b"
	admit(t, e, moved, la, lb)
	redirect := func(id, from, to string, status int) queue.Page {
		return page(id, from, "", status, func(p *queue.Page) { p.Location = to })
	}
	hist := func(u string) store.URLHistory {
		h, err := e.DB.URLHistories(context.Background(), []int64{store.HashURL(u)})
		if err != nil {
			t.Fatal(err)
		}
		return h[0]
	}
	stored := func(u string, fetches int) store.URLHistory {
		t.Helper()
		testenv.Eventually(t, 10*time.Second, u+" stored", func() bool {
			h := hist(u)
			return h.State == store.StateStored && h.Recrawl.FetchCount == fetches
		})
		return hist(u)
	}
	produce(t, e, redirect("m1", moved, "http://a.example/new", 301))
	if h := stored(moved, 1); !h.Recrawl.NextFetchAt.IsZero() {
		t.Errorf("301: next visit %v, want none", h.Recrawl.NextFetchAt)
	}
	produce(t, e, redirect("a1", la, lb, 302))
	h := stored(la, 1)
	if h.Recrawl.NextFetchAt.IsZero() {
		t.Fatal("302 not part of a known loop: no visit planned")
	}
	produce(t, e, redirect("b1", lb, la, 302))
	if h := stored(lb, 1); !h.Recrawl.NextFetchAt.IsZero() {
		t.Errorf("302 closing a loop: next visit %v, want none", h.Recrawl.NextFetchAt)
	}
}

// TestRedirectMapFindsLoops: a loop is found when its last member answers,
// whatever its length up to the redirect limit, and a member that stops
// redirecting breaks it.
func TestRedirectMapFindsLoops(t *testing.T) {
	m := newRedirectMap(100)
	if m.loop(1, 2) || m.loop(3, 4) {
		t.Fatal("loop found in open chains")
	}
	if !m.loop(2, 1) {
		t.Error("two-URL loop not found")
	}
	if m.loop(10, 11) || m.loop(11, 12) || m.loop(12, 13) || !m.loop(13, 10) {
		t.Error("four-URL loop not found at its last member")
	}
	m.forget(11)
	if m.loop(10, 11) {
		t.Error("loop found after a member stopped redirecting")
	}
	if m.loop(5, 0) {
		t.Error("a redirect without a target closed a loop")
	}
	small := newRedirectMap(2)
	small.loop(20, 21)
	small.loop(22, 23)
	small.loop(24, 25)
	if len(small.next) > 2 {
		t.Errorf("map holds %d redirects, bound 2", len(small.next))
	}
}

// A fetch of crawl.pages is bounded to a few batches' worth of bytes
// (maxFetchBatches), but a record larger than that bound still comes whole
// and is stored, with the smaller ones after it.
func TestRecordOverFetchBoundStored(t *testing.T) {
	e := testenv.New(t)
	cfg := Config{BatchBytes: 64 << 10} // a fetch of at most 256 KiB
	runParser(t, e, cfg)
	big := "http://a.example/big"
	small := "http://a.example/small"
	admit(t, e, big, small)
	// Incompressible text, so that the record on the wire is over the bound too.
	r := rand.New(rand.NewPCG(1, 2))
	rnd := make([]byte, 600<<10)
	for i := range rnd {
		rnd[i] = 'a' + byte(r.IntN(26))
	}
	body := "<html><body><p>" + string(rnd) + "</p></body></html>"
	produce(t, e, page("00000000000000000000000000000b16", big, body, 200), page("000000000000000000000000000005a1", small, "<html><body>x</body></html>", 200))
	testenv.Eventually(t, 60*time.Second, "both pages stored", func() bool {
		c := captures(t, e)
		return len(c[big]) == 1 && len(c[small]) == 1
	})
}
