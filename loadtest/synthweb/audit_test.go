package synthweb

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Hosts of the hand-made world.
const (
	hostOpen   = "127.0.1.1:8000" // no robots.txt
	hostAgent  = "127.0.1.2:8000" // testbot: Disallow /no-agent/, Crawl-delay 0.5; *: Disallow /private/
	host5xx    = "127.0.1.3:8000" // robots.txt answers 500
	hostRedir  = "127.0.1.4:8000" // robots.txt redirects; Crawl-delay 30
	testAgent  = "testbot"
	otherAgent = "otherbot"
)

func testWorld(mustFetch, mustNotFetch []string) world {
	wd := world{
		agent: testAgent,
		robots: map[string]robotsPolicy{
			hostOpen: {status: 404},
			hostAgent: {status: 200, groups: []robotsGroup{
				{agents: []string{testAgent}, disallow: []string{"/no-agent/"}, crawlDelay: 500 * time.Millisecond},
				{agents: []string{"*"}, disallow: []string{"/private/"}},
			}},
			host5xx: {status: 500},
			hostRedir: {status: 301, realPath: "/robots-real.txt", groups: []robotsGroup{
				{agents: []string{"*"}, disallow: []string{"/blocked/"}, crawlDelay: 30 * time.Second},
			}},
		},
		mustFetch:    slices.Sorted(slices.Values(mustFetch)),
		mustNotFetch: map[string]bool{},
	}
	for _, id := range mustNotFetch {
		wd.mustNotFetch[id] = true
	}
	return wd
}

var t0 = time.Date(2024, 5, 15, 12, 0, 0, 0, time.UTC)

// rq is a request that started at start ms and took 1 ms. Its kind is
// "robots" for robots targets and "page" otherwise.
func rq(host, target string, status int, start int) Request {
	kind := "page"
	if target == "/robots.txt" || target == "/robots-real.txt" {
		kind = "robots"
	}
	s := t0.Add(time.Duration(start) * time.Millisecond)
	return Request{Host: host, Target: target, Kind: kind, Status: status, Start: s, End: s.Add(time.Millisecond)}
}

func lasting(r Request, ms int) Request {
	r.End = r.Start.Add(time.Duration(ms) * time.Millisecond)
	return r
}

func retryAfterOf(r Request, d time.Duration) Request { r.RetryAfter = d; return r }

func trapOf(r Request, trap string) Request { r.Trap = trap; return r }

// counts returns the violation counts of a report by category name.
func counts(r Report) map[string]int {
	out := map[string]int{}
	for _, c := range r.categories() {
		if c.v.Count > 0 {
			out[c.name] = c.v.Count
		}
	}
	return out
}

