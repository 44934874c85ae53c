package fetcher

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestFailedPagesSettled: a page that answers no content (a 404 here) tells
// its host's admission so, whether it was admitted generated or grounded. A
// grounded URL can be a suspected rewrite's probe (a variant linked from
// another section or host), and the rule's other variants wait for its
// verdict: without the settle they waited until a restart.
func TestFailedPagesSettled(t *testing.T) {
	e := testenv.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\n"))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	cfg := testConfig()
	cfg.Patterns = pattern.DefaultConfig()
	_, stop := startFetcher(t, e, cfg)
	defer stop()

	gone := srv.URL + "/story-print"
	if err := e.Kafka.ProduceSync(context.Background(),
		urlRecord(t, queue.URL{URL: gone, Parent: "http://other.test/page"}, part)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	want := strings.ToLower(gone)
	settled := func(recs []*kgo.Record) bool {
		for _, r := range recs {
			if u, err := queue.DecodeURL(r.Value); err == nil && u.Kind == queue.KindSettled && u.URL == want {
				return true
			}
		}
		return false
	}
	if !settled(e.ConsumeUntil(t, queue.TopicURLs, 20*time.Second, settled)) {
		t.Fatalf("no settle record for %s, a grounded URL that answered 404", want)
	}
}
