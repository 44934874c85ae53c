package synthweb

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"math"
	"math/bits"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlcluster/crawler/pkg/simhash"
)

// Change classes of the changing web, as in ChangeReport.FreshnessByClass.
const (
	ChangeNever = "never"
	ChangeSlow  = "slow"
	ChangeFast  = "fast"
)

// ChangeConfig makes the home pages and the ordinary pages change over
// time (see "Changing pages" in the package comment). Intervals are in
// simulated time, of which TimeScale seconds pass per real second: at the
// defaults a fast page changes every 6 s of real time on average and a slow
// one every 144 s. Zero durations and a zero TimeScale take their defaults;
// the shares are taken as given, zero included, so start from
// DefaultChangeConfig.
type ChangeConfig struct {
	Enabled      bool
	TimeScale    float64       // simulated time per real time; default 600
	FastInterval time.Duration // mean simulated time between two versions of a fast page; default 1h
	SlowInterval time.Duration // the same for a slow page; default 24h
	FastShare    float64       // share of pages that change fast; default 0.2
	SlowShare    float64       // share of pages that change slowly; default 0.3; the rest (0.5) never change
	NoiseShare   float64       // share of pages with an ad line that changes at every request; default 0.3
	ETagHosts    float64       // share of hosts sending ETag and Last-Modified; default 0.5
	LastModHosts float64       // share of hosts sending Last-Modified only; default 0.25; the rest send neither
	SitemapHosts float64       // share of hosts whose robots.txt names a sitemap with <lastmod>; default 0.5
	DeleteShare  float64       // share of ordinary pages deleted at a seeded instant; default 0.05
	DeleteWithin time.Duration // simulated; deletions fall uniformly in the first DeleteWithin; default 6h
}

// DefaultChangeConfig returns the documented defaults, not enabled.
func DefaultChangeConfig() ChangeConfig {
	return ChangeConfig{
		TimeScale:    600,
		FastInterval: time.Hour,
		SlowInterval: 24 * time.Hour,
		FastShare:    0.2,
		SlowShare:    0.3,
		NoiseShare:   0.3,
		ETagHosts:    0.5,
		LastModHosts: 0.25,
		SitemapHosts: 0.5,
		DeleteShare:  0.05,
		DeleteWithin: 6 * time.Hour,
	}
}

// RegisterFlags adds the changing web's settings to fs, each flag name
// prefixed with prefix and defaulting to c's current value.
func (c *ChangeConfig) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.BoolVar(&c.Enabled, prefix+"change", c.Enabled, "home and ordinary pages change over time (Poisson), with validators, 304s, sitemaps with <lastmod> and deleted pages; the audit reports freshness")
	fs.Float64Var(&c.TimeScale, prefix+"time-scale", c.TimeScale, "with -change: simulated seconds per real second; the -change-* durations are simulated")
	fs.DurationVar(&c.FastInterval, prefix+"change-fast", c.FastInterval, "with -change: mean simulated time between two versions of a fast page")
	fs.DurationVar(&c.SlowInterval, prefix+"change-slow", c.SlowInterval, "with -change: mean simulated time between two versions of a slow page")
	fs.Float64Var(&c.FastShare, prefix+"change-fast-share", c.FastShare, "with -change: share of pages that change fast")
	fs.Float64Var(&c.SlowShare, prefix+"change-slow-share", c.SlowShare, "with -change: share of pages that change slowly (the rest never change)")
	fs.Float64Var(&c.NoiseShare, prefix+"change-noise-share", c.NoiseShare, "with -change: share of pages with an ad line that differs at every request (not a change)")
	fs.Float64Var(&c.ETagHosts, prefix+"change-etag-hosts", c.ETagHosts, "with -change: share of hosts sending ETag and Last-Modified and answering 304")
	fs.Float64Var(&c.LastModHosts, prefix+"change-lastmod-hosts", c.LastModHosts, "with -change: share of hosts sending only Last-Modified (the rest send no validators)")
	fs.Float64Var(&c.SitemapHosts, prefix+"change-sitemap-hosts", c.SitemapHosts, "with -change: share of hosts whose robots.txt names a sitemap whose <lastmod> follows the changes")
	fs.Float64Var(&c.DeleteShare, prefix+"change-delete-share", c.DeleteShare, "with -change: share of ordinary pages deleted (404 or 410) at a seeded instant")
	fs.DurationVar(&c.DeleteWithin, prefix+"change-delete-within", c.DeleteWithin, "with -change: deletions fall uniformly within this simulated time after the start")
}

