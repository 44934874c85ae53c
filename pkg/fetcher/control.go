package fetcher

import (
	"context"
	"time"

	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
)

// An operator's controls (package control) reach the fetcher through the
// store: controlLoop polls their version every control.PollInterval and
// applies a change to the hosts of the partitions this fetcher owns, and
// loadPartition reads them afresh before it loads a partition, so a host
// keeps its pause, delay and budget when its partition moves. Exclusion
// patterns are applied where the fetcher is the only writer: to its
// frontier's queued URLs when a pattern comes, to a partition's queued URLs
// as it loads, and to every candidate at admission.

// controlsOf returns the control store of st, or nil when it keeps none.
func controlsOf(st Store) store.ControlStore {
	if c, ok := st.(store.Controller); ok {
		return c.Control()
	}
	return nil
}

// controls returns the current control state (empty when the store keeps
// none).
func (f *Fetcher) controls() *control.Set {
	if f.control == nil {
		return emptyControls
	}
	return f.control.Current()
}

var emptyControls, _ = control.NewSet(store.Controls{})

// crawlPaused reports whether an operator paused the whole crawl.
func (f *Fetcher) crawlPaused() bool { return f.controls().Paused }

// controlLoop polls the control version until ctx ends.
func (f *Fetcher) controlLoop(ctx context.Context) {
	if f.control == nil {
		return
	}
	t := time.NewTicker(control.PollInterval)
	defer t.Stop()
	failing := false
	for {
		old, cur, changed, err := f.control.Poll(ctx)
		switch {
		case err != nil && !changed:
			// Not read (the store failed, or the stop cancelled ctx).
			if !failing && ctx.Err() == nil {
				f.log.Warn("read operator controls; keeping the last ones read", "version", old.Version, "err", err)
			}
			failing = true
		case err != nil: // read, but a stored pattern does not compile
			f.log.Error("operator controls: exclusion pattern left out", "err", err)
		default:
			failing = false
		}
		if changed {
			f.applyControls(ctx, old, cur)
		}
		f.flushPatternCounts(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// applyControls applies a new control state to the owned hosts.
func (f *Fetcher) applyControls(ctx context.Context, old, cur *control.Set) {
	if old.Paused != cur.Paused {
		f.log.Info("crawl paused by operator", "paused", cur.Paused, "version", cur.Version)
	}
	hosts := map[string]bool{}
	old.Hosts(func(h store.HostControl) { hosts[h.Host] = true })
	cur.Hosts(func(h store.HostControl) { hosts[h.Host] = true })
	for host := range hosts {
		f.applyHost(cur, host)
	}
	had := map[int64]bool{}
	for _, p := range old.Patterns() {
		had[p.ID] = true
	}
	for _, p := range cur.Patterns() {
		if had[p.ID] {
			continue
		}
		items := f.fr.Remove(p.Host, func(it frontier.Item) bool { return p.Match(it.URL, it.Host) })
		for _, it := range items {
			f.finished(it)
			f.settle(it)
			f.queueUpdate(store.URLUpdate{Hash: hashOf(it), State: store.StateExcluded, Reason: control.ReasonPattern})
		}
		f.mu.Lock()
		f.patternHits[p.ID] += int64(len(items))
		f.mu.Unlock()
		f.metrics.excluded.WithLabelValues(control.ReasonPattern).Add(float64(len(items)))
		f.log.Info("exclusion pattern applied to queued URLs", "pattern", p.ID, "excluded", len(items))
	}
}

// applyHost applies a host's controls to the frontier if this fetcher owns
// it. f.mu is held throughout, so a partition's release (which gives up its
// ownership under f.mu first) cannot interleave: no host of a released
// partition comes back into the frontier.
func (f *Fetcher) applyHost(set *control.Set, host string) {
	p := queue.PartitionOf(host)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.owned[p] {
		return
	}
	var entry *robots.Entry
	if hi := f.hosts[host]; hi != nil {
		entry = hi.robots
	}
	hc, ok := set.Host(host)
	if _, known := f.fr.Host(host); !known && !(ok && hc.Paused) {
		return // its delay is set when its robots.txt is read
	}
	f.fr.SetHostPaused(host, p, ok && hc.Paused)
	f.fr.SetHostDelay(host, p, f.hostDelay(host, entry))
	f.log.Info("operator's host controls applied", "host", host, "paused", ok && hc.Paused, "version", set.Version)
}

// flushPatternCounts adds what the patterns excluded to their counts in the
// store; a failed write is tried again at the next poll.
func (f *Fetcher) flushPatternCounts(ctx context.Context) {
	f.mu.Lock()
	hits := f.patternHits
	if len(hits) == 0 {
		f.mu.Unlock()
		return
	}
	f.patternHits = map[int64]int64{}
	f.mu.Unlock()
	if err := f.controlStore.CountExcluded(ctx, hits); err != nil {
		f.mu.Lock()
		for id, n := range hits {
			f.patternHits[id] += n
		}
		f.mu.Unlock()
		if ctx.Err() == nil {
			f.log.Warn("count pattern exclusions", "err", err)
		}
	}
}

// hostDelay returns the delay of a host whose robots.txt entry is e (nil
// when not read yet): its Crawl-delay or the default, or the operator's
// override, never below the Crawl-delay.
func (f *Fetcher) hostDelay(host string, e *robots.Entry) time.Duration {
	base := f.cfg.defaultDelay()
	crawl, ok := e.Delay(f.policy)
	if ok {
		base = crawl
	}
	hc, found := f.controls().Host(host)
	if !found {
		return base
	}
	return control.Delay(hc, base, crawl, ok, f.cfg.MinDelay)
}

// loadControls brings the control state up to date (one read of the
// version when nothing changed) once partition p is owned and before its
// queued URLs are pushed, and pauses the partition's paused hosts, so that
// none of them is leased in between.
func (f *Fetcher) loadControls(ctx context.Context, p int32) (*control.Set, error) {
	if f.control == nil {
		return emptyControls, nil
	}
	old, cur, changed, err := f.control.Poll(ctx)
	if err != nil && cur.Version < 0 {
		return nil, err // never read: the partition waits for the store
	}
	if changed {
		f.applyControls(ctx, old, cur)
	}
	cur.Hosts(func(h store.HostControl) {
		if h.Paused && queue.PartitionOf(h.Host) == p {
			f.fr.SetHostPaused(h.Host, p, true)
		}
	})
	return cur, nil
}

// patternExcluded reports whether an operator's pattern excludes a URL, and
// counts it for the pattern. f.mu is held.
func (f *Fetcher) patternExcluded(set *control.Set, url, host string) bool {
	p, ok := set.Excluded(url, host)
	if ok {
		f.patternHits[p.ID]++
	}
	return ok
}

// excludedAtTake records an item an exclusion pattern matches as excluded
// when a worker takes it: an admission that read the controls before the
// pattern came may push its URLs after the pattern took the queued ones out.
func (f *Fetcher) excludedAtTake(it frontier.Item) bool {
	set := f.controls()
	if len(set.Patterns()) == 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.patternExcluded(set, it.URL, it.Host) {
		return false
	}
	f.updates = append(f.updates, store.URLUpdate{Hash: hashOf(it), State: store.StateExcluded, Reason: control.ReasonPattern})
	if it.Revisit {
		f.revisitDone(it.Host)
	}
	f.settle(it)
	return true
}

// operator is the operator's controls as admission reads them; a pattern's
// hit is counted for the console.
type operator struct {
	f   *Fetcher
	set *control.Set
}

func (o operator) Excluded(url, host string) (string, bool) {
	if o.f.patternExcluded(o.set, url, host) {
		return control.ReasonPattern, true
	}
	return "", false
}

func (o operator) HostBudget(host string) (int64, bool) {
	hc, ok := o.set.Host(host)
	if !ok {
		return 0, false
	}
	return control.Budget(hc)
}
