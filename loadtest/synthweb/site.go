package synthweb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// role says which special cases a host carries when Features is on.
type role int

const (
	rolePlain       role = iota
	roleOpen             // host 0: no robots.txt; URL spellings, redirects, content cases
	roleStar             // host 1: "*" rules with Allow, sitemap index, traps
	roleAgent            // host 2: agent-specific group; error pages
	roleDelay            // host 3: Crawl-delay 0.25, gzip bomb, unlisted /sitemap.xml
	roleRobotsRedir      // host 4: robots.txt redirects; Crawl-delay 30
	roleRobots5xx        // host 5: robots.txt answers 500
)

// resource is a pre-rendered response, or one made per request by live.
type resource struct {
	status int
	kind   string // Request.Kind
	trap   string // Request.Trap, for trap pages (redirect chain and loop, Config.Traps)
	header http.Header
	body   []byte

	// live, when set, makes the answer at the request's start: the
	// changing pages and sitemaps of Config.Change.
	live func(r *http.Request, now time.Time) *resource
}

// host is one site. Everything but the log is immutable after build.
type host struct {
	web    *Web
	idx    int
	key    string // "127.0.X.Y:PORT", or "NAME:PORT" with Config.Addresses
	name   string // with Config.Addresses: the DNS name, else ""
	addr   string // IP of the address it is served on
	base   string // "http://" + key
	role   role
	robots robotsPolicy
	static map[string]*resource // canonical target -> response
	traps  []*trapInstance      // with Config.Traps; served on request
	app    *appSite             // with Config.Apps: an application host, else nil

	vocab     []string
	page429ok *resource // /err/429.html after its first answer
	slow      *resource

	// With Config.Change (see planChanges).
	validators validators
	sitemap    bool        // robots.txt names sitemapPath
	live       []*livePage // "/" then /p/N.html; nil on a host without changing pages
}

var (
	ctHTML  = []string{"text/html; charset=utf-8"}
	ctText  = []string{"text/plain; charset=utf-8"}
	ctXML   = []string{"application/xml"}
	ctGzip  = []string{"application/gzip"}
	ctPDF   = []string{"application/pdf"}
	encGzip = []string{"gzip"}
)

