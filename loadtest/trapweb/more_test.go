package trapweb

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/simhash"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestHandler: the Handler serves Get's status, headers and bytes, by Host
// header with any port, and 421 for a host not in the web.
func TestHandler(t *testing.T) {
	t.Parallel()
	w := Generate(Config{Seed: 5, Hosts: 8, Pages: 12, Big: 60})
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	urls := sampleURLs(w, rand.New(rand.NewPCG(5, 5)), 40)
	urls = append(urls, "http://h001.trap.test/no/such/page", "http://h002.trap.test/robots.txt", "http://"+w.BigHost()+"/sitemap.xml")
	for _, u := range urls {
		l, _ := parseLoc(u)
		req, _ := http.NewRequest("GET", srv.URL+l.target(), nil)
		req.Host = strings.ToUpper(l.host) + ":1234"
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p := w.Get(u)
		if resp.StatusCode != p.Status || resp.Header.Get("Content-Type") != p.ContentType ||
			resp.Header.Get("Location") != p.Location || !bytes.Equal(body, p.Body) {
			t.Fatalf("%s: served %d %q %d bytes, Get %d %q %d bytes", u, resp.StatusCode,
				resp.Header.Get("Content-Type"), len(body), p.Status, p.ContentType, len(p.Body))
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Host = "elsewhere.test"
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("unknown host: %d", resp.StatusCode)
	}
}

// TestCrawlLoopback crawls a few hosts through the Handler on a loopback
// port, as a crawler would (links from the HTML, resolved and normalized by
// urlnorm), following real pages only: every real page of those hosts is
// fetched with the bytes Get gives, and the links found are Get's.
func TestCrawlLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	w := Generate(Config{Seed: 6, Hosts: 6, Pages: 15, Port: port, Big: 40})
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	// Every host name resolves to the listener.
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, ln.Addr().String())
		},
	}}
	norm := urlnorm.New(urlnorm.DefaultPolicy())
	crawled := map[string]bool{}
	for _, seed := range w.Seeds()[:3] {
		if seed != "http://"+hostOf(seed)+":"+strconv.Itoa(port)+"/" {
			t.Fatalf("seed %s has no port %d", seed, port)
		}
		queue := []string{seed}
		crawled[seed] = true
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			resp, err := client.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			p := w.Get(u)
			if resp.StatusCode != 200 || !bytes.Equal(body, p.Body) {
				t.Fatalf("%s: %d, %d bytes; Get %d bytes", u, resp.StatusCode, len(body), len(p.Body))
			}
			ps := parseHTML(t, body)
			for i, h := range ps.hrefs {
				l, err := norm.Resolve(u, h)
				if err != nil || l != p.Links[i] {
					t.Fatalf("%s: href %q gives %s (%v), Links has %s", u, h, l, err, p.Links[i])
				}
				if c, _ := w.Classify(l); c == Real && hostOf(l) == hostOf(seed) && !crawled[l] {
					crawled[l] = true
					queue = append(queue, l)
				}
			}
		}
	}
	n := 0
	for _, u := range w.RealPages() {
		l, _ := parseLoc(u)
		if !slices.Contains(w.Seeds()[:3], "http://"+l.auth+"/") {
			continue
		}
		if !crawled[u] {
			t.Fatalf("real page %s not crawled", u)
		}
		n++
	}
	if n != len(crawled) {
		t.Fatalf("crawled %d real pages of %d", len(crawled), n)
	}
}

// TestTinyWebs: the smallest configurations work.
func TestTinyWebs(t *testing.T) {
	for pages := 1; pages <= 4; pages++ {
		for _, hosts := range []int{1, 2, 5} {
			w := Generate(Config{Seed: int64(pages*10 + hosts), Hosts: hosts, Pages: pages, TrapHosts: 1, VariantHosts: 1, Big: 1})
			for _, u := range w.RealPages() {
				if p := w.Get(u); p.Status != 200 || p.Class != Real {
					t.Fatalf("%d pages: %s: %d %v", pages, u, p.Status, p.Class)
				}
			}
			for _, in := range w.Instances() {
				if c, _ := w.Classify(in.Entry); c != in.Class {
					t.Fatalf("%d pages: %s entry %s is %v", pages, in.ID, in.Entry, c)
				}
			}
			checkLinked(t, w)
		}
	}
}

