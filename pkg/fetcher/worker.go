package fetcher

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/bufpool"
	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// waitHeld waits while the fetcher is held (backpressure) until the hold
// ends or the stop begins. An operator's pause, which the controls' poll
// lifts, is looked at again every 20 ms, as is a hold whose log was not set
// yet (Hold sets the flag first).
func (f *Fetcher) waitHeld(ctx context.Context) {
	ends := f.holds.ending()
	if ends == nil || f.crawlPaused() {
		sleep(ctx, 20*time.Millisecond)
		return
	}
	select {
	case <-ends:
	case <-f.halted:
	case <-ctx.Done():
	}
}

// work serves leases until ctx ends or the frontier closes.
func (f *Fetcher) work(ctx context.Context) {
	for {
		if f.cfg.MaxPages > 0 && f.fetched.Load() >= f.cfg.MaxPages {
			f.limitOnce.Do(func() { close(f.limitHit) })
			f.halt()
			return
		}
		if f.stopping() {
			return
		}
		if !f.member.confirmed(time.Now()) {
			// Fenced: our partitions may already belong to someone else.
			f.metrics.fenced.Set(1)
			sleep(ctx, 100*time.Millisecond)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		f.metrics.fenced.Set(0)
		if f.held.Load() || f.crawlPaused() {
			f.waitHeld(ctx)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		lease, err := f.fr.Next(ctx)
		if err != nil {
			return
		}
		if f.stopping() {
			// The stop began while this worker waited: hand the host back untouched.
			lease.Done(frontier.Outcome{})
			return
		}
		if f.crawlPaused() {
			// Paused by an operator while this worker waited.
			lease.Done(frontier.Outcome{})
			continue
		}
		if f.unacked.pending(lease.Host) {
			// One result per host on its way to the broker at a time: until it
			// is acknowledged its URL is still queued in the store, and all
			// that a broker outage can cost in requests made again is one
			// per host.
			holdForAck(f.fr, lease, f.unacked.pending)
			continue
		}
		ok, out, _ := f.serverTurn(ctx, lease)
		if !ok {
			lease.Done(out) // the host waits for its server
			continue
		}
		f.inFlight.Add(1)
		if f.member.confirmed(time.Now()) {
			out = f.serve(ctx, lease)
		}
		if out.Requested && !out.At.IsZero() {
			// The host's delay runs from out.At, but the host is not
			// scheduled again until Done: a return slower than the delay
			// costs its next request the difference.
			f.metrics.stage["return"].Observe(max(time.Since(out.At.Add(-politenessMargin)), 0).Seconds())
		}
		f.gate.settle(lease.Host) // a start whose request never went (f.do settles those that did)
		lease.Done(out)
		if out.Hold {
			f.gateRecheck(lease.Host)
		}
		var g grant
		if f.slots != nil {
			g, _ = f.gate.take(lease.Host)
		}
		if out.Requested {
			if h, ok := f.fr.Host(lease.Host); ok && !out.At.IsZero() {
				f.metrics.politeness.Observe(max(h.NextAllowed.Sub(out.At), 0).Seconds())
			}
		}
		f.afterRequest(lease.Host, g, out.Requested)
		if out.Requested {
			f.noteEmpty(lease.Host)
		}
		f.inFlight.Add(-1)
	}
}

// holdForAck puts a leased host whose last result the broker has not
// acknowledged back in the schedule, held until the acknowledgement's
// Unhold (or ackWait). An acknowledgement that came between the caller's
// check and Done found the host leased, where Unhold does nothing, and
// left it held for all of ackWait: asked again once the host is back,
// pending ends that hold at once.
func holdForAck(fr *frontier.Frontier, lease *frontier.Lease, pending func(host string) bool) {
	lease.Done(frontier.Outcome{Until: time.Now().Add(ackWait), Hold: true})
	if !pending(lease.Host) {
		fr.Unhold(lease.Host)
	}
}

// serve makes at most one request to the lease's host: its robots.txt when the
// cached copy is missing or stale, else its next allowed URL.
func (f *Fetcher) serve(ctx context.Context, lease *frontier.Lease) frontier.Outcome {
	f.mu.Lock()
	hi := f.hostOf(lease.Host)
	entry := hi.robots
	scheme := hi.scheme
	hop := hi.hop
	checkShared := f.cache != nil && !hi.shared
	hi.shared = true
	f.mu.Unlock()
	if scheme == "" {
		scheme = "http"
	}
	now := time.Now()
	if checkShared {
		// First turn of a host since this fetcher got it: honour the time its
		// previous owner published, even if that owner died without saving.
		if t, ok := f.sharedNextAllowed(ctx, lease.Host); ok && t.After(now) {
			return frontier.Outcome{Until: t}
		}
	}
	if it, ok := lease.TakeRobots(); ok {
		// Another host's robots.txt redirected here: its hop needs no
		// permission of this host's robots.txt, only its turn.
		return f.fetchHop(ctx, lease, it)
	}
	if hop.url != "" && now.Before(hop.until) {
		return f.waitHop(lease, scheme, now) // its robots.txt redirect is on its way
	}
	if !entry.Fresh(now) {
		if e := f.sharedRobots(ctx, lease.Host, now); e != nil {
			f.adoptRobots(lease, e)
			entry = e
		} else {
			return f.fetchRobots(ctx, lease, scheme, entry)
		}
	}
	if entry.Kind == robots.KindDisallowAll {
		// Unreachable robots.txt: nothing but robots.txt may be requested until it
		// answers; Fresh above turns false when the retry is due. A host that has
		// failed too often has its newly queued URLs given up at once (recorded),
		// so one dead host does not hold a crawl open for its whole backoff.
		if f.robotsExhausted(entry) {
			f.giveUp(lease, entry, now)
		}
		return frontier.Outcome{Until: entry.Expires}
	}
	// URLs the take gate told to wait keep their places (gate.go).
	var waiting []frontier.Item
	for {
		it, ok := lease.Take()
		if !ok {
			if len(waiting) > 0 {
				lease.Requeue(waiting...)
				return f.gateHold(lease.Host)
			}
			return frontier.Outcome{}
		}
		if f.excludedAtTake(it) {
			continue
		}
		if !entry.Allowed(pathAndQuery(it.URL)) {
			f.metrics.robotsDecisions.WithLabelValues("disallowed").Inc()
			f.queueUpdate(store.URLUpdate{Hash: hashOf(it), State: store.StateExcluded, Reason: ReasonRobots})
			f.settle(it)
			continue
		}
		switch turn, reason := f.turn(it); turn {
		case admission.Wait:
			waiting = append(waiting, it)
			continue
		case admission.Hold:
			f.holdAtTake(ctx, it, reason)
			continue
		}
		if len(waiting) > 0 {
			lease.Requeue(waiting...)
		}
		f.metrics.robotsDecisions.WithLabelValues("allowed").Inc()
		return f.fetchItem(ctx, lease, it)
	}
}

// fetchRobots fetches and evaluates the host's robots.txt. It is the host's request
// for this turn; the URL that would have gone next stays queued. A redirect
// is not followed here: its hop waits for its own host's turn (robotshop.go)
// and this host for the answer.
func (f *Fetcher) fetchRobots(ctx context.Context, lease *frontier.Lease, scheme string, prev *robots.Entry) frontier.Outcome {
	robotsURL := robotsURLOf(scheme, lease.Host)
	start, err := f.startRequest(ctx, lease)
	if err != nil {
		return busyOutcome(err) // a stop interrupted the wait, or the server is busy: nothing was sent
	}
	status, location, body, err := f.getRobots(ctx, robotsURL, lease.Host)
	if err != nil && (ctx.Err() != nil || errors.Is(err, errStopping)) {
		// Shutting down: record nothing, the host keeps its place and its
		// robots.txt is fetched again by the next run.
		if ctx.Err() != nil {
			f.cancelled.Add(1)
		}
		return frontier.Outcome{Requested: true, At: time.Now().Add(politenessMargin)}
	}
	done := time.Now().Add(politenessMargin)
	outcome := frontier.Outcome{Requested: true, At: done, Duration: done.Sub(start)}
	f.metrics.robotsFetches.WithLabelValues(robotsOutcome(status, err)).Inc()
	a := queue.RobotsAnswer{From: robotsURL, Status: status, Body: body}
	if err != nil {
		a = queue.RobotsAnswer{From: robotsURL, Error: err.Error(), Class: fetch.Classify(err)}
	} else if next, end, follow := robots.Next(robotsURL, 0, status, location); follow {
		if n, nerr := f.norm.Normalize(next); nerr == nil {
			if rec := f.hopRecord(n, robotsURL, 1); rec != nil {
				f.mu.Lock()
				f.hostOf(lease.Host).hop = robotsHop{url: n, until: done.Add(robotsHopWait), sent: done}
				f.mu.Unlock()
				f.sendRobots([]*kgo.Record{rec})
				outcome.Until = done.Add(hopResend)
				return outcome
			}
		}
		a.Body, a.Status = nil, status
	} else if end != status {
		a.Body, a.Status = nil, end
	}
	entry := f.recordRobots(ctx, lease.Host, lease.Partition, scheme, a, done, prev)
	if entry.Kind == robots.KindDisallowAll {
		outcome.Until = entry.Expires
		if f.robotsExhausted(entry) {
			// Give up on what is queued (with a reason, so nothing is lost
			// silently); URLs discovered after the retry time try again.
			f.giveUp(lease, entry, done)
			f.log.Info("giving up on host's queued URLs: its robots.txt could not be read", "host", lease.Host, "reason", entry.FailureReason(), "status", status, "failures", entry.Failures, "err", err, "retry_at", entry.Expires)
		}
	}
	return outcome
}

// recordRobots evaluates how a host's robots.txt fetch ended, here or at the
// end of a redirect chain, and makes it the host's rules.
func (f *Fetcher) recordRobots(ctx context.Context, host string, partition int32, scheme string, a queue.RobotsAnswer, done time.Time, prev *robots.Entry) *robots.Entry {
	var err error
	if a.Error != "" {
		err = errors.New(a.Error)
	}
	entry := robots.Evaluate(f.policy, a.Status, a.Body, err, done, prev)
	entry.Reason, entry.Permanent = fetch.Unreachable(a.Class)
	f.shareRobots(ctx, host, entry, done)
	f.mu.Lock()
	hi := f.hostOf(host)
	hi.robots = entry
	firstSitemaps := !hi.sitemaps && entry.Kind != robots.KindDisallowAll
	if firstSitemaps {
		hi.sitemaps = true
	}
	f.dirty[host] = true
	f.mu.Unlock()
	f.fr.SetHostDelay(host, partition, f.hostDelay(host, entry))
	if firstSitemaps {
		f.queueSitemaps(host, scheme, entry)
	}
	return entry
}

// adoptRobots takes a robots.txt entry another fetcher fetched and cached. Its
// sitemaps were queued by whoever fetched it.
func (f *Fetcher) adoptRobots(lease *frontier.Lease, e *robots.Entry) {
	f.mu.Lock()
	hi := f.hostOf(lease.Host)
	hi.robots = e
	hi.sitemaps = true
	f.dirty[lease.Host] = true
	f.mu.Unlock()
	f.fr.SetHostDelay(lease.Host, lease.Partition, f.hostDelay(lease.Host, e))
}

// giveUp records every queued URL of the host as failed, with what kept its
// robots.txt from being read.
func (f *Fetcher) giveUp(lease *frontier.Lease, e *robots.Entry, at time.Time) {
	reason := e.FailureReason()
	for _, it := range lease.Drain() {
		if it.Kind == frontier.KindRobots {
			lease.Requeue(it) // another host's robots.txt hop: not this host's URL
			continue
		}
		f.queueUpdate(store.URLUpdate{Hash: hashOf(it), State: store.StateFailed, Reason: reason, Status: e.Status, FetchedAt: at})
	}
}

// startRequest takes the lease's turn at its server, the cluster's
// (sharedTurn, restartLate) and this process's (spaceStart), and records
// how long after its host was ready the request starts: the time politeness
// allowed and the crawl did not use. A *serverBusy error says the cluster's
// slots of the server are taken: no request goes, and the host waits.
func (f *Fetcher) startRequest(ctx context.Context, lease *frontier.Lease) (time.Time, error) {
	gate := time.Now()
	if err := f.sharedTurn(ctx, lease); err != nil {
		return time.Time{}, err
	}
	return f.startGranted(ctx, lease, gate)
}

// errNotMember: the fetcher's group membership was not confirmed at the
// moment its request would have started; nothing is sent.
var errNotMember = errors.New("group membership not confirmed: request not sent")

// startGranted is startRequest once the cluster's slot is taken; gate is
// when startRequest began.
func (f *Fetcher) startGranted(ctx context.Context, lease *frontier.Lease, gate time.Time) (time.Time, error) {
	if err := f.spaceStart(ctx, lease.Host, lease.Server()); err != nil {
		return time.Time{}, err
	}
	if err := f.restartLate(ctx, lease); err != nil {
		f.gate.settle(lease.Host)
		return time.Time{}, err
	}
	now := time.Now()
	if !f.member.confirmed(now) {
		f.gate.settle(lease.Host)
		// The worker checked the membership before the lease's checks and
		// the shared slot's call to Redis: a fetcher stopped meanwhile
		// (SIGSTOP, a long pause) may have lost its partitions, and its
		// request would be a zombie's (CI: TestFaultZombieFetcher, one
		// request 235 ms after the resume, before its reassignment).
		return time.Time{}, errNotMember
	}
	if !lease.Ready.IsZero() {
		f.metrics.readyToStart.Observe(max(now.Sub(lease.Ready), 0).Seconds())
		st := f.metrics.stage
		st["idle"].Observe(lease.Idle.Seconds())
		st["held"].Observe(lease.Held.Seconds())
		wait := max(lease.Taken.Sub(lease.Ready)-lease.Held, 0)
		bp := min(f.holds.overlap(lease.Ready, lease.Taken), wait)
		st["backpressure"].Observe(bp.Seconds())
		st["worker"].Observe((wait - bp).Seconds())
		st["handoff"].Observe(max(gate.Sub(lease.Taken), 0).Seconds())
		st["gate"].Observe(max(now.Sub(gate), 0).Seconds())
	}
	return now, nil
}

// politenessMargin is added to the completion time of every request before the
// host's delay starts. Our completion time is after the server finished sending,
// but a server that stamps its own end time late (scheduling, GC) could see a gap a
// few milliseconds short of the delay; the margin keeps the promise from its side.
// It is small because it is paid on every request: at 10 ms a host with a 100 ms
// delay got at most 91% of the rate it allows.
const politenessMargin = 2 * time.Millisecond

// queueSitemaps sends the sitemaps robots.txt names (and, if enabled, the
// conventional /sitemap.xml) to crawl.urls, where they pass admission like links.
func (f *Fetcher) queueSitemaps(host, scheme string, entry *robots.Entry) {
	sitemaps := entry.Sitemaps()
	var recs []*kgo.Record
	add := func(raw string, fromRobots bool) {
		// A URL that does not normalize still goes out, to this host's
		// owner: its admission records it excluded with the reason.
		owner := host
		u, err := f.norm.Normalize(raw)
		if err != nil {
			u = raw
		} else {
			owner = urlnorm.Authority(u)
		}
		v, err := queue.EncodeURL(queue.URL{URL: u, Kind: queue.KindSitemap, FromRobots: fromRobots, Parent: robotsURLOf(scheme, host), DiscoveredAt: time.Now()})
		if err != nil {
			return
		}
		recs = append(recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(owner), Value: v, Partition: queue.PartitionOf(owner)})
	}
	for _, s := range sitemaps {
		add(s, true)
	}
	if f.cfg.SitemapProbe {
		probe := scheme + "://" + host + "/sitemap.xml"
		listed := false
		for _, s := range sitemaps {
			listed = listed || s == probe
		}
		if !listed {
			add(probe, false)
		}
	}
	for _, r := range recs {
		f.inFlight.Add(1)
		f.kafka.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			defer f.inFlight.Add(-1)
			if err != nil {
				f.log.Warn("queue sitemap", "host", host, "err", err)
			}
		})
	}
}

