// Package testenv starts the real backends of the embedded mode for component
// tests: the kfake broker with its data folder, a SQLite store, and Kafka clients
// to inspect topics.
package testenv

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// Env is one test's broker and store.
type Env struct {
	Dir   string
	Addrs []string
	Kafka *kgo.Client // plain producer/admin client
	DB    *sqlite.DB
	Log   *slog.Logger
}

// New starts a broker with the crawler's topics and opens a fresh store.
func New(t testing.TB) *Env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	broker, err := queue.StartEmbedded(filepath.Join(dir, "kafka"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	cl, err := kgo.NewClient(queue.ClientOptions(broker.Addrs(), nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if err := queue.EnsureTopics(ctx, cl, queue.PagesPartitions); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	return &Env{Dir: dir, Addrs: broker.Addrs(), Kafka: cl, DB: db, Log: log}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// Options returns the client options the crawler's components use.
func (e *Env) Options() []kgo.Opt { return queue.ClientOptions(e.Addrs, e.Log) }

// Consume reads every record of topic from the start until want records have
// arrived or the timeout passes.
func (e *Env) Consume(t testing.TB, topic string, want int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	return e.ConsumeUntil(t, topic, timeout, func(recs []*kgo.Record) bool { return len(recs) >= want })
}

// ConsumeUntil reads every record of topic from the start until done holds for
// the records read so far or the timeout passes. Tests that look for particular
// records use it rather than a count, which other records on the topic (content
// verdicts, say) would satisfy first.
func (e *Env) ConsumeUntil(t testing.TB, topic string, timeout time.Duration, done func([]*kgo.Record) bool) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addrs...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for !done(out) && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// Eventually polls cond until it holds or the timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
