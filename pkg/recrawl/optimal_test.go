package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(b)) }

// TestOptimalHandSolved checks cases solved by hand.
func TestOptimalHandSolved(t *testing.T) {
	// One page takes the whole budget.
	r, f := Optimal([]float64{0.5}, 2)
	if !near(r[0], 2, 1e-6) || !near(f, (2/0.5)*(1-math.Exp(-0.25)), 1e-6) {
		t.Errorf("one page: rate %v freshness %v", r, f)
	}
	// Equal pages split it evenly.
	r, _ = Optimal([]float64{0.1, 0.1, 0.1, 0.1}, 1)
	for _, x := range r {
		if !near(x, 0.25, 1e-6) {
			t.Errorf("equal pages: rates %v, want 0.25 each", r)
		}
	}
	// Pages that never change get nothing and count fresh; the budget
	// goes to the page that changes.
	r, f = Optimal([]float64{0, 0, 1}, 3)
	if r[0] != 0 || r[1] != 0 || !near(r[2], 3, 1e-6) || !near(f, (2+Freshness(1, 3))/3, 1e-9) {
		t.Errorf("never-changing pages: rates %v freshness %v", r, f)
	}
	// A page changing 1,000 times faster than the other, with a budget
	// of one revisit per 10 s: at the optimum μ, g(λ/r) = μλ for the slow
	// page, and the fast one's μλ ≥ 1, so it gets no revisit.
	r, _ = Optimal([]float64{0.01, 10}, 0.1)
	if r[1] != 0 || !near(r[0], 0.1, 1e-6) {
		t.Errorf("too fast a page: rates %v, want [0.1 0]", r)
	}
	// Lagrange condition on a mixed case: every page revisited has the
	// same g(λ/r)/λ.
	lambdas := []float64{1.0 / 24, 1.0 / 24, 1.0 / 4, 1.0 / 100, 0}
	r, _ = Optimal(lambdas, 0.3)
	var sum, mu float64
	for i, l := range lambdas {
		sum += r[i]
		if l > 0 && r[i] > 0 {
			m := g(l/r[i]) / l
			if mu == 0 {
				mu = m
			} else if !near(m, mu, 1e-6) {
				t.Errorf("page %d: marginal %v, others %v", i, m, mu)
			}
		}
	}
	if !near(sum, 0.3, 1e-6) {
		t.Errorf("spent %v of 0.3", sum)
	}
	if r[4] != 0 {
		t.Errorf("never-changing page got rate %v", r[4])
	}
}

// TestOptimalBeatsBruteForce: on small random inputs no split of the budget
// on a fine grid does better than Optimal, and the best grid split is
// within the grid's resolution of it.
func TestOptimalBeatsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 2 + rng.IntN(2)
		lambdas := make([]float64, n)
		for i := range lambdas {
			if rng.IntN(4) > 0 {
				lambdas[i] = math.Exp(rng.Float64()*6 - 4)
			}
		}
		budget := math.Exp(rng.Float64()*4 - 2)
		_, opt := Optimal(lambdas, budget)
		const steps = 200
		best := 0.0
		var walk func(i int, left float64, f float64)
		walk = func(i int, left float64, f float64) {
			if i == n-1 {
				best = max(best, (f+Freshness(lambdas[i], left))/float64(n))
				return
			}
			for k := 0; k <= steps; k++ {
				x := left * float64(k) / steps
				walk(i+1, left-x, f+Freshness(lambdas[i], x))
			}
		}
		walk(0, budget, 0)
		if best > opt+1e-7 {
			t.Fatalf("trial %d: λ %v budget %v: grid finds %.9f, Optimal %.9f", trial, lambdas, budget, best, opt)
		}
		if opt-best > 2e-3 {
			t.Errorf("trial %d: λ %v budget %v: Optimal %.6f, grid best %.6f: too far apart", trial, lambdas, budget, opt, best)
		}
	}
}

// TestOptimalIssueWeb reproduces the optimum of issue 24's measurement:
// 400 pages changing every 4 s, 600 every 24 s, 1,000 never, with the
// budget the optimum spends revisiting fast pages every 31.9 s and slow
// ones every 17.5 s.
func TestOptimalIssueWeb(t *testing.T) {
	var lambdas []float64
	for range 400 {
		lambdas = append(lambdas, 1.0/4)
	}
	for range 600 {
		lambdas = append(lambdas, 1.0/24)
	}
	for range 1000 {
		lambdas = append(lambdas, 0)
	}
	budget := 400/31.9 + 600/17.5
	r, f := Optimal(lambdas, budget)
	if !near(1/r[0], 31.9, 0.02) || !near(1/r[400], 17.5, 0.02) || r[1999] != 0 {
		t.Errorf("intervals fast %.1f s, slow %.1f s, never rate %v", 1/r[0], 1/r[400], r[1999])
	}
	if u := UniformFreshness(lambdas, budget); u >= f {
		t.Errorf("uniform %.3f not below optimal %.3f", u, f)
	}
}
