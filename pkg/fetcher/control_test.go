package fetcher

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/admit"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// controlSite is a test site that records the paths it was asked for.
type controlSite struct {
	mu    sync.Mutex
	paths []string
}

func (l *controlSite) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.paths = append(l.paths, r.URL.Path)
		l.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>page</body></html>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (l *controlSite) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.paths)
}

func (l *controlSite) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.paths {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

func seedRecords(t *testing.T, base string, paths ...string) []*kgo.Record {
	host := urlnorm.Authority(base)
	var recs []*kgo.Record
	for _, p := range paths {
		recs = append(recs, urlRecord(t, queue.URL{URL: base + p, Seed: true}, queue.PartitionOf(host)))
	}
	return recs
}

// A paused host is not contacted, an exclusion pattern takes its queued URLs
// out (recorded, counted) and refuses new ones, and a resumed host is
// crawled; a paused crawl sends nothing.
func TestControlsPauseAndExclude(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for control polls")
	}
	e := testenv.New(t)
	ctx := context.Background()
	cs := e.DB.Control()
	var log controlSite
	srv := log.server(t)
	host := urlnorm.Authority(srv.URL)
	base := strings.ToLower(srv.URL)
	who := store.AuditEntry{Actor: "test", Action: "test"}

	if err := cs.SetHostControl(ctx, store.HostControl{Host: host, Paused: true, Delay: store.NoOverride, PageBudget: store.NoOverride}, who); err != nil {
		t.Fatal(err)
	}
	f, stop := startFetcher(t, e, testConfig())
	defer stop()
	recs := seedRecords(t, srv.URL, "/keep/1", "/keep/2", "/x/1", "/x/2")
	if err := e.Kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	state := func(u string) (store.State, string) {
		info, err := e.DB.URLInfo(ctx, u)
		if err != nil || info.URL == nil {
			return "", ""
		}
		return info.URL.State, info.URL.Reason
	}
	testenv.Eventually(t, 20*time.Second, "seeds admitted", func() bool {
		s, _ := state(base + "/x/2")
		return s == store.StateQueued
	})
	time.Sleep(control.PollInterval + 500*time.Millisecond)
	if n := log.count(); n != 0 {
		t.Fatalf("paused host got %d requests", n)
	}

	if _, err := cs.AddExclusionPattern(ctx, store.ExclusionPattern{Pattern: base + "/x/*", Syntax: control.SyntaxGlob}, who); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "queued URLs excluded by the pattern", func() bool {
		s1, r1 := state(base + "/x/1")
		s2, _ := state(base + "/x/2")
		return s1 == store.StateExcluded && r1 == control.ReasonPattern && s2 == store.StateExcluded
	})
	if err := cs.SetHostControl(ctx, store.HostControl{Host: host, Delay: store.NoOverride, PageBudget: store.NoOverride}, who); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "resumed host crawled", func() bool {
		s1, _ := state(base + "/keep/1")
		s2, _ := state(base + "/keep/2")
		return s1 == store.StateFetched && s2 == store.StateFetched
	})
	// A URL found later is refused at admission with the same reason.
	if err := e.Kafka.ProduceSync(ctx, seedRecords(t, srv.URL, "/x/3", "/keep/3")...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "new URLs admitted or refused", func() bool {
		s, _ := state(base + "/keep/3")
		return s == store.StateFetched
	})
	info, err := e.DB.URLInfo(ctx, base+"/x/3")
	if err != nil || info.Exclusion == nil || info.Exclusion.Reason != control.ReasonPattern {
		t.Fatalf("refused URL: %+v %v", info, err)
	}
	if log.has("/x/") {
		t.Fatalf("an excluded URL was requested: %v", log.paths)
	}
	testenv.Eventually(t, 20*time.Second, "pattern count", func() bool {
		c, err := cs.Controls(ctx)
		return err == nil && len(c.Patterns) == 1 && c.Patterns[0].Excluded == 3
	})

	// The whole crawl paused: nothing is sent until it resumes. The window
	// opens when the fetcher has read the pause (a poll under load can come
	// late) and lasts past the admission of a new URL by more than a poll.
	if _, err := cs.SetCrawlPaused(ctx, true, who); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the pause read by the fetcher", f.crawlPaused)
	before := log.count()
	if err := e.Kafka.ProduceSync(ctx, seedRecords(t, srv.URL, "/keep/4")...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "/keep/4 admitted", func() bool {
		s, _ := state(base + "/keep/4")
		return s != ""
	})
	time.Sleep(control.PollInterval + 500*time.Millisecond)
	if n := log.count(); n != before {
		t.Fatalf("%d requests while the crawl was paused", n-before)
	}
	if _, err := cs.SetCrawlPaused(ctx, false, who); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "crawl resumed", func() bool {
		s, _ := state(base + "/keep/4")
		return s == store.StateFetched
	})
}

