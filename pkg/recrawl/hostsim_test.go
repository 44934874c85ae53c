package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// hostSim is an offline model of the crawler's revisit loop on a changing
// web: hosts of pages whose changes are Poisson at per-page rates drawn per
// seed, a scan every second that takes each host's due pages by Value within
// what the host can serve at its delay, and the parser's Plan (or Next)
// after every fetch. It is deterministic, so a policy can be judged against
// Optimal over many seeds in seconds.
type hostSim struct {
	hosts, pages int
	mix          []simClass
	hostClasses  bool    // every page of a host has the host's class (else pages are shuffled over hosts)
	perHost      float64 // requests per second a host can take (its delay); 0: no limit
	horizon      float64 // seconds
	policy       Policy
	prior        bool // Plan with host priors; false: Next alone (the policy of issue 11)
	// dated is the share of hosts whose answers date a change: a
	// Last-Modified to the second, rounded up as the synthetic web sends
	// it, taken as a change within a second of it either way, as the
	// parser does (ObserveDated).
	dated float64
}

type simClass struct {
	name  string
	share float64
	rate  float64 // changes per second; 0: never
}

// simResult is one run's measurement.
type simResult struct {
	freshness, optimal, uniform float64
	perHostOptimal              float64
	revisits                    int
	byClass, lateByClass        map[string]int
	optimalByClass              map[string]float64 // revisits the optimum makes
	freshByClass                map[string]float64
	// spreadByClass is the 10th and 90th percentile of the class's pages'
	// revisits per minute from their first fetch: how evenly the class's
	// revisits were shared between its pages.
	spreadByClass map[string][2]float64
}

