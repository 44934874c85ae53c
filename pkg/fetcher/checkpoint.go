package fetcher

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/frontier"
)

// Admission state and crawl.urls offsets are checkpointed together. A poll's
// records change the hosts' admission state in memory (the budgets a verdict
// grows, the evidence a link brings); the store has that state only from the
// host's next save. Committing a poll's offsets as soon as its URLs were
// stored would let a kill -9 between the commit and the save lose what those
// records taught: the next owner restores budgets that never saw them, and
// the URLs they would have released stay held for good. So a poll's offsets
// are committed by the save that follows it (and by a revoke or the stop,
// which save first); after a crash the next owner replays exactly the records
// its restored state has not seen.

// admitted notes that recs are in the store: their offsets are committed with
// the next save of the hosts' state. It also takes back the offsets of a
// checkpoint that could not commit them.
func (f *Fetcher) admitted(recs []*kgo.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range recs {
		if !f.owned[r.Partition] {
			continue
		}
		if p := f.pending[r.Partition]; p == nil || r.Offset > p.Offset {
			f.pending[r.Partition] = r
		}
	}
}

// checkpoint saves the state of the hosts that changed and then commits the
// offsets of the records admitted before it began.
func (f *Fetcher) checkpoint(ctx context.Context) error {
	f.commitMu.Lock()
	defer f.commitMu.Unlock()
	f.mu.Lock()
	states := f.dirtyStatesLocked()
	commit := make([]*kgo.Record, 0, len(f.pending))
	for _, r := range f.pending {
		commit = append(commit, r)
	}
	clear(f.pending)
	f.mu.Unlock()
	if err := f.save(ctx, states, time.Now().Add(-fetchedHold)); err != nil {
		f.admitted(commit) // for the next checkpoint; a partition released meanwhile was committed by its release
		return err
	}
	if len(commit) == 0 {
		return nil
	}
	if err := f.kafka.CommitRecords(ctx, commit...); err != nil {
		f.admitted(commit) // for the next checkpoint; a partition released meanwhile was committed by its release
		return fmt.Errorf("commit crawl.urls offsets: %w", err)
	}
	return nil
}

// unpoll rewinds each partition of recs, records a poll returned that will
// not be admitted (the stop began as they came), to the first of them. The
// client counts what a poll returned as consumed, and the stop's and the
// leave's commits take that: those URLs were skipped for good
// (TestClusterHandover: a page neither admitted nor excluded after a SIGTERM).
func (f *Fetcher) unpoll(recs []*kgo.Record) {
	first := map[string]map[int32]kgo.EpochOffset{}
	for _, r := range recs {
		parts := first[r.Topic]
		if parts == nil {
			parts = map[int32]kgo.EpochOffset{}
			first[r.Topic] = parts
		}
		if o, ok := parts[r.Partition]; !ok || r.Offset < o.Offset {
			parts[r.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset}
		}
	}
	f.kafka.SetOffsets(first)
}

// dirtyStatesLocked returns the frontier state of every host whose state
// changed since its last save. f.mu is held.
func (f *Fetcher) dirtyStatesLocked() []frontier.HostState {
	var states []frontier.HostState
	for h := range f.dirty {
		if s, ok := f.fr.Host(h); ok {
			states = append(states, s)
		}
	}
	return states
}

// seenVerdict reports whether the verdict or settled record rec is already in
// the admission state in memory (a poll rewound after a failed admission
// brings it again), and notes it as seen.
func (f *Fetcher) seenVerdict(rec *kgo.Record) bool {
	if to, ok := f.observedTo[rec.Partition]; ok && rec.Offset <= to {
		return true
	}
	f.observedTo[rec.Partition] = rec.Offset
	return false
}
