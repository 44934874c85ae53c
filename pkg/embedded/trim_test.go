package embedded

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
)

func TestTrimDeletesOnlyCommittedRecords(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	var recs []*kgo.Record
	for range 10 {
		recs = append(recs, &kgo.Record{Topic: queue.TopicPages, Partition: 3, Value: []byte("x")})
	}
	if err := e.Kafka.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(e.Kafka)
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: queue.TopicPages, Partition: 3, At: 6, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, queue.GroupParsers, commit); err != nil {
		t.Fatal(err)
	}
	if err := trimTopic(ctx, adm, queue.GroupParsers, queue.TopicPages); err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, queue.TopicPages)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := starts.Lookup(queue.TopicPages, 3)
	if !ok || o.Offset != 6 {
		t.Errorf("log start offset %v (found %v), want 6: records up to the commit deleted, the rest kept", o.Offset, ok)
	}
	// A group with no commits deletes nothing.
	if err := trimTopic(ctx, adm, queue.GroupFetchers, queue.TopicURLs); err != nil {
		t.Fatal(err)
	}
}
