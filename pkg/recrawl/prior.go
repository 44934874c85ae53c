package recrawl

import (
	"math"
	"sync"
	"time"
)

// The change rates a prior spreads its weight over: log-spaced from once in
// 116 days to 13 times a second, two per octave. A page's own history then
// moves the weight (Posterior); the grid only needs to be fine enough that
// freshness, which is flat near the best interval, does not notice.
const (
	atomLow        = 1e-7
	atomsPerOctave = 2
	atoms          = 54
)

func atomRate(j int) float64 { return atomLow * math.Exp2(float64(j)/atomsPerOctave) }

// atomOf is the grid point nearest rate.
func atomOf(rate float64) int {
	j := int(math.Round(math.Log2(rate/atomLow) * atomsPerOctave))
	return min(max(j, 0), atoms-1)
}

// Prior is what a host's pages have shown about how often its pages change:
// how many were compared at least once and never seen to change, and how
// many were seen to change, by their own estimated rate. A host whose pages
// never changed says its next page likely will not either, which is worth
// more than any one visit of that page: half the web never changes, and a
// page's own history needs several unchanged visits to tell.
type Prior struct {
	Static float64
	Rates  [atoms]float64
	// AtLeast counts the pages found changed at every visit, by their
	// estimate, which is then only a lower bound: their changes could be
	// any number per interval. Counted at their estimate they would teach
	// the next page a rate that is too low (a page changing every 4 s
	// visited every 27 s is estimated at once per 8 s), so blend spreads
	// them over every rate from the estimate up to the fastest one a
	// policy can tell (one change per -recrawl-min).
	AtLeast [atoms]float64
}

// Pages is how many pages the prior counts.
func (p *Prior) Pages() float64 {
	n := p.Static
	for j := range p.Rates {
		n += p.Rates[j] + p.AtLeast[j]
	}
	return n
}

// add counts a page with history h (sign 1) or takes it out (sign −1). A
// page no visit has compared yet counts nowhere.
func (p *Prior) add(h History, sign float64) {
	if h.Unchanged+h.ChangedTime <= 0 {
		return
	}
	if h.Changes == 0 {
		p.Static = max(p.Static+sign, 0)
		return
	}
	r, _ := h.Rate()
	j := atomOf(r)
	if h.Unchanged == 0 {
		p.AtLeast[j] = max(p.AtLeast[j]+sign, 0)
		return
	}
	p.Rates[j] = max(p.Rates[j]+sign, 0)
}

// blend is the prior a page of this host starts from: the host's pages,
// then the whole crawl's as priorCrawl pages more (a host of a few pages
// tells little alone), then priorFlat pages spread over every rate and
// over never changing, so that no page's history is ever ruled out.
const (
	priorCrawl = 4
	priorFlat  = 0.5
)

// atLeastSpread is how many grid steps above its estimate a page found
// changed at every visit is spread over (see Prior.AtLeast).
const atLeastSpread = 4

func blend(host, all *Prior, fastest float64) Prior {
	var out Prior
	top := atomOf(fastest)
	mix := func(p *Prior, scale float64) {
		out.Static += scale * p.Static
		for j := range p.Rates {
			out.Rates[j] += scale * p.Rates[j]
			if c := p.AtLeast[j]; c > 0 {
				hi := min(max(j, top), j+atLeastSpread)
				for k := j; k <= hi; k++ {
					out.Rates[k] += scale * c / float64(hi-j+1)
				}
			}
		}
	}
	if host != nil {
		mix(host, 1)
	}
	if all != nil {
		if n := all.Pages(); n > 0 {
			mix(all, priorCrawl/n)
		}
	}
	out.Static += priorFlat / 2
	for j := range out.Rates {
		out.Rates[j] += priorFlat / 2 / atoms
	}
	return out
}

