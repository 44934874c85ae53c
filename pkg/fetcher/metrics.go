package fetcher

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	fetches         *prometheus.CounterVec
	fetchSeconds    prometheus.Histogram
	fetchBytes      prometheus.Counter
	robotsDecisions *prometheus.CounterVec
	robotsFetches   *prometheus.CounterVec
	excluded        *prometheus.CounterVec
	dedup           *prometheus.CounterVec
	admitted        prometheus.Counter
	deadLetters     prometheus.Counter
	cacheErrors     prometheus.Counter
	fenced          prometheus.Gauge
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
	}
	if reg != nil {
		reg.MustRegister(m.fetches, m.fetchSeconds, m.fetchBytes, m.robotsDecisions, m.robotsFetches, m.excluded, m.dedup, m.admitted, m.deadLetters, m.cacheErrors, m.fenced)
	}
	return m
}
