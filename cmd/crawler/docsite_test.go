package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	_ "modernc.org/sqlite"

	"github.com/crawlcluster/crawler/internal/nginxtest"
)

// The documentation-site test crawls real HTML: documentation that Debian
// ships, served by nginx on loopback. Three sites, three generators:
//
//   - python3-doc: Sphinx, about 530 pages in folders, full of legitimate
//     near-duplicates (genindex-A.html to genindex-Z.html share one template,
//     as do the module index and the per-chapter tables of contents);
//   - postgresql-doc-15: DocBook, about 1,170 pages in one flat folder, most
//     of them named by one pattern (sql-*.html, functions-*.html, ...);
//   - git-doc: AsciiDoc, about 220 manual pages (git-*.html) linked from
//     git.html, with howto/ and technical/ folders.
//
// The trap defence (pkg/pattern) must not hold any of them back: every page
// reachable by links must be fetched, none may be left held by a trap budget
// at the end, and the held-back-then-released pages must not slow the crawl
// beyond its politeness bound.

// docSiteSpec is one documentation site of the table.
type docSiteSpec struct {
	pkg   string // Debian package; also the subtest's name
	root  string // the HTML tree it installs
	start string // URL path of the page the crawl starts from
	// optional: skipped when not installed, even with docSiteRequireEnv
	// (a package too large for every CI run to install).
	optional bool
}

var docSites = []docSiteSpec{
	// python3-doc links to the HTML tree of Debian's default Python 3
	// (python3.11-doc in bookworm).
	{pkg: "python3-doc", root: "/usr/share/doc/python3/html", start: "/index.html"},
	{pkg: "postgresql-doc-15", root: "/usr/share/doc/postgresql-doc-15/html", start: "/index.html"},
	// git.html is git(1), which links every command's page and the guides;
	// index.html is a symbolic link to it.
	{pkg: "git-doc", root: "/usr/share/doc/git/html", start: "/git.html"},
	// Javadoc with -linksource (it pulls in openjdk-17-doc, 270 MB): each
	// class page links its source listing once (with several #line
	// fragments), a page of code that links nothing. 184 of its 729 pages
	// were held at the end once (the listings, as a widget's pages).
	{pkg: "libcommons-lang3-java-doc", root: "/usr/share/doc/libcommons-lang3-java/api", start: "/index.html", optional: true},
}

const (
	// docSiteRequireEnv=1 turns a missing nginx or documentation tree into a
	// failure instead of a skip, so CI cannot pass by skipping.
	docSiteRequireEnv = "CRAWLER_REQUIRE_DOCSITE"
	docSiteInstall    = "apt-get install -y nginx python3-doc postgresql-doc-15 git-doc"
	// docSiteMaxPages bounds the walk of the tree: a documentation tree has
	// hundreds of pages, and a walk past this means the link resolution is wrong.
	docSiteMaxPages = 20000
	// docSiteDelay is the politeness delay of the crawls, pinned with
	// -min-delay as well as -default-delay: long enough that the crawl's
	// duration is dominated by it, not by the crawler's start or its pipeline,
	// so that a crawl stalled by held-back pages shows against the bound.
	docSiteDelay = 50 * time.Millisecond
	// docSitePaceFactor and docSitePaceSlack: a crawl may take, by the access
	// log, at most this many times its politeness bound (requests x delay)
	// plus the slack.
	docSitePaceFactor = 3
	docSitePaceSlack  = 2 * time.Second
	// trapWatchEvery is how often the exclusions table is read while a crawl
	// runs, to see the pages a trap budget held back for a while.
	trapWatchEvery = 50 * time.Millisecond
)

