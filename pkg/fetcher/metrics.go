package fetcher

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/telemetry"
)

type metrics struct {
	fetches         *prometheus.CounterVec
	fetchSeconds    prometheus.Histogram
	fetchBytes      prometheus.Counter
	robotsDecisions *prometheus.CounterVec
	robotsFetches   *prometheus.CounterVec
	excluded        *prometheus.CounterVec
	dedup           *prometheus.CounterVec
	admitted        prometheus.Counter
	verdicts        *prometheus.CounterVec
	released        prometheus.Counter
	funded          *prometheus.CounterVec
	fund            []prometheus.Counter // funded by pattern.Fund, resolved once
	gate            *prometheus.CounterVec
	deadLetters     prometheus.Counter
	cacheErrors     prometheus.Counter
	fenced          prometheus.Gauge
	held            prometheus.Gauge
	politeness      prometheus.Histogram
	readyToStart    prometheus.Histogram
	gapStages       *prometheus.HistogramVec
	stage           map[string]prometheus.Observer // gapStages by stage, resolved once
	storeSeconds    *prometheus.HistogramVec
	recrawlDue      prometheus.Gauge
	recrawlOverdue  prometheus.Gauge
	recrawlEmitted  prometheus.Counter
	recrawlClaims   *prometheus.CounterVec
	recrawlEmitLag  prometheus.Histogram
	recrawlClaimLag prometheus.Histogram
	recrawlHeld     *prometheus.CounterVec
	recrawlEmpty    prometheus.Histogram
	recrawlScan     prometheus.Histogram
	serverWaits     *prometheus.CounterVec
}

// frontierCollector reports the frontier's size at scrape time.
type frontierCollector struct {
	f                                   *Fetcher
	queued, hosts, ready, wait, backoff *prometheus.Desc
	inFlight                            *prometheus.Desc
	paused, crawlPaused                 *prometheus.Desc // an operator's controls (control.go)
}

func newFrontierCollector(f *Fetcher) *frontierCollector {
	return &frontierCollector{
		f:           f,
		queued:      prometheus.NewDesc("crawler_frontier_queued_urls", "URLs queued in the fetcher's frontier, by front-queue priority level (0 most urgent).", []string{"level"}, nil),
		hosts:       prometheus.NewDesc("crawler_frontier_hosts", "Hosts the fetcher's frontier knows.", nil, nil),
		ready:       prometheus.NewDesc("crawler_frontier_hosts_ready", "Hosts that may be contacted now and wait for a worker.", nil, nil),
		wait:        prometheus.NewDesc("crawler_frontier_hosts_waiting", "Hosts with queued URLs waiting for their next-allowed time.", nil, nil),
		backoff:     prometheus.NewDesc("crawler_frontier_hosts_backoff", "Hosts slowed beyond their base delay by adaptive backoff (429, 503, errors, slow answers).", nil, nil),
		inFlight:    prometheus.NewDesc("crawler_frontier_hosts_in_flight", "Hosts with a request in flight (at most one each).", nil, nil),
		paused:      prometheus.NewDesc("crawler_frontier_hosts_paused", "Hosts of the fetcher's frontier an operator paused.", nil, nil),
		crawlPaused: prometheus.NewDesc("crawler_fetcher_paused", "1 while an operator has paused the whole crawl: the fetcher starts no request.", nil, nil),
	}
}

func (c *frontierCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queued, c.hosts, c.ready, c.wait, c.backoff, c.inFlight, c.paused, c.crawlPaused} {
		ch <- d
	}
}

func (c *frontierCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.f.fr.Stats()
	for lvl, n := range s.ByLevel {
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(n), strconv.Itoa(lvl))
	}
	ch <- prometheus.MustNewConstMetric(c.hosts, prometheus.GaugeValue, float64(s.Hosts))
	ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, float64(s.HostsReady))
	ch <- prometheus.MustNewConstMetric(c.wait, prometheus.GaugeValue, float64(s.HostsWaiting))
	ch <- prometheus.MustNewConstMetric(c.backoff, prometheus.GaugeValue, float64(s.HostsBackoff))
	ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(s.InFlight))
	ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, float64(s.HostsPaused))
	paused := 0.0
	if c.f.crawlPaused() {
		paused = 1
	}
	ch <- prometheus.MustNewConstMetric(c.crawlPaused, prometheus.GaugeValue, paused)
}

