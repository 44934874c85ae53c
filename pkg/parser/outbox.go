package parser

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// outbox collects a batch's URL candidates and exclusions. Candidates are
// normalized here only to find their host (the crawl.urls key); the fetcher that
// owns the host normalizes again (idempotent) and decides admission.
type outbox struct {
	p        *Parser
	seen     map[string]bool
	recs     []*kgo.Record
	excluded []store.Exclusion
}

func (o *outbox) init(p *Parser) {
	o.p = p
	o.seen = map[string]bool{}
}

func (o *outbox) add(raw string, from queue.Page, depth, redirects int, kind string, fromRobots bool) {
	norm, err := o.p.norm.Normalize(raw)
	if err != nil {
		o.exclude(raw, from, urlnorm.Reason(err))
		return
	}
	if redirects > maxRedirects {
		o.exclude(norm, from, ReasonMaxRedirects)
		return
	}
	if o.seen[norm] {
		return
	}
	o.seen[norm] = true
	host := urlnorm.Authority(norm)
	v, err := queue.EncodeURL(queue.URL{URL: norm, Depth: depth, Kind: kind, Redirects: redirects, Parent: from.URL, FromRobots: fromRobots, CrawlID: from.CrawlID, DiscoveredAt: time.Now()})
	if err != nil {
		o.exclude(norm, from, "encode_error")
		return
	}
	o.recs = append(o.recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)})
}

func (o *outbox) exclude(u string, from queue.Page, reason string) {
	if len(u) > 2048 {
		u = u[:2048]
	}
	o.excluded = append(o.excluded, store.Exclusion{Hash: store.HashURL(u), URL: u, Host: urlnorm.Authority(u), Reason: reason, Parent: from.URL, Depth: from.Depth + 1, CrawlID: from.CrawlID, At: time.Now()})
	o.p.metrics.excluded.WithLabelValues(reason).Inc()
}

// flush records the exclusions and produces the candidates, waiting for the broker.
func (o *outbox) flush(ctx context.Context) error {
	if len(o.excluded) > 0 {
		if err := o.p.store.RecordExclusions(ctx, o.excluded); err != nil {
			return fmt.Errorf("record %d exclusions: %w", len(o.excluded), err)
		}
	}
	if len(o.recs) > 0 {
		if err := o.p.kafka.ProduceSync(ctx, o.recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce %d discovered urls: %w", len(o.recs), err)
		}
		o.p.metrics.discovered.Add(float64(len(o.recs)))
	}
	return nil
}
