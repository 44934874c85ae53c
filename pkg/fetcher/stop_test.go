package fetcher

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// stopBound is the promise of DESIGN.md invariant 9: a stop of any kind
// completes within seconds, whatever the hosts do.
const stopBound = 10 * time.Second

// requestLog records when each request reached a test server.
type requestLog struct {
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct {
	path string
	at   time.Time
}

func (l *requestLog) add(path string) {
	l.mu.Lock()
	l.reqs = append(l.reqs, loggedRequest{path, time.Now()})
	l.mu.Unlock()
}

func (l *requestLog) snapshot() []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedRequest(nil), l.reqs...)
}

func (l *requestLog) after(t time.Time) []string {
	var out []string
	for _, r := range l.snapshot() {
		if r.at.After(t) {
			out = append(out, r.path)
		}
	}
	return out
}

// trickle writes one byte every interval and flushes it, until the client goes
// away or limit passes: a host that never finishes a response in a test's time.
func trickle(w http.ResponseWriter, r *http.Request, interval, limit time.Duration) {
	w.Header().Set("Content-Type", "text/html")
	fl := w.(http.Flusher)
	deadline := time.After(limit)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if _, err := w.Write([]byte(" ")); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-deadline:
			return
		case <-tick.C:
		}
	}
}

func urlState(t *testing.T, e *testenv.Env, u string) store.State {
	t.Helper()
	info, err := e.DB.URLInfo(context.Background(), u)
	if err != nil || info.URL == nil {
		return ""
	}
	return info.URL.State
}

// TestStopCancelsTricklingRequest: a stop while a host trickles its body for
// minutes completes within the bound, sends nothing after it began, and leaves
// the URL queued; a restarted fetcher then fetches it.
func TestStopCancelsTricklingRequest(t *testing.T) {
	e := testenv.New(t)
	var log requestLog
	var fast atomic.Bool
	inFlight := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path)
		switch {
		case r.URL.Path == "/robots.txt":
			w.Write([]byte("User-agent: *\nAllow: /\n"))
		case fast.Load():
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>done</body></html>"))
		default:
			select {
			case inFlight <- struct{}{}:
			default:
			}
			trickle(w, r, 500*time.Millisecond, 3*time.Minute)
		}
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)
	part := queue.PartitionOf(host)
	slow := strings.ToLower(srv.URL) + "/slow"

	cfg := testConfig()
	cfg.StopGrace = time.Second
	// Far beyond the test: only the stop may end the request.
	cfg.Fetch.TotalTimeout = 5 * time.Minute
	_, stop := startFetcher(t, e, cfg)
	defer stop()
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: slow, Seed: true}, part)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inFlight:
	case <-time.After(20 * time.Second):
		t.Fatal("the slow page was not requested within 20s")
	}
	time.Sleep(300 * time.Millisecond) // some of the body is in

	stopAt, took := timedStop(t, stop)
	t.Logf("stop took %v with a request trickling", took.Round(time.Millisecond))
	if took > stopBound {
		t.Errorf("stop took %v, want under %v", took, stopBound)
	}
	if took < cfg.StopGrace-100*time.Millisecond {
		t.Errorf("stop took %v: the request in flight did not get its %v grace", took, cfg.StopGrace)
	}
	if got := log.after(stopAt); len(got) > 0 {
		t.Errorf("requests after the stop began: %v", got)
	}
	if s := urlState(t, e, slow); s != store.StateQueued {
		t.Errorf("cancelled URL is %q after the stop, want %q", s, store.StateQueued)
	}

	// The next run fetches it.
	fast.Store(true)
	_, stop2 := startFetcher(t, e, cfg)
	testenv.Eventually(t, 30*time.Second, "cancelled URL fetched after a restart", func() bool {
		return urlState(t, e, slow) == store.StateFetched
	})
	if err := stop2(); err != nil {
		t.Fatalf("second Run: %v", err)
	}
}

// robotsChain serves a robots.txt that redirects hops times on the same host
// before answering.
func robotsChain(log *requestLog, hops int, onHop func(n int)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path)
		n := 0
		if s, ok := strings.CutPrefix(r.URL.Path, "/robots-hop-"); ok {
			n, _ = strconv.Atoi(s)
		} else if r.URL.Path != "/robots.txt" {
			w.Write([]byte("<html><body>page</body></html>"))
			return
		}
		if onHop != nil {
			onHop(n)
		}
		if n < hops {
			http.Redirect(w, r, "/robots-hop-"+strconv.Itoa(n+1), http.StatusMovedPermanently)
			return
		}
		w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
	})
}