// fetchItem fetches one URL and hands the result to the parser tier.
func (f *Fetcher) fetchItem(ctx context.Context, lease *frontier.Lease, it frontier.Item) frontier.Outcome {
	if _, err := f.startRequest(ctx, lease); err != nil {
		lease.Requeue(it) // a stop interrupted the wait, or the server is busy: nothing was sent
		return busyOutcome(err)
	}
	resp, err := f.do(ctx, lease.Host, fetch.Request{URL: it.URL, ETag: it.ETag, LastModified: it.LastModified})
	done := time.Now().Add(politenessMargin)
	if err != nil && ctx.Err() != nil {
		// Cancelled at the end of a stop's grace: the URL stays queued in the
		// store and is fetched after a restart. Put it back so a revoke sees
		// the right queue.
		f.cancelled.Add(1)
		lease.Requeue(it)
		return frontier.Outcome{Requested: true, At: done}
	}
	f.fetched.Add(1)
	hash := hashOf(it)
	if err != nil {
		class := fetch.Classify(err)
		f.errCount.Add(1)
		f.metrics.fetches.WithLabelValues("error", class).Inc()
		fault := fetch.FaultOf(err)
		// Only what the host does backs it off: one URL's broken answer
		// says nothing of its other URLs, which must not wait for it.
		out := frontier.Outcome{Requested: true, At: done, Failed: fault == fetch.FaultHost}
		retriable := fault != fetch.FaultPermanent
		if retriable && it.Attempts < f.cfg.MaxRetries {
			f.retry(lease, it, 0)
			return out
		}
		f.noteError(lease.Host)
		f.finished(it)
		f.settle(it)
		up := store.URLUpdate{Hash: hash, State: store.StateFailed, Reason: fetch.Reason(class), Attempts: it.Attempts + 1, FetchedAt: done}
		if f.cfg.Recrawl.Enabled && retriable {
			// Errors back off: tried again later, each miss doubling the wait.
			up.Backoff, up.BackoffMax = f.cfg.Recrawl.Default, f.cfg.Recrawl.Max
		}
		f.queueUpdate(up)
		return out
	}
	f.metrics.fetches.WithLabelValues("response", statusClass(resp.Status)).Inc()
	f.metrics.fetchSeconds.Observe(resp.Duration.Seconds())
	f.metrics.stage["dns"].Observe(resp.DNS.Seconds())
	f.metrics.stage["dial"].Observe(resp.Dial.Seconds())
	f.metrics.stage["send"].Observe(resp.Send.Seconds())
	f.metrics.fetchBytes.Add(float64(len(resp.RawResponse)))
	out := frontier.Outcome{Requested: true, At: done, Status: resp.Status, Duration: resp.Duration,
		Failed: hostFailure(resp.Status), RetryAfter: retryAfter(resp.Header.Get("Retry-After"), done)}
	if resp.Status >= 500 {
		f.errCount.Add(1)
	}
	if (resp.Status >= 500 || resp.Status == 429) && it.Attempts < f.cfg.MaxRetries {
		f.retry(lease, it, resp.Status)
		return out
	}
	if resp.Status >= 500 {
		f.noteError(lease.Host)
	}
	f.finished(it)
	if resp.Status < 200 || resp.Status >= 300 {
		// The parser gives no content verdict on it: a redirect is no
		// page (its target is judged), and a space whose probes redirect
		// would otherwise wait for them for good.
		f.settle(it)
	}
	f.produce(it, resp, hash)
	return out
}

