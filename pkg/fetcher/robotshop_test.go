package fetcher

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/crawlcluster/crawler/internal/hostile"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// spanLog records when a server began and ended each request.
type spanLog struct {
	mu    sync.Mutex
	spans []span
}

type span struct {
	path       string
	start, end time.Time
}

func (l *spanLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		l.mu.Lock()
		l.spans = append(l.spans, span{r.URL.RequestURI(), start, time.Now()})
		l.mu.Unlock()
	})
}

func (l *spanLog) get() []span {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]span(nil), l.spans...)
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// TestRobotsRedirectsWaitForTheirHostsTurn: hosts whose robots.txt redirect
// to a third party (here 20, half to one URL, half to a URL each) must not
// aim the crawler at it. Each hop is a request to the victim made in the
// victim's turn: never more in flight there than -ip-concurrency, never two
// closer than its delay, and one URL asked by ten hosts is fetched once. The
// answer serves the redirecting hosts: their pages are fetched or excluded
// by the victim's rules.
func TestRobotsRedirectsWaitForTheirHostsTurn(t *testing.T) {
	for _, fetchers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d fetchers", fetchers), func(t *testing.T) { testRobotsRedirects(t, fetchers) })
	}
}

// testRobotsRedirects runs the case with n fetchers in the group: with two,
// hops and answers cross between the owners of the hosts.
func testRobotsRedirects(t *testing.T, n int) {
	e := testenv.New(t)
	var victimLog spanLog
	victim := hostile.ServeOn(t, "127.0.0.99", victimLog.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // a request takes a while: overlaps show
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	})))
	const hosts = 20
	var pages []string
	for i := range hosts {
		target := victim.URL + "/robots.txt"
		if i%2 == 1 {
			target = fmt.Sprintf("%s/r/%d.txt", victim.URL, i)
		}
		srv := hostile.ServeOn(t, fmt.Sprintf("127.0.0.%d", 10+i), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, target, http.StatusMovedPermanently)
				return
			}
			fmt.Fprint(w, "<html><body>page</body></html>")
		}))
		pages = append(pages, strings.ToLower(srv.URL)+"/", strings.ToLower(srv.URL)+"/private")
	}

	cfg := testConfig()
	cfg.DefaultDelay = 200 * time.Millisecond
	cfg.IPConcurrency = 2
	cfg.IPDelay = 0
	for i := range n {
		cfg.InstanceID = fmt.Sprintf("f%d", i)
		_, stop := startFetcher(t, e, cfg)
		defer stop()
	}
	if n > 1 {
		adm := kadm.NewClient(e.Kafka)
		testenv.Eventually(t, 30*time.Second, "the fetchers sharing the partitions", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			g, err := adm.DescribeGroups(ctx, queue.GroupFetchers)
			return err == nil && g[queue.GroupFetchers].State == "Stable" && len(g[queue.GroupFetchers].Members) == n
		})
	}
	for _, u := range pages {
		host := urlnorm.Authority(u)
		if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: u, Seed: true}, queue.PartitionOf(host))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 60*time.Second, "every redirecting host's pages decided by the victim's rules", func() bool {
		for i, u := range pages {
			want := store.StateFetched
			if i%2 == 1 {
				want = store.StateExcluded
			}
			if urlState(t, e, u) != want {
				return false
			}
		}
		return true
	})

	spans := victimLog.get()
	perPath := map[string]int{}
	for _, s := range spans {
		perPath[s.path]++
	}
	if n := perPath["/robots.txt"]; n != 1 {
		t.Errorf("victim's /robots.txt requested %d times for 10 hosts, want once", n)
	}
	for i := 1; i < hosts; i += 2 {
		if p := fmt.Sprintf("/r/%d.txt", i); perPath[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, perPath[p])
		}
	}
	if len(spans) != 1+hosts/2 {
		t.Errorf("victim saw %d requests, want %d: %v", len(spans), 1+hosts/2, perPath)
	}
	for i, s := range spans {
		inFlight := 0
		for _, o := range spans {
			if !o.start.After(s.start) && o.end.After(s.start) {
				inFlight++
			}
		}
		if inFlight > 1 {
			t.Errorf("request %d (%s) began with %d in flight on the victim, want 1 (one host)", i, s.path, inFlight)
		}
		if i > 0 {
			if gap := s.start.Sub(spans[i-1].end); gap < cfg.DefaultDelay {
				t.Errorf("request %d (%s) began %v after the previous one ended, want at least the delay %v", i, s.path, gap, cfg.DefaultDelay)
			}
		}
	}
}