func (c ChangeConfig) withDefaults() ChangeConfig {
	d := DefaultChangeConfig()
	if c.TimeScale == 0 {
		c.TimeScale = d.TimeScale
	}
	if c.FastInterval == 0 {
		c.FastInterval = d.FastInterval
	}
	if c.SlowInterval == 0 {
		c.SlowInterval = d.SlowInterval
	}
	if c.DeleteWithin == 0 {
		c.DeleteWithin = d.DeleteWithin
	}
	return c
}

func (c ChangeConfig) validate() error {
	share := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("%w: Change.%s %v not in [0, 1]", ErrConfig, name, v)
		}
		return nil
	}
	for _, s := range []struct {
		name string
		v    float64
	}{
		{"FastShare", c.FastShare}, {"SlowShare", c.SlowShare}, {"FastShare+SlowShare", c.FastShare + c.SlowShare},
		{"NoiseShare", c.NoiseShare}, {"ETagHosts", c.ETagHosts}, {"LastModHosts", c.LastModHosts},
		{"ETagHosts+LastModHosts", c.ETagHosts + c.LastModHosts}, {"SitemapHosts", c.SitemapHosts}, {"DeleteShare", c.DeleteShare},
	} {
		if err := share(s.name, s.v); err != nil {
			return err
		}
	}
	switch {
	case !(c.TimeScale > 0) || math.IsInf(c.TimeScale, 1):
		return fmt.Errorf("%w: Change.TimeScale %v is not positive", ErrConfig, c.TimeScale)
	case c.FastInterval < 0 || c.SlowInterval < 0 || c.DeleteWithin < 0:
		return fmt.Errorf("%w: negative Change interval", ErrConfig)
	}
	return nil
}

// real turns a simulated duration into real time.
func (c ChangeConfig) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.TimeScale)
}

// validators says which validators a host sends with its changing pages.
type validators int

const (
	validatorsNone validators = iota
	validatorsLastMod
	validatorsETag
)

const (
	// neverAge is the mean simulated age of a page that never changes
	// when the web starts: its Last-Modified.
	neverAge = 30 * 24 * time.Hour

	// noiseLines is how many ad lines a noisy page rotates through.
	noiseLines = 16

	// sitemapPath is where a sitemap host's changing sitemap lives.
	sitemapPath = "/sitemap-pages.xml"
)

// assign splits n items into classes by shares, exactly up to rounding:
// item i gets class k when it falls in the k-th share of a seeded order, or
// len(shares) when it falls in none.
func assign(rng *rand.Rand, n int, shares ...float64) []int {
	out := make([]int, n)
	perm := rng.Perm(n)
	cum, lo := 0.0, 0
	for k, s := range shares {
		cum += s
		hi := min(n, int(math.Round(cum*float64(n))))
		for _, i := range perm[lo:hi] {
			out[i] = k
		}
		lo = max(lo, hi)
	}
	for _, i := range perm[lo:] {
		out[i] = len(shares)
	}
	return out
}

