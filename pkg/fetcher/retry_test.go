package fetcher

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestRetriesCountAcrossRestart: a failed attempt is recorded in the store
// with the URL, so whoever fetches it next (the partition's next owner, a
// restarted crawl) tries it only the retries that are left.
// TestFaultRedisFlushAndRestart saw a page that answers 500 requested 4
// times with -max-retries 2 when its partition moved between attempts.
func TestRetriesCountAcrossRestart(t *testing.T) {
	e := testenv.New(t)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		if requests.Add(1) == 1 {
			// Backs the host off for 3 s, not the 1 s of a bare failure:
			// time enough, under load, for the test to see the attempt
			// recorded and stop the fetcher before the retry.
			w.Header().Set("Retry-After", "3")
		}
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	host := urlnorm.Authority(srv.URL)
	u := strings.ToLower(srv.URL) + "/flaky"
	cfg := testConfig()
	cfg.MaxRetries = 2
	attempts := func() int {
		info, err := e.DB.URLInfo(context.Background(), u)
		if err != nil || info.URL == nil {
			return -1
		}
		return info.URL.Attempts
	}

	_, stop := startFetcher(t, e, cfg)
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: u, Seed: true}, queue.PartitionOf(host))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The stop comes before the retry.
	testenv.Eventually(t, 20*time.Second, "the first failed attempt recorded in the store", func() bool {
		return attempts() == 1
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests before the stop, want 1", n)
	}

	_, stop2 := startFetcher(t, e, cfg)
	// The last answer, a 500 too, goes to the parsers to be stored.
	testenv.Eventually(t, 60*time.Second, "the URL done with its retries", func() bool {
		return urlState(t, e, u) == store.StateFetched
	})
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != int64(cfg.MaxRetries)+1 {
		t.Errorf("%d requests across the restart, want %d (one and %d retries)", n, cfg.MaxRetries+1, cfg.MaxRetries)
	}
}
