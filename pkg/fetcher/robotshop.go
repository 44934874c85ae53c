package fetcher

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// A robots.txt that redirects is not followed in place. Every hop is a
// request to the hop's host, and a host's requests are made by its owner in
// its turn, behind its delay and its server's slots: followed in place, 20
// hosts whose robots.txt redirect to one victim made 21 requests to it at
// once. So the owner of the redirecting host sends the hop to the owner of
// the target's host through crawl.urls (queue.KindRobots); that owner queues
// it first on the host (frontier.KindRobots), fetches it in the host's turn,
// and sends on either the next hop or the answer (queue.KindRobotsAnswer),
// which goes back to the first owner. Hops for one URL are fetched once for
// every host waiting on it, and their answer is kept a while for hosts that
// ask later.

// robotsHopWait is how long a host waits for the end of its robots.txt
// redirect chain before fetching its robots.txt again. Each hop waits its
// host's turn, which a long Crawl-delay or a busy server can make long.
const robotsHopWait = 2 * time.Minute

// hopKeep is how long the end of a redirect chain is kept for hosts that
// redirect to the same URL later, and hopKeepBytes bounds what is kept.
const (
	hopKeep      = 10 * time.Minute
	hopKeepBytes = 8 << 20
	hopKeepMax   = 4096
)

// hopResend is how often a host waiting on its redirect chain asks again:
// the hop's queued item lives in its owner's memory and is lost when that
// fetcher restarts or the hop's partition moves. Asking again costs a
// record, no request: the hop's owner queues it only if it is not waiting
// on it already, and answers from what it fetched lately.
const hopResend = 10 * time.Second

// robotsHop is a host's robots.txt redirect chain in progress.
type robotsHop struct {
	url   string    // the hop its robots.txt redirected to
	until time.Time // when the host stops waiting for the answer
	sent  time.Time // when the hop was last asked for
}

// waitHop is the turn of a host waiting on its redirect chain: no request,
// the hop asked for again if it has been a while.
func (f *Fetcher) waitHop(lease *frontier.Lease, scheme string, now time.Time) frontier.Outcome {
	f.mu.Lock()
	hi := f.hostOf(lease.Host)
	hop := hi.hop
	resend := now.Sub(hop.sent) >= hopResend
	if resend {
		hi.hop.sent = now
	}
	f.mu.Unlock()
	if resend {
		f.sendRobots([]*kgo.Record{f.hopRecord(hop.url, robotsURLOf(scheme, lease.Host), 1)})
	}
	until := now.Add(hopResend)
	if hop.until.Before(until) {
		until = hop.until
	}
	return frontier.Outcome{Until: until}
}

// hopBook is what this fetcher knows of the hops it was asked to fetch:
// the hosts waiting on each (their robots.txt URLs, with the redirects
// that led to the hop) and the answers fetched lately. f.mu guards it.
type hopBook struct {
	waiting map[string]*hopWaiters
	done    map[string]hopDone
	order   []string // done's keys, oldest first
	bytes   int
}

type hopWaiters struct {
	since time.Time
	hosts map[string]int // robots.txt URL -> redirects before this hop
}

type hopDone struct {
	answer queue.RobotsAnswer
	next   string // set instead of an answer: the chain goes on there
	at     time.Time
}

// wait adds a host waiting on hop and reports whether the hop must be
// queued: no one waits on it yet, or whoever queued it did long enough ago
// that its item may have been lost with a partition.
func (b *hopBook) wait(hop, robotsURL string, redirects int, now time.Time) bool {
	if b.waiting == nil {
		b.waiting = map[string]*hopWaiters{}
	}
	w := b.waiting[hop]
	queue := w == nil || now.Sub(w.since) > robotsHopWait
	if w == nil {
		w = &hopWaiters{hosts: map[string]int{}}
		b.waiting[hop] = w
	}
	if queue {
		w.since = now
	}
	w.hosts[robotsURL] = redirects
	return queue
}