func TestAudit(t *testing.T) {
	base := AuditConfig{DefaultDelay: 100 * time.Millisecond, MinDelay: 50 * time.Millisecond, MaxDelay: 2 * time.Second, MaxRetries: 1}
	tests := []struct {
		name         string
		cfg          func(*AuditConfig)
		log          []Request
		mustFetch    []string
		mustNotFetch []string
		want         map[string]int // violation counts by category; absent means 0
		fetched      int
		traps        map[string]int
	}{
		{
			name: "clean",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/", 200, 101), rq(hostOpen, "/p/1.html", 200, 202),
				rq(hostAgent, "/robots.txt", 200, 0), rq(hostAgent, "/", 200, 501), rq(hostAgent, "/private/x.html", 200, 1002),
			},
			mustFetch: []string{hostOpen + "/", hostOpen + "/p/1.html", hostAgent + "/"},
			fetched:   3,
		},
		{
			name: "gap within tolerance",
			log:  []Request{rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/", 200, 100-1)}, // gap 98 ms
		},
		{
			name: "gap too short",
			log:  []Request{rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/", 200, 51)},
			want: map[string]int{"politeness": 1},
		},
		{
			name: "zero tolerance",
			cfg:  func(c *AuditConfig) { c.Tolerance = -1 },
			log:  []Request{rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/", 200, 100)},
			want: map[string]int{"politeness": 1},
		},
		{
			name: "overlap, then gap measured from the request that ended last",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0),
				lasting(rq(hostOpen, "/", 200, 101), 50), // ends at 151
				rq(hostOpen, "/a", 200, 120),             // overlaps; ends at 121
				rq(hostOpen, "/b", 200, 236),             // 115 ms after /a but 85 ms after /
			},
			want: map[string]int{"overlaps": 1, "politeness": 1},
		},
		{
			name: "no delay: stamps within tolerance are no overlap",
			cfg:  func(c *AuditConfig) { c.DefaultDelay = 0 },
			log:  []Request{lasting(rq(hostOpen, "/robots.txt", 404, 0), 3), rq(hostOpen, "/", 200, 2)},
		},
		{
			name: "no delay: overlap beyond tolerance",
			cfg:  func(c *AuditConfig) { c.DefaultDelay = 0 },
			log:  []Request{lasting(rq(hostOpen, "/robots.txt", 404, 0), 4), rq(hostOpen, "/", 200, 1)},
			want: map[string]int{"overlaps": 1, "robots": 1},
		},
		{
			name: "hosts are independent",
			log:  []Request{rq(hostOpen, "/robots.txt", 404, 0), rq(hostAgent, "/robots.txt", 200, 0)},
		},
		{
			name: "crawl-delay binds after robots.txt",
			log:  []Request{rq(hostAgent, "/robots.txt", 200, 0), rq(hostAgent, "/", 200, 102)},
			want: map[string]int{"politeness": 1},
		},
		{
			name: "crawl-delay clamped to MaxDelay",
			cfg:  func(c *AuditConfig) { c.MaxDelay = 300 * time.Millisecond },
			log:  []Request{rq(hostAgent, "/robots.txt", 200, 0), rq(hostAgent, "/", 200, 301)},
		},
		{
			name: "crawl-delay clamped to MinDelay",
			cfg:  func(c *AuditConfig) { c.MinDelay = 800 * time.Millisecond },
			log:  []Request{rq(hostAgent, "/robots.txt", 200, 0), rq(hostAgent, "/", 200, 502)},
			want: map[string]int{"politeness": 1},
		},
		{
			name: "no MaxDelay: crawl-delay 30s",
			cfg:  func(c *AuditConfig) { c.MaxDelay = 0 },
			log: []Request{
				rq(hostRedir, "/robots.txt", 301, 0), rq(hostRedir, "/robots-real.txt", 200, 101),
				rq(hostRedir, "/", 200, 10102),
			},
			want: map[string]int{"politeness": 1},
		},
		{
			name: "default delay until the redirected robots.txt is read",
			log: []Request{
				rq(hostRedir, "/robots.txt", 301, 0), rq(hostRedir, "/robots-real.txt", 200, 101), // default 100 ms
				rq(hostRedir, "/", 200, 2102), // MaxDelay 2 s from here on
				rq(hostRedir, "/blocked/x.html", 200, 3000),
			},
			want: map[string]int{"politeness": 1, "robots": 1},
		},
		{
			name: "request before robots.txt",
			log:  []Request{rq(hostOpen, "/", 200, 0), rq(hostOpen, "/robots.txt", 404, 101)},
			want: map[string]int{"robots": 1},
		},
		{
			name: "request just before robots.txt",
			cfg:  func(c *AuditConfig) { c.DefaultDelay = 0 },
			log:  []Request{lasting(rq(hostOpen, "/", 200, 0), 0), rq(hostOpen, "/robots.txt", 404, 1)},
			want: map[string]int{"robots": 1},
		},
		{
			name: "request while robots.txt is in flight",
			log:  []Request{lasting(rq(hostOpen, "/robots.txt", 404, 0), 300), rq(hostOpen, "/", 200, 200)},
			want: map[string]int{"robots": 1, "overlaps": 1},
		},
		{
			name: "robots.txt 5xx allows nothing but robots.txt",
			log: []Request{
				rq(host5xx, "/robots.txt", 500, 0), rq(host5xx, "/robots.txt", 500, 101), rq(host5xx, "/", 200, 202),
			},
			want: map[string]int{"robots": 1},
		},
		{
			name: "the agent's own group applies",
			log: []Request{
				rq(hostAgent, "/robots.txt", 200, 0),
				rq(hostAgent, "/no-agent/x.html", 200, 501),
				rq(hostAgent, "/private/x.html", 200, 1002),
				rq(hostAgent, "/%6Eo-agent/y.html", 200, 1503), // same path, other spelling
			},
			want: map[string]int{"robots": 2},
		},
		{
			name: "another agent gets the * group and the default delay",
			cfg:  func(c *AuditConfig) { c.Agent = otherAgent },
			log: []Request{
				rq(hostAgent, "/robots.txt", 200, 0),
				rq(hostAgent, "/no-agent/x.html", 200, 101),
				rq(hostAgent, "/private/x.html", 200, 202),
			},
			want: map[string]int{"robots": 1},
		},
		{
			name: "Retry-After ignored",
			log: []Request{
				rq(hostAgent, "/robots.txt", 200, 0),
				retryAfterOf(rq(hostAgent, "/err/429.html", 429, 501), time.Second),
				rq(hostAgent, "/err/429.html", 200, 1002),
			},
			want: map[string]int{"retry-after": 1},
		},
		{
			name: "Retry-After honoured",
			log: []Request{
				rq(hostAgent, "/robots.txt", 200, 0),
				retryAfterOf(rq(hostAgent, "/err/429.html", 429, 501), time.Second),
				rq(hostAgent, "/other.html", 200, 1502),
				rq(hostAgent, "/err/429.html", 200, 2003),
			},
		},
		{
			name: "duplicate after a final answer",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/a", 404, 101), rq(hostOpen, "/a", 404, 202),
			},
			want: map[string]int{"duplicates": 1},
		},
		{
			name: "spellings of one resource are duplicates",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/p/3.html", 200, 101),
				trapOf(rq(hostOpen, "/./p/%33.html?utm_source=x&sid=1", 200, 202), "session"),
			},
			want:  map[string]int{"duplicates": 1},
			traps: map[string]int{"session": 1},
		},
		{
			name: "retries within MaxRetries, then too many",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0),
				rq(hostOpen, "/e", 500, 101), rq(hostOpen, "/e", 503, 202), rq(hostOpen, "/e", 500, 303),
				rq(hostOpen, "/f", 0, 404), rq(hostOpen, "/f", 200, 505),
			},
			mustFetch: []string{hostOpen + "/e", hostOpen + "/f"},
			fetched:   2,
			want:      map[string]int{"duplicates": 1},
		},
		{
			name: "robots.txt may be fetched again",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/", 200, 101), rq(hostOpen, "/robots.txt", 404, 202),
			},
		},
		{
			name: "missing",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0),
				retryAfterOf(rq(hostOpen, "/429", 429, 101), time.Millisecond), // not final, one try left
				rq(hostOpen, "/slow", 0, 202),                                  // no answer
				rq(hostOpen, "/ok", 404, 303),                                  // a final answer
			},
			mustFetch: []string{hostOpen + "/never", hostOpen + "/429", hostOpen + "/slow", hostOpen + "/ok"},
			fetched:   1,
			want:      map[string]int{"missing": 3},
		},
		{
			name: "forbidden",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/nf/target.html", 200, 101),
			},
			mustNotFetch: []string{hostOpen + "/nf/target.html", hostOpen + "/other"},
			want:         map[string]int{"forbidden": 1},
		},
		{
			name: "traps are counted, not failed",
			log: []Request{
				rq(hostOpen, "/robots.txt", 404, 0),
				trapOf(rq(hostOpen, "/calendar?month=2024-05", 200, 101), "calendar"),
				trapOf(rq(hostOpen, "/calendar?month=2024-06", 200, 202), "calendar"),
				trapOf(rq(hostOpen, "/deep/1/", 200, 303), "depth"),
			},
			traps: map[string]int{"calendar": 2, "depth": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			wd := testWorld(tt.mustFetch, tt.mustNotFetch)
			rep := audit(tt.log, wd, cfg)
			if got := counts(rep); !maps.Equal(got, tt.want) && (len(got) > 0 || len(tt.want) > 0) {
				t.Errorf("violations %v, want %v\n%s", got, tt.want, rep)
			}
			if rep.OK() != (len(tt.want) == 0) {
				t.Errorf("OK() = %v with violations %v", rep.OK(), counts(rep))
			}
			if rep.Fetched != tt.fetched || rep.MustFetch != len(tt.mustFetch) {
				t.Errorf("fetched %d of %d, want %d of %d", rep.Fetched, rep.MustFetch, tt.fetched, len(tt.mustFetch))
			}
			if !maps.Equal(rep.TrapRequests, tt.traps) && (len(rep.TrapRequests) > 0 || len(tt.traps) > 0) {
				t.Errorf("traps %v, want %v", rep.TrapRequests, tt.traps)
			}
			if rep.Requests != len(tt.log) {
				t.Errorf("Requests = %d, want %d", rep.Requests, len(tt.log))
			}
			// The log is in order of completion, which the audit must not depend on.
			rev := slices.Clone(tt.log)
			slices.Reverse(rev)
			if again := audit(rev, wd, cfg); !maps.Equal(counts(again), counts(rep)) {
				t.Errorf("reversed log gives %v, in order %v", counts(again), counts(rep))
			}
		})
	}
}

