package fetcher

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

var errStoreDown = errors.New("connect: connection refused")

// flakyStore fails the calls a test chooses, as a metadata store that is
// down or cut off does.
type flakyStore struct {
	Store
	admitHang atomic.Bool // admissions wait for their context to end
	admits    atomic.Int64
	// queuedFails is how many QueuedURLs calls of partition part fail, each
	// after handing over the partition's first URL.
	part        int32
	queuedFails atomic.Int64
	queuedCalls atomic.Int64
}

func (s *flakyStore) AdmitURLs(ctx context.Context, urls []store.URL) ([]bool, error) {
	s.admits.Add(1)
	if s.admitHang.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.AdmitURLs(ctx, urls)
}

func (s *flakyStore) QueuedURLs(ctx context.Context, p int32, fn func(store.URL) error) error {
	if p != s.part {
		return s.Store.QueuedURLs(ctx, p, fn)
	}
	s.queuedCalls.Add(1)
	if s.queuedFails.Add(-1) < 0 {
		return s.Store.QueuedURLs(ctx, p, fn)
	}
	errStop := errors.New("first URL handed over")
	err := s.Store.QueuedURLs(ctx, p, func(u store.URL) error {
		if err := fn(u); err != nil {
			return err
		}
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	return errStoreDown
}

// pageServer counts the requests to each path. It answers a page for any
// path, but a 301 to /to/X for /moved/X.
func pageServer(t *testing.T) (*httptest.Server, func(path string) int) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if rest, ok := strings.CutPrefix(r.URL.Path, "/moved/"); ok {
			http.Redirect(w, r, "/to/"+rest, http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>page</body></html>"))
	}))
	t.Cleanup(srv.Close)
	return srv, func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}
}

// TestStopWhileAdmissionHangs: a fetcher stopped while its admission waits
// for a store that does not answer commits none of the records it could not
// admit (the client commits what it polled, on revoke and at the stop), so
// the next fetcher admits and fetches them.
func TestStopWhileAdmissionHangs(t *testing.T) {
	e := testenv.New(t)
	srv, hits := pageServer(t)
	part := queue.PartitionOf(urlnorm.Authority(srv.URL))
	flaky := &flakyStore{Store: e.DB, part: -1}
	flaky.admitHang.Store(true)
	_, stop := startFetcherOn(t, e, flaky, testConfig())
	if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: srv.URL + "/seed", Seed: true}, part)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "an admission waiting", func() bool { return flaky.admits.Load() > 0 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	offsets, err := kadm.NewClient(e.Kafka).FetchOffsets(context.Background(), queue.GroupFetchers)
	if err != nil {
		t.Fatal(err)
	}
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.At > 0 {
			t.Errorf("%s/%d committed at %d, though its URL was not admitted", o.Topic, o.Partition, o.At)
		}
	})

	_, stop = startFetcher(t, e, testConfig())
	defer stop()
	testenv.Eventually(t, 20*time.Second, "the seed fetched by the next fetcher", func() bool { return hits("/seed") == 1 })
}

// TestPartitionLoadRetried: a partition whose queued URLs cannot be read
// when it is assigned (the store is down) is loaded again until the store
// answers, rather than given up, and a load that failed part way queues
// nothing twice.
func TestPartitionLoadRetried(t *testing.T) {
	e := testenv.New(t)
	srv, hits := pageServer(t)
	host := urlnorm.Authority(srv.URL)
	part := queue.PartitionOf(host)
	paths := []string{"/a", "/b", "/c"}
	var rows []store.URL
	for _, p := range paths {
		u := srv.URL + p
		rows = append(rows, store.URL{Hash: store.HashURL(u), Partition: part, URL: u, Host: host, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()})
	}
	if _, err := e.DB.AdmitURLs(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	// The host's previous owner made it wait: nothing is fetched before the
	// load has failed twice (0.5 s, then 1 s later), so what a failed load
	// queued would still be queued.
	hold := []store.Host{{Host: host, Partition: part, Delay: 20 * time.Millisecond, NextAllowed: time.Now().Add(3 * time.Second)}}
	if err := e.DB.SaveHosts(context.Background(), hold); err != nil {
		t.Fatal(err)
	}
	flaky := &flakyStore{Store: e.DB, part: part}
	flaky.queuedFails.Store(2)
	_, stop := startFetcherOn(t, e, flaky, testConfig())
	testenv.Eventually(t, 30*time.Second, "every queued URL fetched", func() bool {
		for _, p := range paths {
			if hits(p) == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(300 * time.Millisecond) // a URL queued twice would be fetched again by now (delay 20 ms)
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, p := range paths {
		if n := hits(p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	if n := flaky.queuedCalls.Load(); n != 3 {
		t.Errorf("queued URLs of the partition read %d times, want 3 (two failures)", n)
	}
}