func newResource(status int, kind string, ctype []string, body []byte) *resource {
	h := http.Header{"Content-Type": ctype, "Content-Length": {strconv.Itoa(len(body))}}
	if status == http.StatusOK {
		sum := sha256.Sum256(body)
		h["Etag"] = []string{`"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return &resource{status: status, kind: kind, header: h, body: body}
}

func redirect(status int, location string) *resource {
	return &resource{status: status, kind: "redirect", header: http.Header{
		"Location": {location}, "Content-Length": {"0"},
	}}
}

// build renders every host. It runs before any server starts.
func (w *Web) build() error {
	vocab := newVocabulary(w.cfg.Seed)
	for _, h := range w.hosts {
		h.vocab = vocab
		h.static = map[string]*resource{}
		if w.cfg.Features && h.idx < int(roleRobots5xx) {
			h.role = role(h.idx + 1)
		}
		h.robots = robotsPolicy{status: 200, groups: []robotsGroup{{agents: []string{"*"}, disallow: []string{"/cgi-bin/"}}}}
		if h.idx == 0 {
			h.robots = robotsPolicy{status: 404}
		}
	}
	w.planApps()
	if w.cfg.Change.Enabled {
		w.planChanges()
	}
	if w.widget != nil {
		w.widget.buildWidget()
	}
	for _, h := range w.hosts {
		if h.app != nil {
			h.buildApp()
			h.buildRobots()
			continue
		}
		home, perPage, err := h.buildFeatures()
		if err != nil {
			return err
		}
		// Nothing may be fetched from a host whose robots.txt fails, so
		// a trap there would be unreachable.
		if w.cfg.Traps && h.role != roleRobots5xx {
			trapHome, trapPages := h.buildTraps()
			home = append(home, trapHome...)
			perPage = appendLinks(perPage, trapPages)
		}
		h.buildPlain(home, perPage)
		if w.cfg.Change.Enabled {
			h.buildChanges()
		}
		h.drawCrawlDelay()
		h.buildRobots()
	}
	slices.Sort(w.mustFetch)
	w.mustFetch = slices.Compact(w.mustFetch)
	return nil
}

// appendLinks adds extra[n] to the links perPage gives page n.
func appendLinks(perPage func(int) []link, extra map[int][]link) func(int) []link {
	if len(extra) == 0 {
		return perPage
	}
	return func(n int) []link {
		var ls []link
		if perPage != nil {
			ls = perPage(n)
		}
		return append(ls, extra[n]...)
	}
}

func (h *host) mustFetch(target string) {
	h.web.mustFetch = append(h.web.mustFetch, h.key+target)
}

func (h *host) mustNotFetch(target string) {
	c, _ := CanonicalTarget(target)
	h.web.mustNotFetch[h.key+c] = true
}

// textResource renders a generated page at target.
func (h *host) textResource(target string, n int, links []link, head ...string) *resource {
	g := newTextGen(h.vocab, pathRNG(h.web.cfg.Seed, h.idx, target))
	spec := textPage(g, n, links)
	spec.head = head
	return newResource(http.StatusOK, "page", ctHTML, renderPage(spec))
}

func (h *host) addPage(target string, links ...link) {
	h.static[target] = h.textResource(target, 600, append(links, link{href: "/", text: "Home"}))
}

// buildPlain renders "/" and /p/N.html. homeExtra goes on the home page,
// perPage(n) on page n.
func (h *host) buildPlain(homeExtra []link, perPage func(n int) []link) {
	cfg := h.web.cfg
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(h.idx)<<20|0xb1d))
	pagesN := cfg.PagesPerHost
	local := func(n int, fromHome bool) link {
		text := fmt.Sprintf("Page %d", n)
		switch rng.IntN(3) {
		case 0:
			return link{href: fmt.Sprintf("/p/%d.html", n), text: text}
		case 1:
			if fromHome {
				return link{href: fmt.Sprintf("p/%d.html", n), text: text}
			}
			return link{href: fmt.Sprintf("%d.html", n), text: text}
		}
		return link{href: fmt.Sprintf("%s/p/%d.html", h.base, n), text: text}
	}
	// Links into an application host would let a crawler reach its pages
	// without running scripts.
	ordinary := cfg.Hosts - cfg.Apps
	cross := func() (link, bool) {
		if !cfg.CrossLinks || ordinary < 2 {
			return link{}, false
		}
		j := rng.IntN(ordinary - 1)
		if j >= h.idx {
			j++
		}
		n := rng.IntN(pagesN)
		return link{href: fmt.Sprintf("%s/p/%d.html", h.web.hosts[j].base, n), text: fmt.Sprintf("Elsewhere %d", n)}, true
	}
	pageLinks := func(n int, fromHome bool) []link {
		var ls []link
		if n < pagesN {
			ls = append(ls, local(n, fromHome)) // the chain that makes every page reachable
		}
		extra := cfg.Fanout - 1
		if l, ok := cross(); ok && extra > 0 {
			ls = append(ls, l)
			extra--
		}
		for range extra {
			ls = append(ls, local(rng.IntN(pagesN), fromHome))
		}
		return ls
	}
	textBytes := plainTextBytes(cfg)
	// Sizes come from their own stream, so that a size range leaves the
	// link graph of a seed as it was.
	srng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(h.idx)<<20|0x512e))
	sized := func() int {
		if cfg.PageBytesMax <= cfg.PageBytes {
			return textBytes
		}
		c := cfg
		c.PageBytes += srng.IntN(cfg.PageBytesMax - cfg.PageBytes + 1)
		return plainTextBytes(c)
	}

	homeLinks := append(pageLinks(0, true), homeExtra...)
	for n := 0; h.live != nil && n+1 < pagesN; n++ {
		// Page N is the way to N+1: once it is deleted, "/" must lead
		// there instead.
		if h.live[n+1].deletes {
			homeLinks = append(homeLinks, link{href: fmt.Sprintf("/p/%d.html", n+1), text: fmt.Sprintf("Page %d", n+1)})
		}
	}
	h.plainPage(0, "/", sized(), homeLinks)
	for n := range pagesN {
		ls := append(pageLinks(n+1, false), link{href: "/", text: "Home"})
		if perPage != nil {
			ls = append(ls, perPage(n)...)
		}
		h.plainPage(n+1, fmt.Sprintf("/p/%d.html", n), sized(), ls)
	}
	if h.role == roleRobots5xx {
		return // nothing but robots.txt may be fetched there
	}
	h.mustFetch("/")
	for n := range pagesN {
		h.mustFetch(fmt.Sprintf("/p/%d.html", n))
	}
}

// drawCrawlDelay gives a plain host's robots.txt a Crawl-delay with
// probability Config.CrawlDelayShare. Each host draws from its own stream,
// so the hosts that get one do not depend on the web's other settings.
func (h *host) drawCrawlDelay() {
	cfg := h.web.cfg
	if cfg.CrawlDelayShare <= 0 || h.role != rolePlain || h.robots.status != http.StatusOK || len(h.robots.groups) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(h.idx)<<20|0xc7d))
	if rng.Float64() >= cfg.CrawlDelayShare {
		return
	}
	lo, hi := cfg.CrawlDelayMin.Milliseconds(), cfg.CrawlDelayMax.Milliseconds()
	h.robots.groups[0].crawlDelay = time.Duration(lo+rng.Int64N(hi-lo+1)) * time.Millisecond
}

// plainPage renders page i of buildPlain ("/" is 0), or hands its text
// and links to the changing page that serves it.
func (h *host) plainPage(i int, target string, textBytes int, links []link) {
	if h.live != nil {
		h.live[i].links, h.live[i].textBytes = links, textBytes
		return
	}
	h.static[target] = h.textResource(target, textBytes, links)
}

// buildFeatures adds the role's special resources and returns the links the
// home page and ordinary pages carry to them.
func (h *host) buildFeatures() (home []link, perPage func(int) []link, err error) {
	switch h.role {
	case roleOpen:
		return h.buildOpen(), nil, nil
	case roleStar:
		home, perPage = h.buildStar()
		return home, perPage, nil
	case roleAgent:
		return h.buildAgent(), nil, nil
	case roleDelay:
		home, err = h.buildDelay()
		return home, nil, err
	case roleRobotsRedir:
		return h.buildRobotsRedir(), nil, nil
	case roleRobots5xx:
		h.robots = robotsPolicy{status: 500}
	}
	return nil, nil, nil
}

// buildOpen: URL spellings, redirects and content cases, on a host without
// robots.txt so robots cannot be the reason anything is skipped.
func (h *host) buildOpen() []link {
	var home []link
	// Six spellings of /p/3.html: one resource, one request.
	for _, v := range []string{"/p/3.html?utm_source=x", "/p/3.html#top", "/./p/3.html", "/p/%33.html",
		"HTTP://" + h.key + "/p/3.html", "/p/3.html?sid=abc"} {
		home = append(home, link{href: v, text: "Page three"})
	}

	// /old/N.html moved permanently; the target is an ordinary page the
	// crawler also finds by links, so it must not fetch it twice.
	for n := range h.web.cfg.PagesPerHost {
		h.static[fmt.Sprintf("/old/%d.html", n)] = redirect(http.StatusMovedPermanently, fmt.Sprintf("/p/%d.html", n))
	}
	home = append(home, link{href: "/old/1.html", text: "Old page"})
	h.mustFetch("/old/1.html")

	// A chain of 8 hops: a crawler following at most 5 never asks for /chain/7.
	for k := 1; k <= 8; k++ {
		next := fmt.Sprintf("/chain/%d", k+1)
		if k == 8 {
			next = "/p/0.html"
		}
		r := redirect(http.StatusMovedPermanently, next)
		if k >= 7 {
			r.trap = trapRedirectChain
		}
		h.static[fmt.Sprintf("/chain/%d", k)] = r
	}
	home = append(home, link{href: "/chain/1", text: "Chain"})
	h.mustFetch("/chain/1")

	h.static["/loop/a"] = redirect(http.StatusMovedPermanently, "/loop/b")
	h.static["/loop/b"] = redirect(http.StatusMovedPermanently, "/loop/a")
	h.static["/loop/a"].trap = trapRedirectLoop
	h.static["/loop/b"].trap = trapRedirectLoop
	home = append(home, link{href: "/loop/a", text: "Loop"})
	h.mustFetch("/loop/a")

	h.static["/away"] = redirect(http.StatusFound, h.web.hosts[1].base+"/p/0.html")
	home = append(home, link{href: "/away", text: "Away"})
	h.mustFetch("/away")

	// Near-duplicates: ~1,000 words, one differs.
	g := newTextGen(h.vocab, pathRNG(h.web.cfg.Seed, h.idx, "/near/"))
	words := g.words(1000)
	nearSpec := func(ws []string) []byte {
		var paras []string
		for i := 0; i < len(ws); i += 100 {
			paras = append(paras, sentenceOf(ws[i:min(i+100, len(ws))]))
		}
		return renderPage(pageSpec{title: "Near Duplicate", description: "Two versions of one article.",
			paragraphs: paras, links: []link{{href: "/", text: "Home"}}})
	}
	h.static["/near/a.html"] = newResource(http.StatusOK, "page", ctHTML, nearSpec(words))
	wordsB := slices.Clone(words)
	wordsB[500] = "notwithstanding"
	if words[500] == wordsB[500] {
		wordsB[500] = "nevertheless"
	}
	h.static["/near/b.html"] = newResource(http.StatusOK, "page", ctHTML, nearSpec(wordsB))

	// Byte-identical copies.
	cp := h.textResource("/copy/", 2000, []link{{href: "/", text: "Home"}})
	h.static["/copy/1.html"] = cp
	h.static["/copy/2.html"] = cp

	h.static["/files/report.pdf"] = newResource(http.StatusOK, "file", ctPDF, []byte(pdfBody))

	h.static["/canonical.html"] = h.textResource("/canonical.html", 800, []link{{href: "/", text: "Home"}},
		`<link rel="canonical" href="`+h.base+`/canonical.html?utm_source=canonical">`)

	h.static["/meta/noindex.html"] = h.textResource("/meta/noindex.html", 800,
		[]link{{href: "/", text: "Home"}}, `<meta name="robots" content="noindex">`)
	h.static["/meta/nofollow.html"] = h.textResource("/meta/nofollow.html", 800,
		[]link{{href: "/meta/behind-nofollow.html", text: "Behind"}}, `<meta name="robots" content="nofollow">`)
	h.addPage("/meta/behind-nofollow.html")
	h.mustNotFetch("/meta/behind-nofollow.html")

	h.addPage("/nf/target.html")
	h.mustNotFetch("/nf/target.html")

	for _, p := range []string{"/near/a.html", "/near/b.html", "/copy/1.html", "/copy/2.html",
		"/files/report.pdf", "/canonical.html", "/meta/noindex.html", "/meta/nofollow.html"} {
		home = append(home, link{href: p, text: "Special " + p})
		h.mustFetch(p)
	}
	home = append(home, link{href: "/nf/target.html", text: "Not followed", rel: "nofollow"})

	// Past any sane URL length cap.
	huge := "/x/huge-query?q=" + strings.Repeat("abcdefghij", 3<<10/10)
	h.addPage(huge) // canonical as it stands: one parameter, no escapes
	h.mustNotFetch(huge)
	home = append(home, link{href: huge, text: "Huge"})
	return home
}

// buildStar: "*" rules with an Allow exception, a gzip sitemap behind an
// index, and the traps.
func (h *host) buildStar() ([]link, func(int) []link) {
	h.robots = robotsPolicy{status: 200, groups: []robotsGroup{{
		agents: []string{"*"}, allow: []string{"/private/open.html"}, disallow: []string{"/private/"},
	}}, sitemaps: []string{h.base + "/sitemap_index.xml"}}
	h.addPage("/private/x.html")
	h.addPage("/private/open.html")
	h.mustNotFetch("/private/x.html")
	h.mustFetch("/private/open.html")

	var orphans []string
	for i := 1; i <= 3; i++ {
		p := fmt.Sprintf("/orphan/%d.html", i)
		h.addPage(p)
		h.mustFetch(p)
		orphans = append(orphans, h.base+p)
	}
	h.static["/sitemap_index.xml"] = newResource(http.StatusOK, "sitemap", ctXML, sitemapIndex([]string{h.base + "/sitemap-1.xml.gz"}))
	h.static["/sitemap-1.xml.gz"] = newResource(http.StatusOK, "sitemap", ctGzip, gzipBytes(sitemapURLSet(orphans)))

	home := []link{
		{href: "/private/x.html", text: "Private"},
		{href: "/private/open.html", text: "Open"},
		{href: "/calendar?month=" + h.web.cfg.Now.Format("2006-01"), text: "Calendar"},
		{href: "/trap/a/", text: "Repeat"},
		{href: "/deep/1/", text: "Deep"},
	}
	rng := rand.New(rand.NewPCG(uint64(h.web.cfg.Seed), 0x5e55))
	pages := h.web.cfg.PagesPerHost
	sids := make([]string, pages)
	targets := make([]int, pages)
	for n := range sids {
		sids[n] = fmt.Sprintf("%016x", rng.Uint64())
		targets[n] = rng.IntN(pages)
	}
	perPage := func(n int) []link {
		ls := []link{{href: fmt.Sprintf("/p/%d.html?sid=%s", targets[n], sids[n]), text: "Session link"}}
		if n%5 == 0 {
			ls = append(ls, link{href: "/private/x.html", text: "Private"})
		}
		return ls
	}
	return home, perPage
}

// buildAgent: the crawler's own group overrides "*"; error pages.
func (h *host) buildAgent() []link {
	h.robots = robotsPolicy{status: 200, groups: []robotsGroup{
		{agents: []string{h.web.cfg.Agent}, disallow: []string{"/no-agent/"}},
		{agents: []string{"*"}, disallow: []string{"/no-star/"}},
	}}
	h.addPage("/no-agent/x.html")
	h.addPage("/no-star/x.html")
	h.mustNotFetch("/no-agent/x.html")
	h.mustFetch("/no-star/x.html")

	h.static["/err/404.html"] = newResource(http.StatusNotFound, "error", ctHTML, []byte("<!DOCTYPE html><html lang=\"en\"><title>Not found</title><p>Gone.</p></html>\n"))
	h.static["/err/500.html"] = newResource(http.StatusInternalServerError, "error", ctHTML, []byte("<!DOCTYPE html><html lang=\"en\"><title>Error</title><p>Broken.</p></html>\n"))
	h.page429ok = h.textResource("/err/429.html", 800, []link{{href: "/", text: "Home"}})
	h.slow = h.textResource("/slow.html", 800, []link{{href: "/", text: "Home"}})

	var home []link
	for _, p := range []string{"/no-agent/x.html", "/no-star/x.html", "/err/404.html", "/err/500.html", "/err/429.html", "/slow.html"} {
		home = append(home, link{href: p, text: "Special " + p})
	}
	for _, p := range []string{"/err/404.html", "/err/500.html", "/err/429.html", "/slow.html"} {
		h.mustFetch(p)
	}
	return home
}

// buildDelay: Crawl-delay 0.25, the gzip bomb, a sitemap only found by
// convention.
func (h *host) buildDelay() ([]link, error) {
	h.robots = robotsPolicy{status: 200, groups: []robotsGroup{{
		agents: []string{"*"}, disallow: []string{"/cgi-bin/"}, crawlDelay: 250 * time.Millisecond,
	}}}
	bomb, err := bombBody()
	if err != nil {
		return nil, err
	}
	r := newResource(http.StatusOK, "page", ctHTML, bomb)
	r.header["Content-Encoding"] = encGzip
	h.static["/bomb.html"] = r
	h.mustFetch("/bomb.html")

	var orphans []string
	for i := 1; i <= 2; i++ {
		p := fmt.Sprintf("/orphan/%d.html", i)
		h.addPage(p)
		h.mustFetch(p)
		orphans = append(orphans, h.base+p)
	}
	h.static["/sitemap.xml"] = newResource(http.StatusOK, "sitemap", ctXML, sitemapURLSet(orphans))
	return []link{{href: "/bomb.html", text: "Bomb"}}, nil
}

// buildRobotsRedir: robots.txt is a redirect whose target holds the rules.
func (h *host) buildRobotsRedir() []link {
	h.robots = robotsPolicy{status: 301, realPath: "/robots-real.txt", groups: []robotsGroup{{
		agents: []string{"*"}, disallow: []string{"/blocked/"}, crawlDelay: 30 * time.Second,
	}}}
	h.addPage("/blocked/x.html")
	h.mustNotFetch("/blocked/x.html")
	return []link{{href: "/blocked/x.html", text: "Blocked"}}
}