func TestReport(t *testing.T) {
	log := []Request{rq(hostOpen, "/robots.txt", 404, 0)}
	for i := range 30 {
		log = append(log, rq(hostOpen, fmt.Sprintf("/p/%d.html", i), 200, 10*(i+1)))
	}
	cfg := AuditConfig{DefaultDelay: time.Second, MaxExamples: 3}
	rep := audit(log, testWorld([]string{hostOpen + "/p/0.html", hostOpen + "/gone"}, nil), cfg)
	if rep.Politeness.Count != 30 || len(rep.Politeness.Examples) != 3 {
		t.Fatalf("politeness %d with %d examples, want 30 with 3", rep.Politeness.Count, len(rep.Politeness.Examples))
	}
	if rep.Coverage != 0.5 || rep.Hosts != 1 || rep.RobotsFetches != 1 || rep.OK() {
		t.Errorf("coverage %v, hosts %d, robots %d, OK %v", rep.Coverage, rep.Hosts, rep.RobotsFetches, rep.OK())
	}
	s := rep.String()
	for _, want := range []string{
		"synthweb audit: FAIL",
		"requests:    31 to 1 hosts, 1 of them for robots.txt",
		"coverage:    50.0% (1 of 2 must-fetch resources)",
		"politeness:  30",
		"    - 127.0.1.1:8000 /p/0.html started at +10ms, 9ms after /robots.txt ended; delay 1s",
		"    ... and 27 more",
		"missing:     1\n    - 127.0.1.1:8000/gone never requested",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
	if clean := audit(nil, testWorld(nil, nil), cfg); !clean.OK() || clean.Coverage != 1 || !strings.HasPrefix(clean.String(), "synthweb audit: OK") {
		t.Errorf("empty audit:\n%s", clean)
	}
}

func TestAuditConfigValidate(t *testing.T) {
	for _, bad := range []AuditConfig{
		{DefaultDelay: -1},
		{MinDelay: 2 * time.Second, MaxDelay: time.Second},
		{MaxRetries: -1},
		{MaxExamples: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v passed Validate", bad)
		}
	}
	if err := DefaultAuditConfig().Validate(); err != nil {
		t.Errorf("DefaultAuditConfig: %v", err)
	}
}

// TestWebAudit audits real requests of a careless client.
func TestWebAudit(t *testing.T) {
	w := startWeb(t, featuresConfig())
	hosts := w.Hosts()
	c := rawClient()
	get(t, c, "http://"+hosts[0]+"/")               // before robots.txt
	get(t, c, "http://"+hosts[0]+"/robots.txt")     // too soon
	get(t, c, "http://"+hosts[0]+"/p/1.html")       // too soon
	get(t, c, "http://"+hosts[1]+"/private/x.html") // before robots.txt, and forbidden
	rep := w.Audit(DefaultAuditConfig())            // without Close: it waits for the last handler
	want := map[string]int{"robots": 2, "politeness": 2, "forbidden": 1, "missing": len(w.MustFetch()) - 2}
	if got := counts(rep); !maps.Equal(got, want) {
		t.Errorf("violations %v, want %v\n%s", got, want, rep)
	}
	if rep.Requests != 4 || rep.Hosts != 2 || rep.Fetched != 2 {
		t.Errorf("requests %d, hosts %d, fetched %d", rep.Requests, rep.Hosts, rep.Fetched)
	}
}

// TestPoliteCrawlerPasses crawls the Features web with the simplest crawler
// that should pass: it proves the web can be crawled cleanly and that the
// audit does not flag correct behaviour.
func TestPoliteCrawlerPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls for several seconds")
	}
	w := startWeb(t, featuresConfig())
	cfg := AuditConfig{
		DefaultDelay: 30 * time.Millisecond,
		MinDelay:     10 * time.Millisecond,
		MaxDelay:     150 * time.Millisecond,
		MaxRetries:   1,
	}
	c := newPoliteCrawler(t, w, cfg)
	start := time.Now()
	c.crawl(w.Seeds())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := w.Audit(cfg)
	t.Logf("crawled in %v\n%s", time.Since(start).Round(time.Millisecond), rep)
	if !rep.OK() || rep.Coverage != 1 {
		t.Errorf("a polite crawler fails the audit:\n%s", rep)
	}
	for _, trap := range []string{"calendar", "repeat", "depth", "redirect_loop"} {
		if rep.TrapRequests[trap] == 0 {
			t.Errorf("the depth-limited crawler never entered the %s trap", trap)
		}
	}
	if n := rep.TrapRequests["redirect_chain"]; n != 0 {
		t.Errorf("a crawler following 5 redirects asked for /chain/7 and beyond %d times", n)
	}
}

