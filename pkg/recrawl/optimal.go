package recrawl

import "math"

// Freshness is the time-averaged freshness of a page changing as a Poisson
// process with rate lambda (per second) revisited at rate (per second),
// F = (r/λ)(1 − e^(−λ/r)): 1 for a page that never changes, 0 for a
// changing page never revisited.
func Freshness(lambda, rate float64) float64 {
	switch {
	case lambda <= 0:
		return 1
	case rate <= 0:
		return 0
	}
	x := lambda / rate
	return -math.Expm1(-x) / x
}

// Optimal is the yardstick of a revisit policy: the revisit rates (per
// second) that maximise the mean freshness of pages with the given true
// change rates (per second) when budget revisits per second are spread over
// them, and that mean freshness. It is what a policy knowing every rate
// would achieve with the same number of revisits.
//
// ∂F/∂r = g(λ/r)/λ is decreasing in r (F is concave), so the optimum is
// where every page revisited has the same marginal freshness μ: g(λ/r) =
// μλ (see Interval). A page with μλ ≥ 1 changes faster than the budget can
// keep it fresh and gets no revisits; a page that never changes needs none.
// Σ r(μ) falls as μ grows, so μ is found by bisection on the budget.
func Optimal(lambdas []float64, budget float64) (rates []float64, freshness float64) {
	rates = make([]float64, len(lambdas))
	if len(lambdas) == 0 {
		return rates, 0
	}
	maxLambda := 0.0
	for _, l := range lambdas {
		maxLambda = max(maxLambda, l)
	}
	if budget > 0 && maxLambda > 0 {
		spend := func(mu float64) float64 {
			var s float64
			for i, l := range lambdas {
				rates[i] = rateAt(l, mu)
				s += rates[i]
			}
			return s
		}
		// μ below 1/maxLambda: every page gets some rate. Bisect log μ
		// between a μ that spends more than the budget and one that
		// spends nothing (μ = 1/min positive λ).
		lo, hi := math.Log(1e-12/maxLambda), math.Log(1/minPositive(lambdas))
		for spend(math.Exp(lo)) < budget && lo > -700 {
			lo -= 20
		}
		for range 200 {
			mid := (lo + hi) / 2
			if spend(math.Exp(mid)) > budget {
				lo = mid
			} else {
				hi = mid
			}
		}
		// g(x) rounds to 1 for x beyond about 37, so a page at the cut-off
		// (μλ within rounding of 1) jumps from λ/37 to nothing and the
		// bisection may end short of the budget. Near r = 0 its freshness
		// is r/λ, linear, so the rest goes to the slowest pages there.
		if left := budget - spend(math.Exp(hi)); left > 1e-9*budget {
			atCut := func(i int) bool { return lambdas[i] > 0 && (rates[i] == 0 || lambdas[i]/rates[i] > 30) }
			cut := math.Inf(1)
			for i, l := range lambdas {
				if atCut(i) {
					cut = min(cut, l)
				}
			}
			var at []int
			for i, l := range lambdas {
				if atCut(i) && l <= cut*(1+1e-9) {
					at = append(at, i)
				}
			}
			for _, i := range at {
				rates[i] += left / float64(len(at))
			}
		}
	}
	for i, l := range lambdas {
		freshness += Freshness(l, rates[i])
	}
	return rates, freshness / float64(len(lambdas))
}

// rateAt is the revisit rate of a page with change rate lambda at the
// marginal freshness mu: r = λ/x with g(x) = μλ, or 0 when μλ ≥ 1 or the
// page never changes.
func rateAt(lambda, mu float64) float64 {
	target := mu * lambda
	if lambda <= 0 || target >= 1 {
		return 0
	}
	return lambda / ginv(target)
}

// ginv inverts g on (0, 1) by bisection on x in log space (g(x) ≈ x²/2
// near 0, so small targets need small x).
func ginv(y float64) float64 {
	lo, hi := -30.0, math.Log(750)
	for range 100 {
		mid := (lo + hi) / 2
		if g(math.Exp(mid)) < y {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}

func minPositive(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		if x > 0 {
			m = min(m, x)
		}
	}
	return m
}

// UniformFreshness is the mean freshness of the same pages when budget revisits per
// second are spread evenly over all of them, those that never change
// included: what a fixed-interval crawler gets for the same requests.
func UniformFreshness(lambdas []float64, budget float64) float64 {
	if len(lambdas) == 0 {
		return 0
	}
	r := budget / float64(len(lambdas))
	var f float64
	for _, l := range lambdas {
		f += Freshness(l, r)
	}
	return f / float64(len(lambdas))
}