func (s hostSim) run(seed uint64) simResult {
	rng := rand.New(rand.NewPCG(seed, 24))
	n := s.hosts * s.pages
	// Classes: a seeded order of pages (or hosts) gets the mix's shares.
	units := n
	if s.hostClasses {
		units = s.hosts
	}
	class := make([]int, units)
	perm := rng.Perm(units)
	lo := 0
	for k, c := range s.mix {
		hi := min(units, lo+int(math.Round(c.share*float64(units))))
		for _, i := range perm[lo:hi] {
			class[i] = k
		}
		lo = hi
	}
	for _, i := range perm[lo:] {
		class[i] = len(s.mix) - 1
	}
	type page struct {
		host    int
		class   int
		changes []float64
		h       History
		next    float64
		rate    float64
		last    float64 // last fetch
		first   float64
		held    int
	}
	dates := make([]bool, s.hosts)
	for i, h := range rng.Perm(s.hosts) {
		dates[h] = float64(i) < s.dated*float64(s.hosts)
	}
	pages := make([]page, n)
	lambdas := make([]float64, n)
	for i := range pages {
		var c int
		if s.hostClasses {
			c = class[i/s.pages]
		} else {
			c = class[i]
		}
		pg := &pages[i]
		pg.host, pg.class = i/s.pages, c
		if r := s.mix[c].rate; r > 0 {
			lambdas[i] = r
			for t := rng.ExpFloat64() / r; t < s.horizon; t += rng.ExpFloat64() / r {
				pg.changes = append(pg.changes, t)
			}
		}
	}
	version := func(pg *page, t float64) int { return sort.SearchFloat64s(pg.changes, t+1e-12) }
	var fresh float64
	classFresh := make([]float64, len(s.mix))
	classWindow := make([]float64, len(s.mix))
	// The fresh time of [from, to) for a copy fetched at from.
	span := func(pg *page, from, to float64) float64 {
		i := sort.SearchFloat64s(pg.changes, from+1e-12)
		if i < len(pg.changes) && pg.changes[i] < to {
			return pg.changes[i] - from
		}
		return to - from
	}
	priors := NewPriors(1 << 20)
	epoch := time.Unix(0, 0)
	at := func(t float64) time.Time { return epoch.Add(seconds(t)) }
	fetch := func(i int, t float64) bool {
		pg := &pages[i]
		o := First
		if pg.h.Fetches == 0 {
			pg.first = t
		}
		if pg.h.Fetches > 0 {
			fresh += span(pg, pg.last, t)
			classFresh[pg.class] += span(pg, pg.last, t)
			o = Identical
			if v := version(pg, t); v != pg.held {
				o = Changed
			}
		}
		var changed Dated
		if v := version(pg, t); o == Changed && dates[pg.host] {
			lm := math.Ceil(pg.changes[v-1])
			changed = Dated{From: at(lm - 1), To: at(lm + 1)}
		}
		pg.held = version(pg, t)
		before := pg.h
		pg.h.ObserveDated(o, at(t), changed)
		if s.prior {
			host := fmt.Sprint(pg.host)
			priors.Update(host, before, pg.h)
			nx, r := s.policy.Plan(pg.h, o, at(t), 1, false, priors.For(host, 1/s.policy.Min.Seconds()))
			pg.next, pg.rate = nx.Sub(epoch).Seconds(), r
		} else {
			pg.next = s.policy.Next(pg.h, o, at(t), 1, false).Sub(epoch).Seconds()
			pg.rate, _ = pg.h.Rate()
		}
		pg.last = t
		return o != First
	}
	res := simResult{byClass: map[string]int{}, lateByClass: map[string]int{}}
	// Discovery: each host's pages are fetched first, at its pace.
	free := make([]float64, s.hosts)
	gap := 0.0
	if s.perHost > 0 {
		gap = 1 / s.perHost
	}
	for i := range pages {
		h := pages[i].host
		fetch(i, free[h])
		free[h] += gap
	}
	hostRevisits := make([]int, s.hosts)
	pageRevisits := make([]int, n)
	byHost := make([][]int, s.hosts)
	for i := range pages {
		byHost[pages[i].host] = append(byHost[pages[i].host], i)
	}
	for now := 1.0; now < s.horizon; now++ {
		for h, ids := range byHost {
			var due []int
			for _, i := range ids {
				if pages[i].next <= now {
					due = append(due, i)
				}
			}
			val := func(i int) float64 {
				return s.policy.Value(pages[i].rate, 1, seconds(now-pages[i].last))
			}
			slices.SortStableFunc(due, func(a, b int) int {
				va, vb := val(a), val(b)
				switch {
				case va > vb:
					return -1
				case va < vb:
					return 1
				}
				return 0
			})
			t := max(free[h], now)
			for _, i := range due {
				if s.perHost > 0 && t >= now+1 {
					break
				}
				if t >= s.horizon {
					break
				}
				if fetch(i, t) {
					pageRevisits[i]++
					hostRevisits[h]++
					res.revisits++
					res.byClass[s.mix[pages[i].class].name]++
					if t > s.horizon/2 {
						res.lateByClass[s.mix[pages[i].class].name]++
					}
				}
				t += gap
			}
			free[h] = t
		}
	}
	for i := range pages {
		fresh += span(&pages[i], pages[i].last, s.horizon)
		classFresh[pages[i].class] += span(&pages[i], pages[i].last, s.horizon)
		classWindow[pages[i].class] += s.horizon - pages[i].first
	}
	res.freshByClass, res.spreadByClass = map[string]float64{}, map[string][2]float64{}
	perMinute := make([][]float64, len(s.mix))
	for i := range pages {
		perMinute[pages[i].class] = append(perMinute[pages[i].class], 60*float64(pageRevisits[i])/(s.horizon-pages[i].first))
	}
	for k, c := range s.mix {
		if rs := perMinute[k]; len(rs) > 0 {
			slices.Sort(rs)
			res.spreadByClass[c.name] = [2]float64{math.Round(100*rs[len(rs)/10]) / 100, math.Round(100*rs[len(rs)*9/10]) / 100}
		}
		res.freshByClass[c.name] = math.Round(1000*classFresh[k]/classWindow[k]) / 1000
	}
	// A page is judged from its first fetch: before it, no revisit policy
	// has a copy to keep fresh.
	var window float64
	for i := range pages {
		window += s.horizon - pages[i].first
	}
	res.freshness = fresh / window
	budget := float64(res.revisits) / (window / float64(n))
	var rates []float64
	rates, res.optimal = Optimal(lambdas, budget)
	res.optimalByClass = map[string]float64{}
	for i, r := range rates {
		res.optimalByClass[s.mix[pages[i].class].name] += r * (s.horizon - pages[i].first)
	}
	res.uniform = UniformFreshness(lambdas, budget)
	// With each host held to its own share (a host's delay caps it), the
	// best is each host's optimum for the revisits it made.
	for h := range s.hosts {
		ls := lambdas[h*s.pages : (h+1)*s.pages]
		_, f := Optimal(ls, float64(hostRevisits[h])/(window/float64(n)))
		res.perHostOptimal += f / float64(s.hosts)
	}
	return res
}

// issueMix is issue 24's web: 20% of pages change every 4 s, 30% every 24 s,
// half never.
var issueMix = []simClass{{"fast", 0.2, 1.0 / 4}, {"slow", 0.3, 1.0 / 24}, {"never", 0.5, 0}}

// secondMix is its second acceptance mix: 10% fast, 60% slow, 30% never.
var secondMix = []simClass{{"fast", 0.1, 1.0 / 4}, {"slow", 0.6, 1.0 / 24}, {"never", 0.3, 0}}

func issuePolicy() Policy {
	p := DefaultPolicy()
	p.Min, p.Default, p.Max = time.Second, 5*time.Second, 60*time.Second
	return p
}

