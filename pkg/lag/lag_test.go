package lag

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/crawlcluster/crawler/cmd/broker/brokertest"
)

// TestExporter runs a real consumer group against the broker process (or the
// cluster CRAWLER_TEST_KAFKA names): produce, consume, commit part of it, and read
// the gauges as Prometheus would.
func TestExporter(t *testing.T) {
	seeds := brokertest.Start(t)
	topic, group, idle := brokertest.Name("lag"), brokertest.Name("lag-group"), brokertest.Name("idle-group")
	cl := client(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx(t), 2, 1, nil, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	const n, m, other = 10, 4, 3 // records on partition 0, of which committed; records on partition 1
	produce(t, cl, topic, 0, n)
	produce(t, cl, topic, 1, other)

	reg := prometheus.NewRegistry()
	e := New(adm, []string{group, idle}, reg)

	member := client(t, seeds, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < n+other; {
		fs := member.PollFetches(ctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		got += fs.NumRecords()
	}
	commit(t, member, topic, 0, m)

	if err := e.Update(ctx(t)); err != nil {
		t.Fatalf("update: %v", err)
	}
	want := map[string]float64{
		`crawler_kafka_consumer_lag{group="G",partition="0",topic="T"}`:              n - m,
		`crawler_kafka_consumer_lag{group="G",partition="1",topic="T"}`:              other, // assigned, never committed
		`crawler_kafka_consumer_committed_offset{group="G",partition="0",topic="T"}`: m,
		`crawler_kafka_consumer_group_members{group="G"}`:                            1,
		`crawler_kafka_consumer_group_members{group="I"}`:                            0,
		`crawler_kafka_lag_refresh_failures_total{group="G"}`:                        0,
		`crawler_kafka_lag_refresh_failures_total{group="I"}`:                        0,
	}
	expect(t, reg, topic, group, idle, want)
	members, err := e.Members(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{group: 1, idle: 0}; !maps.Equal(members, want) {
		t.Errorf("Members = %v, want %v", members, want)
	}
	groups, err := e.Groups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || groups[0].Name != group || groups[1].Name != idle {
		t.Fatalf("Groups = %+v, want %s and %s in order", groups, group, idle)
	}
	if g := groups[0]; len(g.Members) != 1 || g.Lag[topic] != n-m+other ||
		!slices.Equal(g.Members[0].Partitions[topic], []int32{0, 1}) || g.Members[0].Lag[topic] != n-m+other {
		t.Errorf("group %+v: want one member assigned partitions 0 and 1 with lag %d", g, n-m+other)
	}
	if g := groups[1]; len(g.Members) != 0 || len(g.Lag) != 0 {
		t.Errorf("idle group %+v: want no members and no lag", g)
	}

	// With no member left the group is Empty, and its backlog stays: the lag of
	// each partition of the topic it commits to, committed or not.
	member.Close()
	if err := e.Update(ctx(t)); err != nil {
		t.Fatalf("update: %v", err)
	}
	want[`crawler_kafka_consumer_group_members{group="G"}`] = 0
	expect(t, reg, topic, group, idle, want)
	if members, _ := e.Members(ctx(t)); members[group] != 0 {
		t.Errorf("Members = %v after the member left, want %s: 0", members, group)
	}

	// Run keeps the gauges current and returns when its context ends.
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx, 100*time.Millisecond) }()
	produce(t, cl, topic, 0, 5)
	key := `crawler_kafka_consumer_lag{group="G",partition="0",topic="T"}`
	deadline := time.Now().Add(20 * time.Second)
	for gather(t, reg, topic, group, idle)[key] != n-m+5 {
		if time.Now().After(deadline) {
			t.Fatalf("Run did not update %s to %d: %v", key, n-m+5, gather(t, reg, topic, group, idle))
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after its context ended, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestExporterFailure checks that a failed update counts, errs, and keeps the last
// values instead of reporting a false 0.
func TestExporterFailure(t *testing.T) {
	seeds := brokertest.Start(t)
	topic, group := brokertest.Name("lag-fail"), brokertest.Name("lag-fail-group")
	cl := client(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if _, err := kadm.NewClient(cl).CreateTopic(ctx(t), 1, 1, nil, topic); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	produce(t, cl, topic, 0, 7)
	member := client(t, seeds, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < 7; {
		got += member.PollFetches(ctx(t)).NumRecords()
	}
	commit(t, member, topic, 0, 2)

	admCl := client(t, seeds)
	reg := prometheus.NewRegistry()
	e := New(kadm.NewClient(admCl), []string{group}, reg)
	if err := e.Update(ctx(t)); err != nil {
		t.Fatal(err)
	}
	admCl.Close()
	if err := e.Update(ctx(t)); err == nil {
		t.Fatal("update through a closed client succeeded")
	}
	if _, err := e.Members(ctx(t)); err == nil {
		t.Error("Members through a closed client succeeded")
	}
	expect(t, reg, topic, group, "", map[string]float64{
		`crawler_kafka_consumer_lag{group="G",partition="0",topic="T"}`:              5,
		`crawler_kafka_consumer_committed_offset{group="G",partition="0",topic="T"}`: 2,
		`crawler_kafka_consumer_group_members{group="G"}`:                            1,
		`crawler_kafka_lag_refresh_failures_total{group="G"}`:                        1,
	})
}

func client(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func produce(t *testing.T, cl *kgo.Client, topic string, p int32, n int) {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// commit commits offset off of topic/p as the group member cl.
func commit(t *testing.T, cl *kgo.Client, topic string, p int32, off int64) {
	t.Helper()
	var err error
	cl.CommitOffsetsSync(ctx(t), map[string]map[int32]kgo.EpochOffset{topic: {p: {Epoch: -1, Offset: off}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, cerr error) {
			err = cerr
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if err == nil {
						err = kerr.ErrorForCode(rp.ErrorCode)
					}
				}
			}
		})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// gather returns the exporter's series for the test's topic and groups, with the
// names written as T, G and I.
func gather(t *testing.T, reg *prometheus.Registry, topic, group, idle string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := ""
			for _, lp := range m.GetLabel() {
				v := lp.GetValue()
				switch {
				case lp.GetName() == "topic" && v == topic:
					v = "T"
				case lp.GetName() == "group" && v == group:
					v = "G"
				case lp.GetName() == "group" && v == idle:
					v = "I"
				}
				if labels != "" {
					labels += ","
				}
				labels += lp.GetName() + `="` + v + `"`
			}
			out[mf.GetName()+"{"+labels+"}"] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	if m.Gauge != nil {
		return m.Gauge.GetValue()
	}
	return m.Counter.GetValue()
}

func expect(t *testing.T, reg *prometheus.Registry, topic, group, idle string, want map[string]float64) {
	t.Helper()
	got := gather(t, reg, topic, group, idle)
	if !maps.Equal(got, want) {
		t.Errorf("series:\n got  %v\n want %v", got, want)
	}
}