// finish takes the hosts waiting on hop and keeps how it ended.
func (b *hopBook) finish(hop string, d hopDone) map[string]int {
	w := b.waiting[hop]
	delete(b.waiting, hop)
	if _, ok := b.done[hop]; !ok {
		if b.done == nil {
			b.done = map[string]hopDone{}
		}
		b.done[hop] = d
		b.order = append(b.order, hop)
		b.bytes += len(d.answer.Body)
		for len(b.order) > 0 && (b.bytes > hopKeepBytes || len(b.order) > hopKeepMax) {
			b.forget(b.order[0])
		}
	}
	if w == nil {
		return nil
	}
	return w.hosts
}

// ended returns how hop ended, if that was recently.
func (b *hopBook) ended(hop string, now time.Time) (hopDone, bool) {
	for len(b.order) > 0 && now.Sub(b.done[b.order[0]].at) > hopKeep {
		b.forget(b.order[0])
	}
	d, ok := b.done[hop]
	return d, ok
}

func (b *hopBook) forget(hop string) {
	b.bytes -= len(b.done[hop].answer.Body)
	delete(b.done, hop)
	b.order = b.order[1:]
}

// robotsRecords handles a poll's robots.txt redirect records: hops to fetch
// (of hosts this fetcher owns) and answers for hosts waiting here. It
// returns the records that carry hops on or answers back.
func (f *Fetcher) robotsRecords(recs []*kgo.Record, decoded []decodedURL) []*kgo.Record {
	now := time.Now()
	var out []*kgo.Record
	type answer struct {
		host string
		a    queue.RobotsAnswer
	}
	var answers []answer
	f.mu.Lock()
	for i, rec := range recs {
		d := &decoded[i]
		if d.decodeErr != nil {
			continue
		}
		switch d.u.Kind {
		case queue.KindRobotsAnswer:
			if d.u.Robots != nil {
				answers = append(answers, answer{urlnorm.Authority(d.u.URL), *d.u.Robots})
			}
		case queue.KindRobots:
			if d.normErr != nil {
				// The producer normalized it: this cannot be a URL anyone
				// can fetch. The host waiting on it finds robots.txt
				// unavailable.
				out = append(out, f.answerRecord(d.u.Parent, queue.RobotsAnswer{From: d.u.URL, Error: d.normErr.Error(), Class: fetch.ClassInvalidURL}))
				continue
			}
			if done, ok := f.hops.ended(d.norm, now); ok {
				out = append(out, f.hopOn(d.u.Parent, d.u.Redirects, done)...)
				continue
			}
			host := urlnorm.Authority(d.norm)
			if !f.owned[rec.Partition] || queue.PartitionOf(host) != rec.Partition {
				continue // the host waiting on it asks again when its wait ends
			}
			if f.hops.wait(d.norm, d.u.Parent, d.u.Redirects, now) {
				f.fr.Push(frontier.Item{URL: d.norm, Host: host, Partition: rec.Partition, Kind: frontier.KindRobots, Redirects: d.u.Redirects})
			}
		}
	}
	f.mu.Unlock()
	for _, a := range answers {
		f.robotsAnswered(a.host, a.a, now)
	}
	return out
}

// hopOn is what to send a host waiting on a hop that ended with d, reached
// after redirects redirects: its answer, or the next hop.
func (f *Fetcher) hopOn(robotsURL string, redirects int, d hopDone) []*kgo.Record {
	if d.next != "" {
		if rec := f.hopRecord(d.next, robotsURL, redirects+1); rec != nil {
			return []*kgo.Record{rec}
		}
		return nil
	}
	return []*kgo.Record{f.answerRecord(robotsURL, d.answer)}
}

