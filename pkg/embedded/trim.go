package embedded

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/crawlcluster/crawler/internal/periodic"
	"github.com/crawlcluster/crawler/pkg/queue"
)

// trimConsumed deletes, every interval, the records each topic's only consumer group
// has committed. The embedded broker keeps its whole log in memory and on disk; a
// real Kafka bounds it with retention, and here what is committed is durable
// downstream (DESIGN invariant 2), so it is of no further use. Without this a long
// embedded crawl would grow by every page it ever fetched (DESIGN invariant 5).
func trimConsumed(ctx context.Context, adm *kadm.Client, interval time.Duration, log *slog.Logger) {
	periodic.Every(ctx, interval, func() {
		for group, topic := range map[string]string{queue.GroupFetchers: queue.TopicURLs, queue.GroupParsers: queue.TopicPages} {
			if err := trimTopic(ctx, adm, group, topic); err != nil && ctx.Err() == nil {
				log.Warn("trim consumed records", "topic", topic, "err", err)
			}
		}
	})
}

func trimTopic(ctx context.Context, adm *kadm.Client, group, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = resp.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil // nothing committed yet
	}
	if err != nil {
		return err
	}
	offsets := kadm.Offsets{}
	resp.Each(func(o kadm.OffsetResponse) {
		// One committed record stays: the broker deletes a segment file once every
		// record in it is gone, the one being written to included, and opens a new
		// one at the next write. Keeping the last record keeps the active file, so
		// only segments the log has rolled past (queue.EmbeddedSegmentBytes) are
		// deleted; deleting and re-creating ~300 partitions' files every interval
		// cost ~5% of the crawler's CPU in the kernel.
		if o.Topic == topic && o.Err == nil && o.At > 1 {
			offsets.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.At - 1, LeaderEpoch: -1})
		}
	})
	if len(offsets) == 0 {
		return nil
	}
	deleted, err := adm.DeleteRecords(ctx, offsets)
	if err != nil {
		return err
	}
	return deleted.Error()
}