// TestGenerateCheap: a web of 500 hosts of 100 pages, or a big host of
// 50,000 pages, is drawn in well under a second and little memory.
func TestGenerateCheap(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	w := Generate(Config{Seed: 1, Hosts: 500, Pages: 100})
	took := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
	t.Logf("500 hosts x 100 pages: %v, %d KiB live", took, heap>>10)
	if took > time.Second && !raceEnabled {
		t.Errorf("Generate took %v", took)
	}
	if heap > 64<<20 {
		t.Errorf("Generate keeps %d MiB", heap>>20)
	}
	runtime.KeepAlive(w)
	start = time.Now()
	w = Generate(Config{Seed: 1, Hosts: 2, Pages: 5, Big: 50_000})
	if took := time.Since(start); took > 100*time.Millisecond && !raceEnabled {
		t.Errorf("Generate with Big 50,000 took %v", took)
	}
	if c, _ := w.Classify("http://" + w.BigHost() + "/"); c != Real {
		t.Fatal("no big host")
	}
}

// TestSimhashReplica: the near-duplicate editor's own account of SimHash
// agrees with pkg/simhash on the texts it is used on.
func TestSimhashReplica(t *testing.T) {
	t.Parallel()
	w := Generate(Config{Seed: 2, Hosts: 6, Pages: 10})
	for _, u := range sampleURLs(w, rand.New(rand.NewPCG(2, 2)), 30) {
		text := w.Get(u).Text
		b := newNearBase(wordHashes(nil, text), 0)
		if got, want := b.v.fp(), simhash.Fingerprint(text); got != want && len(b.words) > 1 {
			t.Fatalf("%s: replica %x, simhash %x", u, got, want)
		}
	}
}

// TestNearEdit: edits keep the fingerprint within nearMaxDist of the
// original, over many texts of various lengths.
func TestNearEdit(t *testing.T) {
	t.Parallel()
	v := newVocabulary(1)
	rng := rand.New(rand.NewPCG(1, 1))
	texts := 200
	if raceEnabled {
		texts = 50
	}
	edited := 0
	for k := range texts {
		g := newTextGen(v, rand.New(rand.NewPCG(uint64(k), 9)))
		s := &spec{h1: g.title(4), paras: g.paragraphs(50 + k*7), links: []link{{"/", "Home page"}}}
		orig := simhash.Fingerprint(s.text())
		base := s.nearBase()
		n := nearEdit(base, s.paras, 1+rng.IntN(3), rng, v.text)
		d := simhash.Distance(simhash.Fingerprint(s.text()), orig)
		if d > nearMaxDist {
			t.Fatalf("text %d: %d words changed, distance %d", k, n, d)
		}
		if n > 0 {
			edited++
		}
	}
	if edited < texts*95/100 {
		t.Fatalf("only %d of %d texts edited", edited, texts)
	}
}

// TestAlphabets: random values and their successors are values; a
// successor is new.
func TestAlphabets(t *testing.T) {
	v := newVocabulary(3)
	rng := rand.New(rand.NewPCG(3, 3))
	kinds := map[alphaKind]bool{}
	for range 2000 {
		a := newAlphabet(rng, v, rng.IntN(2) == 0)
		kinds[a.kind] = true
		x := a.random(rng)
		for range 20 {
			if !a.valid(x) {
				t.Fatalf("%v: %q not valid", a, x)
			}
			y := a.next(x)
			if y == x {
				t.Fatalf("%v: next(%q) is itself", a, x)
			}
			x = y
		}
	}
	if len(kinds) != int(alphaKinds) {
		t.Fatalf("drew %d alphabet kinds", len(kinds))
	}
}