// hopRecord asks the owner of hop's host to fetch it for the host whose
// robots.txt is robotsURL.
func (f *Fetcher) hopRecord(hop, robotsURL string, redirects int) *kgo.Record {
	host := urlnorm.Authority(hop)
	v, err := queue.EncodeURL(queue.URL{URL: hop, Kind: queue.KindRobots, Parent: robotsURL, Redirects: redirects, DiscoveredAt: time.Now()})
	if err != nil || host == "" {
		return nil
	}
	return &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)}
}

// answerRecord sends the end of a redirect chain to the owner of the host
// whose robots.txt is robotsURL.
func (f *Fetcher) answerRecord(robotsURL string, a queue.RobotsAnswer) *kgo.Record {
	host := urlnorm.Authority(robotsURL)
	v, _ := queue.EncodeURL(queue.URL{URL: robotsURL, Kind: queue.KindRobotsAnswer, Robots: &a, DiscoveredAt: time.Now()})
	return &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)}
}

// sendRobots produces hop and answer records; a lost one costs the waiting
// host a robots.txt fetch when its wait ends.
func (f *Fetcher) sendRobots(recs []*kgo.Record) {
	for _, r := range recs {
		if r == nil {
			continue
		}
		f.inFlight.Add(1)
		f.kafka.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			defer f.inFlight.Add(-1)
			if err != nil {
				f.log.Warn("send robots.txt redirect record", "key", string(r.Key), "err", err)
			}
		})
	}
}

// fetchHop fetches, in its host's turn, a URL other hosts' robots.txt
// redirected to, and sends each of them the next hop or the answer.
func (f *Fetcher) fetchHop(ctx context.Context, lease *frontier.Lease, it frontier.Item) frontier.Outcome {
	f.mu.Lock()
	done, ok := f.hops.ended(it.URL, time.Now())
	var waiters map[string]int
	if ok {
		// Fetched for hosts that asked before this item was served.
		waiters = f.hops.finish(it.URL, done)
	}
	f.mu.Unlock()
	if ok {
		f.sendRobots(f.hopsOn(waiters, done))
		return frontier.Outcome{}
	}
	start, err := f.startRequest(ctx, lease)
	if err != nil {
		lease.Requeue(it)
		return busyOutcome(err)
	}
	status, location, body, err := f.getRobots(ctx, it.URL, lease.Host)
	at := time.Now().Add(politenessMargin)
	out := frontier.Outcome{Requested: true, At: at, Status: status, Duration: at.Sub(start), Failed: err != nil || status >= 500}
	if err != nil && (ctx.Err() != nil || errors.Is(err, errStopping)) {
		lease.Requeue(it)
		return out
	}
	f.metrics.robotsFetches.WithLabelValues(robotsOutcome(status, err)).Inc()
	d := hopDone{at: at, answer: queue.RobotsAnswer{From: it.URL, Status: status}}
	switch next, end, follow := robots.Next(it.URL, it.Redirects, status, location); {
	case err != nil:
		d.answer = queue.RobotsAnswer{From: it.URL, Error: err.Error(), Class: fetch.Classify(err)}
	case follow:
		if n, nerr := f.norm.Normalize(next); nerr == nil {
			d.next = n
		} else {
			d.answer.Status = end
		}
	default:
		d.answer.Status = end
		if end == status {
			d.answer.Body = capRobots(body)
		}
	}
	f.mu.Lock()
	waiters = f.hops.finish(it.URL, d)
	own := ""
	if d.next == "" {
		for robotsURL := range waiters {
			if urlnorm.Authority(robotsURL) == lease.Host {
				own = robotsURL
				delete(waiters, own)
			}
		}
	}
	f.mu.Unlock()
	f.sendRobots(f.hopsOn(waiters, d))
	if own != "" {
		// The chain ended on the host whose robots.txt began it: its answer
		// is taken in this turn, not sent round through crawl.urls, so its
		// Crawl-delay counts from this request (Done schedules with it) and
		// is saved with the host if its partition moves first. Sent round,
		// the answer reached a new owner that was not waiting on it, which
		// fetched robots.txt again 46 ms after this hop under a 400 ms delay.
		// This fetcher may not be the one that asked: a previous owner
		// fetched robots.txt and sent the hop before its partition moved
		// here. Its answer serves the host all the same unless the host
		// has fresh rules already; left unread, the host's next turn asked
		// for robots.txt again, again 46 ms after this hop under 400 ms.
		f.mu.Lock()
		hi := f.hostOf(lease.Host)
		take, prev := hi.hop.url != "" || !hi.robots.Fresh(at), hi.robots
		hi.hop = robotsHop{}
		f.mu.Unlock()
		if take {
			f.recordRobots(ctx, lease.Host, lease.Partition, schemeOf(own), d.answer, at, prev)
		}
	} else if d.next == "" && it.URL == robotsURLOf(schemeOf(it.URL), lease.Host) {
		// The hop was this host's own robots.txt: it serves the host too.
		f.mu.Lock()
		hi := f.hostOf(lease.Host)
		prev, stale := hi.robots, !hi.robots.Fresh(at) && hi.hop.url == ""
		f.mu.Unlock()
		if stale {
			f.recordRobots(ctx, lease.Host, lease.Partition, schemeOf(it.URL), d.answer, at, prev)
		}
	}
	return out
}

