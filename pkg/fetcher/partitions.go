package fetcher

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
)

// assigned loads the frontier of newly owned partitions from the store: host state
// first (so politeness carries over from the previous owner), then the queued URLs.
// It runs between polls (BlockRebalanceOnPoll), so no admission races with it.
func (f *Fetcher) assigned(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
	start := time.Now()
	f.member.touch() // the coordinator just confirmed us
	// A recrawl scan running while the partitions load sees only some of
	// them; it must not count as the scan that tells idle from not idle.
	f.mu.Lock()
	f.assigning++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.assigning--
		f.assignGen++
		f.mu.Unlock()
	}()
	f.settleResults(ctx, assigned[queue.TopicURLs])
	f.noteReplay(ctx, cl, assigned[queue.TopicURLs])
	var hosts, urls int
	for _, p := range assigned[queue.TopicURLs] {
		h, u, err := f.loadPartitionRetrying(ctx, p)
		if err != nil {
			return // the stop began or the client is closing
		}
		hosts += h
		urls += u
	}
	f.log.Info("partitions assigned", "partitions", len(assigned[queue.TopicURLs]), "hosts", hosts, "queued", urls, "took", time.Since(start).Round(time.Millisecond))
}

// noteReplay notes where the log of each partition just assigned ends. The
// records before that point past the committed offset may have been
// admitted by an owner that died before saving what they taught its hosts'
// budgets; their URLs known by now, they are counted again all the same
// (admission.Decider.Recount). Unread, nothing is recounted: a crash costs
// what it cost before.
// cl is the client the callback was given: f.kafka may not be set yet when
// the first assignment comes.
func (f *Fetcher) noteReplay(ctx context.Context, cl *kgo.Client, parts []int32) {
	if !f.cfg.Patterns.Enabled() || len(parts) == 0 {
		return
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, queue.TopicURLs)
	if err != nil {
		f.log.Warn("read the log ends of assigned partitions; a replay after a crash counts only new URLs", "err", err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range parts {
		if o, ok := ends.Lookup(queue.TopicURLs, p); ok && o.Err == nil && o.Offset > 0 {
			f.replayTo[p] = o.Offset
		}
	}
}

// Partition loads that fail are tried again after loadRetryMin, doubling up
// to loadRetryMax between tries.
const (
	loadRetryMin = 500 * time.Millisecond
	loadRetryMax = 10 * time.Second
)

// loadPartitionRetrying loads a partition until the store answers, or the
// stop begins or ctx ends. Without its state a partition cannot be served
// politely, and another member would meet the same store: waiting here
// keeps the partition (heartbeats go on during the callback) and holds
// admission until it is loaded, and the crawl resumes by itself when the
// store comes back. (Leaving the group instead, from inside the rebalance,
// waited for that rebalance to end, and a member that left would never
// come back.)
func (f *Fetcher) loadPartitionRetrying(ctx context.Context, p int32) (hosts, urls int, err error) {
	wait := loadRetryMin
	for attempt := 1; ; attempt++ {
		hosts, urls, err = f.loadPartition(ctx, p)
		if err == nil {
			if attempt > 1 {
				f.log.Info("partition loaded after store errors", "partition", p, "attempts", attempt)
			}
			return hosts, urls, nil
		}
		f.log.Error("load partition; retrying", "partition", p, "attempt", attempt, "retry_in", wait, "err", err)
		if perr := f.pause(ctx, wait); perr != nil {
			return 0, 0, perr
		}
		wait = min(2*wait, loadRetryMax)
	}
}

// loadPartition reads a partition's hosts, URL hashes and queued URLs from
// the store and takes them into the frontier. A failed load leaves nothing
// queued twice when it is tried again: the queued URLs are pushed only once
// all are read, and the rest can be applied again.
func (f *Fetcher) loadPartition(ctx context.Context, p int32) (hosts, urls int, err error) {
	rows, err := f.store.Hosts(ctx, p)
	if err != nil {
		return 0, 0, err
	}
	now := time.Now()
	f.mu.Lock()
	f.owned[p] = true
	delete(f.observedTo, p) // its records after the committed offset are all new to the state restored here
	for _, r := range rows {
		hi := f.hostOf(r.Host)
		hi.pages = r.Pages
		hi.errors = r.Errors
		if len(r.Admission) > 0 && hi.adm.Patterns == nil && f.cfg.Patterns.Enabled() {
			// The budgets the crawl earned on the host, before a restart or
			// under its previous owner.
			hp := admission.NewPatterns()
			if err := hp.Restore(r.Admission); err != nil {
				f.log.Warn("admission state of a host not restored; its budgets start afresh", "host", r.Host, "err", err)
			} else {
				hi.adm.Patterns = hp
			}
		}
		if len(r.Robots) > 0 {
			e := new(robots.Entry)
			if err := e.UnmarshalBinary(r.Robots); err == nil {
				hi.robots = e
				hi.sitemaps = true // queued when the entry was first fetched
			}
		}
		delay := f.hostDelay(r.Host, hi.robots)
		f.fr.SetHostDelay(r.Host, p, delay)
		// The previous owner's last request may be more recent than its last save
		// (a crash): waiting one full delay from now is always polite.
		f.fr.SetNextAllowed(r.Host, p, maxTime(r.NextAllowed, now.Add(max(delay, r.Backoff))))
	}
	f.mu.Unlock()
	// After the partition is owned: a change the control loop reads from
	// now on reaches its hosts too.
	controls, err := f.loadControls(ctx, p)
	if err != nil {
		return 0, 0, err
	}
	err = f.store.URLHashes(ctx, p, func(h int64) error {
		f.seen.Add(h)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var queued []store.URL
	err = f.store.QueuedURLs(ctx, p, func(u store.URL) error {
		queued = append(queued, u)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	held, err := f.heldRecords(ctx, p, queued)
	if err != nil {
		return 0, 0, err
	}
	f.markHeldUnread(rows, queued)
	for _, u := range queued {
		f.mu.Lock()
		hi := f.hostOf(u.Host)
		if hi.scheme == "" {
			hi.scheme = schemeOf(u.URL)
		}
		excluded := f.patternExcluded(controls, u.URL, u.Host)
		if excluded {
			f.updates = append(f.updates, store.URLUpdate{Hash: u.Hash, State: store.StateExcluded, Reason: control.ReasonPattern})
		} else {
			f.adm.Requeued(&hi.adm, u)
		}
		f.mu.Unlock()
		if !excluded {
			f.fr.Push(itemOf(u, false))
		}
	}
	for _, r := range held {
		f.kafka.Produce(ctx, r, f.logHeldProduce)
	}
	if len(held) > 0 {
		f.log.Info("URLs held back by pattern budgets sent to be decided again", "partition", p, "urls", len(held))
	}
	return len(rows), len(queued), nil
}

// heldRecords returns, as held crawl.urls records, the URLs the pattern
// budgets hold back on the hosts of p that still have URLs queued: the
// parked URLs of a previous owner, whose budgets lived in its memory. The
// store's exclusions are their durable record, so this covers an owner that
// was killed as well as one that handed them back (handBackParked; a URL
// decided twice is admitted once: the second finds it seen or parked). A
// host with nothing queued may have finished: its held URLs are read only
// if its budgets grow again (markHeldUnread).
func (f *Fetcher) heldRecords(ctx context.Context, p int32, queued []store.URL) ([]*kgo.Record, error) {
	if !f.cfg.Patterns.Enabled() || len(queued) == 0 {
		return nil, nil
	}
	busy := map[string]bool{}
	var hosts []string
	for _, u := range queued {
		if !busy[u.Host] {
			busy[u.Host] = true
			hosts = append(hosts, u.Host)
		}
	}
	recs, err := f.heldOf(ctx, hosts)
	if err != nil {
		return nil, fmt.Errorf("held urls of partition %d: %w", p, err)
	}
	return recs, nil
}

// markHeldUnread marks the hosts of rows with nothing queued, whose held
// URLs heldRecords left in the store. Nothing queued does not mean that
// their budgets are settled: the previous owner may have been killed (or
// stopped with an idle frontier) while its last pages' verdicts were still
// on their way, or a link from another host may come. Their held URLs are
// read when that happens (budget), not now, so a finished host's stay held
// without being decided again at every load.
func (f *Fetcher) markHeldUnread(rows []store.Host, queued []store.URL) {
	if !f.cfg.Patterns.Enabled() {
		return
	}
	busy := make(map[string]bool, len(queued))
	for _, u := range queued {
		busy[u.Host] = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rows {
		if hi := f.hosts[r.Host]; hi != nil && !busy[r.Host] {
			hi.heldUnread = true
		}
	}
}

// heldOf returns, as held crawl.urls records, URLs the budgets hold on
// hosts according to the store, up to the parking bound per host: the
// first held, or where the host's last read ended (heldReader). A read that
// comes back full leaves more in the store, and a pass during which URLs
// spilled past the bound may have left some behind it: the host is marked
// to read on once its parking has room again (admission.Host.MoreHeld), so
// that nothing held is stranded however many a host holds.
func (f *Fetcher) heldOf(ctx context.Context, hosts []string) ([]*kgo.Record, error) {
	perHost := f.cfg.Patterns.MaxParked
	from := make([]store.HeldFrom, len(hosts))
	f.mu.Lock()
	for i, h := range hosts {
		from[i] = store.HeldFrom{Host: h}
		if hi := f.hosts[h]; hi != nil {
			from[i] = hi.held.next(h, hi.spills())
		}
	}
	f.mu.Unlock()
	held, err := f.store.HeldURLs(ctx, from, perHost)
	if err != nil {
		return nil, err
	}
	read := make(map[string]int, len(hosts))
	last := make(map[string]store.Exclusion, len(hosts))
	recs := make([]*kgo.Record, 0, len(held))
	for _, e := range held {
		read[e.Host]++
		last[e.Host] = e
		v, err := queue.EncodeURL(heldURL(e))
		if err != nil {
			continue // recorded from a URL that no longer encodes: it stays excluded
		}
		recs = append(recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(e.Host), Value: v, Partition: queue.PartitionOf(e.Host)})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range hosts {
		if hi := f.hosts[h]; hi != nil && hi.held.done(read[h], perHost, last[h], hi.spills()) {
			hi.adm.MoreHeld()
		}
	}
	return recs, nil
}

// spills is how many URLs the host's budgets held past the parking bound.
func (hi *hostInfo) spills() int {
	if hi.adm.Patterns == nil {
		return 0
	}
	return hi.adm.Patterns.Spills()
}

// heldURL is a URL the store records as held, to be decided again: with the
// chain it was held with where the store has it (parkedURL).
func heldURL(e store.Exclusion) queue.URL {
	// Each time it was held again, a page had linked it: what the
	// referrers of a held URL count, kept across the restart.
	return queue.URL{URL: e.URL, Depth: e.Depth, Parent: e.Parent, CrawlID: e.CrawlID, Held: true,
		Referrers: max(e.Seen-1, 0), DupHops: e.DupHops, Chain: e.Chain}
}

// reloadOverflow sends the URLs held on hosts past the parking bound (only
// in the store) to be decided again, now that their hosts' parking has
// room: nothing held is written off, however many a host holds.
func (f *Fetcher) reloadOverflow(ctx context.Context, hosts []string) {
	recs, err := f.heldOf(ctx, hosts)
	if err != nil {
		f.log.Warn("reload held urls past the parking bound; they stay held until the next reload", "hosts", len(hosts), "err", err)
		return
	}
	for _, r := range recs {
		f.kafka.Produce(ctx, r, f.logHeldProduce)
	}
	f.log.Debug("held URLs past the parking bound sent to be decided again", "hosts", len(hosts), "urls", len(recs))
}

func (f *Fetcher) logHeldProduce(r *kgo.Record, err error) {
	if err != nil {
		f.log.Warn("send a held URL to be decided again; it stays excluded", "partition", r.Partition, "err", err)
	}
}

// revoked hands partitions back: their hosts stop being scheduled, requests in
// flight finish, and each host's next-allowed time is saved for the next owner
// before offsets are committed and the partitions released.
func (f *Fetcher) revoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	f.commitMu.Lock()
	defer f.commitMu.Unlock()
	unsaved := f.release(ctx, revoked[queue.TopicURLs], true)
	// The commit below takes the partitions this fetcher keeps as well: their
	// hosts' state is saved first, as a checkpoint would (checkpoint.go). An
	// offset whose hosts' state could not be saved is not committed: the
	// next owner replays its records against the state the store has.
	f.mu.Lock()
	states := f.dirtyStatesLocked()
	f.mu.Unlock()
	offsets := cl.UncommittedOffsets()
	keptSaved := true
	if err := f.saveState(ctx, states); err != nil {
		f.log.Warn("save host state of kept partitions on revoke; their offsets wait for the next save", "err", err)
		keptSaved = false
	}
	for topic, parts := range offsets {
		for p := range parts {
			if slices.Contains(unsaved, p) || (!keptSaved && !slices.Contains(revoked[topic], p)) {
				delete(parts, p)
			}
		}
	}
	if len(offsets) == 0 {
		return
	}
	var cerr error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) { cerr = err })
	if cerr != nil {
		f.log.Warn("commit on revoke", "err", cerr)
		return
	}
	f.mu.Lock()
	for _, parts := range offsets {
		for p := range parts {
			delete(f.pending, p)
		}
	}
	f.mu.Unlock()
}

// lost drops partitions whose ownership could not be kept. Their state is not
// saved: another member may already own them.
func (f *Fetcher) lost(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	f.member.lost()
	f.release(ctx, lost[queue.TopicURLs], false)
}

func (f *Fetcher) release(ctx context.Context, parts []int32, save bool) (unsaved []int32) {
	// A store that refuses one partition's save (down, disk full) usually
	// refuses them all: each is tried, and the failures are logged once.
	var saveErr error
	defer func() {
		if saveErr != nil {
			f.log.Error("save host state on revoke", "partitions", len(unsaved), "of", len(parts), "first_partition", unsaved[0], "err", saveErr)
		}
	}()
	// As at a stop: with work left, the URLs the pattern budgets hold back on
	// these hosts go back to crawl.urls for the next owner to decide; a
	// fetcher that has finished its work had every verdict.
	busy := !f.fr.Idle()
	for _, p := range parts {
		// Not owned from here: the control loop must not bring back a host
		// of it into the frontier once RemovePartition has taken them out.
		f.mu.Lock()
		delete(f.owned, p)
		delete(f.pending, p) // committed by the revoke, or not at all if lost
		delete(f.observedTo, p)
		delete(f.replayTo, p)
		f.mu.Unlock()
		waitCtx, cancel := context.WithTimeout(ctx, 2*f.cfg.Fetch.TotalTimeout)
		states, err := f.fr.RemovePartition(waitCtx, p)
		cancel()
		if err != nil {
			f.log.Warn("release partition: in-flight requests did not finish", "partition", p, "err", err)
		}
		if busy && len(states) > 0 {
			// The frontier keeps every host it was given until now, so states
			// name every host of p that can have URLs parked.
			hosts := make([]string, len(states))
			for i, s := range states {
				hosts[i] = s.Host
			}
			if n := f.handBackParked(ctx, hosts); n > 0 {
				f.log.Info("URLs held back by pattern budgets handed back with their partition", "partition", p, "urls", n)
			}
		}
		f.mu.Lock()
		delete(f.owned, p)
		f.forgetPartitionRevisits(p)
		for _, s := range states {
			if hi := f.hosts[s.Host]; hi != nil {
				hi.revisits = 0
			}
			if !save {
				delete(f.hosts, s.Host)
				delete(f.dirty, s.Host)
			}
		}
		f.mu.Unlock()
		if save {
			// Results still on their way to crawl.pages mark their URLs fetched
			// when acknowledged; wait for that, or the next owner, loading those
			// URLs as queued, would fetch them again.
			if err := f.kafka.Flush(ctx); err != nil {
				f.log.Warn("flush fetch results on revoke", "partition", p, "err", err)
			}
			if err := f.saveState(ctx, states); err != nil {
				unsaved = append(unsaved, p)
				if saveErr == nil {
					saveErr = err
				}
			}
			f.mu.Lock()
			for _, s := range states {
				delete(f.hosts, s.Host)
			}
			f.mu.Unlock()
		}
	}
	return unsaved
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
