package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MaxRecordBytes bounds one record: a fetch result carries the raw and the decoded
// body, each capped by the fetcher's limits.
const MaxRecordBytes = 64 << 20

// EmbeddedSegmentBytes is the size at which the embedded broker starts a new log
// segment file in a partition. Deleting consumed records frees disk a whole
// segment at a time, so it bounds what a partition keeps on disk beyond its
// backlog; small enough for a laptop (the 4 busy crawl.pages partitions keep at
// most 32 MiB), large enough that rolling a file is rare.
const EmbeddedSegmentBytes = 8 << 20

// Embedded is an in-process Kafka broker whose log lives under a data folder, so a
// restarted crawler resumes from its committed offsets.
type Embedded struct {
	cluster *kfake.Cluster
}

// StartEmbedded starts the embedded broker on a loopback port.
func StartEmbedded(dataDir string) (*Embedded, error) {
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.DataDir(dataDir),
		kfake.BrokerConfigs(map[string]string{
			"message.max.bytes": strconv.Itoa(MaxRecordBytes),
			"log.segment.bytes": strconv.Itoa(EmbeddedSegmentBytes),
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("start embedded broker in %s: %w", dataDir, err)
	}
	return &Embedded{cluster: c}, nil
}

// Addrs returns the broker's listen addresses.
func (e *Embedded) Addrs() []string { return e.cluster.ListenAddrs() }

// Close stops the broker and flushes its log.
func (e *Embedded) Close() { e.cluster.Close() }

// ClientOptions returns the options every client of the cluster shares.
func ClientOptions(seeds []string, log *slog.Logger) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ProducerBatchMaxBytes(MaxRecordBytes),
		kgo.FetchMaxPartitionBytes(MaxRecordBytes),
		kgo.BrokerMaxReadBytes(2 * MaxRecordBytes),
		kgo.ProducerBatchCompression(mustCompression(DefaultCompression)...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		// The fetcher produces each fetch result on its own as it completes, spread
		// over crawl.pages' partitions by host; at franz-go's default 10 ms linger a
		// batch held one or two records, and the broker pays per batch (a write of
		// the segment and of its index in kfake, a compression frame, a CRC).
		// Lingering longer batches more but holds fetch results in memory longer,
		// and a process killed then must fetch them again: at 100 ms the embedded
		// crawler took ~10% less CPU per page, but a kill -9 under the race
		// detector re-fetched up to 74 pages of 12 hosts, and at 25 ms up to 45,
		// against at most one per host at 10 ms (TestKillAndResume, bound 64). So
		// franz-go's 10 ms stays, named here so that nobody raises it for the
		// CPU without that test.
		kgo.ProducerLinger(10 * time.Millisecond),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// A produce or fetch answered NOT_LEADER_OR_FOLLOWER waits for new
		// metadata, which franz-go refreshes at most every 5 s by default. A
		// fetcher holds each host until its previous result is acknowledged,
		// so that wait held hosts: a crawl with a quarter of produce and fetch
		// requests failing (TestFaultBrokerErrors) took 40 s at 5 s and 17 s
		// at 500 ms, against 14 s without errors. Metadata is still read only
		// when something failed or every 5 minutes.
		kgo.MetadataMinAge(500 * time.Millisecond),
		kgo.WithLogger(kgoLogger{log}),
	}
}

// DefaultCompression is the codec producers compress record batches with unless
// -broker-compression says otherwise; consumers and the broker take any codec, so
// processes of one cluster may differ. Snappy, not zstd: zstd took a quarter of a
// fetcher's CPU for 28% fewer broker bytes, snappy 4-7% (lz4: the same CPU and
// bytes as snappy, more memory). docs/performance.md, "The cluster on one box".
const DefaultCompression = "snappy"

// CompressionNames lists the codecs -broker-compression accepts.
var CompressionNames = []string{"zstd", "snappy", "lz4", "none"}

// Compression returns the producer option for a codec of CompressionNames.
func Compression(name string) (kgo.Opt, error) {
	codecs, err := compression(name)
	if err != nil {
		return nil, err
	}
	return kgo.ProducerBatchCompression(codecs...), nil
}

