package recrawl

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// simPage is a page of the simulated web: its change instants (seconds).
type simPage struct{ changes []float64 }

// simWeb builds n pages over horizon seconds: the fractions of rates in mix
// (changes per second; 0 = never).
func simWeb(rng *rand.Rand, n int, horizon float64, mix []struct {
	share, rate float64
}) []simPage {
	pages := make([]simPage, n)
	i := 0
	for _, m := range mix {
		k := int(math.Round(m.share * float64(n)))
		for ; k > 0 && i < n; k-- {
			if m.rate > 0 {
				for t := rng.ExpFloat64() / m.rate; t < horizon; t += rng.ExpFloat64() / m.rate {
					pages[i].changes = append(pages[i].changes, t)
				}
			}
			i++
		}
	}
	return pages
}

// version is the number of changes up to t.
func (p simPage) version(t float64) int { return sort.SearchFloat64s(p.changes, t+1e-12) }

// simulate visits every page from time 0 (all fetched at 0) under the policy
// and returns the time-averaged freshness and the revisits made.
func simulate(p Policy, pages []simPage, horizon float64) (freshness float64, requests int) {
	var freshTime float64
	for _, pg := range pages {
		var h History
		at := 0.0
		held := pg.version(0)
		h.Observe(First, time.Unix(0, 0))
		o := First
		for {
			next := p.Next(h, o, time.Unix(0, 0).Add(seconds(at)), 1, false)
			nt := float64(next.Sub(time.Unix(0, 0))) / 1e9
			end := min(nt, horizon)
			// Fresh from at until the first change after it (or end).
			i := sort.SearchFloat64s(pg.changes, at+1e-12)
			stale := end
			if i < len(pg.changes) && pg.changes[i] < end {
				stale = pg.changes[i]
			}
			freshTime += stale - at
			if nt >= horizon {
				break
			}
			requests++
			at = nt
			v := pg.version(at)
			o = Identical
			if v != held {
				o = Changed
			}
			held = v
			h.Observe(o, time.Unix(0, 0).Add(seconds(at)))
		}
	}
	return freshTime / (horizon * float64(len(pages))), requests
}

// BenchmarkFreshnessVsUniform simulates the adaptive policy and a uniform one
// given the same number of revisits on a web where half the pages never
// change, and reports both freshness figures and their ratios, over all
// pages and over the pages that change. loadtest/freshness measures the
// same on real crawls.
func BenchmarkFreshnessVsUniform(b *testing.B) {
	mix := []struct{ share, rate float64 }{
		{0.5, 0}, {0.2, 1.0 / 3600}, {0.2, 1.0 / 86400}, {0.1, 1.0 / 600},
	}
	const horizon = 30 * 86400.0
	for range b.N {
		rng := rand.New(rand.NewPCG(7, 8))
		pages := simWeb(rng, 2000, horizon, mix)
		ad := DefaultPolicy()
		ad.Min, ad.Default, ad.Max = 10*time.Minute, 6*time.Hour, 30*24*time.Hour
		fa, ra := simulate(ad, pages, horizon)
		un := ad
		un.Kind = Uniform
		un.Default = seconds(horizon * float64(len(pages)) / float64(ra))
		fu, ru := simulate(un, pages, horizon)
		b.ReportMetric(fa, "fresh-adaptive")
		b.ReportMetric(fu, "fresh-uniform")
		b.ReportMetric(fa/fu, "ratio")
		// Pages that never change are fresh from time 0 under both
		// policies: the rest is the freshness of the pages that change.
		b.ReportMetric((fa-0.5)/(fu-0.5), "ratio-changing")
		b.ReportMetric(float64(ra), "revisits-adaptive")
		b.ReportMetric(float64(ru), "revisits-uniform")
	}
}