// planChanges decides, from the seed, each host's validators and sitemap
// and each page's change class, noise and deletion. Hosts whose robots.txt
// fails take no part: nothing may be fetched from them; nor do application
// hosts, whose pages a renderer is judged on as they are.
func (w *Web) planChanges() {
	cc := w.cfg.Change
	rng := rand.New(rand.NewPCG(uint64(w.cfg.Seed), 0xc4a96e))
	var hosts, mapHosts []*host
	for _, h := range w.hosts {
		if h.role == roleRobots5xx || h.app != nil {
			continue
		}
		hosts = append(hosts, h)
		// Host 0 has no robots.txt to name a sitemap in.
		if h.idx != 0 {
			mapHosts = append(mapHosts, h)
		}
	}
	for i, v := range assign(rng, len(hosts), cc.ETagHosts, cc.LastModHosts) {
		hosts[i].validators = []validators{validatorsETag, validatorsLastMod, validatorsNone}[v]
	}
	for i, v := range assign(rng, len(mapHosts), cc.SitemapHosts) {
		mapHosts[i].sitemap = v == 0
	}

	var pages []*livePage
	for _, h := range hosts {
		h.live = make([]*livePage, 1+w.cfg.PagesPerHost)
		for i := range h.live {
			target := "/"
			if i > 0 {
				target = "/p/" + strconv.Itoa(i-1) + ".html"
			}
			h.live[i] = &livePage{host: h, target: target, rng: rand.New(rand.NewPCG(uint64(w.cfg.Seed), hash64(h.idx, target, "changes")))}
			pages = append(pages, h.live[i])
		}
	}
	classes := assign(rng, len(pages), cc.FastShare, cc.SlowShare)
	noisy := assign(rng, len(pages), cc.NoiseShare)
	var ordinary []*livePage
	for i, p := range pages {
		p.class = []string{ChangeFast, ChangeSlow, ChangeNever}[classes[i]]
		p.noise = noisy[i] == 0
		// Version 0 went live before the web started: as long before as
		// a Poisson process's last event before any instant (memoryless).
		age := neverAge
		switch p.class {
		case ChangeFast:
			age = cc.FastInterval
		case ChangeSlow:
			age = cc.SlowInterval
		}
		if p.class != ChangeNever {
			p.mean = max(cc.real(age), 1) // 0 would mean never
		}
		p.born = -time.Duration(p.rng.ExpFloat64()*float64(cc.real(age))) - 1
		if p.target != "/" {
			ordinary = append(ordinary, p)
		}
	}
	// Deleting a home page would cut its host off.
	gone := 0
	for i, d := range assign(rng, len(ordinary), cc.DeleteShare) {
		if d != 0 {
			continue
		}
		p := ordinary[i]
		p.deletes = true
		p.deleteAt = time.Duration(p.rng.Float64() * float64(cc.real(cc.DeleteWithin)))
		p.gone = goneNotFound
		if gone%2 == 1 {
			p.gone = goneGone
		}
		gone++
	}
}

var (
	goneNotFound = newResource(http.StatusNotFound, "notfound", ctHTML,
		[]byte("<!DOCTYPE html>\n<html lang=\"en\"><title>Not found</title><p>This page was removed.</p></html>\n"))
	goneGone = newResource(http.StatusGone, "notfound", ctHTML,
		[]byte("<!DOCTYPE html>\n<html lang=\"en\"><title>Gone</title><p>This page was removed for good.</p></html>\n"))
)

// livePage is a page of the changing web. Its versions go live at the
// instants of a Poisson process drawn from its own seeded stream, grown on
// demand, so the server knows the live version at every instant whatever
// the order of the questions; it holds one offset per version that went
// live, which is what the audit needs to replay the crawl.
type livePage struct {
	host      *host
	target    string
	class     string        // ChangeNever, ChangeSlow, ChangeFast
	mean      time.Duration // real mean time between versions; 0: never changes
	noise     bool
	born      time.Duration // offset from the epoch at which version 0 went live, negative
	deletes   bool
	deleteAt  time.Duration // offset from the epoch; with deletes
	gone      *resource     // the answer from deleteAt on
	links     []link        // the same in every version
	textBytes int

	mu      sync.Mutex
	rng     *rand.Rand      // under mu once built
	changes []time.Duration // offsets from the epoch at which versions 1, 2, ... went live

	cur    atomic.Pointer[pageVersion] // the version rendered last
	served atomic.Uint32               // turns the ad line
}

// pageVersion is one rendered version of a livePage.
type pageVersion struct {
	n           int
	from, until time.Duration // offsets from the epoch during which n is live
	changed     time.Time     // when n went live: Last-Modified and <lastmod>
	etag        string        // strong, derived from n; "" on hosts without ETags
	lastMod     string        // changed rounded up to the second; "" on hosts without Last-Modified
	lastModAt   time.Time
	head, tail  []byte   // the page before and after its ad line; all of it in head without noise
	noise       [][]byte // ad lines, HTML-escaped
}

