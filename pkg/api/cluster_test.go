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

	group := func(out map[string]any, name string) map[string]any {
		gs, _ := out["workers"].(map[string]any)["groups"].([]any)
		for _, g := range gs {
			if g := g.(map[string]any); g["name"] == name {
				return g
			}
		}
		return nil
	}
	// The member is listed from its join, but its partitions only once the
	// group is Stable: in CompletingRebalance (until the leader's SyncGroup)
	// the broker describes it with no assignment.
	testenv.Eventually(t, 20*time.Second, "stats to show one fetcher in a stable group", func() bool {
		code, out := e.do(t, "GET", "/api/v1/stats", "", "")
		if code != http.StatusOK {
			t.Fatalf("stats: %d %v", code, out)
		}
		f, p := group(out, queue.GroupFetchers), group(out, queue.GroupParsers)
		return f != nil && p != nil && f["members"] == 1.0 && f["state"] == "Stable" && p["members"] == 0.0
	})
	_, out := e.do(t, "GET", "/api/v1/stats", "", "")
	f := group(out, queue.GroupFetchers)
	members, _ := f["member_list"].([]any)
	if len(members) != 1 {
		t.Fatalf("fetchers %v: want one member listed", f)
	}
	m := members[0].(map[string]any)
	if ps, _ := m["partitions"].(map[string]any)[queue.TopicURLs].([]any); len(ps) != queue.Partitions {
		t.Errorf("member %v: want all %d partitions of %s", m, queue.Partitions, queue.TopicURLs)
	}
	if out["mode"] != "embedded" || out["uptime_seconds"] != 60.0 {
		t.Errorf("mode %v, uptime %v: want the Live view's", out["mode"], out["uptime_seconds"])
	}

	code, out := e.do(t, "GET", "/api/v1/hosts/LIVE.example", "", "")
	if code != 200 || out["known"] != false || out["fetching"] != true || out["queue"].(map[string]any)["queued"] != 1.0 {
		t.Errorf("host only the live view knows: %d %v", code, out)
	}

	// Without Kafka the store's numbers still come, with the reason beside them.
	closed, err := kgo.NewClient(kgo.SeedBrokers(te.Addrs...))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	e = newEnvOn(t, te, nil, Config{}, WithCluster(lag.New(kadm.NewClient(closed), []string{queue.GroupFetchers}, nil)))
	code, out = e.do(t, "GET", "/api/v1/stats", "", "")
	w, _ := out["workers"].(map[string]any)
	if code != http.StatusOK || out["urls"] == nil || w["error"] == nil || len(w["groups"].([]any)) != 0 {
		t.Errorf("stats with Kafka down: %d %v, want 200 with the store's counts and workers.error", code, out)
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

func (fakeLive) Pages(context.Context) (int64, error) { return 3, nil }

func (fakeLive) LiveStats(context.Context) LiveStats {
	return LiveStats{Mode: "embedded", Uptime: time.Minute, Fetched: 3, MaxPages: 5,
		Frontier: &FrontierStats{Queued: 2, InFlight: 1, Active: 1, Waiting: 4, QueuedByLevel: []int64{1, 1}}}
}

func (fakeLive) LiveHost(host string) (LiveHost, bool) {
	return LiveHost{Partition: 3, Queued: 1, Delay: time.Second, NextAllowed: time.Now()}, host == "live.example"
}