// politeCrawler is naive but polite: one request at a time, robots.txt
// first on every host (its rules read from the web's own robotsPolicy),
// the effective delay between requests to a host, Retry-After, retries of
// 5xx, 429 and failures, at most 5 redirects, a depth limit against traps,
// and URL dedup by CanonicalTarget.
type politeCrawler struct {
	t      *testing.T
	cfg    AuditConfig
	agent  string
	client *http.Client
	rules  map[string]robotsPolicy // what each host's robots.txt says
	hosts  map[string]*crawlHost
	order  []*crawlHost
	seen   map[string]bool // resource ids queued once
}

type crawlHost struct {
	key        string
	queue      []crawlItem
	next       time.Time // earliest start of the next request
	rulesKnown bool      // robots.txt answered 200
	policy     robotsPolicy
	dead       bool // robots.txt failed: request nothing more
}

type crawlItem struct {
	u       *url.URL
	depth   int
	hops    int // redirects that led here
	retries int
	robots  bool // robots.txt or its redirect target
}

const (
	crawlMaxDepth  = 10
	crawlMaxHops   = 5
	crawlMaxURL    = 2048
	crawlBodyLimit = 1 << 20
)

var (
	linkRE = regexp.MustCompile(`<a href="([^"]*)"(?: rel="([^"]*)")?>`)
	locRE  = regexp.MustCompile(`<loc>([^<]*)</loc>`)
)