func (f *Fetcher) hopsOn(waiters map[string]int, d hopDone) []*kgo.Record {
	var out []*kgo.Record
	for robotsURL, redirects := range waiters {
		out = append(out, f.hopOn(robotsURL, redirects, d)...)
	}
	return out
}

// robotsAnswered takes the end of host's robots.txt redirect chain, if the
// host is still waiting for it, and lets the host go.
func (f *Fetcher) robotsAnswered(host string, a queue.RobotsAnswer, now time.Time) {
	f.mu.Lock()
	hi := f.hosts[host]
	if hi == nil || hi.hop.url == "" {
		f.mu.Unlock()
		return // not waiting (any more): its next robots.txt fetch asks again
	}
	hi.hop = robotsHop{}
	prev, scheme := hi.robots, hi.scheme
	partition := queue.PartitionOf(host)
	f.mu.Unlock()
	if scheme == "" {
		scheme = "http"
	}
	f.recordRobots(context.Background(), host, partition, scheme, a, now, prev)
	f.fr.Wake(host)
}

// capRobots keeps what robots.Parse reads of a body.
func capRobots(body []byte) []byte {
	if len(body) > robots.MaxSize+1 {
		body = body[:robots.MaxSize+1]
	}
	return body
}

func robotsURLOf(scheme, host string) string {
	return scheme + "://" + host + "/robots.txt"
}

// getRobots requests a robots.txt, or a hop of its redirect chain, and sends
// the answer to be archived: replay tools and audits read what the crawler
// read.
func (f *Fetcher) getRobots(ctx context.Context, u, host string) (status int, location string, body []byte, err error) {
	resp, err := f.do(ctx, host, fetch.Request{URL: u})
	if err != nil {
		return 0, "", nil, err
	}
	f.archiveRobots(u, host, resp)
	return resp.Status, resp.Location, resp.Body, nil
}

// archiveRobots sends a robots.txt answer to the parsers, which write it to
// the WARC and nothing else. A lost one costs its record, nothing more.
func (f *Fetcher) archiveRobots(u, host string, resp *fetch.Response) {
	p := pageOf(frontier.Item{URL: u, Host: host}, resp)
	p.Kind = queue.KindRobots
	v, err := queue.EncodePage(p)
	if err != nil {
		return
	}
	rec := &kgo.Record{Topic: queue.TopicPages, Key: []byte(u), Value: v, Partition: queue.PagePartitionOf(u, f.cfg.PagesPartitions)}
	f.inFlight.Add(1)
	f.kafka.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
		defer f.inFlight.Add(-1)
		if err != nil {
			f.log.Warn("archive robots.txt answer", "url", u, "err", err)
		}
	})
}
