package fetcher

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/frontier"
)

// unreachableSlots is a shared cache that answers no slot request in time.
type unreachableSlots struct{}

func (unreachableSlots) AcquireSlot(context.Context, string, string, int, time.Duration, time.Duration) (bool, time.Duration, error) {
	return false, 0, context.DeadlineExceeded
}

func (unreachableSlots) ReleaseSlot(context.Context, string, string) error {
	return errors.New("unreachable")
}

// TestSharedSlotErrorAssumesTaken: when the shared per-server count does not
// answer, the request still goes (on the local limit) but not before
// -ip-delay (and the cache's timeout) after the failed call: the slot may
// have gone to another fetcher at that moment. Before, it started at once,
// and two fetchers started requests to one server 300 µs apart.
func TestSharedSlotErrorAssumesTaken(t *testing.T) {
	e := testenv.New(t)
	cfg := testConfig()
	cfg.IPConcurrency, cfg.IPDelay = 2, 100*time.Millisecond
	f, err := New(cfg, e.DB, e.Options(), nil, e.Log, WithServerSlots(unreachableSlots{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.kafka.Close)
	ctx := context.Background()
	f.fr.Push(frontier.Item{URL: "http://127.0.0.1:1/", Host: "127.0.0.1:1"})
	lease, err := f.fr.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Done(frontier.Outcome{})
	failed := time.Now()
	ok, _, server, token := f.serverTurn(ctx, lease)
	if !ok || server != "127.0.0.1" || token != "" {
		t.Fatalf("serverTurn = %v, server %q, token %q; want to go on the local limit of 127.0.0.1", ok, server, token)
	}
	f.gate.mu.Lock()
	next := f.gate.next[server]
	f.gate.mu.Unlock()
	if want := failed.Add(cfg.IPDelay + cacheTimeout); next.Before(want) {
		t.Errorf("next start to %s reserved %v after the failed call, want at least %v", server, next.Sub(failed), cfg.IPDelay+cacheTimeout)
	}
}
