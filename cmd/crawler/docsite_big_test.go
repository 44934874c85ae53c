package main

import (
	"context"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The big-archive test crawls one host with thousands of distinct pages under
// one URL pattern, /articles/<n>-<slug>, as a news site's or a blog's archive
// has them: every one listed in the sitemap that robots.txt names, on a hub
// page that links them all, and on a paginated listing. However many pages
// the pattern has, each is a distinct page the site links to: the trap
// defence may hold some back for a while, as its budgets grow page by page,
// but it must end by fetching every one of them once and holding none.

const (
	bigArchivePages = 5000
	// bigArchivePerPage articles per listing page, bigArchiveListing listing
	// pages, each linking the previous and next, the first and last, and
	// bigArchiveWindow page numbers either side of its own.
	bigArchivePerPage = 20
	bigArchiveListing = (bigArchivePages + bigArchivePerPage - 1) / bigArchivePerPage
	bigArchiveWindow  = 3
	bigArchiveWords   = 200 // words of text per article
)

// TestCrawlBigArchive crawls the archive from "/" and judges the crawl from
// the server's own request log and the crawl's store: every article fetched
// exactly once (answered 200, never requested again), none left held by a
// trap reason in the exclusions table at the end, and the crawler going idle
// and exiting 0 by itself. How many articles a trap budget held back during
// the crawl is logged.
func TestCrawlBigArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl of a 5,000-page archive; skipped with -short")
	}
	arc := newBigArchive(bigArchivePages)
	srv := httptest.NewServer(arc)
	defer srv.Close()

	data := filepath.Join(t.TempDir(), "data")
	args := []string{
		"-data", data,
		"-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle",
		"-scope", "host",
		// The shortest delay that is still one: the crawl is bounded by the
		// crawler's own pace, not by politeness.
		"-default-delay", "1ms", "-max-delay", "1s",
		"-max-duration", "5m", "-progress", "5s",
		srv.URL + "/",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dbPath := filepath.Join(data, "crawl.db")
	watch := watchTrapExclusions(dbPath, trapWatchEvery)
	start := time.Now()
	out, runErr := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput()
	took := time.Since(start)
	everHeld := watch.stop()
	srv.Close() // waits for the handlers of requests still running: the log is complete
	if testing.Verbose() {
		t.Logf("crawler output (end):\n%s", docSiteTail(out, 30))
	}
	if runErr != nil {
		t.Errorf("crawler: %v (want exit 0)\n%s", runErr, docSiteTail(out, 40))
	} else if !strings.Contains(string(out), `msg="stop began" reason=idle`) {
		t.Errorf("the crawl did not end by going idle:\n%s", docSiteTail(out, 20))
	}

	reqs := arc.requests()
	fetched := map[string]bool{} // targets of the site's pages answered 200
	perArticle := map[string][]int{}
	listings := map[string]int{}
	var other []string
	otherCount := 0
	for _, r := range reqs {
		if arc.isPage(r.target) && r.status == http.StatusOK {
			fetched[r.target] = true
		}
		switch {
		case arc.byPath[r.target] > 0:
			perArticle[r.target] = append(perArticle[r.target], r.status)
		case strings.HasPrefix(r.target, "/articles?") && r.status == http.StatusOK:
			listings[r.target]++
		default:
			otherCount++
			if len(other) < 20 {
				other = append(other, fmt.Sprintf("%s %d", r.target, r.status))
			}
		}
	}
	var never, twice, notOK []string
	for _, p := range arc.paths {
		st := perArticle[p]
		switch {
		case len(st) == 0:
			never = append(never, p)
		case len(st) > 1:
			twice = append(twice, fmt.Sprintf("%s %v", p, st))
		case st[0] != http.StatusOK:
			notOK = append(notOK, fmt.Sprintf("%s %v", p, st))
		}
	}
	listingTwice := 0
	for _, n := range listings {
		if n > 1 {
			listingTwice++
		}
	}
	var logTook time.Duration
	if len(reqs) > 0 {
		logTook = reqs[len(reqs)-1].at.Sub(reqs[0].at)
	}
	t.Logf("articles %d, fetched with 200 %d (%d never requested, %d requested more than once, %d not answered 200); listing pages fetched %d of %d (%d more than once); / fetched %v, /all.html fetched %v; requests %d, %d others: %v",
		len(arc.paths), len(arc.paths)-len(never)-len(notOK), len(never), len(twice), len(notOK), len(listings), bigArchiveListing, listingTwice,
		fetched["/"], fetched["/all.html"], len(reqs), otherCount, other)
	t.Logf("duration %v wall, %v from the first to the last request (%.1f ms per request)",
		took.Round(100*time.Millisecond), logTook.Round(time.Millisecond), float64(logTook)/float64(max(len(reqs), 1))/float64(time.Millisecond))
	if len(never) > 0 {
		t.Errorf("%d of %d articles never requested, e.g. %v", len(never), len(arc.paths), never[:min(20, len(never))])
	}
	if len(twice) > 0 {
		t.Errorf("%d articles requested more than once, want exactly once: e.g. %v", len(twice), twice[:min(20, len(twice))])
	}
	if len(notOK) > 0 {
		t.Errorf("%d articles not answered 200: e.g. %v", len(notOK), notOK[:min(20, len(notOK))])
	}

	excl := docSiteExclusions(t, dbPath, srv.URL, fetched, never)
	t.Logf("exclusions by reason: %v", excl.byReason)
	// Articles first recorded with a trap reason: the other pages held (the
	// listing's, the hub) are counted apart in the same line.
	isArticle := func(target string) bool { return arc.byPath[target] > 0 }
	logEverHeld(t, everHeld, srv.URL, isArticle, fetched)
	// None held at the end: no article, and no page that lists them either.
	checkNoneHeld(t, excl.rows, arc.isPage, fetched)
}