func newPoliteCrawler(t *testing.T, w *Web, cfg AuditConfig) *politeCrawler {
	c := &politeCrawler{
		t: t, cfg: cfg, agent: w.cfg.Agent, client: rawClient(),
		rules: map[string]robotsPolicy{}, hosts: map[string]*crawlHost{}, seen: map[string]bool{},
	}
	c.client.Timeout = 3 * time.Second
	for _, h := range w.hosts {
		c.rules[h.key] = h.robots
	}
	return c
}

func (c *politeCrawler) host(key string) *crawlHost {
	h := c.hosts[key]
	if h == nil {
		h = &crawlHost{key: key}
		c.hosts[key] = h
		c.order = append(c.order, h)
		robots := &url.URL{Scheme: "http", Host: key, Path: "/robots.txt"}
		h.queue = append(h.queue, crawlItem{u: robots, robots: true})
	}
	return h
}

func (c *politeCrawler) enqueue(base *url.URL, ref string, depth, hops int) {
	u, err := base.Parse(strings.TrimSpace(ref))
	if err != nil || u.Scheme != "http" || depth > crawlMaxDepth || hops > crawlMaxHops {
		return
	}
	u.Fragment, u.RawFragment = "", ""
	if len(u.String()) > crawlMaxURL {
		return
	}
	target, _ := CanonicalTarget(u.RequestURI())
	if id := u.Host + target; !c.seen[id] {
		c.seen[id] = true
		h := c.host(u.Host)
		h.queue = append(h.queue, crawlItem{u: u, depth: depth, hops: hops})
	}
}