func robotsKnown(f *Fetcher, host string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	hi := f.hosts[host]
	return hi != nil && hi.robots != nil
}

// TestRobotsRedirectHopsWaitDefaultDelay: each hop of a robots.txt redirect
// chain waits the host's default delay, not -max-delay, and no less.
func TestRobotsRedirectHopsWaitDefaultDelay(t *testing.T) {
	e := testenv.New(t)
	const hops = 4
	var log requestLog
	srv := httptest.NewServer(robotsChain(&log, hops, nil))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)

	cfg := testConfig()
	cfg.DefaultDelay = 200 * time.Millisecond
	cfg.MaxDelay = 30 * time.Second
	f, stop := startFetcher(t, e, cfg)
	defer stop()
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: srv.URL + "/page", Seed: true}, queue.PartitionOf(host))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Joining the group can take seconds; the chain starts with its first
	// request.
	testenv.Eventually(t, 30*time.Second, "robots.txt rules", func() bool { return robotsKnown(f, host) })
	known := time.Now()
	var chain []loggedRequest
	for _, r := range log.snapshot() {
		if strings.HasPrefix(r.path, "/robots") {
			chain = append(chain, r)
		}
	}
	if len(chain) != hops+1 {
		t.Fatalf("server saw %d robots requests, want %d: %v", len(chain), hops+1, chain)
	}
	took := known.Sub(chain[0].at)
	t.Logf("rules after %d hops in %v", hops, took.Round(time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("rules took %v for %d hops of %v, want well under -max-delay %v", took, hops, cfg.DefaultDelay, cfg.MaxDelay)
	}
	for i := 1; i < len(chain); i++ {
		// Arrivals are at least the delay apart when each hop waits the delay
		// after the previous answer.
		if gap := chain[i].at.Sub(chain[i-1].at); gap < cfg.DefaultDelay {
			t.Errorf("hop %d came %v after the previous request, want at least %v", i, gap, cfg.DefaultDelay)
		}
	}
}

// TestStopDuringRobotsHopWait: a stop while a robots.txt redirect hop waits
// for the host's delay ends the chain at once: no further hop is requested and
// the host's robots.txt stays unknown (fetched again after a restart).
func TestStopDuringRobotsHopWait(t *testing.T) {
	e := testenv.New(t)
	var log requestLog
	firstHop := make(chan struct{}, 1)
	srv := httptest.NewServer(robotsChain(&log, 4, func(n int) {
		if n == 0 {
			select {
			case firstHop <- struct{}{}:
			default:
			}
		}
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)

	cfg := testConfig()
	cfg.StopGrace = time.Second
	cfg.DefaultDelay = 20 * time.Second
	cfg.MaxDelay = 30 * time.Second
	cfg.Fetch.TotalTimeout = 5 * time.Minute
	_, stop := startFetcher(t, e, cfg)
	defer stop()
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: srv.URL + "/page", Seed: true}, queue.PartitionOf(host))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-firstHop:
	case <-time.After(20 * time.Second):
		t.Fatal("robots.txt not requested within 20s")
	}
	time.Sleep(200 * time.Millisecond) // the fetcher is in the hop wait now
	stopAt, took := timedStop(t, stop)
	t.Logf("stop took %v during a robots hop wait", took.Round(time.Millisecond))
	if took > stopBound {
		t.Errorf("stop took %v, want under %v", took, stopBound)
	}
	if got := log.after(stopAt); len(got) > 0 {
		t.Errorf("requests after the stop began: %v", got)
	}
	if h, err := e.DB.Host(context.Background(), host); err == nil && len(h.Robots) > 0 {
		t.Errorf("an interrupted robots.txt chain was recorded: %d bytes", len(h.Robots))
	}
}

// timedStop stops a fetcher started by startFetcher and returns when the stop
// began and how long Run took to return after it (at most a minute).
func timedStop(t *testing.T, stop func() error) (time.Time, time.Duration) {
	t.Helper()
	at := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- stop() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return within a minute of the stop")
	}
	return at, time.Since(at)
}