// TestCrawlDocSite crawls each documentation site from its start page and
// judges the crawl from nginx's access log and the crawl's store: every page
// reachable by <a href> links was requested and answered 200, no URL got two
// final answers, no page of the site is left held by a trap budget (an
// exclusion whose reason starts with trap_ or dust_), the crawl took at most
// 3x its politeness bound by the log's timestamps, and the crawler went idle
// and exited 0 by itself.
func TestCrawlDocSite(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl of real documentation sites; skipped with -short")
	}
	if _, err := nginxtest.Binary(); err != nil {
		docSiteUnavailable(t, "%v", err)
	}
	for _, spec := range docSites {
		t.Run(spec.pkg, func(t *testing.T) {
			// Each crawl waits on its own host's delay, not on the CPU
			// (nginx and a crawler at 20 requests a second): side by side
			// they take the longest one's time, not the three's sum
			// (47 + 69 + 20 s under the race detector in one run).
			t.Parallel()
			crawlDocSite(t, spec)
		})
	}
}

// docSiteUnavailable skips t, or fails it when docSiteRequireEnv=1.
func docSiteUnavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...) + " (" + docSiteInstall + ")"
	if os.Getenv(docSiteRequireEnv) == "1" {
		t.Fatalf("%s; %s=1 requires this test to run", msg, docSiteRequireEnv)
	}
	t.Skip(msg)
}

