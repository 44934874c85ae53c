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
}

func newMetrics(reg prometheus.Registerer, stats func() browser.Stats) *metrics {
	m := &metrics{
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_render_pages_total",
			Help: "Pages the renderer took from crawl.render, by outcome (rendered, rendered_timed_out, failed_crashed, failed_hung, failed_timeout, failed_error, poison).",
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
	}
	if reg == nil {
		return m
	}
	reg.MustRegister(m.pages, m.resources, m.screenshots, m.seconds, m.busy)
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
