// Command colly is the Colly v2 peer of the load benchmark (issue 5, part
// 2(c)): a plain Colly crawler configured like ours, to be run as the child
// of loadtest/cmd/synthweb:
//
//	go build -o /tmp/colly-peer .
//	go run ./loadtest/cmd/synthweb -hosts 100 -pages 50 -agent collypeer -default-delay 100ms -- \
//	    /tmp/colly-peer -seeds {seeds} -user-agent collypeer -delay 100ms -max-pages 100000
//
// Configuration, and where it departs from a one-liner Colly setup:
//
//   - robots.txt obeyed (Collector.IgnoreRobotsTxt = false; Colly's default is true).
//   - One request in flight per host and Delay between two requests to a host:
//     Colly's LimitRule holds ONE semaphore per rule, shared by every domain the
//     rule matches, so LimitRule{DomainGlob: "*", Parallelism: 1} would allow one
//     request in flight for the whole crawl, not one per host. This runner
//     therefore adds one LimitRule{DomainGlob: <host:port>, Parallelism: 1,
//     Delay: D} per host, in OnRequest the first time it sees the host (OnRequest
//     runs just before the backend looks the rule up by the same URL.Host). The
//     rules are matched linearly (httpBackend.GetMatchingRule), so the cost per
//     request grows with the number of hosts. Colly sleeps Delay after the response body was read while still
//     holding the host's slot, so Delay separates the end of one request from
//     the start of the next, as the audit measures it.
//   - Global cap: -parallelism requests in flight over all hosts, a semaphore in
//     the http.RoundTripper (robots.txt requests included).
//   - Async mode, AllowURLRevisit false (Colly's in-memory visited set), follow
//     every a[href] that resolves to http or https, any host.
//   - -max-pages: at most N page requests (robots.txt not counted), enforced
//     exactly in OnRequest (Colly's MaxRequests alone is racy in Async mode).
//   - Loopback: Colly has no private-address filter; the transport ignores
//     proxy settings so 127.x.y.z is dialed directly.
//
// Colly v2.3.0 semantics that the audit shows and that this runner does not
// hide (read from colly.go and http_backend.go):
//
//   - robots.txt is fetched by Collector.checkRobots with the bare http.Client,
//     outside any LimitRule, in the goroutine that calls Visit; so the host's
//     first page follows it with no delay (one politeness violation per host),
//     and goroutines discovering a host at once each fetch it.
//   - The visited check is IsVisited then Visited, two calls, so in Async mode
//     two goroutines finding the same link at once both fetch it (duplicates).
//   - checkRobots uses FindGroup(...).Test and never sees robotstxt's
//     disallowAll, so a robots.txt answering 5xx allows everything.
//   - Redirects are followed inside one Client.Do, holding the first host's
//     slot: no delay between hops, no robots check of the target, and a hop to
//     another host is not limited by that host's rule.
//   - No Crawl-delay, no nofollow, no URL canonicalization beyond the WHATWG
//     parse, no Retry-After.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/glob"
	"github.com/gocolly/colly/v2"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

type options struct {
	seeds       string
	userAgent   string
	delay       time.Duration
	maxPages    int64
	maxDuration time.Duration
	parallelism int
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("colly-peer", flag.ContinueOnError)
	fs.StringVar(&o.seeds, "seeds", "", "file of seed URLs, one a line (required)")
	fs.StringVar(&o.userAgent, "user-agent", "collypeer", "User-Agent header and robots.txt product token")
	fs.DurationVar(&o.delay, "delay", time.Second, "delay between the end of a request to a host and the start of the next")
	fs.Int64Var(&o.maxPages, "max-pages", 100000, "stop after this many page requests (robots.txt not counted)")
	fs.DurationVar(&o.maxDuration, "max-duration", 10*time.Minute, "stop after this long")
	fs.IntVar(&o.parallelism, "parallelism", 256, "requests in flight over all hosts (at most one per host)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.seeds == "":
		return o, errors.New("-seeds is required")
	case o.maxPages <= 0 || o.parallelism <= 0 || o.delay < 0 || o.maxDuration <= 0:
		return o, errors.New("-max-pages, -parallelism and -max-duration must be positive, -delay not negative")
	}
	return o, nil
}

func readSeeds(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var seeds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" && !strings.HasPrefix(s, "#") {
			seeds = append(seeds, s)
		}
	}
	return seeds, sc.Err()
}

// capTransport lets at most cap(sem) requests be in flight.
type capTransport struct {
	sem  chan struct{}
	next http.RoundTripper
}