func crawlDocSite(t *testing.T, spec docSiteSpec) {
	root, err := filepath.EvalSymlinks(spec.root)
	if err != nil && spec.optional {
		t.Skipf("documentation tree %s: %v (apt-get install %s)", spec.root, err, spec.pkg)
	}
	if err != nil {
		docSiteUnavailable(t, "documentation tree %s: %v", spec.root, err)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(spec.start))); err != nil {
		docSiteUnavailable(t, "documentation tree %s has no %s: %v", root, spec.start, err)
	}

	site, err := walkDocSite(root, spec.start, docSiteMaxPages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("documentation tree %s: %d pages reachable from %s (%d stored gzipped), %d links to missing pages, %d rel=nofollow links left out",
		root, len(site.pages), spec.start, site.gzipped, site.broken, site.noFollow)

	srv := nginxtest.Start(t, root)
	seed := srv.URL + spec.start
	data := filepath.Join(t.TempDir(), "data")
	delay := docSiteDelay.String()
	args := []string{
		"-data", data,
		"-user-agent", agent + "/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle",
		"-scope", "host", // the pages link to python.org and others: stay on loopback
		// -min-delay too: every per-host delay is clamped to at least it, so
		// the bound below is the one the crawler keeps.
		"-default-delay", delay, "-min-delay", delay, "-max-delay", "1s",
		"-max-duration", "8m", "-progress", "5s",
		seed,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	dbPath := filepath.Join(data, "crawl.db")
	watch := watchTrapExclusions(dbPath, trapWatchEvery)
	start := time.Now()
	out, runErr := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput()
	took := time.Since(start)
	everHeld := watch.stop()
	srv.Stop() // every answered request is in the access log once nginx has exited
	if testing.Verbose() {
		t.Logf("crawler output (end):\n%s", docSiteTail(out, 30))
	}
	if runErr != nil {
		t.Errorf("crawler: %v (want exit 0)\n%s", runErr, docSiteTail(out, 40))
	} else if !strings.Contains(string(out), `msg="stop began" reason=idle`) {
		t.Errorf("the crawl did not end by going idle:\n%s", docSiteTail(out, 20))
	}

	reqs, err := srv.Requests()
	if err != nil {
		t.Fatal(err)
	}
	got := judgeDocSite(t, site, reqs)
	t.Logf("pages expected %d, fetched with 200 %d; requests %d (%d answered 200, %d to pages off the link graph: css, images, sources, robots.txt...); duration %v",
		len(site.pages), got.fetched, len(reqs), got.ok, got.other, took.Round(100*time.Millisecond))
	t.Logf("requests off the link graph (first %d): %v", len(got.others), got.others)
	if len(reqs) > 0 {
		checkPace(t, reqs[0].At, reqs[len(reqs)-1].At, len(reqs), docSiteDelay)
	}

	excl := docSiteExclusions(t, dbPath, srv.URL, got.pageOK, got.missed)
	// The two budgets' reasons always, then any other trap reason recorded.
	reasons := []string{"trap_pattern_budget", "trap_duplicate_chain"}
	for _, r := range slices.Sorted(maps.Keys(excl.byReason)) {
		if trapReason(r) && !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	for _, reason := range reasons {
		t.Logf("exclusions %s: %d recorded, of which %d for pages of the site that were fetched all the same",
			reason, excl.byReason[reason], excl.fetchedAnyway[reason])
	}
	t.Logf("exclusions by reason: %v", excl.byReason)
	isPage := func(p string) bool { return site.pages[p] }
	logEverHeld(t, everHeld, srv.URL, isPage, got.pageOK)
	checkNoneHeld(t, excl.rows, isPage, got.pageOK)
}

// trapReason reports whether an exclusion reason is a trap defence's: a
// budget (trap_pattern_budget, trap_duplicate_chain, ...) or a DUST rule
// (dust_...). Matched by prefix, not by pkg/pattern's constants, so that a
// reason added there is covered without a change here.
func trapReason(reason string) bool {
	return strings.HasPrefix(reason, "trap_") || strings.HasPrefix(reason, "dust_")
}

// checkPace fails t when the crawl took, from its first to its last request
// as the server logged them, more than docSitePaceFactor times its politeness
// bound (requests x delay) plus docSitePaceSlack. The log's clock, not the
// process's wall time: the crawler's start and stop do not count, only what
// the server saw of the crawl.
func checkPace(t *testing.T, first, last time.Time, requests int, delay time.Duration) {
	t.Helper()
	took := last.Sub(first)
	bound := time.Duration(requests) * delay
	limit := docSitePaceFactor*bound + docSitePaceSlack
	t.Logf("pace: %d requests in %v by the server's log (%.1f ms per request); politeness bound %d x %v = %v, %.2fx of it; limit %dx + %v = %v",
		requests, took.Round(time.Millisecond), float64(took)/float64(max(requests, 1))/float64(time.Millisecond),
		requests, delay, bound, float64(took)/float64(max(bound, 1)), docSitePaceFactor, docSitePaceSlack, limit)
	if took > limit {
		t.Errorf("the crawl took %v from its first to its last request, more than %dx its politeness bound (%d requests x %v = %v) + %v = %v",
			took.Round(time.Millisecond), docSitePaceFactor, requests, delay, bound, docSitePaceSlack, limit)
	}
}

// siteExclusion is one row of the crawl's exclusions table for a URL of the
// site under test.
type siteExclusion struct {
	url    string // as recorded
	path   string // decoded URL path
	query  bool   // the URL has a query: not a page of a walked link graph
	target string // path, and "?" and the query if it has one
	reason string
	parent string
}

// docSiteExclusionCounts is what the crawl's exclusions table holds.
type docSiteExclusionCounts struct {
	byReason map[string]int
	// fetchedAnyway counts, by reason, the exclusions of this site's pages
	// that the access log shows answered 200 all the same: admitted later on
	// another sighting, yet still recorded as held back.
	fetchedAnyway map[string]int
	rows          []siteExclusion // the site's own exclusions, in table order
}

// docSiteExclusions counts the exclusions the crawl recorded by reason, and
// for each missed page logs its exclusion (reason, parent) and its urls row.
func docSiteExclusions(t *testing.T, dbPath, origin string, fetched map[string]bool, missed []string) docSiteExclusionCounts {
	t.Helper()
	res := docSiteExclusionCounts{byReason: map[string]int{}, fetchedAnyway: map[string]int{}}
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Errorf("open %s: %v", dbPath, err)
		return res
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	own := map[string]siteExclusion{} // this site's excluded pages (no query) by path
	rows, err := db.QueryContext(ctx, `SELECT url, reason, parent FROM exclusions`)
	if err != nil {
		t.Errorf("read exclusions: %v", err)
		return res
	}
	for rows.Next() {
		var u, reason, parent string
		if err := rows.Scan(&u, &reason, &parent); err != nil {
			t.Errorf("read exclusions: %v", err)
			break
		}
		res.byReason[reason]++
		ex, ok := ownExclusion(origin, u, reason, parent)
		if !ok {
			continue
		}
		res.rows = append(res.rows, ex)
		if !ex.query {
			own[ex.path] = ex
			if fetched[ex.path] {
				res.fetchedAnyway[reason]++
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Errorf("read exclusions: %v", err)
	}
	for _, p := range missed[:min(60, len(missed))] {
		ex, ok := own[p]
		if !ok {
			ex.reason = "(none)"
		}
		var state, reason, parent string
		var level, depth, status int
		err := db.QueryRowContext(ctx, `SELECT state, reason, level, depth, status, parent FROM urls WHERE url = ?`, origin+p).
			Scan(&state, &reason, &level, &depth, &status, &parent)
		row := fmt.Sprintf("state=%s reason=%q level=%d depth=%d status=%d parent=%s", state, reason, level, depth, status, parent)
		if errors.Is(err, sql.ErrNoRows) {
			row = "(none)"
		} else if err != nil {
			row = err.Error()
		}
		t.Logf("missed %s: exclusion reason=%s parent=%s; urls row: %s", p, ex.reason, ex.parent, row)
	}
	return res
}

// ownExclusion makes an exclusion row of URL u a siteExclusion when u is on
// the site at origin.
func ownExclusion(origin, u, reason, parent string) (siteExclusion, bool) {
	rest, ok := strings.CutPrefix(u, origin)
	if !ok || (rest != "" && rest[0] != '/') {
		return siteExclusion{}, false
	}
	pu, err := url.Parse(rest)
	if err != nil {
		return siteExclusion{}, false
	}
	ex := siteExclusion{url: u, path: pu.Path, query: pu.RawQuery != "" || pu.ForceQuery, target: pu.Path, reason: reason, parent: parent}
	if ex.query {
		ex.target += "?" + pu.RawQuery
	}
	return ex, true
}

// checkNoneHeld fails t for each page of the site (isPage, given the URL's
// target: its decoded path, and its query if any) that the crawl's store
// still records at the end as held back by a trap reason, naming the reason
// and the page that linked it: first the pages never fetched (lost), then
// those fetched all the same (a stale exclusion; fetched is keyed by target).
// Trap exclusions of the site's other URLs (paths off the link graph, queries
// the site does not link) are logged: holding those may be right.
func checkNoneHeld(t *testing.T, rows []siteExclusion, isPage func(string) bool, fetched map[string]bool) {
	t.Helper()
	held := map[string]int{}
	var lost, stale []siteExclusion
	offGraph := map[string]int{}
	var offExamples []string
	for _, ex := range rows {
		if !trapReason(ex.reason) {
			continue
		}
		if !isPage(ex.target) {
			offGraph[ex.reason]++
			if len(offExamples) < 10 {
				offExamples = append(offExamples, ex.url+" "+ex.reason)
			}
			continue
		}
		held[ex.reason]++
		if fetched[ex.target] {
			stale = append(stale, ex)
		} else {
			lost = append(lost, ex)
		}
	}
	byPath := func(a, b siteExclusion) int { return strings.Compare(a.target, b.target) }
	slices.SortFunc(lost, byPath)
	slices.SortFunc(stale, byPath)
	for _, ex := range lost[:min(100, len(lost))] {
		t.Errorf("page %s held at the end and never fetched: exclusion reason=%s parent=%s", ex.target, ex.reason, ex.parent)
	}
	for _, ex := range stale[:min(20, len(stale))] {
		t.Errorf("page %s held at the end, fetched all the same (a stale exclusion): reason=%s parent=%s", ex.target, ex.reason, ex.parent)
	}
	n := len(lost) + len(stale)
	t.Logf("held at the end: %d pages of the site with a trap reason %v (%d never fetched, %d fetched all the same); %d other URLs of the site %v, e.g. %v",
		n, held, len(lost), len(stale), sumValues(offGraph), offGraph, offExamples)
	if n > 0 {
		lostPaths := make([]string, len(lost))
		for i, ex := range lost {
			lostPaths[i] = ex.target
		}
		t.Errorf("%d pages of the site held by a trap reason at the end of the crawl, want none: by reason %v; %d never fetched (by URL pattern %v), %d fetched all the same",
			n, held, len(lost), docSitePatterns(lostPaths), len(stale))
	}
}

// logEverHeld logs the pages of the site that the exclusions table showed
// held back by a trap reason at some time during the crawl (a lower bound: a
// page held and released between two reads is not seen), and how many of
// them were fetched after all.
func logEverHeld(t *testing.T, seen trapsSeen, origin string, isPage func(string) bool, fetched map[string]bool) int {
	t.Helper()
	byReason, released, others := map[string]int{}, map[string]int{}, map[string]int{}
	n := 0
	for u, reason := range seen.urls {
		ex, ok := ownExclusion(origin, u, reason, "")
		if !ok {
			continue
		}
		if !isPage(ex.target) {
			others[reason]++
			continue
		}
		n++
		byReason[reason]++
		if fetched[ex.target] {
			released[reason]++
		}
	}
	t.Logf("held during the crawl (exclusions table read %d times, every %v): %d pages of the site with a trap reason %v, of which fetched after all %v; %d other URLs of the site %v",
		seen.reads, trapWatchEvery, n, byReason, released, sumValues(others), others)
	return n
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// trapWatch reads a running crawl's exclusions table now and then, and keeps
// every URL it saw recorded with a trap reason: the pages held back for a
// while, which the table no longer shows once they are admitted.
type trapWatch struct {
	quit chan struct{}
	done chan struct{}

	mu    sync.Mutex
	seen  map[string]string // URL -> the trap reason it was first seen with
	reads int
}

// watchTrapExclusions starts reading the exclusions table of the SQLite
// store at dbPath every interval, read-only, from when the crawler creates it.
func watchTrapExclusions(dbPath string, every time.Duration) *trapWatch {
	w := &trapWatch{quit: make(chan struct{}), done: make(chan struct{}), seen: map[string]string{}}
	go w.run(dbPath, every)
	return w
}

func (w *trapWatch) run(dbPath string, every time.Duration) {
	defer close(w.done)
	var db *sql.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-tick.C:
		}
		if db == nil {
			if _, err := os.Stat(dbPath); err != nil {
				continue // not created yet
			}
			var err error
			db, err = sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(1000)")
			if err != nil {
				continue
			}
			db.SetMaxOpenConns(1)
		}
		w.read(db)
	}
}

// read takes one look at the table; an error (no table yet, a busy store)
// only skips the look.
func (w *trapWatch) read(db *sql.DB) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT url, reason FROM exclusions
		WHERE reason LIKE 'trap\_%' ESCAPE '\' OR reason LIKE 'dust\_%' ESCAPE '\'`)
	if err != nil {
		return
	}
	defer rows.Close()
	found := map[string]string{}
	for rows.Next() {
		var u, reason string
		if rows.Scan(&u, &reason) != nil {
			return
		}
		found[u] = reason
	}
	if rows.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	for u, reason := range found {
		if _, ok := w.seen[u]; !ok {
			w.seen[u] = reason
		}
	}
}

// trapsSeen is what a trapWatch saw.
type trapsSeen struct {
	urls  map[string]string // URL -> the trap reason it was first seen with
	reads int               // reads of the table that succeeded
}

// stop ends the watch and returns what it saw.
func (w *trapWatch) stop() trapsSeen {
	close(w.quit)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return trapsSeen{urls: maps.Clone(w.seen), reads: w.reads}
}

// docSite is the expected crawl: the pages reachable from the start page.
type docSite struct {
	pages    map[string]bool // URL paths (decoded) of pages that exist on disk
	gzipped  int             // of those, stored as page.html.gz
	broken   int             // links to .html paths with no file
	noFollow int             // links to pages skipped for rel=nofollow
}

// walkDocSite follows <a href> links breadth-first from start through the HTML
// files under root, as a crawler would through a server that maps URL paths to
// files: same host, fragment and query dropped, relative links resolved against
// the page (or its <base href>). It keeps .html pages (and folders, served by
// their index.html) that exist on disk, plain or gzipped.
func walkDocSite(root, start string, limit int) (docSite, error) {
	site := docSite{pages: map[string]bool{}}
	const host = "docsite.test" // any host: only same-host links are followed
	queue := []string{start}
	seen := map[string]bool{start: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		body, gz, err := readDocPage(root, p)
		if errors.Is(err, fs.ErrNotExist) {
			site.broken++
			continue
		}
		if err != nil {
			return site, err
		}
		site.pages[p] = true
		if gz {
			site.gzipped++
		}
		if len(site.pages) > limit {
			return site, fmt.Errorf("more than %d pages reachable under %s: link resolution is wrong", limit, root)
		}
		base := &url.URL{Scheme: "http", Host: host, Path: p}
		links, noFollow, err := docPageLinks(body, base)
		if err != nil {
			return site, fmt.Errorf("parse %s: %w", p, err)
		}
		site.noFollow += noFollow
		for _, u := range links {
			if u.Host != host || (u.Scheme != "http" && u.Scheme != "https") {
				continue
			}
			q := u.Path
			if !strings.HasSuffix(q, ".html") && !strings.HasSuffix(q, ".htm") && !strings.HasSuffix(q, "/") {
				continue
			}
			if !seen[q] {
				seen[q] = true
				queue = append(queue, q)
			}
		}
	}
	return site, nil
}

// readDocPage reads the file nginx serves for the URL path p: root/p, or
// root/p/index.html for a folder, or either with .gz added (gzip_static).
func readDocPage(root, p string) (body []byte, gzipped bool, err error) {
	clean := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") {
		clean = path.Join(clean, "index.html")
	}
	name := filepath.Join(root, filepath.FromSlash(clean))
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		b, err := os.ReadFile(name)
		return b, false, err
	}
	f, err := os.Open(name + ".gz")
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, true, fmt.Errorf("%s.gz: %w", name, err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, 256<<20))
	if err != nil {
		return nil, true, fmt.Errorf("%s.gz: %w", name, err)
	}
	return b, true, nil
}