// hostFailure tells a status that says the host is failing (a gateway or
// server that is down or overloaded: 502, 503, 504 and the rest of 5xx but
// 500 and 501) from one URL's own error (500, a script failing; 501), which
// is tried again without backing the host off. 429 backs off in any case.
func hostFailure(status int) bool {
	return status >= 502 && status <= 599
}

// retry puts a URL whose fetch failed back in its host's queue, and records
// the attempt in the store (the URL stays queued): whoever fetches it next,
// this fetcher, the partition's next owner or a restarted crawl, counts its
// retries on from there instead of from zero.
func (f *Fetcher) retry(lease *frontier.Lease, it frontier.Item, status int) {
	it.Attempts++
	lease.Retry(it)
	f.queueUpdate(store.URLUpdate{Hash: hashOf(it), State: store.StateQueued, Status: status, Attempts: it.Attempts})
}

// finished counts a revisit off its host's revisit budget once its fetch is
// over (not when it is put back for a retry).
func (f *Fetcher) finished(it frontier.Item) {
	if it.Revisit {
		f.mu.Lock()
		f.revisitDone(it.Host)
		f.mu.Unlock()
	}
}

// settle tells the admission of a URL's host, through crawl.urls, that a URL
// it admitted ended with no content verdict to come, so its space, or the
// suspected rewrite it probes (grounded URLs too: a variant linked from
// another section), stops waiting for one (pattern.Host.Settle). The record
// goes the way of the verdicts, to the host's owner, which may by then be
// another fetcher.
func (f *Fetcher) settle(it frontier.Item) {
	if it.Kind != frontier.KindPage || !f.cfg.Patterns.Enabled() {
		return
	}
	v, err := queue.EncodeURL(queue.URL{URL: it.URL, Kind: queue.KindSettled, DiscoveredAt: time.Now()})
	if err != nil {
		return
	}
	f.kafka.Produce(context.Background(), &kgo.Record{Topic: queue.TopicURLs, Key: []byte(it.Host), Value: v, Partition: it.Partition}, nil)
}