func (c *politeCrawler) crawl(seeds []string) {
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil {
			c.t.Fatal(err)
		}
		c.enqueue(u, s, 0, 0)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var h *crawlHost
		for _, cand := range c.order {
			if !cand.dead && len(cand.queue) > 0 && (h == nil || cand.next.Before(h.next)) {
				h = cand
			}
		}
		if h == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatal("crawl did not finish in 60s")
		}
		time.Sleep(time.Until(h.next))
		it := h.queue[0]
		h.queue = h.queue[1:]
		if !it.robots {
			target, _ := CanonicalTarget(it.u.RequestURI())
			if !h.policy.allowed(c.agent, target) {
				continue
			}
		}
		c.fetch(h, it)
	}
}

func (c *politeCrawler) fetch(h *crawlHost, it crawlItem) {
	req, err := http.NewRequest(http.MethodGet, it.u.String(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("User-Agent", c.agent+"/1.0 (synthweb test)")
	resp, err := c.client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, crawlBodyLimit))
		resp.Body.Close()
	}
	end := time.Now()
	delay := c.cfg.DefaultDelay
	if d, ok := h.policy.crawlDelay(c.agent); ok && h.rulesKnown {
		delay = c.cfg.clamp(d)
	}
	h.next = end.Add(delay)

	switch {
	case it.robots:
		c.robots(h, it, resp, err)
		if h.rulesKnown { // the Crawl-delay binds from now on
			if d, ok := h.policy.crawlDelay(c.agent); ok {
				h.next = end.Add(c.cfg.clamp(d))
			}
		}
	case err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		if err == nil && resp.StatusCode == http.StatusTooManyRequests {
			if secs := resp.Header.Get("Retry-After"); secs != "" {
				var n int
				fmt.Sscan(secs, &n)
				h.next = maxTime(h.next, end.Add(time.Duration(n)*time.Second))
			}
		}
		if it.retries < c.cfg.MaxRetries {
			it.retries++
			h.queue = append(h.queue, it)
		}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		c.enqueue(it.u, resp.Header.Get("Location"), it.depth, it.hops+1)
	case resp.StatusCode == http.StatusOK:
		c.parse(it, resp, body)
	}
}