// TestLostRobotsHopIsAskedAgain: a hop queued on its host lives in its
// owner's memory; when that owner restarts (here: its queue and book of
// waiting hosts are dropped) the host waiting on it asks again, and gets
// its rules long before its wait for the answer ends.
func TestLostRobotsHopIsAskedAgain(t *testing.T) {
	e := testenv.New(t)
	victim := hostile.ServeOn(t, "127.0.0.98", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	}))
	victimHost := urlnorm.Authority(victim.URL)
	src := hostile.ServeOn(t, "127.0.0.97", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, victim.URL+"/robots.txt", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "<html><body>page</body></html>")
	}))
	srcHost := urlnorm.Authority(src.URL)
	page := strings.ToLower(src.URL) + "/"

	f, stop := startFetcher(t, e, testConfig())
	defer stop()
	testenv.Eventually(t, 30*time.Second, "the fetcher owning the partitions", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.owned[queue.PartitionOf(victimHost)] && f.owned[queue.PartitionOf(srcHost)]
	})
	f.fr.SetHostPaused(victimHost, queue.PartitionOf(victimHost), true)
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: page, Seed: true}, queue.PartitionOf(srcHost))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the hop queued on the victim", func() bool {
		h, ok := f.fr.Host(victimHost)
		return ok && h.Queued == 1
	})
	// The victim's owner loses the hop, as a restart would.
	f.fr.Remove(victimHost, func(frontier.Item) bool { return true })
	f.mu.Lock()
	f.hops = hopBook{}
	f.mu.Unlock()
	f.fr.SetHostPaused(victimHost, queue.PartitionOf(victimHost), false)
	asked := time.Now()
	testenv.Eventually(t, time.Minute, "the page fetched under the victim's rules", func() bool {
		return urlState(t, e, page) == store.StateFetched
	})
	if took := time.Since(asked); took >= robotsHopWait {
		t.Errorf("rules came %v after the hop was lost, want well before the wait of %v ends", took, robotsHopWait)
	}
}

// TestOwnRobotsChainAnsweredInItsTurn: a robots.txt that redirects on its
// own host (/robots.txt to /robots-real.txt) is answered in the turn that
// fetches its last hop, not through crawl.urls: with the host's partition
// paused while that hop is served, as a rebalance that moves the partition
// would leave the answer unread, the host still learns its rules and keeps
// their Crawl-delay from the end of the hop, and robots.txt is asked once.
func TestOwnRobotsChainAnsweredInItsTurn(t *testing.T) {
	e := testenv.New(t)
	const crawlDelay = 600 * time.Millisecond
	var log spanLog
	serving, release := make(chan struct{}, 1), make(chan struct{})
	srv := hostile.ServeOn(t, "127.0.0.96", log.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/robots-real.txt", http.StatusMovedPermanently)
		case "/robots-real.txt":
			select {
			case serving <- struct{}{}:
			default:
			}
			<-release
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %g\nDisallow: /private\n", crawlDelay.Seconds())
		default:
			fmt.Fprint(w, "<html><body>page</body></html>")
		}
	})))
	host := urlnorm.Authority(srv.URL)
	p := queue.PartitionOf(host)
	page := strings.ToLower(srv.URL) + "/"

	f, stop := ownerOf(t, e, p)
	defer stop()
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: page, Seed: true}, p)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-serving:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("the redirect target was never requested")
	}
	f.kafka.PauseFetchPartitions(map[string][]int32{queue.TopicURLs: {p}})
	close(release)
	testenv.Eventually(t, 30*time.Second, "the page fetched under the rules at the end of the chain", func() bool {
		return urlState(t, e, page) == store.StateFetched
	})
	f.kafka.ResumeFetchPartitions(map[string][]int32{queue.TopicURLs: {p}})

	spans := log.get()
	robotsAsked := 0
	for i, s := range spans {
		if s.path == "/robots.txt" {
			robotsAsked++
		}
		if i > 0 && spans[i-1].path == "/robots-real.txt" {
			if gap := s.start.Sub(spans[i-1].end); gap < crawlDelay {
				t.Errorf("%s began %v after %s ended, want at least the Crawl-delay %v", s.path, gap, spans[i-1].path, crawlDelay)
			}
		}
	}
	if robotsAsked != 1 {
		t.Errorf("/robots.txt asked %d times, want once: %v", robotsAsked, spans)
	}
}