func (f *Fetcher) noteError(host string) {
	f.mu.Lock()
	f.hostOf(host).errors++
	f.dirty[host] = true
	f.mu.Unlock()
}

// produce sends the fetch result to crawl.pages and marks the URL fetched once the
// broker has it. If the process dies before that, the URL is still queued in the
// store and is fetched again after the restart: the in-flight window of invariant 4.
func (f *Fetcher) produce(it frontier.Item, resp *fetch.Response, hash int64) {
	p := pageOf(it, resp)
	p.Kind = it.Kind.String()
	// The record is a copy of the response, which can go at once; the
	// record goes when the broker has it (Produce's promise).
	v, err := queue.EncodePageIn(p, bufpool.Get)
	resp.Release()
	if err != nil {
		f.queueUpdate(store.URLUpdate{Hash: hash, State: store.StateFailed, Reason: "encode_result", Status: resp.Status, FetchedAt: resp.FetchedAt})
		return
	}
	rec := &kgo.Record{Topic: queue.TopicPages, Key: []byte(it.URL), Value: v, Partition: queue.PagePartitionOf(it.URL, f.cfg.PagesPartitions)}
	f.inFlight.Add(1)
	f.unacked.add(it.Host, it.Partition, 1)
	f.kafka.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
		bufpool.Put(v)
		defer f.inFlight.Add(-1)
		defer func() { // after the URL's mark is queued
			if f.unacked.add(it.Host, it.Partition, -1) {
				// A host held back for this acknowledgement (ackWait) goes
				// as soon as its politeness allows, not at the next poll.
				f.fr.Unhold(it.Host)
			}
		}()
		if err != nil {
			// Left queued in the store: a restart fetches it again.
			f.log.Error("produce fetch result", "url", it.URL, "err", err)
			return
		}
		f.queueUpdate(store.URLUpdate{Hash: hash, State: store.StateFetched, Status: resp.Status, Attempts: it.Attempts + 1, FetchedAt: resp.FetchedAt})
	})
}