func (c *politeCrawler) robots(h *crawlHost, it crawlItem, resp *http.Response, err error) {
	switch {
	case err != nil || resp.StatusCode >= 500:
		h.dead = true // a real crawler would retry later; this one gives up on the host
	case resp.StatusCode >= 300 && resp.StatusCode < 400 && it.hops < crawlMaxHops:
		next, perr := it.u.Parse(resp.Header.Get("Location"))
		if perr != nil || next.Host != h.key {
			return // rules elsewhere: not needed for this web
		}
		h.queue = slices.Insert(h.queue, 0, crawlItem{u: next, robots: true, hops: it.hops + 1})
	case resp.StatusCode == http.StatusOK:
		h.rulesKnown = true
		h.policy = c.rules[h.key]
		for _, sm := range h.policy.sitemaps {
			c.enqueue(it.u, sm, 1, 0)
		}
		c.enqueue(it.u, "/sitemap.xml", 1, 0) // by convention
	default: // 4xx: no rules, everything allowed
		h.policy = robotsPolicy{status: resp.StatusCode}
		c.enqueue(it.u, "/sitemap.xml", 1, 0)
	}
}

func (c *politeCrawler) parse(it crawlItem, resp *http.Response, body []byte) {
	ctype := resp.Header.Get("Content-Type")
	if resp.Header.Get("Content-Encoding") == "gzip" || ctype == "application/gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return
		}
		body, _ = io.ReadAll(io.LimitReader(zr, crawlBodyLimit)) // stops the bomb
	}
	switch {
	case strings.HasPrefix(ctype, "text/html"):
		if bytes.Contains(body, []byte(`<meta name="robots" content="nofollow">`)) {
			return
		}
		for _, m := range linkRE.FindAllSubmatch(body, -1) {
			if string(m[2]) != "nofollow" {
				c.enqueue(it.u, html.UnescapeString(string(m[1])), it.depth+1, 0)
			}
		}
	case strings.Contains(ctype, "xml"), ctype == "application/gzip":
		for _, m := range locRE.FindAllSubmatch(body, -1) {
			c.enqueue(it.u, html.UnescapeString(string(m[1])), it.depth+1, 0)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// The gaps are measured from the end of a host's request to its next start,
// over the delay in force: the default before robots.txt is known, the
// Crawl-delay after.
func TestAuditGaps(t *testing.T) {
	cfg := AuditConfig{DefaultDelay: 100 * time.Millisecond, MinDelay: 50 * time.Millisecond, MaxDelay: 2 * time.Second}
	log := []Request{
		// Ends at 1; gaps 120, 110, 130 ms at the 100 ms default delay.
		rq(hostOpen, "/robots.txt", 404, 0), rq(hostOpen, "/", 200, 121), rq(hostOpen, "/a", 200, 232), rq(hostOpen, "/b", 200, 363),
		// Crawl-delay 0.5 s once robots.txt answered: a gap of 600 ms is 1.2 delays.
		rq(hostAgent, "/robots.txt", 200, 0), rq(hostAgent, "/", 200, 601),
	}
	rep := audit(log, testWorld(nil, nil), cfg)
	g := rep.Gaps
	if cd := rep.CrawlDelayGaps; cd.Count != 1 || math.Abs(cd.Median-1.2) > 1e-9 {
		t.Errorf("gaps under a Crawl-delay = %+v, want the one of 1.2 delays", cd)
	}
	if g.Count != 4 {
		t.Fatalf("gaps = %d, want 4: %+v", g.Count, g)
	}
	// Sorted: 1.1, 1.2, 1.2, 1.3.
	if math.Abs(g.Median-1.2) > 1e-9 || math.Abs(g.P90-1.3) > 1e-9 || math.Abs(g.Utilisation-1/1.2) > 1e-9 {
		t.Errorf("gaps = %+v, want median 1.2, p90 1.3, utilisation 0.833", g)
	}
	if g := audit(nil, testWorld(nil, nil), cfg).Gaps; g != (GapStats{}) {
		t.Errorf("empty log: gaps = %+v", g)
	}
}
