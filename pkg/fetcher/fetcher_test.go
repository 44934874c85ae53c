package fetcher

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/seen"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

func testConfig() Config {
	return Config{
		Workers: 4, DefaultDelay: 20 * time.Millisecond, MaxDelay: time.Second,
		RobotsRetry: 100 * time.Millisecond, RobotsMaxFails: 2, MaxRetries: 1,
		BloomCapacity: seen.MinCapacity, HostSaveInterval: 50 * time.Millisecond,
		Admit: admit.Config{MaxRepeatedSegment: 2},
		Fetch: fetch.Config{
			UserAgent: "testbot/1.0 (+http://example.test/bot)", AllowPrivate: true,
			ConnectTimeout: time.Second, HeaderTimeout: 2 * time.Second, TotalTimeout: 3 * time.Second,
			MaxBodyBytes: 1 << 20, MaxDecodedBytes: 2 << 20, DNSCacheTTL: time.Minute, MaxIdleConns: 16,
		},
	}
}

// startFetcher builds a fetcher with cfg on e and runs it until the returned
// stop is called; stop returns Run's error.
func startFetcher(t *testing.T, e *testenv.Env, cfg Config) (f *Fetcher, stop func() error) {
	t.Helper()
	return startFetcherOn(t, e, e.DB, cfg)
}