// TestTrapGrammars: every URL a space builds parses back to the same state
// and classifies as the space; mangled ones do not classify as it.
func TestTrapGrammars(t *testing.T) {
	t.Parallel()
	for seed := range int64(15) {
		w := Generate(Config{Seed: seed, Hosts: 20, Pages: 8})
		rng := rand.New(rand.NewPCG(uint64(seed), 8))
		for _, h := range w.hosts {
			for _, tr := range h.traps {
				for range 30 {
					st := tr.randomState(rng, rng.IntN(2) == 0)
					l := tr.build(st, rng)
					u := l.String()
					if c, inst := w.Classify(u); c != Trap || inst != tr.id {
						k := tr.describe().Kind
						t.Fatalf("%s (%s): %s is %v %q", tr.id, k, u, c, inst)
					}
					got, _ := tr.match(l)
					if tr.build(got, nil).String() != u {
						t.Fatalf("%s: %s parses to %s", tr.id, u, tr.build(got, nil))
					}
					if tr.kind != kCatchAll {
						bad := u + "&" + "zz" + strconv.Itoa(rng.IntN(100)) + "=1"
						if l.query == "" {
							bad = u + "?zz=1"
						}
						if c, inst := w.Classify(bad); c == Trap && inst == tr.id {
							t.Fatalf("%s: %s with an unknown parameter classified as the space", tr.id, bad)
						}
					}
				}
			}
		}
	}
}

// TestURLs: normalization and resolution agree with net/url and urlnorm on
// the reference forms written by hrefFor.
func TestURLs(t *testing.T) {
	norm := urlnorm.New(urlnorm.DefaultPolicy())
	rng := rand.New(rand.NewPCG(4, 4))
	paths := []string{"/", "/a", "/a/", "/a/b", "/a/b/", "/a/b/c.html", "/x/y/z/", "/a/b.c/d", "/a-1/b_2/"}
	queries := []string{"", "k=1", "b=2&a=1", "a=1&a=2"}
	for range 2000 {
		base := loc{host: "h.test", auth: "h.test", path: paths[rng.IntN(len(paths))], query: sortQuery(queries[rng.IntN(len(queries))])}
		tg := loc{host: "h.test", auth: "h.test", path: paths[rng.IntN(len(paths))], query: sortQuery(queries[rng.IntN(len(queries))])}
		if rng.IntN(5) == 0 {
			tg.host, tg.auth = "o.test", "o.test:81"
		}
		href := hrefFor(base, tg, rng.IntN(hrefStyles), rng)
		got, ok := resolve(base, href)
		if !ok || got != tg {
			t.Fatalf("%s + %q: %v, want %v", base, href, got, tg)
		}
		want, err := norm.Resolve(base.String(), href)
		if err != nil || want != tg.String() {
			t.Fatalf("%s + %q: urlnorm %s %v, want %s", base, href, want, err, tg)
		}
		bu, _ := url.Parse(base.String())
		ru, _ := url.Parse(href)
		if n, _ := parseLoc(bu.ResolveReference(ru).String()); n != tg {
			t.Fatalf("%s + %q: net/url %v", base, href, n)
		}
	}
	for raw, want := range map[string]string{
		"HTTP://H.Test:80/a/./b/../c?b=2&a=1#x": "http://h.test/a/c?a=1&b=2",
		"http://h.test":                         "http://h.test/",
		"http://h.test./%7Ex%2f?&a=1&&":         "http://h.test/~x%2F?a=1",
		"http://h.test:8080/a/..":               "http://h.test:8080/",
	} {
		l, ok := parseLoc(raw)
		if !ok || l.String() != want {
			t.Errorf("%s: %s, want %s", raw, l, want)
		}
		if n, err := norm.Normalize(raw); err != nil || n != want {
			t.Errorf("%s: urlnorm %s, want %s", raw, n, want)
		}
	}
	if _, ok := parseLoc("ftp://h.test/"); ok {
		t.Error("ftp accepted")
	}
}