// pageOf is the crawl.pages record of a fetch result.
func pageOf(it frontier.Item, resp *fetch.Response) queue.Page {
	return queue.Page{
		FetchID: newFetchID(), URL: it.URL, Host: it.Host, Kind: queue.KindPage, Depth: it.Depth,
		Redirects: it.Redirects, FromRobots: it.FromRobots, Status: resp.Status,
		ContentType: resp.Header.Get("Content-Type"), Location: resp.Location,
		XRobotsTag: resp.Header.Values("X-Robots-Tag"), ETag: resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"), Truncated: resp.TruncReason,
		IP: resp.RemoteIP, FetchedAt: resp.FetchedAt, DurationMS: ceilMS(resp.Duration),
		CrawlID: it.CrawlID, RawRequest: resp.RawRequest, RawResponse: resp.RawResponse, Body: resp.Body,
		DupHops: it.DupHops, Hops: it.Hops, Origin: it.Origin, ParentSpace: it.ParentSpace, RewriteOf: it.RewriteOf,
		Protocol: resp.Protocol, TLSVersion: resp.TLSVersion, CipherSuite: resp.CipherSuite,
	}
}

// newFetchID returns 32 hex digits laid out like a UUIDv7 (RFC 9562): 48 bits of
// Unix milliseconds, then 80 random bits. Stores index captures by fetch ID to
// make storing a batch twice harmless; IDs that grow with time land at the end of
// that index, where a random ID would dirty a different B-tree leaf per capture
// (and one more WAL page per capture in SQLite).
func newFetchID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}

func pathAndQuery(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "/"
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		if j := strings.IndexByte(rest, '?'); j >= 0 {
			return "/" + rest[j:]
		}
		return "/"
	}
	return rest[i:]
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return min(time.Duration(max(s, 0))*time.Second, time.Hour)
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		return min(max(t.Sub(now), 0), time.Hour)
	}
	return 0
}

func statusClass(s int) string {
	switch {
	case s >= 100 && s < 600:
		return strconv.Itoa(s/100) + "xx"
	}
	return "other"
}

func robotsOutcome(status int, err error) string {
	switch {
	case err != nil:
		return "unreachable"
	case status == 429:
		return "429"
	default:
		return statusClass(status)
	}
}

// ceilMS is d in milliseconds, rounded up: a fetch that took 0.3 ms on a
// near server took some time, and 0 means unknown to the store.
func ceilMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
