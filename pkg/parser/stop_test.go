package parser

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// downStore is a metadata store whose capture writes fail at once (the
// server refuses connections) or hang until their context ends (packets to
// it are dropped).
type downStore struct {
	Store
	hang  bool
	tries atomic.Int64
}

func (s *downStore) AddCaptures(ctx context.Context, cs []store.Capture) error {
	s.tries.Add(1)
	if s.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return errors.New("connect: connection refused")
}

// TestStopWhileStoreDown: a parser stopped while its batch cannot be stored
// stops within its grace, whether the store fails or hangs, and commits
// nothing of the batch (a commit would lose its pages: the offsets on revoke
// and close are those polled); the next parser stores it.
func TestStopWhileStoreDown(t *testing.T) {
	for _, hang := range []bool{false, true} {
		name := map[bool]string{false: "failing", true: "hanging"}[hang]
		t.Run(name, func(t *testing.T) {
			e := testenv.New(t)
			u := "http://a.example/down"
			admit(t, e, u)
			produce(t, e, page("d1", u, "<html><body>kept</body></html>", 200))

			down := &downStore{Store: e.DB, hang: hang}
			seg, err := warc.NewSegmentWriter(warc.SegmentConfig{Dir: filepath.Join(e.Dir, "warc-down")})
			if err != nil {
				t.Fatal(err)
			}
			defer seg.Close()
			const grace = 300 * time.Millisecond
			p, err := New(Config{RobotsAgent: "testbot", StopGrace: grace}, down, seg, e.Options(), nil, e.Log)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			testenv.Eventually(t, 20*time.Second, "a try to store the batch", func() bool { return down.tries.Load() > 0 })
			stopped := time.Now()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
				if took := time.Since(stopped); took > grace+3*time.Second {
					t.Errorf("stop took %v with a grace of %v", took, grace)
				}
			case <-time.After(grace + 10*time.Second):
				t.Fatalf("parser still running %v after the stop", grace+10*time.Second)
			}
			offsets, err := kadm.NewClient(e.Kafka).FetchOffsets(context.Background(), queue.GroupParsers)
			if err != nil {
				t.Fatal(err)
			}
			offsets.Each(func(o kadm.OffsetResponse) {
				if o.At > 0 {
					t.Errorf("%s/%d committed at %d, though nothing was stored", o.Topic, o.Partition, o.At)
				}
			})

			runParser(t, e, Config{RobotsAgent: "testbot"})
			testenv.Eventually(t, 20*time.Second, "the page stored by the next parser", func() bool { return len(captures(t, e)[u]) == 1 })
		})
	}
}
