package fetcher

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// holdingBroker is a broker that holds every fetch result (a produce to
// crawl.pages) unanswered until release is called, as a broker that died
// does until it is back; a fetcher runs on it over a SQLite store.
type holdingBroker struct {
	f       *Fetcher
	db      *sqlite.DB
	admin   *kgo.Client
	held    atomic.Bool // a fetch result arrived and is held
	release func()
}

func startHoldingBroker(t *testing.T) *holdingBroker {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &holdingBroker{}
	h.admin, err = kgo.NewClient(queue.ClientOptions(c.ListenAddrs(), log)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.admin.Close)
	if err := queue.EnsureTopics(ctx, h.admin, queue.PagesPartitions); err != nil {
		t.Fatal(err)
	}
	h.db, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.db.Close() })

	// Produce names topics by ID from version 13.
	pagesID := c.TopicInfo(queue.TopicPages).TopicID
	released := make(chan struct{})
	var once sync.Once
	h.release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(h.release)
	c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, tp := range r.(*kmsg.ProduceRequest).Topics {
			if tp.Topic == queue.TopicPages || tp.TopicID == pagesID {
				h.held.Store(true)
				c.SleepControl(func() { <-released })
				break
			}
		}
		return nil, nil, false
	})

	h.f, err = New(testConfig(), h.db, queue.ClientOptions(c.ListenAddrs(), log), nil, log)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.f.Run(runCtx) }()
	t.Cleanup(func() {
		h.release()
		cancel()
		<-done
	})
	return h
}

// queue sends URLs to crawl.urls, as links found by the parsers.
func (h *holdingBroker) queue(t *testing.T, urls ...string) {
	t.Helper()
	var recs []*kgo.Record
	for _, u := range urls {
		recs = append(recs, urlRecord(t, queue.URL{URL: u, Seed: true}, queue.PartitionOf(urlnorm.Authority(u))))
	}
	if err := h.admin.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func (h *holdingBroker) state(u string) store.State {
	info, err := h.db.URLInfo(context.Background(), strings.ToLower(u))
	if err != nil || info.URL == nil {
		return ""
	}
	return info.URL.State
}

// countingSite serves HTML pages (no robots.txt) and counts requests by path.
type countingSite struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
}

func startCountingSite(t *testing.T) *countingSite {
	s := &countingSite{requests: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>page</body></html>"))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *countingSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

func (s *countingSite) pages() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, c := range s.requests {
		if p != "/robots.txt" {
			n += c
		}
	}
	return n
}

// TestPartitionBackWithUnacknowledgedResults: a fetcher loses a partition while
// the result of a fetch there is still unacknowledged (the broker went down
// and came back, and the group formed again), and is handed the partition
// back. The URL is still queued in the store until the broker acknowledges the
// result, so loading the partition at once queued it again and the page was
// fetched twice (TestFaultBrokerRestart saw up to 126 such fetches). The
// fetcher waits for its results in the partition and writes their marks
// before it loads.
func TestPartitionBackWithUnacknowledgedResults(t *testing.T) {
	h := startHoldingBroker(t)
	site := startCountingSite(t)
	h.queue(t, site.URL+"/page")
	testenv.Eventually(t, 20*time.Second, "the page fetched and its result held by the broker", func() bool {
		return site.count("/page") == 1 && h.held.Load()
	})
	if s := h.state(site.URL + "/page"); s != store.StateQueued {
		t.Fatalf("URL %s while its result is unacknowledged, want queued", s)
	}

	// The group forms again and hands the partition back; the broker
	// acknowledges the result meanwhile.
	ctx := context.Background()
	parts := map[string][]int32{queue.TopicURLs: {queue.PartitionOf(urlnorm.Authority(site.URL))}}
	h.f.lost(ctx, h.f.kafka, parts)
	time.AfterFunc(300*time.Millisecond, h.release)
	h.f.assigned(ctx, h.f.kafka, parts)

	testenv.Eventually(t, 30*time.Second, "the URL marked fetched", func() bool { return h.state(site.URL+"/page") == store.StateFetched })
	time.Sleep(500 * time.Millisecond) // many times the host's delay: a queued copy would be fetched by now
	if n := site.count("/page"); n != 1 {
		t.Errorf("the page was requested %d times, want once", n)
	}
}

// TestOneUnacknowledgedResultPerHost: while the broker does not acknowledge
// fetch results, a host gets no request after the one whose result waits, so
// a broker outage costs at most one repeated request per host whichever
// fetcher owns it next. Before, a fetcher went on fetching its hosts until its
// first failed heartbeat dropped their partitions (TestFaultBrokerRestart:
// 107 requests made again over 10 hosts at a 40ms delay).
func TestOneUnacknowledgedResultPerHost(t *testing.T) {
	h := startHoldingBroker(t)
	site := startCountingSite(t)
	var urls []string
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		urls = append(urls, site.URL+p)
	}
	h.queue(t, urls...)
	testenv.Eventually(t, 20*time.Second, "a page fetched and its result held by the broker", func() bool {
		return site.pages() >= 1 && h.held.Load()
	})
	time.Sleep(500 * time.Millisecond) // 25 times the host's delay
	if n := site.pages(); n != 1 {
		t.Errorf("%d pages requested while the first result was unacknowledged, want 1", n)
	}
	h.release()
	testenv.Eventually(t, 20*time.Second, "every page fetched once the broker acknowledges", func() bool {
		for _, u := range urls {
			if h.state(u) != store.StateFetched {
				return false
			}
		}
		return true
	})
	if n := site.pages(); n != len(urls) {
		t.Errorf("%d page requests for %d pages", n, len(urls))
	}
}