// grow draws versions until one goes live after d. Past the deletion
// nothing is drawn: no version is served then. Caller holds p.mu.
func (p *livePage) grow(d time.Duration) {
	if p.mean == 0 {
		return
	}
	for len(p.changes) == 0 || p.changes[len(p.changes)-1] <= d {
		var last time.Duration
		if len(p.changes) > 0 {
			last = p.changes[len(p.changes)-1]
		}
		if p.deletes && last > p.deleteAt {
			return
		}
		step := time.Duration(p.rng.ExpFloat64() * float64(p.mean))
		p.changes = append(p.changes, last+max(step, 1))
	}
}

// span returns the version live at offset d and when it went live and
// stops being live (math.MaxInt64 if never). Caller holds p.mu.
func (p *livePage) span(d time.Duration) (n int, from, until time.Duration) {
	p.grow(d)
	n = sort.Search(len(p.changes), func(i int) bool { return p.changes[i] > d })
	from, until = p.born, time.Duration(math.MaxInt64)
	if n > 0 {
		from = p.changes[n-1]
	}
	if n < len(p.changes) {
		until = p.changes[n]
	}
	return n, from, until
}

// version returns the rendered version live at offset d, rendering it if
// the last one rendered is another.
func (p *livePage) version(d time.Duration) *pageVersion {
	if v := p.cur.Load(); v != nil && d >= v.from && d < v.until {
		return v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n, from, until := p.span(d)
	if v := p.cur.Load(); v != nil && v.n == n {
		return v // rendered by a request that held mu before this one
	}
	v := p.render(n, from, until)
	p.cur.Store(v)
	return v
}

// render makes version n. Every version has text of its own (so its
// SimHash is far from every other's); version 0 has the text the page has
// in a web that does not change.
func (p *livePage) render(n int, from, until time.Duration) *pageVersion {
	h := p.host
	seed := h.web.cfg.Seed
	textSeed := p.target
	if n > 0 {
		textSeed += "#" + strconv.Itoa(n)
	}
	spec := textPage(newTextGen(h.vocab, pathRNG(seed, h.idx, textSeed)), p.textBytes, p.links)
	v := &pageVersion{n: n, from: from, until: until, changed: h.web.epoch.Add(from)}
	switch h.validators {
	case validatorsETag:
		v.etag = fmt.Sprintf(`"v%d-%016x"`, n, hash64(h.idx, p.target, strconv.FormatInt(seed, 10), strconv.Itoa(n)))
		fallthrough
	case validatorsLastMod:
		// Rounded up, so that an If-Modified-Since echoing it is answered
		// 304 exactly when nothing changed since (see notModified).
		v.lastModAt = v.changed.Truncate(time.Second)
		if v.lastModAt.Before(v.changed) {
			v.lastModAt = v.lastModAt.Add(time.Second)
		}
		v.lastMod = httpDate(v.lastModAt)
	}
	if !p.noise {
		v.head = renderPage(spec)
		return v
	}
	lines := p.noiseLines(spec, pathRNG(seed, h.idx, textSeed+"#noise"))
	const mark = "\x00"
	spec.paragraphs = append(slices.Clip(spec.paragraphs), mark)
	v.head, v.tail, _ = bytes.Cut(renderPage(spec), []byte(mark))
	for _, l := range lines {
		v.noise = append(v.noise, []byte(html.EscapeString(l)))
	}
	return v
}

// noiseLines draws ad lines for a version. One word differs between them,
// which moves only the SimHash bits whose vote the text leaves close to a
// tie; lines are kept only while all of them together move at most
// textBits bits, so any two answers of one version are near-duplicates for
// the crawler.
func (p *livePage) noiseLines(spec pageSpec, rng *rand.Rand) []string {
	vocab := p.host.vocab
	var (
		out         []string
		first, diff uint64
	)
	seen := map[string]bool{}
	for range 4 * noiseLines {
		w := vocab[rng.IntN(len(vocab))]
		line := "Sponsored by " + strings.ToUpper(w[:1]) + w[1:]
		if seen[line] {
			continue
		}
		seen[line] = true
		s := spec
		s.paragraphs = append(slices.Clip(spec.paragraphs), line)
		fp := simhash.Fingerprint(visibleText(s))
		if len(out) == 0 {
			first = fp
		}
		if d := diff | (fp ^ first); bits.OnesCount64(d) <= textBits {
			diff = d
			out = append(out, line)
			if len(out) == noiseLines {
				break
			}
		}
	}
	return out
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// serve answers a request at now: the live version, a 304, or the deletion.
func (p *livePage) serve(r *http.Request, now time.Time) *resource {
	d := now.Sub(p.host.web.epoch)
	if p.deletes && d >= p.deleteAt {
		return p.gone
	}
	v := p.version(d)
	hdr := make(http.Header, 4)
	if v.etag != "" {
		hdr["Etag"] = []string{v.etag}
	}
	if v.lastMod != "" {
		lm := v.lastMod
		// Never later than the Date of the answer (RFC 9110 §8.8.2.1):
		// a version younger than a second says the current second, which
		// an If-Modified-Since will not match (see notModified).
		if v.lastModAt.After(now) {
			lm = httpDate(now.Truncate(time.Second))
		}
		hdr["Last-Modified"] = []string{lm}
	}
	if p.notModified(r, v, now) {
		return &resource{status: http.StatusNotModified, kind: "page", header: hdr}
	}
	body := v.head
	if len(v.noise) > 0 {
		ad := v.noise[p.served.Add(1)%uint32(len(v.noise))]
		body = make([]byte, 0, len(v.head)+len(ad)+len(v.tail))
		body = append(append(append(body, v.head...), ad...), v.tail...)
	}
	hdr["Content-Type"] = ctHTML
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	return &resource{status: http.StatusOK, kind: "page", header: hdr, body: body}
}

// notModified evaluates the request's preconditions against version v as
// RFC 9110 §13.2.2 orders them: If-None-Match, when present, decides alone.
//
// If-Modified-Since is answered 304 only when v went live at or before the
// date, exactly. That is correct whatever the client's date: a Last-Modified
// it echoes was rounded up and sent only once that second had passed, so v
// was still live when the client got it; any version it could hold from a
// date D was live at D. Comparing whole seconds instead would claim "not
// modified" for a page that changed twice within the second.
func (p *livePage) notModified(r *http.Request, v *pageVersion, now time.Time) bool {
	if p.host.validators == validatorsNone {
		return false
	}
	if inm := r.Header["If-None-Match"]; len(inm) > 0 {
		return etagMatches(inm, v.etag)
	}
	ims := r.Header["If-Modified-Since"]
	if len(ims) != 1 {
		return false
	}
	t, err := http.ParseTime(ims[0])
	// A date in the future is invalid (RFC 7232 §3.3): trusting it would
	// confirm a copy the client cannot hold.
	if err != nil || t.After(now) {
		return false
	}
	return !v.changed.After(t)
}

// etagMatches applies the weak comparison If-None-Match asks for (RFC 9110
// §13.1.2) to the field lines. "*" matches any current version; etag ""
// (a host without ETags) matches nothing else.
func etagMatches(lines []string, etag string) bool {
	for _, line := range lines {
		for tag := range strings.SplitSeq(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				return true
			}
			if etag != "" && strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/") {
				return true
			}
		}
	}
	return false
}