// TestOwnRobotsChainAnsweredForAPreviousOwner: the hop of a robots.txt chain
// on its own host can reach a fetcher that never asked for it: the
// partition's previous owner fetched /robots.txt and sent the hop before the
// partition moved. The new owner fetches the hop in the host's turn and
// takes its rules from it: it does not ask for /robots.txt again, and the
// host's next request waits the Crawl-delay from the end of the hop (CI:
// /robots.txt again 46 ms after /robots-real.txt under a 400 ms delay).
func TestOwnRobotsChainAnsweredForAPreviousOwner(t *testing.T) {
	e := testenv.New(t)
	const crawlDelay = 600 * time.Millisecond
	var log spanLog
	srv := hostile.ServeOn(t, "127.0.0.97", log.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/robots-real.txt", http.StatusMovedPermanently)
		case "/robots-real.txt":
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %g\nDisallow: /private\n", crawlDelay.Seconds())
		default:
			fmt.Fprint(w, "<html><body>page</body></html>")
		}
	})))
	host := urlnorm.Authority(srv.URL)
	p := queue.PartitionOf(host)
	base := strings.ToLower(srv.URL)
	page := base + "/"

	f, stop := ownerOf(t, e, p)
	defer stop()
	// What the previous owner sent after its /robots.txt redirected, then
	// the page it had queued.
	hop := f.hopRecord(base+"/robots-real.txt", base+"/robots.txt", 1)
	if hop == nil {
		t.Fatal("no hop record")
	}
	if err := e.Kafka.ProduceSync(context.Background(), hop, urlRecord(t, queue.URL{URL: page, Seed: true}, p)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the page fetched", func() bool {
		return urlState(t, e, page) == store.StateFetched
	})

	spans := log.get()
	real := -1
	for i, s := range spans {
		switch s.path {
		case "/robots.txt":
			t.Errorf("/robots.txt asked by a fetcher that had the hop's answer: %v", spans)
		case "/robots-real.txt":
			real = i
		}
	}
	if real < 0 || real+1 >= len(spans) {
		t.Fatalf("want the hop, then the page: %v", spans)
	}
	if gap := spans[real+1].start.Sub(spans[real].end); gap < crawlDelay {
		t.Errorf("%s began %v after /robots-real.txt ended, want at least the Crawl-delay %v", spans[real+1].path, gap, crawlDelay)
	}
}

// ownerOf starts a fetcher at a 50 ms default delay and waits until it owns
// partition p.
func ownerOf(t *testing.T, e *testenv.Env, p int32) (*Fetcher, func() error) {
	t.Helper()
	cfg := testConfig()
	cfg.DefaultDelay = 50 * time.Millisecond
	f, stop := startFetcher(t, e, cfg)
	testenv.Eventually(t, 30*time.Second, "the fetcher owning the partition", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.owned[p]
	})
	return f, stop
}