// Posterior returns the weights, summing to 1, that the prior and the
// page's history give to "never changes" and to each rate of the grid. The
// likelihood of a history of Poisson changes at rate λ is e^(−λ·Tu) for
// the unchanged time and (1 − e^(−λ·t))^X for X changed intervals of mean
// length t; a page seen to change does not have rate 0.
func (h History) Posterior(prior Prior) (static float64, rates [atoms]float64) {
	tu, tc := h.Unchanged.Seconds(), h.ChangedTime.Seconds()
	x := float64(h.Changes)
	t := 0.0
	if h.Changes > 0 {
		t = tc / x
	}
	logs := [atoms + 1]float64{}
	best := math.Inf(-1)
	for j := range atoms + 1 {
		var w float64
		if j == atoms {
			w = prior.Static
		} else {
			w = prior.Rates[j]
		}
		if w <= 0 || j == atoms && h.Changes > 0 {
			logs[j] = math.Inf(-1)
			continue
		}
		l := math.Log(w)
		if j < atoms {
			lam := atomRate(j)
			l -= lam * tu
			if h.Changes > 0 {
				l += x * math.Log(-math.Expm1(-lam*t))
			}
		}
		logs[j] = l
		best = max(best, l)
	}
	var sum float64
	for j, l := range logs {
		if math.IsInf(l, -1) {
			logs[j] = 0
			continue
		}
		logs[j] = math.Exp(l - best)
		sum += logs[j]
	}
	if sum == 0 {
		return 1, rates
	}
	for j := range atoms {
		rates[j] = logs[j] / sum
	}
	return logs[atoms] / sum, rates
}

// Priors holds the Prior of each host a process has seen pages of, and the
// whole crawl's, in memory: a prior is a head start, so a restart that
// loses it costs a few visits, not the schedule (which stays in the store).
// The hosts kept are bounded; past the bound a host is dropped at random
// and its pages fall back on the crawl's prior.
type Priors struct {
	mu    sync.Mutex
	hosts map[string]*Prior
	all   Prior
	limit int
}

// NewPriors returns an empty set keeping at most limit hosts.
func NewPriors(limit int) *Priors {
	return &Priors{hosts: map[string]*Prior{}, limit: max(limit, 1)}
}

