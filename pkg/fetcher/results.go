package fetcher

import (
	"context"
	"sync"
	"time"
)

// unackedResults counts the fetch results the broker has not acknowledged yet,
// by host and by crawl.urls partition. Until a result is acknowledged its URL
// is still queued in the store, so whoever loads the partition next (after a
// rebalance, a restart of this fetcher or of the broker) fetches it again.
type unackedResults struct {
	mu    sync.Mutex
	hosts map[string]int
	parts map[int32]int
}

// add counts n more results of host (n < 0: acknowledged) and reports
// whether the host has none left unacknowledged.
func (u *unackedResults) add(host string, partition int32, n int) (clear bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.hosts == nil {
		u.hosts, u.parts = map[string]int{}, map[int32]int{}
	}
	if u.hosts[host] += n; u.hosts[host] <= 0 {
		delete(u.hosts, host)
		clear = true
	}
	if u.parts[partition] += n; u.parts[partition] <= 0 {
		delete(u.parts, partition)
	}
	return clear
}

// pending reports whether host has a result not yet acknowledged.
func (u *unackedResults) pending(host string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hosts[host] > 0
}

// in returns how many results of the partitions are not yet acknowledged.
func (u *unackedResults) in(partitions []int32) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, p := range partitions {
		n += u.parts[p]
	}
	return n
}

// ackWait is how long a host whose previous result is not acknowledged waits
// before it is looked at again. An acknowledgement takes the producer's linger
// (10ms) and a round trip, less than any host's delay, so a healthy broker
// holds no host back; a broker that is slow or gone holds each host to one
// result it may have to fetch again. The acknowledgement wakes the host
// (produce), and one that came while the host was being put back is seen
// there (holdForAck), so the wait is only a bound.
const ackWait = 20 * time.Millisecond

// settleResults makes this fetcher's own fetches in partitions durable as
// fetched before the partitions are loaded from the store. A fetcher handed
// back a partition it lost while results were still on their way (the group
// formed again after the broker restarted, or after a lapsed session) would
// find those URLs queued in the store and fetch them a second time. It waits
// for the acknowledgements, at most one fencing window (the coordinator has
// just answered, so the broker is up), then writes the pending marks.
func (f *Fetcher) settleResults(ctx context.Context, partitions []int32) {
	if f.unacked.in(partitions) == 0 {
		return
	}
	deadline := time.Now().Add(f.member.timeout)
	for f.unacked.in(partitions) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 10*time.Millisecond)
	}
	if n := f.unacked.in(partitions); n > 0 {
		f.log.Warn("loading partitions with fetch results not yet acknowledged; their URLs may be fetched again", "results", n, "waited", f.member.timeout)
	}
	if err := f.saveState(ctx, nil); err != nil {
		f.log.Error("save fetched marks before loading partitions", "err", err)
	}
}