// add reports when a host's last unacknowledged result is acknowledged: that
// is when a host held back for it is woken (produce).
func TestUnackedResultsClear(t *testing.T) {
	var u unackedResults
	for _, h := range []string{"a", "a", "b"} {
		if u.add(h, int32(len(h)), 1) {
			t.Fatalf("adding a result of %s reported it clear", h)
		}
	}
	if u.add("a", 1, -1) {
		t.Error("host a clear with one result still unacknowledged")
	}
	if !u.add("a", 1, -1) || u.pending("a") {
		t.Error("host a not clear after its last acknowledgement")
	}
	if !u.pending("b") || u.in([]int32{1}) != 1 {
		t.Errorf("host b: pending %v, in flight %d", u.pending("b"), u.in([]int32{1}))
	}
}

// TestFetchedMarksHeldBack: the periodic save keeps a "fetched" mark back
// for fetchedHold from its request's start, so that a page the parsers
// store meanwhile is not written a second time; it writes the other updates
// and older marks, and a full save (a stop, a revoke, a partition's load)
// writes them all.
func TestFetchedMarksHeldBack(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	var urls []store.URL
	for _, p := range []string{"/recent", "/old", "/failed"} {
		u := "http://a.test" + p
		urls = append(urls, store.URL{Hash: store.HashURL(u), Partition: 1, URL: u, Host: "a.test", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: now})
	}
	if _, err := db.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	f := &Fetcher{store: db, metrics: newMetrics(prometheus.NewRegistry()), hosts: map[string]*hostInfo{}, dirty: map[string]bool{},
		fr: frontier.New(frontier.Config{DefaultDelay: time.Second})}
	f.queueUpdate(store.URLUpdate{Hash: urls[0].Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: now})
	f.queueUpdate(store.URLUpdate{Hash: urls[1].Hash, State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: now.Add(-2 * fetchedHold)})
	f.queueUpdate(store.URLUpdate{Hash: urls[2].Hash, State: store.StateFailed, Reason: "http_404", Status: 404, FetchedAt: now})
	state := func(i int) store.State {
		info, err := db.URLInfo(ctx, urls[i].URL)
		if err != nil || info.URL == nil {
			t.Fatalf("URLInfo %s: %v", urls[i].URL, err)
		}
		return info.URL.State
	}

	if err := f.save(ctx, nil, now.Add(-fetchedHold)); err != nil {
		t.Fatal(err)
	}
	if got := [3]store.State{state(0), state(1), state(2)}; got != [3]store.State{store.StateQueued, store.StateFetched, store.StateFailed} {
		t.Errorf("after the periodic save: %v, want the recent mark held back, the rest written", got)
	}
	if !f.Idle() {
		t.Error("not idle with only a held-back mark unsaved")
	}
	if err := f.saveState(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if s := state(0); s != store.StateFetched {
		t.Errorf("after a full save the recent URL is %s, want fetched", s)
	}
}
