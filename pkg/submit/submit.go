// Package submit is the frontier tier's entry point for seeds: it validates and
// normalizes operator-given URLs and produces them to crawl.urls keyed by host, so
// they reach the fetcher that owns the host through the same admission path as
// every discovered link.
package submit

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Seed is one submitted URL.
type Seed struct {
	URL      string `json:"url"`
	Priority int    `json:"priority,omitempty"` // 1..100, 100 most urgent; 0 = computed
	Depth    int    `json:"depth,omitempty"`
}

// Result statuses.
const (
	Accepted  = "accepted"
	Rejected  = "rejected"
	Duplicate = "duplicate"
)

// Result is the outcome for one seed, in request order.
type Result struct {
	URL        string `json:"url"`
	Status     string `json:"status"`
	Normalized string `json:"normalized,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Seen is the store's exact seen check.
type Seen interface {
	Seen(ctx context.Context, hashes []int64) ([]bool, error)
}

// Producer is the part of a Kafka client submission needs.
type Producer interface {
	ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults
}

// Submitter validates and enqueues seeds.
type Submitter struct {
	norm *urlnorm.Normalizer
	seen Seen
	prod Producer
}

// New returns a Submitter.
func New(seen Seen, prod Producer) *Submitter {
	return &Submitter{norm: urlnorm.New(urlnorm.DefaultPolicy()), seen: seen, prod: prod}
}

// Submit enqueues the valid seeds and reports on each. An invalid seed never blocks
// the valid ones (DESIGN invariant 6). A seed the store already holds, or that
// repeats an earlier one in the same call, is a duplicate and is not enqueued.
// err is set only when the valid seeds could not be enqueued at all.
func (s *Submitter) Submit(ctx context.Context, seeds []Seed, crawlID string) ([]Result, error) {
	res := make([]Result, len(seeds))
	norms := make([]string, len(seeds))
	var hashes []int64
	var idx []int
	first := map[string]bool{}
	for i, sd := range seeds {
		res[i] = Result{URL: sd.URL}
		switch {
		case sd.Priority < 0 || sd.Priority > 100:
			res[i].Status, res[i].Reason = Rejected, "priority must be 0..100"
			continue
		case sd.Depth < 0:
			res[i].Status, res[i].Reason = Rejected, "depth must not be negative"
			continue
		}
		n, err := s.norm.Normalize(sd.URL)
		if err != nil {
			res[i].Status, res[i].Reason = Rejected, urlnorm.Reason(err)+": "+err.Error()
			continue
		}
		res[i].Normalized = n
		if first[n] {
			res[i].Status, res[i].Reason = Duplicate, "repeated in this request"
			continue
		}
		first[n] = true
		norms[i] = n
		hashes = append(hashes, store.HashURL(n))
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return res, nil
	}
	known, err := s.seen.Seen(ctx, hashes)
	if err != nil {
		return res, fmt.Errorf("check seeds against the store: %w", err)
	}
	var recs []*kgo.Record
	var recIdx []int
	now := time.Now()
	for j, i := range idx {
		if known[j] {
			res[i].Status, res[i].Reason = Duplicate, "already known"
			continue
		}
		host := urlnorm.Authority(norms[i])
		v, err := queue.EncodeURL(queue.URL{URL: norms[i], Depth: seeds[i].Depth, Priority: seeds[i].Priority, Seed: true, CrawlID: crawlID, DiscoveredAt: now})
		if err != nil {
			res[i].Status, res[i].Reason = Rejected, err.Error()
			continue
		}
		recs = append(recs, &kgo.Record{Topic: queue.TopicURLs, Key: []byte(host), Value: v, Partition: queue.PartitionOf(host)})
		recIdx = append(recIdx, i)
	}
	if len(recs) == 0 {
		return res, nil
	}
	results := s.prod.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		for _, i := range recIdx {
			res[i].Status, res[i].Reason = Rejected, "enqueue failed: "+err.Error()
		}
		return res, fmt.Errorf("enqueue %d seeds: %w", len(recs), err)
	}
	for _, i := range recIdx {
		res[i].Status = Accepted
	}
	return res, nil
}
