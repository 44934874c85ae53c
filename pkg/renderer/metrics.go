package renderer

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/pkg/browser"
)

type metrics struct {
	pages     *prometheus.CounterVec
	resources *prometheus.CounterVec
	// screenshots counts only when -render-screenshots asks for them.
	screenshots *prometheus.CounterVec
	seconds     prometheus.Histogram
	busy        prometheus.Gauge
	// waited is how long each render had a sub-resource with the crawl;
	// scriptErrors counts what the rendered pages threw.
	waited       prometheus.Histogram
	scriptErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, stats func() browser.Stats) *metrics {
	m := &metrics{
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_render_pages_total",
			Help: "Pages the renderer took from crawl.render, by outcome (rendered, rendered_timed_out, failed_crashed, failed_hung, failed_timeout, failed_error, poison, skipped_learned: sent to learn its section, whose verdict said not to render by its turn); retried_subresources counts the renders done again once the sub-resources a render timed out waiting for were archived, retried_unloaded those done again, with more time, after a render cut short before the page loaded.",
		}, []string{"outcome"}),
		resources: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_render_subresources_total",
			Help: "Sub-resource requests of rendered pages answered through the crawl, by result (served, cached, robots, refused, timeout, error).",
		}, []string{"result"}),
		screenshots: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_render_screenshots_total",
			Help: "Screenshots of rendered pages (-render-screenshots), by result (taken, or dropped: timed_out, too_large, failed).",
		}, []string{"result"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_render_seconds",
			Help:    "Time to render one page, from taking a tab to the DOM snapshot (and the screenshot, when taken), sub-resource waits included.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30},
		}),
		busy: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawler_render_tabs_busy",
			Help: "Pages being rendered now.",
		}),
		waited: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_render_subresource_wait_seconds",
			Help:    "Per rendered page, how long at least one of its sub-resources was with the crawl: in its host's queue, waiting for the host's politeness turn, being fetched and stored.",
			Buckets: []float64{0, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120},
		}),
		scriptErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_render_script_errors_total",
			Help: "Uncaught exceptions and console errors the rendered pages raised (each page's first 20).",
		}),
	}
	if reg == nil {
		return m
	}
	reg.MustRegister(m.pages, m.resources, m.screenshots, m.seconds, m.busy, m.waited, m.scriptErrors)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "crawler_render_browser_rss_bytes",
		Help: "Resident memory of the browser's processes at the last sample.",
	}, func() float64 { return float64(stats().RSS) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "crawler_render_browser_restarts_total",
			Help: "Browser processes started after the first (crashes, hangs, planned restarts).",
		}, func() float64 { return float64(stats().Restarts) }),
	)
	return m
}
