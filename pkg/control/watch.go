package control

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Source is where a Watcher reads the control state.
type Source interface {
	ControlVersion(ctx context.Context) (int64, error)
	Controls(ctx context.Context) (store.Controls, error)
}

// PollInterval is how often a fetcher polls the control version: an
// operator's change takes effect within about this long.
const PollInterval = time.Second

// Watcher keeps the current control state of a Source.
type Watcher struct {
	src Source
	cur atomic.Pointer[Set]
	mu  sync.Mutex // one load at a time, so a newer Set is never replaced by an older one
}

// NewWatcher returns a watcher whose state is empty (version -1: the first
// Poll loads) until it reads src.
func NewWatcher(src Source) *Watcher {
	w := &Watcher{src: src}
	w.cur.Store(&Set{Version: -1, hosts: map[string]store.HostControl{}})
	return w
}

// Current returns the state last read.
func (w *Watcher) Current() *Set { return w.cur.Load() }

// Poll reads the version and, when it moved, the whole state. changed
// reports whether the state moved; old and cur are the states before and
// after. A stored pattern that does not compile is left out and reported in
// err, with the rest of the state taken.
func (w *Watcher) Poll(ctx context.Context) (old, cur *Set, changed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old = w.cur.Load()
	v, err := w.src.ControlVersion(ctx)
	if err != nil {
		return old, old, false, err
	}
	if v == old.Version {
		return old, old, false, nil
	}
	return w.loadLocked(ctx, old)
}

// Load reads the whole state whatever its version: a fetcher calls it before
// it loads a partition, so the partition's hosts start with the controls of
// now, not of up to a poll ago.
func (w *Watcher) Load(ctx context.Context) (old, cur *Set, changed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.loadLocked(ctx, w.cur.Load())
}

func (w *Watcher) loadLocked(ctx context.Context, old *Set) (*Set, *Set, bool, error) {
	c, err := w.src.Controls(ctx)
	if err != nil {
		return old, old, false, err
	}
	cur, err := NewSet(c)
	w.cur.Store(cur)
	return old, cur, cur.Version != old.Version, err
}
