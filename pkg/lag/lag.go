// Package lag exports the consumer lag of the crawler's consumer groups as
// Prometheus gauges. The frontier tier runs it: lag on crawl.urls is the work the
// fetchers have not taken yet, lag on crawl.pages what the parsers have not stored,
// and together with the groups' members and committed offsets it answers the
// operator's three questions, each an alert rule in deploy/:
//
//   - is a tier falling behind?  crawler_kafka_consumer_lag high or growing;
//   - is a tier stalled?         lag present, but crawler_kafka_consumer_committed_offset
//     unchanged over a window (nobody commits, so nothing is being made durable);
//   - is a tier gone?            crawler_kafka_consumer_group_members == 0.
//
// Lag is measured as Kafka tools do (kadm.Lag): per partition, the log end offset
// minus the group's committed offset, or minus the log start when the group has not
// committed there yet. The partition label is bounded by the partition counts of
// the topics the groups consume (256 for crawl.urls, 32 for crawl.pages). Series of
// partitions a group no longer consumes or commits are deleted.
//
// The exporter also implements api.Cluster (Groups), so GET /api/v1/stats can say
// which fetchers and parsers are alive, their partitions and their lag.
package lag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Exporter keeps the lag gauges of a fixed set of consumer groups up to date.
type Exporter struct {
	adm    *kadm.Client
	groups []string
	log    *slog.Logger

	lag       *prometheus.GaugeVec
	committed *prometheus.GaugeVec
	members   *prometheus.GaugeVec
	failures  *prometheus.CounterVec

	mu     sync.Mutex
	series map[string]map[partitionKey]bool // per group, the partitions with series
	failed bool                             // the last update failed (to log transitions only)
}

type partitionKey struct {
	topic     string
	partition int32
}

// Option configures an Exporter.
type Option func(*Exporter)

// WithLogger logs failed updates (once when they start failing, once when they
// recover); without it, failures only count in the metrics.
func WithLogger(log *slog.Logger) Option { return func(e *Exporter) { e.log = log } }

// New returns an exporter of the groups' lag through adm, with its metrics
// registered on reg (nil: not registered). Registering twice on one registry
// panics, as with promauto.
func New(adm *kadm.Client, groups []string, reg prometheus.Registerer, opts ...Option) *Exporter {
	e := &Exporter{
		adm:    adm,
		groups: append([]string(nil), groups...),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawler_kafka_consumer_lag",
			Help: "Records in a partition the consumer group has not committed yet (log end offset minus committed offset).",
		}, []string{"group", "topic", "partition"}),
		committed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawler_kafka_consumer_committed_offset",
			Help: "The consumer group's committed offset in a partition; unchanged while lag is present means the group is stalled.",
		}, []string{"group", "topic", "partition"}),
		members: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawler_kafka_consumer_group_members",
			Help: "Live members of the consumer group (fetchers or parsers alive).",
		}, []string{"group"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_kafka_lag_refresh_failures_total",
			Help: "Lag updates that failed for the group; its gauges keep their last values meanwhile.",
		}, []string{"group"}),
		series: map[string]map[partitionKey]bool{},
	}
	for _, o := range opts {
		o(e)
	}
	for _, g := range e.groups {
		e.failures.WithLabelValues(g) // export 0 from the start, so increase() works
	}
	if reg != nil {
		reg.MustRegister(e.lag, e.committed, e.members, e.failures)
	}
	return e
}

// Run updates the gauges every interval until ctx ends, and returns nil then. Each
// update must finish within the interval.
func (e *Exporter) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		uctx, cancel := context.WithTimeout(ctx, interval)
		err := e.Update(uctx)
		cancel()
		e.logTransition(ctx, err)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (e *Exporter) logTransition(ctx context.Context, err error) {
	if e.log == nil || ctx.Err() != nil {
		return
	}
	e.mu.Lock()
	was := e.failed
	e.failed = err != nil
	e.mu.Unlock()
	switch {
	case err != nil && !was:
		e.log.Warn("consumer lag update failed; gauges keep their last values", "err", err)
	case err == nil && was:
		e.log.Info("consumer lag updates recovered")
	}
}

