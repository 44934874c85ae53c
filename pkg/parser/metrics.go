package parser

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/pkg/telemetry"
)

type metrics struct {
	pages           *prometheus.CounterVec
	captures        prometheus.Counter
	nearDups        prometheus.Counter
	warcRecords     *prometheus.CounterVec
	warcBytes       prometheus.Counter
	discovered      prometheus.Counter
	excluded        *prometheus.CounterVec
	storeSeconds    *prometheus.HistogramVec
	blobSeconds     prometheus.Histogram
	storageFailures prometheus.Counter
	deadLetters     prometheus.Counter
	known           prometheus.Counter
	changes         *prometheus.CounterVec
	lastmodDue      prometheus.Counter
	lastmodTooFast  prometheus.Counter
	redirectLoops   prometheus.Counter
	planLag         prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	buckets := prometheus.ExponentialBuckets(0.0005, 3, 10)
	m := &metrics{
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_parser_pages_total",
			Help: "Fetch results handled by the parser, by what they were (html, not_html, pdf, pdf_broken, sitemap, redirect, status_4xx, noindex, already_stored, ...).",
		}, []string{"kind"}),
		captures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_parser_captures_total",
			Help: "Captures stored.",
		}),
		nearDups: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_dedup_near_duplicates_total",
			Help: "Pages whose SimHash is within distance 3 of an earlier page.",
		}),
		warcRecords: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_warc_records_total",
			Help: "WARC captures written, by type (response with its request, or revisit).",
		}, []string{"type"}),
		warcBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_warc_bytes_total",
			Help: "Compressed bytes of WARC response and revisit records written.",
		}),
		discovered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_parser_discovered_urls_total",
			Help: "URL candidates produced to crawl.urls (links, redirects, sitemap entries), after per-batch dedup.",
		}),
		excluded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_parser_excluded_total",
			Help: "Candidates the parser did not pass on, by reason.",
		}, []string{"reason"}),
		storeSeconds: telemetry.StoreSeconds(reg),
		blobSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_blob_flush_duration_seconds",
			Help:    "Time to make a batch's WARC records durable (fsync or upload).",
			Buckets: buckets,
		}),
		storageFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_parser_storage_failures_total",
			Help: "Batches that failed to store (WARC or metadata) and were retried.",
		}),
		deadLetters: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_parser_dead_letters_total",
			Help: "crawl.pages records sent to the dead-letter topic.",
		}),
		known: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_parser_known_urls_total",
			Help: "Discovered URLs not sent to crawl.urls because the store already holds them.",
		}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_recrawl_fetch_outcomes_total",
			Help: "Fetches compared with the URL's previous copy, by outcome: first, changed, not_modified (304), identical (same SHA-256), near (within the SimHash distance), gone (404/410), error, other.",
		}, []string{"outcome"}),
		lastmodDue: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_recrawl_lastmod_due_total",
			Help: "Stored URLs whose next visit a sitemap <lastmod> newer than their copy brought forward.",
		}),
		lastmodTooFast: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_recrawl_lastmod_too_fast_total",
			Help: "Sitemap <lastmod> entries not acted on: the URL changes faster than the adaptive policy chases.",
		}),
		redirectLoops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_recrawl_redirect_loops_total",
			Help: "Redirect answers found to close a loop of redirects; the URL is not visited again.",
		}),
		planLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_recrawl_plan_lag_seconds",
			Help:    "Time from a fetch to the store write of the next visit it planned: until then the URL is not scheduled, and its estimate is the previous one.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
		}),
	}
	// Several parsers in one process (the embedded mode) share one set.
	m.pages = telemetry.Register(reg, m.pages)
	m.captures = telemetry.Register(reg, m.captures)
	m.nearDups = telemetry.Register(reg, m.nearDups)
	m.warcRecords = telemetry.Register(reg, m.warcRecords)
	m.warcBytes = telemetry.Register(reg, m.warcBytes)
	m.discovered = telemetry.Register(reg, m.discovered)
	m.excluded = telemetry.Register(reg, m.excluded)
	m.blobSeconds = telemetry.Register(reg, m.blobSeconds)
	m.storageFailures = telemetry.Register(reg, m.storageFailures)
	m.deadLetters = telemetry.Register(reg, m.deadLetters)
	m.known = telemetry.Register(reg, m.known)
	m.changes = telemetry.Register(reg, m.changes)
	m.lastmodDue = telemetry.Register(reg, m.lastmodDue)
	m.lastmodTooFast = telemetry.Register(reg, m.lastmodTooFast)
	m.redirectLoops = telemetry.Register(reg, m.redirectLoops)
	m.planLag = telemetry.Register(reg, m.planLag)
	return m
}
