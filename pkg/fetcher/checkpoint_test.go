package fetcher

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// saveFailingStore refuses to save host state while fail is set, as a store
// would whose writes of that table fail.
type saveFailingStore struct {
	Store
	fail  atomic.Bool
	saves atomic.Int64 // SaveHosts calls refused
}

func (s *saveFailingStore) SaveHosts(ctx context.Context, hosts []store.Host) error {
	if s.fail.Load() {
		s.saves.Add(1)
		return errStoreDown
	}
	return s.Store.SaveHosts(ctx, hosts)
}

// committedAt returns the fetchers' committed offset of partition p of
// crawl.urls (0 when none).
func committedAt(t *testing.T, e *testenv.Env, p int32) int64 {
	t.Helper()
	offsets, err := kadm.NewClient(e.Kafka).FetchOffsets(context.Background(), queue.GroupFetchers)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offsets.Lookup(queue.TopicURLs, p)
	if !ok || o.At < 0 {
		return 0
	}
	return o.At
}

// TestOffsetsWaitForHostState: a poll's crawl.urls offsets are committed
// only once the host state its records changed (the admission budgets) is
// saved: a kill -9 in between must leave the next owner records to replay,
// not a state that never saw them. While the host table refuses writes, the
// URLs are admitted and fetched but nothing is committed; once it takes them,
// the offsets follow.
func TestOffsetsWaitForHostState(t *testing.T) {
	e := testenv.New(t)
	srv, hits := pageServer(t)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	st := &saveFailingStore{Store: e.DB}
	st.fail.Store(true)
	cfg := testConfig()
	cfg.Patterns = pattern.Config{Budget: 10}
	_, stop := startFetcherOn(t, e, st, cfg)
	defer stop()
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: srv.URL + "/seed", Seed: true}, part),
		urlRecord(t, queue.URL{URL: srv.URL + "/a.html", Parent: srv.URL + "/seed"}, part)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "both URLs fetched", func() bool { return hits("/seed") == 1 && hits("/a.html") == 1 })
	// Saves keep being tried (every 50 ms); three refused after the fetches
	// are three checkpoints that must not have committed.
	after := st.saves.Load()
	testenv.Eventually(t, 20*time.Second, "three more refused saves", func() bool { return st.saves.Load() >= after+3 })
	if at := committedAt(t, e, part); at != 0 {
		t.Fatalf("crawl.urls/%d committed at %d while the host state of its records could not be saved", part, at)
	}
	st.fail.Store(false)
	testenv.Eventually(t, 20*time.Second, "the offsets committed once the state is saved", func() bool { return committedAt(t, e, part) == 2 })
}

// cancelOnPoll cancels the fetcher's run as a poll returns records: the stop
// begins while the poll it has just taken is unadmitted.
type cancelOnPoll struct{ cancel context.CancelFunc }

func (h cancelOnPoll) OnFetchRecordUnbuffered(_ *kgo.Record, polled bool) {
	if polled {
		h.cancel()
	}
}

// TestStopCommitsNoUnadmittedPoll: records a poll returned just as the stop
// began are not admitted, and the stop commits no offset past them, so the
// next run admits them. Before, the stop committed everything polled and
// their URLs were neither queued nor excluded, never requested.
func TestStopCommitsNoUnadmittedPoll(t *testing.T) {
	e := testenv.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const host = "127.0.0.1:1"
	part := queue.PartitionOf(host)
	opts := append(e.Options(), kgo.WithHooks(cancelOnPoll{cancel}))
	f, err := New(testConfig(), e.DB, opts, nil, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: "http://" + host + "/a.html", Seed: true}, part)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the fetcher did not stop after its first poll")
	}
	if info, _ := e.DB.URLInfo(context.Background(), "http://"+host+"/a.html"); info.URL != nil {
		t.Fatalf("the URL was admitted (%s): the poll came before the stop", info.URL.State)
	}
	if at := committedAt(t, e, part); at != 0 {
		t.Errorf("offset %d committed past the record the stop left unadmitted", at)
	}
}