// Update moves a page of host from what its history was to what it is.
func (ps *Priors) Update(host string, before, after History) {
	if ps == nil {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	hp := ps.hosts[host]
	if hp == nil {
		if len(ps.hosts) >= ps.limit {
			for k := range ps.hosts {
				delete(ps.hosts, k)
				break
			}
		}
		hp = &Prior{}
		ps.hosts[host] = hp
	}
	for _, p := range []*Prior{hp, &ps.all} {
		p.add(before, -1)
		p.add(after, 1)
	}
}

// For returns the prior a page of host starts from, for a policy that
// tells rates up to fastest changes per second (1/-recrawl-min).
func (ps *Priors) For(host string, fastest float64) Prior {
	if ps == nil {
		return blend(nil, nil, fastest)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return blend(ps.hosts[host], &ps.all, fastest)
}

// Plan is Next for the adaptive policy with what the page's host has shown
// (prior, from Priors.For): it returns the next visit and the rate to store
// as the page's estimate, which the fetcher ranks due visits by (Value).
//
// The interval is the one at which a revisit buys the policy's marginal
// freshness in expectation over the posterior: Σ π_j·g(λ_j·a)/λ_j = μ/w,
// the Lagrange condition of Interval averaged over what the page may be.
// "Never changes" contributes nothing, so a page unchanged for a while on a
// host of static pages is left alone after a visit or two, and a page whose
// posterior sits on rates too fast to keep fresh (Σ π_j/λ_j < μ/w) waits
// Max like a page known to change too fast. Outcomes without content
// (redirects, errors, gone), sitemaps and the uniform policy are Next's.
func (p Policy) Plan(h History, o Outcome, at time.Time, weight float64, sitemap bool, prior Prior) (time.Time, float64) {
	own, ok := h.Rate()
	content := o == First || o == Changed || o.Unchanged()
	if !p.Enabled || p.Kind != Adaptive || sitemap || h.Misses > 0 || weight <= 0 || !content {
		return p.Next(h, o, at, weight, sitemap), own
	}
	if !ok && prior.Pages() < priorFlat+1 {
		// Nothing seen yet, of the page or of any page: the first revisit
		// is the scale.
		return at.Add(p.Default), own
	}
	_, post := h.Posterior(prior)
	target := p.marginal() / weight
	worth := func(a float64) float64 {
		var s float64
		for j, w := range post {
			if w > 1e-12 {
				lam := atomRate(j)
				s += w * g(lam*a) / lam
			}
		}
		return s
	}
	lo, hi := p.Min.Seconds(), p.Max.Seconds()
	var mean float64
	for j, w := range post {
		mean += w * atomRate(j)
	}
	// The rate stored for the fetcher's index (Value), which compares
	// pages past their planned visit. A page seen to change is summarised
	// by its posterior mean. A page never seen to change is mostly "never"
	// with a tail of slow rates, whose mean misleads: its index g(λa)/λ
	// grows like a² and comes to outrank pages that change. Its rate is
	// matched to the mixture's index instead (unseenIndexRate).
	rate := mean
	if h.Changes == 0 {
		rate = p.unseenIndexRate(post, weight, worth)
	}
	switch {
	case worth(hi) < target:
		return at.Add(p.Max), rate
	case worth(lo) >= target:
		return at.Add(p.Min), rate
	}
	for range 60 {
		mid := math.Sqrt(lo * hi)
		if worth(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	if h.Changes > 0 {
		// A page seen to change few times has a wide posterior whose mean
		// can say "fast" after one change found soon after a visit; ranked
		// by that mean (an index topping out at w/λ) it was due for good
		// and never served. Matched to the mixture's index at the planned
		// interval it competes there as the posterior says.
		rate = indexRate(worth(hi), hi)
	}
	return at.Add(seconds(hi)), rate
}

// indexRate is the rate λ whose index g(λ·age)/λ is v at age, the slower
// of the two: g(x)/x rises up to x ≈ 1.79 and falls after, and a page
// never seen to change is a slow one. An index above the peak (no page
// of rate below 1.79/age reaches it) gets the peak's rate. No index at
// all gets once in 30,000 years, not 0, which the store and Value read as
// "unknown".
func indexRate(v, age float64) float64 {
	if v <= 0 || age <= 0 {
		return 1e-12
	}
	lo, hi := 1e-12, 1.7934/age
	for range 60 {
		mid := (lo + hi) / 2
		if g(mid*age)/mid < v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// unseenIndexRate is the rate stored for a page never seen to change,
// whose posterior is post: the one whose index g(λ·a)/λ equals the
// mixture's, Σ π_j·g(λ_j·a)/λ_j, at the age a the policy would revisit
// the page at were it known to change, at its posterior's mean rate given
// that it changes (Interval). That is where such a page competes for a
// host's slot; one number cannot follow the mixture at every age.
//
// Matched where the mixture tops out instead (the rate 1/Σ π_j/λ_j, as
// first written), the prior's flat share on rates down to once in 116
// days set the rate: near 0, an index near 0 at any age, and a page
// changing every 24 s that was unchanged at its first revisit was never
// revisited where host delays left no spare request (a quarter of such
// pages in the model of the second mix, TestPolicyNearOptimal). Matched at
// Max, the same happened once Max was ten times the change interval.
func (p Policy) unseenIndexRate(post [atoms]float64, weight float64, worth func(float64) float64) float64 {
	var changing, mean float64
	for j, w := range post {
		changing += w
		mean += w * atomRate(j)
	}
	if changing <= 0 {
		return indexRate(0, 1)
	}
	a := p.Interval(mean/changing, weight).Seconds()
	return indexRate(worth(a), a)
}