// docPageLinks returns the targets of a page's <a href> links, resolved and
// without fragment or query, leaving out rel=nofollow ones (counted).
func docPageLinks(body []byte, base *url.URL) (links []*url.URL, noFollow int, err error) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	const maxNodes = 10_000_000 // bounds the walk; the largest page has ~10^5
	stack := []*html.Node{doc}
	for n := 0; len(stack) > 0; n++ {
		if n > maxNodes {
			return nil, 0, fmt.Errorf("more than %d nodes", maxNodes)
		}
		node := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := node.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c) // last pushed first: document order
		}
		if node.Type != html.ElementNode || (node.DataAtom != atom.A && node.DataAtom != atom.Base) {
			continue
		}
		href, rel, ok := "", "", false
		for _, a := range node.Attr {
			switch a.Key {
			case "href":
				href, ok = strings.TrimSpace(a.Val), true
			case "rel":
				rel = a.Val
			}
		}
		if !ok {
			continue
		}
		u, err := base.Parse(href)
		if err != nil {
			continue // a link the crawler cannot parse either
		}
		if node.DataAtom == atom.Base {
			base = u
			continue
		}
		if slices.Contains(strings.Fields(strings.ToLower(rel)), "nofollow") {
			noFollow++
			continue
		}
		u.Fragment, u.RawFragment, u.RawQuery, u.ForceQuery = "", "", "", false
		links = append(links, u)
	}
	return links, noFollow, nil
}

