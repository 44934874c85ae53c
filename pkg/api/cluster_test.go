package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/lag"
	"github.com/crawlcluster/crawler/pkg/queue"
)

var _ Cluster = (*lag.Exporter)(nil)

// TestStatsCluster serves stats with the lag exporter as the Cluster, over the
// test's real broker, while a member of "fetchers" is in the group.
func TestStatsCluster(t *testing.T) {
	te := testenv.New(t)
	exp := lag.New(kadm.NewClient(te.Kafka), []string{queue.GroupFetchers, queue.GroupParsers}, nil)
	e := newEnvOn(t, te, fakeLive{}, Config{}, WithCluster(exp))

	fetcher, err := kgo.NewClient(kgo.SeedBrokers(te.Addrs...), kgo.ConsumerGroup(queue.GroupFetchers), kgo.ConsumeTopics(queue.TopicURLs), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer fetcher.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			fetcher.PollFetches(ctx)
		}
	}()

	testenv.Eventually(t, 20*time.Second, "stats to show one fetcher", func() bool {
		code, out := e.do(t, "GET", "/api/v1/stats", "", "")
		if code != http.StatusOK {
			t.Fatalf("stats: %d %v", code, out)
		}
		members, _ := out["cluster"].(map[string]any)["members"].(map[string]any)
		return members["fetchers"] == 1.0 && members["parsers"] == 0.0
	})
	_, out := e.do(t, "GET", "/api/v1/stats", "", "")
	if live, _ := out["live"].(map[string]any); live["fetched"] != 3.0 {
		t.Errorf("live = %v, want the Live view", out["live"])
	}

	if code, out := e.do(t, "GET", "/api/v1/hosts/LIVE.example", "", ""); code != 200 || out["live"] == nil || out["stored"] != nil {
		t.Errorf("host only the live view knows: %d %v", code, out)
	}

	// Without Kafka the store's numbers still come, with the reason beside them.
	closed, err := kgo.NewClient(kgo.SeedBrokers(te.Addrs...))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	e = newEnvOn(t, te, nil, Config{}, WithCluster(lag.New(kadm.NewClient(closed), []string{queue.GroupFetchers}, nil)))
	code, out := e.do(t, "GET", "/api/v1/stats", "", "")
	cl, _ := out["cluster"].(map[string]any)
	if code != http.StatusOK || out["store"] == nil || cl["error"] == nil || cl["members"] != nil {
		t.Errorf("stats with Kafka down: %d %v, want 200 with the store and cluster.error", code, out)
	}
}

func TestReadiness(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"tok"}})
	if code, out := e.do(t, "GET", "/-/ready", "", ""); code != 200 || out["status"] != "ready" {
		t.Errorf("ready: %d %v", code, out)
	}
	e.s.SetReady(false)
	if code, out := e.do(t, "GET", "/-/ready", "", ""); code != 503 || out["code"] != 503.0 {
		t.Errorf("not ready: %d %v, want 503 with the error body", code, out)
	}
	if code, _ := e.do(t, "GET", "/-/healthy", "", ""); code != 200 {
		t.Errorf("healthy while not ready: %d, want 200", code)
	}
}

type fakeLive struct{}

func (fakeLive) LiveStats() map[string]any {
	return map[string]any{"fetched": 3, "pages_per_second": 1.5}
}
func (fakeLive) LiveHost(host string) (map[string]any, bool) {
	return map[string]any{"queued": 1}, host == "live.example"
}