// startFetcherOn is startFetcher on the store st instead of e's.
func startFetcherOn(t *testing.T, e *testenv.Env, st Store, cfg Config) (f *Fetcher, stop func() error) {
	t.Helper()
	f, err := New(cfg, st, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	var runErr error
	return f, func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
}

func urlRecord(t *testing.T, u queue.URL, partition int32) *kgo.Record {
	t.Helper()
	v, err := queue.EncodeURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return &kgo.Record{Topic: queue.TopicURLs, Value: v, Partition: partition}
}

func TestFetcherAdmitsFetchesAndRecords(t *testing.T) {
	e := testenv.New(t)
	var requests atomic.Int64
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>hello</body></html>"))
		}
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)
	part := queue.PartitionOf(host)
	wrong := (part + 1) % queue.Partitions

	f, err := New(testConfig(), e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	recs := []*kgo.Record{
		urlRecord(t, queue.URL{URL: srv.URL + "/page", Seed: true}, part),
		urlRecord(t, queue.URL{URL: srv.URL + "/PAGE/../page#frag"}, part), // same page, another spelling
		urlRecord(t, queue.URL{URL: srv.URL + "/private/x"}, part),         // robots-disallowed
		urlRecord(t, queue.URL{URL: srv.URL + "/a/a/a/x"}, part),           // repeated-segment trap
		urlRecord(t, queue.URL{URL: "http://[::1"}, part),                  // not a URL
		urlRecord(t, queue.URL{URL: srv.URL + "/rerouted"}, wrong),         // producer that did not key by host
		urlRecord(t, queue.URL{URL: srv.URL + "/hop", Redirects: 6}, part), // too many redirects
		{Topic: queue.TopicURLs, Value: []byte("\x07garbage"), Partition: part},
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	state := func(u string) store.State {
		info, err := e.DB.URLInfo(context.Background(), u)
		if err != nil || info.URL == nil {
			return ""
		}
		return info.URL.State
	}
	base := strings.ToLower(srv.URL)
	testenv.Eventually(t, 20*time.Second, "page and rerouted URL fetched", func() bool {
		return state(base+"/page") == store.StateFetched && state(base+"/rerouted") == store.StateFetched
	})
	testenv.Eventually(t, 10*time.Second, "robots exclusion recorded", func() bool {
		return state(base+"/private/x") == store.StateExcluded
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	mu.Lock()
	got := strings.Join(paths, " ")
	mu.Unlock()
	if got != "/robots.txt /page /rerouted" && got != "/robots.txt /rerouted /page" {
		t.Errorf("server saw %q, want robots.txt first, then each page once and nothing disallowed", got)
	}
	for u, reason := range map[string]string{
		base + "/a/a/a/x": admit.ReasonTrapRepeatedSegment,
		base + "/hop":     ReasonMaxRedirects,
	} {
		info, err := e.DB.URLInfo(context.Background(), u)
		if err != nil || info.Exclusion == nil || info.Exclusion.Reason != reason {
			t.Errorf("%s: info %+v, err %v; want exclusion %s", u, info, err, reason)
		}
	}
	info, err := e.DB.URLInfo(context.Background(), base+"/private/x")
	if err != nil || info.URL.Reason != ReasonRobots {
		t.Errorf("robots-disallowed URL: %+v %v", info.URL, err)
	}

	// The two pages, and the robots.txt answer to be archived.
	pages := e.Consume(t, queue.TopicPages, 3, 10*time.Second)
	if len(pages) != 3 {
		t.Fatalf("crawl.pages has %d records, want 3", len(pages))
	}
	for _, r := range pages {
		p, err := queue.DecodePage(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind == queue.KindRobots {
			if p.URL != base+"/robots.txt" || p.Status != 200 || len(p.RawResponse) == 0 {
				t.Errorf("robots.txt record: %s status %d, %d raw bytes", p.URL, p.Status, len(p.RawResponse))
			}
			continue
		}
		if p.Status != 200 || !strings.Contains(string(p.Body), "hello") || len(p.RawRequest) == 0 {
			t.Errorf("fetch result %s: status %d body %q", p.URL, p.Status, p.Body)
		}
		// For the WARC-Protocol field: the test server speaks plain HTTP/1.1.
		if p.Protocol != "http/1.1" || p.TLSVersion != "" || p.CipherSuite != "" {
			t.Errorf("fetch result %s: protocol %q, TLS %q, cipher suite %q; want http/1.1 without TLS", p.URL, p.Protocol, p.TLSVersion, p.CipherSuite)
		}
	}
	dl := e.Consume(t, queue.TopicDeadLetter, 1, 10*time.Second)
	if len(dl) != 1 || string(dl[0].Value) != "\x07garbage" {
		t.Errorf("dead letters: %d, want the garbage record", len(dl))
	}

	// Host state survives for the next owner: a restart must not contact the host
	// sooner than its delay after the last request.
	h, err := e.DB.Host(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	if h.NextAllowed.IsZero() || len(h.Robots) == 0 {
		t.Errorf("host state not saved on shutdown: %+v", h)
	}
}

func TestPathAndQuery(t *testing.T) {
	cases := map[string]string{
		"http://a/":        "/",
		"http://a":         "/",
		"http://a/x?y=1":   "/x?y=1",
		"http://a?q":       "/?q",
		"https://a:8/p/q/": "/p/q/",
	}
	for in, want := range cases {
		if got := pathAndQuery(in); got != want {
			t.Errorf("pathAndQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"5":                             5 * time.Second,
		"-3":                            0,
		"99999":                         time.Hour,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
		"Wed, 31 Dec 2025 00:00:00 GMT": 0,
		"soon":                          0,
	}
	for in, want := range cases {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestMembershipConfirmedByHeartbeats: a healthy member keeps fetching well past the
// fencing window, because every answered heartbeat confirms it; without heartbeat
// answers it is fenced.
func TestMembershipConfirmedByHeartbeats(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	// Heartbeats every 2/3 s (a third of the window): a loaded machine
	// delays one by less than the 1 1/3 s left.
	cfg.SessionTimeout = 10 * time.Second
	cfg.FenceAfter = 2 * time.Second
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// From the first assignment on, which confirms the membership: before
	// it the fetcher has nothing to fetch, however long joining takes.
	testenv.Eventually(t, 30*time.Second, "partitions assigned", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.owned) > 0
	})
	deadline := time.Now().Add(4 * cfg.FenceAfter)
	for time.Now().Before(deadline) {
		if !f.member.confirmed(time.Now()) {
			t.Fatalf("member fenced while the broker answers heartbeats")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	var m membership
	m.timeout = time.Second
	m.last.Store(time.Now().Add(-2 * time.Second).UnixNano())
	if m.confirmed(time.Now()) {
		t.Errorf("member without a heartbeat answer for 2s confirmed with a 1s window")
	}
}