func (t *capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	select {
	case t.sem <- struct{}{}:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		<-t.sem
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloserish: resp.Body, release: func() { <-t.sem }}
	return resp, nil
}

// releaseBody frees the transport's slot once, when the body is closed.
type releaseBody struct {
	ReadCloserish interface {
		Read([]byte) (int, error)
		Close() error
	}
	once    sync.Once
	release func()
}

func (b *releaseBody) Read(p []byte) (int, error) { return b.ReadCloserish.Read(p) }
func (b *releaseBody) Close() error {
	err := b.ReadCloserish.Close()
	b.once.Do(b.release)
	return err
}

// hostRules adds one per-host LimitRule the first time a host is seen.
type hostRules struct {
	c     *colly.Collector
	delay time.Duration
	mu    sync.Mutex
	seen  map[string]bool
}

func (h *hostRules) ensure(host string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[host] {
		return nil
	}
	h.seen[host] = true
	return h.c.Limit(&colly.LimitRule{DomainGlob: glob.QuoteMeta(host), Parallelism: 1, Delay: h.delay})
}

func run(args []string) int {
	o, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "colly-peer: %v\n", err)
		return 2
	}
	seeds, err := readSeeds(o.seeds)
	if err != nil || len(seeds) == 0 {
		fmt.Fprintf(os.Stderr, "colly-peer: seeds: %v (%d URLs)\n", err, len(seeds))
		return 2
	}

	ctx, cancel := context.WithTimeout(context.Background(), o.maxDuration)
	defer cancel()

	c := colly.NewCollector(
		colly.Async(true),
		colly.UserAgent(o.userAgent),
		colly.StdlibContext(ctx),
	)
	c.IgnoreRobotsTxt = false
	c.AllowURLRevisit = false
	c.MaxRequests = uint32(min(o.maxPages, 1<<32-1))
	c.WithTransport(&capTransport{
		sem: make(chan struct{}, o.parallelism),
		next: &http.Transport{
			Proxy:               nil, // dial 127.x directly whatever the environment says
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        0, // no global limit, so every host keeps its connection
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   false,
		},
	})
	rules := &hostRules{c: c, delay: o.delay, seen: map[string]bool{}}

	var requested, fetched, failed atomic.Int64
	c.OnRequest(func(r *colly.Request) {
		// Past -max-duration, abort before the backend: a request failing in
		// Do would still sleep the host's Delay in its slot.
		if ctx.Err() != nil || requested.Add(1) > o.maxPages {
			r.Abort()
			return
		}
		// OnRequest runs in Collector.fetch just before the backend's Do,
		// which looks the rule up by this very r.URL.Host.
		if err := rules.ensure(r.URL.Host); err != nil {
			fmt.Fprintf(os.Stderr, "colly-peer: limit rule for %s: %v\n", r.URL.Host, err)
			r.Abort()
		}
	})
	c.OnResponse(func(*colly.Response) { fetched.Add(1) })
	c.OnError(func(*colly.Response, error) { failed.Add(1) })

	follow := func(e *colly.HTMLElement) {
		abs := e.Request.AbsoluteURL(e.Attr("href"))
		if !strings.HasPrefix(abs, "http://") && !strings.HasPrefix(abs, "https://") {
			return
		}
		if ctx.Err() != nil || requested.Load() >= o.maxPages {
			return
		}
		_ = e.Request.Visit(abs) // already visited, robots-blocked, max requests: all fine
	}
	c.OnHTML("a[href]", follow)

	start := time.Now()
	for _, s := range seeds {
		var seen *colly.AlreadyVisitedError
		if err := c.Visit(s); err != nil && !errors.As(err, &seen) { // a seed may be linked from an earlier one
			fmt.Fprintf(os.Stderr, "colly-peer: seed %s: %v\n", s, err)
		}
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// Requests already waiting for their host's slot each fail at once
		// and then sleep Delay in the slot: do not wait for them all.
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	elapsed := time.Since(start)
	pages := fetched.Load()
	fmt.Printf("colly-peer: pages=%d errors=%d requested=%d elapsed=%s pages_per_s=%.1f\n",
		pages, failed.Load(), min(requested.Load(), o.maxPages), elapsed.Round(time.Millisecond),
		float64(pages)/elapsed.Seconds())
	if ctx.Err() != nil {
		fmt.Fprintf(os.Stderr, "colly-peer: stopped at -max-duration %v\n", o.maxDuration)
	}
	return 0
}