// bigArchive is the site: articles 1..n at /articles/<n>-<slug>, each with
// its own text, and the pages that list them.
type bigArchive struct {
	paths  []string       // paths[i] is article i+1's
	byPath map[string]int // path -> article number
	vocab  []string

	mu  sync.Mutex
	log []bigArchiveRequest
}

// bigArchiveRequest is one request as the server answered it.
type bigArchiveRequest struct {
	at     time.Time // when the answer was written
	target string    // request target: path decoded, and "?" and the query as sent if any
	status int
}

func newBigArchive(n int) *bigArchive {
	a := &bigArchive{byPath: make(map[string]int, n), vocab: bigArchiveVocabulary(1000)}
	for i := 1; i <= n; i++ {
		words := a.words(i)
		p := fmt.Sprintf("/articles/%d-%s", i, strings.Join(words[:3], "-"))
		a.paths = append(a.paths, p)
		a.byPath[p] = i
	}
	return a
}

// bigArchiveVocabulary returns n distinct made-up words of two to four
// syllables, the same on every call.
func bigArchiveVocabulary(n int) []string {
	const consonants, vowels = "bcdfghklmnprstvz", "aeiou"
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(consonants[rng.IntN(len(consonants))])
			b.WriteByte(vowels[rng.IntN(len(vowels))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// words returns article i's words, drawn with a seed of its own: three for
// its slug and title, then its text.
func (a *bigArchive) words(i int) []string {
	rng := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	out := make([]string, 3+bigArchiveWords)
	for k := range out {
		out[k] = a.vocab[rng.IntN(len(a.vocab))]
	}
	return out
}

// isPage reports whether a request target (decoded path, and query if any)
// is one of the site's pages: "/", the hub, a listing page, an article.
func (a *bigArchive) isPage(target string) bool {
	if target == "/" || target == "/all.html" || a.byPath[target] > 0 {
		return true
	}
	q, ok := strings.CutPrefix(target, "/articles?page=")
	n, err := strconv.Atoi(q)
	return ok && err == nil && n >= 1 && n <= bigArchiveListing && strconv.Itoa(n) == q
}

func (a *bigArchive) title(i int) string {
	w := a.words(i)
	return strings.ToUpper(w[0][:1]) + w[0][1:] + " " + w[1] + " " + w[2]
}

func (a *bigArchive) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status := a.serve(w, r)
	target := r.URL.Path
	if r.URL.RawQuery != "" || r.URL.ForceQuery {
		target += "?" + r.URL.RawQuery
	}
	a.mu.Lock()
	a.log = append(a.log, bigArchiveRequest{at: time.Now(), target: target, status: status})
	a.mu.Unlock()
}

func (a *bigArchive) requests() []bigArchiveRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

// serve answers one request and returns its status.
func (a *bigArchive) serve(w http.ResponseWriter, r *http.Request) int {
	origin := "http://" + r.Host
	page := func(title, body string) int {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>%s</title></head>\n<body>\n%s</body></html>\n", html.EscapeString(title), body)
		return http.StatusOK
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed
	}
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "User-agent: *\nDisallow:\n\nSitemap: %s/sitemap.xml\n", origin)
		return http.StatusOK
	case p == "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for _, ap := range a.paths {
			fmt.Fprintf(&b, "<url><loc>%s%s</loc></url>\n", origin, ap)
		}
		b.WriteString("</urlset>\n")
		_, _ = w.Write([]byte(b.String()))
		return http.StatusOK
	case p == "/" && r.URL.RawQuery == "":
		return page("The archive", `<h1>The archive</h1>
<p><a href="/articles?page=1">Latest articles</a></p>
<p><a href="/all.html">Every article</a></p>
`)
	case p == "/all.html" && r.URL.RawQuery == "":
		var b strings.Builder
		b.WriteString("<h1>Every article</h1>\n<ul>\n")
		for i, ap := range a.paths {
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", ap, html.EscapeString(a.title(i+1)))
		}
		b.WriteString("</ul>\n")
		return page("Every article", b.String())
	case p == "/articles":
		n, err := strconv.Atoi(r.URL.Query().Get("page"))
		if err != nil || n < 1 || n > bigArchiveListing || r.URL.RawQuery != "page="+strconv.Itoa(n) {
			http.NotFound(w, r)
			return http.StatusNotFound
		}
		return page(fmt.Sprintf("Articles, page %d", n), a.listing(n))
	}
	i := a.byPath[r.URL.Path]
	if i == 0 || r.URL.RawQuery != "" {
		http.NotFound(w, r)
		return http.StatusNotFound
	}
	words := a.words(i)
	listing := (i-1)/bigArchivePerPage + 1
	return page(a.title(i), fmt.Sprintf(`<nav><a href="/">Home</a> <a href="/articles?page=%d">Articles, page %d</a></nav>
<h1>%s</h1>
<p>%s.</p>
`, listing, listing, html.EscapeString(a.title(i)), strings.Join(words[3:], " ")))
}

