package fetcher

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/admission"
	"github.com/crawlcluster/crawler/pkg/frontier"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The take gate (pattern.Config.TakeGate, -pattern-take-gate): a generated
// URL's space may have so many fetched pages awaiting their verdicts, and
// the URL is asked at its turn, not when it was found. Found faster than a
// polite crawl fetches them, a plain site's pages were held at admission on
// their way (an exclusion written, then forgotten) while its probes' verdicts
// caught up: at 10,000 hosts nearly every page once (docs/traps.md).

const (
	// gateHoldMax is how long a host whose queued URLs all wait for
	// verdicts is held at most before it is asked again; a verdict for it
	// ends the hold sooner (gateVerdict).
	gateHoldMax = 5 * time.Second
	// gateStall: a host whose URLs have waited this long with no verdict
	// for it since lets its next one go. A verdict lost for good (a
	// parser's record that never came) would otherwise hold the host, and
	// the crawl's end, for ever.
	gateStall = 2 * time.Minute
)

// turn asks the host's budgets whether a queued URL goes now. f.mu is not
// held.
func (f *Fetcher) turn(it frontier.Item) (admission.Turn, string) {
	if it.Kind != frontier.KindPage || it.Revisit || !f.cfg.Patterns.TakeGate {
		return admission.Go, ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	hi := f.hosts[it.Host]
	if hi == nil {
		return admission.Go, ""
	}
	t, reason := f.adm.Take(&hi.adm, hashOf(it), it.URL)
	switch t {
	case admission.Wait:
		now := time.Now()
		if hi.gateSince.IsZero() {
			hi.gateSince = now
		} else if now.Sub(hi.gateSince) > gateStall {
			f.metrics.gate.WithLabelValues("stalled").Inc()
			f.adm.Let(&hi.adm, hashOf(it), it.URL)
			return admission.Go, ""
		}
		f.metrics.gate.WithLabelValues("wait").Inc()
	case admission.Hold:
		// Its charge given back is saved with the host; a URL taken
		// changes nothing saved (what is in flight is not).
		f.dirty[it.Host] = true
		f.metrics.gate.WithLabelValues("hold").Inc()
	}
	return t, reason
}

// gateHold holds a host whose queued URLs all wait for their spaces'
// verdicts: the lease's outcome. Its next verdict ends the hold
// (gateVerdict); a verdict that came while the host was leased, when
// Unhold does nothing, is caught by gateRecheck after Done.
func (f *Fetcher) gateHold(host string) frontier.Outcome {
	f.mu.Lock()
	if hi := f.hosts[host]; hi != nil {
		hi.gated = true
		hi.gatedAt = hi.verdicts
	}
	f.mu.Unlock()
	return frontier.Outcome{Until: time.Now().Add(gateHoldMax), Hold: true}
}

// gateVerdict counts a verdict (or a settled URL) of a host's: a host held
// by the gate is let go to ask again. f.mu is held.
func (f *Fetcher) gateVerdict(host string, hi *hostInfo) {
	hi.verdicts++
	hi.gateSince = time.Time{}
	if hi.gated {
		hi.gated = false
		f.fr.Unhold(host)
	}
}

// gateRecheck ends the hold of a host that a verdict reached while it was
// leased: Unhold found it leased then.
func (f *Fetcher) gateRecheck(host string) {
	f.mu.Lock()
	hi := f.hosts[host]
	woke := hi != nil && hi.gated && hi.verdicts != hi.gatedAt
	if woke {
		hi.gated = false
	}
	f.mu.Unlock()
	if woke {
		f.fr.Unhold(host)
	}
}

// holdAtTake turns a queued URL that its space's budgets hold at its turn
// back into a held one, as if admission had held it when it was found: its
// exclusion is recorded (with the chain its budgets charged it to), its
// queued row deleted, and it is sent to be decided again as a held URL,
// which parks it where the budget that holds it grows. In that order, so
// that a crash at any point leaves it queued or recorded as held: never
// lost. A row no longer queued (an operator's exclusion since) is left as
// it is.
func (f *Fetcher) holdAtTake(ctx context.Context, it frontier.Item, reason string) {
	hash := hashOf(it)
	ex := store.Exclusion{Hash: hash, URL: it.URL, Host: it.Host, Reason: reason, Depth: it.Depth, CrawlID: it.CrawlID,
		At: time.Now(), Chain: &store.Chain{Hops: it.Hops, Origin: it.Origin}, DupHops: it.DupHops}
	if err := f.store.RecordExclusions(ctx, []store.Exclusion{ex}); err != nil {
		f.log.Warn("record a URL held at its turn; it stays queued", "url", it.URL, "err", err)
		f.requeueHeld(it)
		return
	}
	gone, err := f.store.UnqueueURL(ctx, hash)
	if err != nil || !gone {
		if err != nil {
			f.log.Warn("take back a URL held at its turn; it stays queued", "url", it.URL, "err", err)
			f.requeueHeld(it)
		}
		if err := f.store.ForgetExclusions(ctx, []int64{hash}); err != nil {
			f.log.Warn("forget the exclusion of a URL held at its turn", "url", it.URL, "err", err)
		}
		return
	}
	f.mu.Lock()
	if hi := f.hosts[it.Host]; hi != nil && hi.pages > 0 {
		hi.pages-- // admitted again when it is released
	}
	f.mu.Unlock()
	f.metrics.excluded.WithLabelValues(reason).Inc()
	v, err := queue.EncodeURL(queue.URL{URL: it.URL, Depth: it.Depth, CrawlID: it.CrawlID, DupHops: it.DupHops,
		Held: true, Chain: ex.Chain, DiscoveredAt: ex.At})
	if err != nil {
		return // its exclusion is its record: read back with the host's held URLs
	}
	f.kafka.Produce(ctx, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(it.Host), Value: v, Partition: it.Partition}, f.logHeldProduce)
}

// requeueHeld queues again a URL the gate held but the store would not take
// back: fetched after all, as before the gate. Its budgets were given its
// admission back, so it goes as a grounded URL would.
func (f *Fetcher) requeueHeld(it frontier.Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.owned[it.Partition] {
		f.fr.Push(it)
	}
}