func mustCompression(name string) []kgo.CompressionCodec {
	codecs, err := compression(name)
	if err != nil {
		panic(err)
	}
	return codecs
}

// compression lists the codec and its fall-backs: franz-go uses the first the
// broker's API version supports, and an old broker may lack zstd.
func compression(name string) ([]kgo.CompressionCodec, error) {
	switch name {
	case "zstd":
		return []kgo.CompressionCodec{kgo.ZstdCompression(), kgo.Lz4Compression(), kgo.NoCompression()}, nil
	case "snappy":
		return []kgo.CompressionCodec{kgo.SnappyCompression(), kgo.NoCompression()}, nil
	case "lz4":
		return []kgo.CompressionCodec{kgo.Lz4Compression(), kgo.NoCompression()}, nil
	case "none":
		return []kgo.CompressionCodec{kgo.NoCompression()}, nil
	}
	return nil, fmt.Errorf("compression %q: want one of %s", name, strings.Join(CompressionNames, ", "))
}

// EnsureTopics creates the crawler's topics if they are missing, crawl.pages (and
// crawl.render, which is keyed the same way) with pages partitions (PagesPartitions in a cluster, EmbeddedPagesPartitions in the
// embedded crawler). A topic that exists is left as it is; PagesPartitionCount
// reads what it has.
func EnsureTopics(ctx context.Context, cl *kgo.Client, pages int32) error {
	adm := kadm.NewClient(cl)
	cfg := map[string]*string{"max.message.bytes": kadm.StringPtr(strconv.Itoa(MaxRecordBytes))}
	for _, t := range []struct {
		name  string
		parts int32
	}{{TopicURLs, Partitions}, {TopicPages, pages}, {TopicRender, pages}, {TopicDeadLetter, 1}} {
		resp, err := adm.CreateTopic(ctx, t.parts, -1, cfg, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t.name, err)
		}
	}
	return nil
}

// PagesPartitionCount returns how many partitions crawl.pages has, which is what
// a fetcher spreads its results over.
func PagesPartitionCount(ctx context.Context, cl *kgo.Client) (int32, error) {
	topics, err := kadm.NewClient(cl).ListTopics(ctx, TopicPages)
	if err != nil {
		return 0, fmt.Errorf("describe %s: %w", TopicPages, err)
	}
	t, ok := topics[TopicPages]
	if !ok || t.Err != nil {
		err := errors.New("missing")
		if ok {
			err = t.Err
		}
		return 0, fmt.Errorf("describe %s: %w", TopicPages, err)
	}
	if len(t.Partitions) == 0 {
		return 0, fmt.Errorf("describe %s: no partitions", TopicPages)
	}
	return int32(len(t.Partitions)), nil
}

// kgoLogger routes franz-go's logs to slog at warn and above.
type kgoLogger struct{ l *slog.Logger }

func (k kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }
func (k kgoLogger) Log(level kgo.LogLevel, msg string, kv ...any) {
	if k.l == nil {
		return
	}
	switch level {
	case kgo.LogLevelError:
		k.l.Error(msg, kv...)
	default:
		k.l.Warn(msg, kv...)
	}
}

// GroupLags returns the records each of the crawler's consumer groups
// (fetchers on crawl.urls, parsers on crawl.pages, renderers on crawl.render)
// has not committed; a group
// whose lag could not be read is absent, its error joined into the one returned.
func GroupLags(ctx context.Context, adm *kadm.Client) (map[string]int64, error) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lags, err := adm.Lag(lctx, GroupFetchers, GroupParsers, GroupRenderers)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	var errs []error
	lags.Each(func(l kadm.DescribedGroupLag) {
		if err := l.Error(); err != nil {
			// The renderers group exists only where rendering is on.
			if l.Group != GroupRenderers {
				errs = append(errs, err)
			}
			return
		}
		out[l.Group] = l.Lag.Total()
	})
	return out, errors.Join(errs...)
}