// TestPolicyNearOptimal runs the model on issue 24's web and on its second
// mix, with the budget set by the flags (hosts take every due visit) and by
// the hosts' delays (one request a second per host), over 20 mean change
// intervals of the slow class, for several seeds (every seed draws its own
// classes and change instants). The policy must stay within the share of
// the optimum given per case, beat the uniform policy with the same
// revisits. The policy without priors (Next, issue 11's estimator, ranked by
// the same Value) is logged beside it: on this web, whose classes are
// drawn per page and not per host, it is about as close (docs/recrawl.md).
// The dated cases feed the Last-Modified of two hosts in three to the
// estimator (ObserveDated), as the parser does: in the model they come out
// a little lower than without the dates, on the crawler higher
// (docs/recrawl.md).
func TestPolicyNearOptimal(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 46 crawls")
	}
	cases := []struct {
		name string
		s    hostSim
		want float64 // least share of the optimum, every seed
	}{
		{"issue mix, flags", hostSim{hosts: 20, pages: 30, mix: issueMix, horizon: 480, policy: issuePolicy()}, 0.95},
		{"issue mix, delays", hostSim{hosts: 20, pages: 30, mix: issueMix, perHost: 1, horizon: 480, policy: issuePolicy()}, 0.95},
		{"second mix, flags", hostSim{hosts: 20, pages: 30, mix: secondMix, horizon: 480, policy: issuePolicy()}, 0.95},
		// 0.929-0.934 before pages unchanged at one visit stopped counting
		// as pages that never change, and before the index rate of such a
		// page stopped being set by rates too slow to matter: a quarter
		// of the slow pages were never revisited (docs/recrawl.md).
		{"second mix, delays", hostSim{hosts: 20, pages: 30, mix: secondMix, perHost: 1, horizon: 480, policy: issuePolicy()}, 0.95},
		// -recrawl-max 25 times the slow pages' interval, as in the
		// crawler's measurement (loadtest/freshness): 0.900-0.906 with the
		// index rate matched at Max.
		{"second mix, delays, max 10m", hostSim{hosts: 20, pages: 30, mix: secondMix, perHost: 1, horizon: 480, policy: longMax()}, 0.95},
		// Two hosts in three date their changes (issue 24's web).
		{"second mix, delays, dated", hostSim{hosts: 20, pages: 30, mix: secondMix, perHost: 1, horizon: 480, policy: issuePolicy(), dated: 2.0 / 3}, 0.95},
		{"issue mix, delays, dated", hostSim{hosts: 20, pages: 30, mix: issueMix, perHost: 1, horizon: 480, policy: issuePolicy(), dated: 2.0 / 3}, 0.95},
		// The issue's size, one seed (about 2.5 s of CPU a run). The
		// second mix reached 0.935 there while pages fetched before their
		// host had shown anything ranked as changing once per Default:
		// 5% of the slow pages were never visited again (docs/recrawl.md).
		{"issue mix, delays, 50x40", hostSim{hosts: 50, pages: 40, mix: issueMix, perHost: 1, horizon: 480, policy: issuePolicy()}, 0.95},
		{"second mix, delays, 50x40", hostSim{hosts: 50, pages: 40, mix: secondMix, perHost: 1, horizon: 480, policy: issuePolicy()}, 0.95},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seeds := uint64(simSeeds)
			if c.s.hosts*c.s.pages > 1000 || raceEnabled {
				// The model is single-threaded, and the race detector
				// slows it about tenfold: one seed exercises the code;
				// make test runs every seed without it (scripts/test.sh).
				seeds = 1
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				c.s.prior = true
				r := c.s.run(seed)
				c.s.prior = false
				old := c.s.run(seed)
				t.Logf("seed %d: freshness %.3f, %.3f of optimal %.3f %v (without priors %.3f %v %v), uniform %.3f; revisits %d %v, the optimum's %v; pages' revisits a minute, 10th and 90th percentile %v",
					seed, r.freshness, r.freshness/r.optimal, r.optimal, r.freshByClass, old.freshness/old.optimal, old.byClass, old.freshByClass, r.uniform, r.revisits, r.byClass, roundAll(r.optimalByClass), r.spreadByClass)
				if r.freshness < c.want*r.optimal {
					t.Errorf("seed %d: freshness %.3f, %.3f of the optimum %.3f, want at least %.2f", seed, r.freshness, r.freshness/r.optimal, r.optimal, c.want)
				}
				if r.freshness <= r.uniform {
					t.Errorf("seed %d: freshness %.3f not above uniform %.3f", seed, r.freshness, r.uniform)
				}
			}
		})
	}
}

const simSeeds = 3

func longMax() Policy {
	p := issuePolicy()
	p.Max = 10 * time.Minute
	return p
}

func roundAll(m map[string]float64) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = int(math.Round(v))
	}
	return out
}

// BenchmarkPolicyVsOptimal runs the model on issue 24's web at its size (50
// hosts of 40 pages) with the hosts' delays limiting revisits, and reports
// the policy's share of the optimum on both mixes, with and without priors.
func BenchmarkPolicyVsOptimal(b *testing.B) {
	for range b.N {
		for _, c := range []struct {
			name string
			mix  []simClass
		}{{"issue", issueMix}, {"second", secondMix}} {
			s := hostSim{hosts: 50, pages: 40, mix: c.mix, perHost: 1, horizon: 480, policy: issuePolicy(), prior: true}
			r := s.run(1)
			s.prior = false
			old := s.run(1)
			b.ReportMetric(r.freshness/r.optimal, c.name+"-of-optimal")
			b.ReportMetric(old.freshness/old.optimal, c.name+"-of-optimal-without-priors")
			b.ReportMetric(r.freshness/r.uniform, c.name+"-vs-uniform")
		}
	}
}