// listing returns the body of listing page n: its articles, then links to
// the previous and next pages, the first and last, and a window of page
// numbers around n.
func (a *bigArchive) listing(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1>Articles, page %d of %d</h1>\n<ul>\n", n, bigArchiveListing)
	for i := (n-1)*bigArchivePerPage + 1; i <= min(n*bigArchivePerPage, len(a.paths)); i++ {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", a.paths[i-1], html.EscapeString(a.title(i)))
	}
	b.WriteString("</ul>\n<nav>")
	link := func(k int, text string) {
		fmt.Fprintf(&b, " <a href=\"/articles?page=%d\">%s</a>", k, text)
	}
	if n > 1 {
		link(n-1, "previous")
	}
	if n-bigArchiveWindow > 1 {
		link(1, "1")
	}
	for k := max(1, n-bigArchiveWindow); k <= min(bigArchiveListing, n+bigArchiveWindow); k++ {
		if k == n {
			fmt.Fprintf(&b, " <b>%d</b>", k)
			continue
		}
		link(k, strconv.Itoa(k))
	}
	if n+bigArchiveWindow < bigArchiveListing {
		link(bigArchiveListing, strconv.Itoa(bigArchiveListing))
	}
	if n < bigArchiveListing {
		link(n+1, "next")
	}
	b.WriteString("</nav>\n")
	return b.String()
}