// Update refreshes the gauges once. A group that does not exist (never joined, or
// deleted) has 0 members and no lag series. A group that cannot be described keeps
// its last values, and the error says which.
func (e *Exporter) Update(ctx context.Context) error {
	// A copy: kadm's Lag reuses the slice it is given as scratch space.
	lags, err := e.adm.Lag(ctx, slices.Clone(e.groups)...)
	if err != nil {
		for _, g := range e.groups {
			e.failures.WithLabelValues(g).Inc()
		}
		return fmt.Errorf("describe lag of consumer groups %v: %w", e.groups, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for _, g := range e.groups {
		l, ok := lags[g]
		switch {
		case !ok || isMissing(l):
			e.members.WithLabelValues(g).Set(0)
			e.setSeries(g, nil)
			continue
		case l.Error() != nil:
			e.failures.WithLabelValues(g).Inc()
			errs = append(errs, fmt.Errorf("consumer group %s: %w", g, l.Error()))
			continue
		}
		e.members.WithLabelValues(g).Set(float64(len(l.Members)))
		now := map[partitionKey]bool{}
		var partErr error
		for topic, ps := range l.Lag {
			for p, ml := range ps {
				if ml.Err != nil {
					// Keep the partition's last values rather than report a false 0.
					if prev := e.series[g]; prev[partitionKey{topic, p}] {
						now[partitionKey{topic, p}] = true
					}
					partErr = firstErr(partErr, fmt.Errorf("consumer group %s, %s/%d: %w", g, topic, p, ml.Err))
					continue
				}
				k := partitionKey{topic, p}
				now[k] = true
				part := strconv.Itoa(int(p))
				e.lag.WithLabelValues(g, topic, part).Set(float64(ml.Lag))
				if ml.Commit.At >= 0 {
					e.committed.WithLabelValues(g, topic, part).Set(float64(ml.Commit.At))
				} else {
					e.committed.DeleteLabelValues(g, topic, part)
				}
			}
		}
		e.setSeries(g, now)
		if partErr != nil {
			e.failures.WithLabelValues(g).Inc()
			errs = append(errs, partErr)
		}
	}
	return errors.Join(errs...)
}

// setSeries deletes the series of the group's partitions not in now.
func (e *Exporter) setSeries(group string, now map[partitionKey]bool) {
	for k := range e.series[group] {
		if !now[k] {
			part := strconv.Itoa(int(k.partition))
			e.lag.DeleteLabelValues(group, k.topic, part)
			e.committed.DeleteLabelValues(group, k.topic, part)
		}
	}
	e.series[group] = now
}

// isMissing reports whether the group does not exist: Kafka describes an unknown
// group as Dead, or answers GROUP_ID_NOT_FOUND.
func isMissing(l kadm.DescribedGroupLag) bool {
	if err := l.Error(); err != nil {
		return errors.Is(err, kerr.GroupIDNotFound)
	}
	return l.State == "Dead" && len(l.Members) == 0 && len(l.Lag) == 0
}

// firstErr keeps the first error: one partition's failure stands for the group's.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// Members returns the live members of each of the exporter's groups; a group that
// does not exist has 0. It asks the brokers, so it is current even between
// updates.
func (e *Exporter) Members(ctx context.Context) (map[string]int, error) {
	described, err := e.adm.DescribeGroups(ctx, slices.Clone(e.groups)...)
	if err != nil {
		return nil, fmt.Errorf("describe consumer groups %v: %w", e.groups, err)
	}
	out := make(map[string]int, len(e.groups))
	for _, g := range e.groups {
		d, ok := described[g]
		switch {
		case !ok || errors.Is(d.Err, kerr.GroupIDNotFound):
			out[g] = 0
		case d.Err != nil:
			return nil, fmt.Errorf("describe consumer group %s: %w", g, d.Err)
		default:
			out[g] = len(d.Members)
		}
	}
	return out, nil
}

// Group is a consumer group as the operator's stats show it: its members, the
// partitions each is assigned, and the lag per topic.
type Group struct {
	Name    string
	State   string // Stable, PreparingRebalance, Empty, Dead, ...
	Members []Member
	Lag     map[string]int64 // records not committed, per topic; nil when unknown
}

// Member is one consumer of a group.
type Member struct {
	ID         string // the instance ID of a static member, else Kafka's member ID
	ClientID   string
	Host       string
	Partitions map[string][]int32 // assigned, per topic, sorted
	Lag        map[string]int64   // of its assigned partitions, per topic
}

// Groups describes the exporter's groups with their members, assignments and
// lag. A group that does not exist is listed with no members and no lag. It
// asks the brokers, so it is current even between updates.
func (e *Exporter) Groups(ctx context.Context) ([]Group, error) {
	lags, err := e.adm.Lag(ctx, slices.Clone(e.groups)...)
	if err != nil {
		return nil, fmt.Errorf("describe lag of consumer groups %v: %w", e.groups, err)
	}
	out := make([]Group, 0, len(e.groups))
	for _, name := range e.groups {
		l, ok := lags[name]
		if !ok || isMissing(l) {
			out = append(out, Group{Name: name, State: "Dead"})
			continue
		}
		if err := l.Error(); err != nil {
			return nil, fmt.Errorf("consumer group %s: %w", name, err)
		}
		out = append(out, groupOf(name, l))
	}
	return out, nil
}

func groupOf(name string, l kadm.DescribedGroupLag) Group {
	g := Group{Name: name, State: l.State, Lag: map[string]int64{}}
	index := map[string]int{} // member ID -> position in g.Members
	for _, m := range l.Members {
		id := m.MemberID
		if m.InstanceID != nil && *m.InstanceID != "" {
			id = *m.InstanceID
		}
		mem := Member{ID: id, ClientID: m.ClientID, Host: m.ClientHost, Partitions: map[string][]int32{}, Lag: map[string]int64{}}
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				ps := slices.Clone(t.Partitions)
				slices.Sort(ps)
				mem.Partitions[t.Topic] = ps
			}
		}
		index[m.MemberID] = len(g.Members)
		g.Members = append(g.Members, mem)
	}
	for topic, ps := range l.Lag {
		for _, ml := range ps {
			if ml.Err != nil || ml.Lag < 0 {
				continue
			}
			g.Lag[topic] += ml.Lag
			if ml.Member != nil {
				if i, ok := index[ml.Member.MemberID]; ok {
					g.Members[i].Lag[topic] += ml.Lag
				}
			}
		}
	}
	return g
}