// An operator's page budget replaces the configured one for its host.
func TestControlsPageBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for control polls")
	}
	e := testenv.New(t)
	ctx := context.Background()
	var log controlSite
	srv := log.server(t)
	host := urlnorm.Authority(srv.URL)
	base := strings.ToLower(srv.URL)
	if err := e.DB.Control().SetHostControl(ctx, store.HostControl{Host: host, Delay: store.NoOverride, PageBudget: 2}, store.AuditEntry{Actor: "test", Action: "test"}); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Admit.MaxHostPages = 1 // the override replaces it
	_, stop := startFetcher(t, e, cfg)
	defer stop()
	// All in one poll: the budget holds within it too.
	if err := e.Kafka.ProduceSync(ctx, seedRecords(t, srv.URL, "/1", "/2", "/3", "/4")...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "all four decided", func() bool {
		n := 0
		for _, p := range []string{"/1", "/2", "/3", "/4"} {
			if info, err := e.DB.URLInfo(ctx, base+p); err == nil && (info.URL != nil || info.Exclusion != nil) {
				n++
			}
		}
		return n == 4
	})
	admitted, refused := 0, 0
	for _, p := range []string{"/1", "/2", "/3", "/4"} {
		info, _ := e.DB.URLInfo(ctx, base+p)
		switch {
		case info.URL != nil:
			admitted++
		case info.Exclusion.Reason == admit.ReasonHostBudget:
			refused++
		}
	}
	if admitted != 2 || refused != 2 {
		t.Fatalf("admitted %d, refused for the budget %d; want 2 and 2", admitted, refused)
	}
}

// A delay override below the host's robots.txt Crawl-delay does not speed
// the host up: the Crawl-delay stands.
func TestControlsDelayNeverBelowCrawlDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a host's Crawl-delay")
	}
	e := testenv.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	var starts, ends []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nCrawl-delay: 0.5\n"))
		} else {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>page</body></html>"))
		}
		mu.Lock()
		starts, ends = append(starts, start), append(ends, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)
	if err := e.DB.Control().SetHostControl(ctx, store.HostControl{Host: host, Delay: 100 * time.Millisecond, PageBudget: store.NoOverride}, store.AuditEntry{Actor: "test", Action: "test"}); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.SitemapProbe = false
	_, stop := startFetcher(t, e, cfg)
	defer stop()
	if err := e.Kafka.ProduceSync(ctx, seedRecords(t, srv.URL, "/1", "/2", "/3", "/4")...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "robots.txt and four pages", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) >= 5
	})
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(ends[i-1]); gap < 490*time.Millisecond {
			t.Errorf("request %d came %v after the previous one: the 100 ms override went below the 500 ms Crawl-delay", i, gap.Round(time.Millisecond))
		}
	}
}

// levelCounter counts the records of each level a logger writes.
type levelCounter struct {
	mu     sync.Mutex
	counts map[slog.Level]int
}

func (c *levelCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *levelCounter) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[r.Level]++
	return nil
}
func (c *levelCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *levelCounter) WithGroup(string) slog.Handler      { return c }

// TestControlLoopQuietOnStop: the stop cancels the poll of the control
// version; that is not an operator's pattern left out, and logs no error
// (make demo printed one at every stop).
func TestControlLoopQuietOnStop(t *testing.T) {
	e := testenv.New(t)
	f, err := New(testConfig(), e.DB, e.Options(), nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	logs := &levelCounter{counts: map[slog.Level]int{}}
	f.log = slog.New(logs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.controlLoop(ctx) // returns at once: ctx is done
	if logs.counts[slog.LevelError] != 0 || logs.counts[slog.LevelWarn] != 0 {
		t.Errorf("a cancelled poll logged %v", logs.counts)
	}
}
