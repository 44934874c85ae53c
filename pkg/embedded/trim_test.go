package embedded

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
)

func TestTrimDeletesOnlyCommittedRecords(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	produce(t, e, queue.TopicPages, 10)
	produce(t, e, queue.TopicURLs, 10)
	adm := kadm.NewClient(e.Kafka)
	commit(t, adm, 6)
	if err := trimTopic(ctx, adm, queue.GroupParsers, queue.TopicPages); err != nil {
		t.Fatal(err)
	}
	if got := startOffset(t, adm, queue.TopicPages); got != 5 {
		t.Errorf("log start offset %d, want 5: records before the last committed one deleted, the rest kept", got)
	}
	// A group with no commits deletes nothing, and one group's commits on
	// another topic do not trim this one.
	for _, group := range []string{queue.GroupFetchers, queue.GroupParsers} {
		if err := trimTopic(ctx, adm, group, queue.TopicURLs); err != nil {
			t.Fatal(err)
		}
		if got := startOffset(t, adm, queue.TopicURLs); got != 0 {
			t.Errorf("%s start offset %d after trimming it by %s, which committed none of it: want 0", queue.TopicURLs, got, group)
		}
	}
}

// A fully consumed partition keeps its segment file: deleting it would make the
// broker create a new one at the next write, for every partition at every trim.
func TestTrimKeepsTheActiveSegment(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	produce(t, e, queue.TopicPages, 10)
	dir := filepath.Join(e.Dir, "kafka", "partitions", queue.TopicPages+"-3")
	before := segmentFiles(t, dir)
	if len(before) == 0 {
		t.Fatalf("no segment file in %s", dir)
	}
	adm := kadm.NewClient(e.Kafka)
	commit(t, adm, 10)
	if err := trimTopic(ctx, adm, queue.GroupParsers, queue.TopicPages); err != nil {
		t.Fatal(err)
	}
	if got := startOffset(t, adm, queue.TopicPages); got != 9 {
		t.Errorf("log start offset %d, want 9", got)
	}
	after := segmentFiles(t, dir)
	if len(after) != len(before) || after[0] != before[0] {
		t.Errorf("segment files %v after trimming, want %v kept", after, before)
	}
}

func produce(t *testing.T, e *testenv.Env, topic string, n int) {
	t.Helper()
	var recs []*kgo.Record
	for range n {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 3, Value: []byte("x")})
	}
	if err := e.Kafka.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func commit(t *testing.T, adm *kadm.Client, at int64) {
	t.Helper()
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: queue.TopicPages, Partition: 3, At: at, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(context.Background(), queue.GroupParsers, o); err != nil {
		t.Fatal(err)
	}
}

func startOffset(t *testing.T, adm *kadm.Client, topic string) int64 {
	t.Helper()
	starts, err := adm.ListStartOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := starts.Lookup(topic, 3)
	if !ok {
		t.Fatal("no start offset for partition 3")
	}
	return o.Offset
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	dat, err := filepath.Glob(filepath.Join(dir, "*.dat"))
	if err != nil {
		t.Fatal(err)
	}
	return dat
}
