package fetcher

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
)

// TestStopWhileGroupRebalances: a static member whose group is rebalancing
// cannot leave until the coordinator answers its JoinGroup, which waits for
// every member to rejoin, here one that closed without leaving (a static
// member keeps its place for its restart). The stop must not wait for that:
// TestFaultZombieFetcher saw a fetcher hang 60 s after SIGTERM this way.
func TestStopWhileGroupRebalances(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.InstanceID = "a"
	cfg.SessionTimeout = 20 * time.Second
	cfg.FenceAfter = time.Second // heartbeats every 333 ms: the rebalance is seen at once
	_, stop := startFetcher(t, e, cfg)
	adm := kadm.NewClient(e.Kafka)
	members := func(n int) func() bool {
		return func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			g, err := adm.DescribeGroups(ctx, queue.GroupFetchers)
			return err == nil && g[queue.GroupFetchers].State == "Stable" && len(g[queue.GroupFetchers].Members) == n
		}
	}
	testenv.Eventually(t, 20*time.Second, "the fetcher alone in the group", members(1))

	// A second static member joins, then goes away without leaving.
	b, err := kgo.NewClient(append(e.Options(), kgo.ConsumerGroup(queue.GroupFetchers), kgo.ConsumeTopics(queue.TopicURLs),
		kgo.InstanceID("b"), kgo.SessionTimeout(20*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "two members", members(2))
	b.Close()

	// A third member starts a rebalance that waits for the second to rejoin.
	c, err := kgo.NewClient(append(e.Options(), kgo.ConsumerGroup(queue.GroupFetchers), kgo.ConsumeTopics(queue.TopicURLs))...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { go c.Close() }() // it waits for the rebalance too
	time.Sleep(2 * time.Second)     // the fetcher has heard of the rebalance and rejoined

	began := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	t.Logf("stop took %v while the group rebalanced", took.Round(time.Millisecond))
	if took > stopBound {
		t.Errorf("stop took %v, want under %v", took, stopBound)
	}
}