// docSiteResult is what the access log shows of the crawl.
type docSiteResult struct {
	fetched int             // expected pages answered 200
	ok      int             // requests answered 200
	other   int             // requests for paths off the expected set
	others  []string        // the first of those, "target status"
	pageOK  map[string]bool // paths (decoded) answered 200, expected or not
	missed  []string        // expected pages never answered 200, sorted
}

// judgeDocSite checks the access log against the expected pages.
func judgeDocSite(t *testing.T, site docSite, reqs []nginxtest.Request) docSiteResult {
	t.Helper()
	var res docSiteResult
	answered := map[string][]int{} // request target (path decoded, query kept) -> statuses
	res.pageOK = map[string]bool{}
	pageStatus := map[string][]int{}
	var order []string
	for _, r := range reqs {
		u, err := url.ParseRequestURI(r.Target)
		if err != nil {
			t.Errorf("access log: unparsable target %q: %v", r.Target, err)
			continue
		}
		key := u.Path
		if u.RawQuery != "" {
			key += "?" + u.RawQuery
		}
		if _, ok := answered[key]; !ok {
			order = append(order, key)
		}
		answered[key] = append(answered[key], r.Status)
		if r.Status == 200 {
			res.ok++
			res.pageOK[u.Path] = true
		}
		if !site.pages[u.Path] {
			res.other++
			if len(res.others) < 20 {
				res.others = append(res.others, fmt.Sprintf("%s %d", r.Target, r.Status))
			}
			continue
		}
		pageStatus[u.Path] = append(pageStatus[u.Path], r.Status)
	}
	for p := range site.pages {
		if res.pageOK[p] {
			res.fetched++
			continue
		}
		res.missed = append(res.missed, p)
	}
	slices.Sort(res.missed)
	for _, p := range res.missed {
		if st := pageStatus[p]; len(st) > 0 {
			t.Errorf("page %s requested but answered %v, never 200", p, st)
		} else {
			t.Errorf("page %s never requested", p)
		}
	}
	if len(res.missed) > 0 {
		t.Errorf("%d of %d pages not fetched; by URL pattern: %v", len(res.missed), len(site.pages), docSitePatterns(res.missed))
	}
	// A final answer (anything but a retryable 408, 429 or 5xx) settles a
	// URL; a second one is a page fetched twice.
	var twice []string
	for _, key := range order {
		final := 0
		for _, st := range answered[key] {
			if st != 408 && st != 429 && st < 500 {
				final++
			}
		}
		if final > 1 {
			twice = append(twice, fmt.Sprintf("%s %v", key, answered[key]))
		}
	}
	if len(twice) > 0 {
		t.Errorf("%d URLs got more than one final answer, e.g. %v", len(twice), twice[:min(10, len(twice))])
	}
	return res
}

// docSitePatterns groups paths by folder and by name with digits and a
// trailing -X letter folded, to show which template a set of missed pages
// shares: "/genindex-*.html", "/library/*.html".
func docSitePatterns(paths []string) map[string]int {
	out := map[string]int{}
	for _, p := range paths {
		dir, name := path.Split(p)
		if i := strings.LastIndexByte(name, '-'); i >= 0 {
			name = name[:i+1] + "*" + path.Ext(name)
		} else {
			name = "*" + path.Ext(name)
		}
		out[dir+name]++
	}
	return out
}

// docSiteTail returns the last n lines of out.
func docSiteTail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