// changedAt returns when the version live at offset d went live.
func (p *livePage) changedAt(d time.Duration) time.Time {
	if v := p.cur.Load(); v != nil && d >= v.from && d < v.until {
		return v.changed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, from, _ := p.span(d)
	return p.host.web.epoch.Add(from)
}

// serveSitemap lists the host's changing pages that exist at now, each with
// the instant its live version went live.
func (h *host) serveSitemap(_ *http.Request, now time.Time) *resource {
	d := now.Sub(h.web.epoch)
	urls := make([]sitemapURL, 0, len(h.live))
	for _, p := range h.live {
		if p.deletes && d >= p.deleteAt {
			continue
		}
		urls = append(urls, sitemapURL{loc: h.base + p.target, lastmod: p.changedAt(d)})
	}
	return newResource(http.StatusOK, "sitemap", ctXML, sitemapURLs(urls))
}

// buildChanges wires the host's changing pages and sitemap into its resources,
// once buildPlain has given the pages their links.
func (h *host) buildChanges() {
	for _, p := range h.live {
		h.static[p.target] = &resource{status: http.StatusOK, kind: "page", live: p.serve}
	}
	if h.sitemap {
		h.static[sitemapPath] = &resource{status: http.StatusOK, kind: "sitemap", live: h.serveSitemap}
		h.robots.sitemaps = append(h.robots.sitemaps, h.base+sitemapPath)
	}
}