// seenCollector reports the seen-URL filter's size at scrape time.
type seenCollector struct {
	f           *Fetcher
	urls, bytes *prometheus.Desc
}

func newSeenCollector(f *Fetcher) *seenCollector {
	return &seenCollector{
		f:     f,
		urls:  prometheus.NewDesc("crawler_seen_filter_urls", "URLs held by the fetcher's seen-URL Bloom filter.", nil, nil),
		bytes: prometheus.NewDesc("crawler_seen_filter_bytes", "Memory taken by the fetcher's seen-URL Bloom filter; it grows with the URLs it holds.", nil, nil),
	}
}

func (c *seenCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.urls
	ch <- c.bytes
}

func (c *seenCollector) Collect(ch chan<- prometheus.Metric) {
	urls, bytes := c.f.SeenStats()
	ch <- prometheus.MustNewConstMetric(c.urls, prometheus.GaugeValue, float64(urls))
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(bytes))
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_fetch_requests_total",
			Help: "Page and sitemap fetches by outcome (response, error) and status class or error class.",
		}, []string{"outcome", "class"}),
		fetchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_fetch_duration_seconds",
			Help:    "Time from request start to the end of the body.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}),
		fetchBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_fetch_response_bytes_total",
			Help: "Raw response bytes received (headers and body as sent).",
		}),
		robotsDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_robots_decisions_total",
			Help: "URLs checked against robots.txt, by decision.",
		}, []string{"decision"}),
		robotsFetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_robots_fetches_total",
			Help: "robots.txt fetches by outcome (2xx, 3xx, 4xx, 429, 5xx, unreachable).",
		}, []string{"outcome"}),
		excluded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_frontier_excluded_total",
			Help: "URL candidates excluded at admission, by reason.",
		}, []string{"reason"}),
		dedup: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_dedup_url_checks_total",
			Help: "Seen-URL checks by stage: bloom_new (no store look-up), store_seen, bloom_false_positive.",
		}, []string{"stage"}),
		admitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_frontier_admitted_total",
			Help: "New URLs admitted into the store and frontier.",
		}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_frontier_page_verdicts_total",
			Help: "Content verdicts of fetched pages fed to the URL-pattern budgets, by verdict (distinct, duplicate).",
		}, []string{"verdict"}),
		released: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_frontier_released_total",
			Help: "URLs held back by a pattern or duplicate-chain budget and admitted later, when the budget grew.",
		}),
		funded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_admission_funded_total",
			Help: "New page URLs the URL-space budgets admitted, by what admitted them: grounded (found from outside their family), corroborated (held, then linked from enough pages), or the part of their family's allowance that paid (first, evidence, vouched, share, yield, refound, estimate, dwindle); which budget a crawl's generated URLs live on, and so which -pattern- flag bounds them.",
		}, []string{"fund"}),
		gate: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_frontier_take_gate_total",
			Help: "Generated URLs the take gate (-pattern-take-gate) told at their turn to wait for their space's verdicts, held (their space turned duplicating), or let go after waiting too long for a verdict (stalled).",
		}, []string{"decision"}),
		deadLetters: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_fetcher_dead_letters_total",
			Help: "crawl.urls records sent to the dead-letter topic.",
		}),
		cacheErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_fetcher_cache_errors_total",
			Help: "Failed shared-cache calls (robots.txt entries, next-allowed times); each only costs work, never politeness.",
		}),
		fenced: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawler_fetcher_fenced",
			Help: "1 while the fetcher has stopped fetching because its group membership is unconfirmed.",
		}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawler_fetcher_held",
			Help: "1 while the fetcher starts no new request because the parsers' or the fetchers' backlog passed its bound (backpressure).",
		}),
		politeness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_frontier_politeness_delay_seconds",
			Help:    "Wait imposed on a host after each request: its delay (Crawl-delay or default) or adaptive backoff, whichever is longer.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12),
		}),
		readyToStart: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_frontier_ready_to_start_seconds",
			Help:    "Per request, from when its host's politeness allowed it (with work queued) to its start: the allowed time the crawl did not use.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		gapStages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "crawler_frontier_gap_stage_seconds",
			Help:    "Per page request, where the time between its host's previous response and its start went beyond the host's delay, by stage: return (response end to the host back in the schedule), idle (delay over, nothing queued), held (its previous result not yet acknowledged), backpressure (the fetcher held for the parsers' or admission's backlog), worker (waiting for a free worker, a CPU, or its server's slot in the frontier), handoff (lease to the per-server gate), gate, dns, dial, send (request written).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"stage"}),
		serverWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_frontier_server_waits_total",
			Help: "Turns a host gave up because its server (IP address) was at its limit: local (this fetcher's requests), shared (the cluster's, from Redis), shared_error (Redis unreachable: the local limit only), unresolved (no address known; the fetch fails on DNS); restart counts requests that would have started over an eighth of -ip-delay (at least 12.5 ms) after their shared grant came back and asked again.",
		}, []string{"where"}),
		storeSeconds: telemetry.StoreSeconds(reg),
		recrawlDue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawler_recrawl_due_urls",
			Help: "Planned revisits due in the owned partitions at the last scan (at most 256 read per partition).",
		}),
		recrawlOverdue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawler_recrawl_oldest_overdue_seconds",
			Help: "How long the most overdue planned revisit of the owned partitions has been due, at the last scan; 0 when none is due.",
		}),
		recrawlEmitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_recrawl_revisits_sent_total",
			Help: "Due revisits produced to crawl.urls by the recrawl scheduler.",
		}),
		recrawlClaims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_recrawl_claims_total",
			Help: "Revisit records at admission, by result: claimed (queued for their visit) or stale (claimed already, or rescheduled).",
		}, []string{"result"}),
		recrawlEmitLag: recrawlLag("crawler_recrawl_emit_lag_seconds",
			"Per revisit produced, from its planned visit to the scan that produced it."),
		recrawlClaimLag: recrawlLag("crawler_recrawl_claim_lag_seconds",
			"Per revisit claimed, from the start of the scan that produced it to its claim at admission, when it joins its host's queue."),
		recrawlHeld: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_recrawl_held_hosts_total",
			Help: "Hosts a scan left due revisits of because their revisit budget was spent, by whether the host's queue was empty then (its revisits were all on their way through crawl.urls) or not.",
		}, []string{"host_queue"}),
		recrawlScan: recrawlLag("crawler_recrawl_scan_seconds",
			"Per scan that produced revisits, from its start to the broker's acknowledgement of its records: the first part of the claim lag."),
		recrawlEmpty: recrawlLag("crawler_recrawl_host_empty_seconds",
			"Per host, from a request that left its queue empty to the next revisit claimed for it: time the host had nothing to fetch."),
	}
	m.stage = map[string]prometheus.Observer{}
	for _, st := range gapStages {
		m.stage[st] = m.gapStages.WithLabelValues(st)
	}
	for _, f := range pattern.Funds() {
		m.fund = append(m.fund, m.funded.WithLabelValues(f.String()))
	}
	if reg != nil {
		reg.MustRegister(m.gapStages, m.funded)
		reg.MustRegister(m.fetches, m.fetchSeconds, m.fetchBytes, m.robotsDecisions, m.robotsFetches, m.excluded, m.dedup, m.admitted, m.verdicts, m.released, m.gate, m.deadLetters, m.cacheErrors, m.fenced, m.held, m.politeness, m.readyToStart, m.serverWaits,
			m.recrawlDue, m.recrawlOverdue, m.recrawlEmitted, m.recrawlClaims, m.recrawlEmitLag, m.recrawlClaimLag, m.recrawlHeld, m.recrawlEmpty, m.recrawlScan)
	}
	return m
}

// gapStages are the stages of crawler_frontier_gap_stage_seconds, in the
// order they happen between one request to a host and the next.
var gapStages = []string{"return", "idle", "held", "backpressure", "worker", "handoff", "gate", "dns", "dial", "send"}

// recrawlLag is a histogram of a revisit's lags, 10 ms to 20 s.
func recrawlLag(name, help string) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)})
}
