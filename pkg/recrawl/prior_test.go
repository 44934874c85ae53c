package recrawl

import (
	"math"
	"testing"
	"time"
)

// hist is a page observed n times at interval d, changed at the first x of
// them.
func hist(n, x int, d time.Duration) History {
	var h History
	at := time.Unix(0, 0)
	h.Observe(First, at)
	for i := range n {
		at = at.Add(d)
		o := Identical
		if i < x {
			o = Changed
		}
		h.Observe(o, at)
	}
	return h
}

func interval(t *testing.T, p Policy, h History, prior Prior) time.Duration {
	t.Helper()
	at := time.Unix(1000, 0)
	next, _ := p.Plan(h, Identical, at, 1, false, prior)
	return next.Sub(at)
}

// TestHostPriorLeavesStaticPageAlone: the same page history (one unchanged
// visit) waits far longer on a host whose pages never changed than on one
// whose pages change every 24 s.
func TestHostPriorLeavesStaticPageAlone(t *testing.T) {
	p := issuePolicy()
	p.Max = 10 * time.Minute
	static, changing := NewPriors(10), NewPriors(10)
	for range 30 {
		static.Update("s", History{}, hist(4, 0, 10*time.Second))
		changing.Update("c", History{}, hist(4, 2, 10*time.Second))
	}
	page := hist(1, 0, 5*time.Second)
	onStatic := interval(t, p, page, static.For("s", 1))
	onChanging := interval(t, p, page, changing.For("c", 1))
	if onStatic != p.Max || onChanging >= time.Minute {
		t.Errorf("after one unchanged visit: %v on a static host (want %v), %v on a changing one (want under a minute)", onStatic, p.Max, onChanging)
	}
	// Seen to change, a page of the static host is revisited like any
	// page that changes: "never" is ruled out.
	if d := interval(t, p, hist(3, 3, 20*time.Second), static.For("s", 1)); d >= time.Minute {
		t.Errorf("page seen to change on a static host waits %v", d)
	}
}

// TestPosterior: weights sum to 1, "never" gets nothing once a change was
// seen, and long unchanged time moves the weight to "never".
func TestPosterior(t *testing.T) {
	pr := NewPriors(1).For("h", 1)
	for _, h := range []History{hist(3, 1, 10*time.Second), hist(10, 0, 10*time.Second), {}} {
		static, rates := h.Posterior(pr)
		sum := static
		for _, w := range rates {
			sum += w
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%+v: weights sum to %v", h, sum)
		}
		if h.Changes > 0 && static != 0 {
			t.Errorf("%+v: never-changes weight %v after a change", h, static)
		}
	}
	// On a host where half the pages never changed and half change every
	// 20 s or so.
	ps := NewPriors(1)
	for range 10 {
		ps.Update("h", History{}, hist(10, 0, 10*time.Second))
		ps.Update("h", History{}, hist(10, 4, 10*time.Second))
	}
	pr = ps.For("h", 1)
	s1, _ := hist(2, 0, 10*time.Second).Posterior(pr)
	s2, _ := hist(20, 0, 10*time.Second).Posterior(pr)
	if !(s2 > s1 && s2 > 0.9) {
		t.Errorf("never-changes weight after 20 s unchanged %.3f, after 200 s %.3f", s1, s2)
	}
}

// TestPriorsUpdate: a page moves between where its histories put it, and
// is counted once.
func TestPriorsUpdate(t *testing.T) {
	ps := NewPriors(1)
	a, b := hist(2, 0, time.Second), hist(3, 1, time.Second)
	ps.Update("h", History{}, a)
	ps.Update("h", a, b)
	hp := ps.hosts["h"]
	if hp.Static != 0 || hp.Pages() != 1 {
		t.Errorf("after a change: static %v, pages %v; want 0 and 1", hp.Static, hp.Pages())
	}
	// Found changed at every visit: counted as a lower bound.
	c := hist(3, 3, time.Second)
	ps.Update("h", b, c)
	var atLeast float64
	for _, n := range hp.AtLeast {
		atLeast += n
	}
	if atLeast != 1 || hp.Pages() != 1 {
		t.Errorf("changed at every visit: at least %v, pages %v", atLeast, hp.Pages())
	}
	// The bound holds: past it, the host that held it is dropped first.
	ps.Update("other", History{}, a)
	if len(ps.hosts) != 1 {
		t.Errorf("%d hosts kept, bound 1", len(ps.hosts))
	}
}

// TestPlanTooFast: a page changed at every visit on a host whose pages
// change far faster than the policy can keep fresh waits -recrawl-max.
func TestPlanTooFast(t *testing.T) {
	p := issuePolicy()
	ps := NewPriors(1)
	for range 30 {
		// Changing every 0.1 s, visited every 0.2 s: estimated, not bounded.
		var h History
		at := time.Unix(0, 0)
		h.Observe(First, at)
		for i := range 20 {
			at = at.Add(200 * time.Millisecond)
			o := Changed
			if i%8 == 0 {
				o = Identical
			}
			h.Observe(o, at)
		}
		ps.Update("f", History{}, h)
	}
	if d := interval(t, p, hist(3, 3, 5*time.Second), ps.For("f", 1)); d != p.Max {
		t.Errorf("too fast a page: %v, want %v", d, p.Max)
	}
}

// TestRedirectSchedule: a permanent redirect is not revisited; a temporary
// one backs off from the default, doubling per redirect in a row.
func TestRedirectSchedule(t *testing.T) {
	p := testPolicy()
	at := time.Unix(0, 0)
	var h History
	h.Observe(Moved, at)
	if next := p.Next(h, Moved, at, 1, false); !next.IsZero() {
		t.Errorf("301: next visit %v", next)
	}
	h = History{}
	var last time.Duration
	for i := range 4 {
		h.Observe(Redirect, at)
		d := p.Next(h, Redirect, at, 1, false).Sub(at)
		if i == 0 && d != p.Default || i > 0 && d != min(2*last, p.Max) {
			t.Errorf("redirect %d in a row: %v (before %v)", i+1, d, last)
		}
		last = d
		at = at.Add(d)
	}
}

// TestIndexRateOfUnseenPage: the rate stored for a page never seen to
// change gives the fetcher's index the value the page's posterior gives
// it at the age the policy would revisit it at were it known to change,
// on hosts of every mix of static and changing pages, after any unchanged
// time, for -recrawl-max a minute or an hour. Matched where the mixture
// tops out, as first written, the prior's flat share on rates of once in
// months made the index of a page changing every 24 s, unchanged at its
// first 8 s revisit on a host of such pages, a hundredth of its worth.
func TestIndexRateOfUnseenPage(t *testing.T) {
	for _, max := range []time.Duration{time.Minute, time.Hour} {
		p := issuePolicy()
		p.Max = max
		for _, static := range []int{0, 3, 10, 30} {
			for _, changing := range []int{0, 3, 10, 30} {
				ps := NewPriors(1)
				for range static {
					ps.Update("h", History{}, hist(10, 0, 10*time.Second))
				}
				for range changing {
					ps.Update("h", History{}, hist(20, 8, 10*time.Second))
				}
				prior := ps.For("h", 1/p.Min.Seconds())
				for _, d := range []time.Duration{time.Second, 8 * time.Second, time.Minute, time.Hour} {
					h := hist(1, 0, d)
					_, rate := p.Plan(h, Identical, time.Unix(1000, 0), 1, false, prior)
					_, post := h.Posterior(prior)
					var mass, mean float64
					for j, w := range post {
						mass += w
						mean += w * atomRate(j)
					}
					age := p.Interval(mean/mass, 1)
					var want float64
					for j, w := range post {
						want += w * g(atomRate(j)*age.Seconds()) / atomRate(j)
					}
					got := p.Value(rate, 1, age)
					if math.Abs(got-want) > 1e-6*want+1e-9 {
						t.Errorf("max %v, %d static, %d changing pages, unchanged %v: index at %v %.4g, posterior's %.4g (rate %.3g)", max, static, changing, d, age, got, want, rate)
					}
				}
			}
		}
	}
}

// TestIndexRate: the slower rate whose index at age is v, for indices a
// page of rate below the peak reaches.
func TestIndexRate(t *testing.T) {
	for _, age := range []float64{1, 60, 86400} {
		for _, x := range []float64{1e-6, 0.01, 0.5, 1, 1.7} {
			lam := x / age
			if got := indexRate(g(x)/lam, age); math.Abs(got-lam) > 1e-6*lam {
				t.Errorf("age %v, rate %v: got %v", age, lam, got)
			}
		}
	}
	if r := indexRate(0, 60); r <= 0 {
		t.Errorf("no index: rate %v, want above 0 (0 reads as unknown)", r)
	}
}

// TestIndexRateOfPageChangedOnce: a page found changed at a revisit 1.3 s
// after its first fetch, on a host whose pages mostly change every 6 s (a
// tenth every second, a third never), has a posterior mean that says
// "fast"; the rate stored for it ranks it as the posterior's index at its
// planned visit, and past it above what the mean's index ever reaches
// (1/mean), so that it is served, not left due (the crawler's second mix
// left such slow pages due for 100 s).
func TestIndexRateOfPageChangedOnce(t *testing.T) {
	p := issuePolicy()
	ps := NewPriors(1)
	for range 18 {
		ps.Update("h", History{}, hist(20, 15, 8*time.Second))
	}
	for range 3 {
		ps.Update("h", History{}, hist(20, 20, 8*time.Second))
	}
	for range 9 {
		ps.Update("h", History{}, hist(20, 0, 8*time.Second))
	}
	prior := ps.For("h", 1/p.Min.Seconds())
	h := hist(1, 1, 1300*time.Millisecond)
	at := time.Unix(1000, 0)
	next, rate := p.Plan(h, Changed, at, 1, false, prior)
	age := next.Sub(at)
	if age <= p.Min || age >= p.Max {
		t.Fatalf("planned in %v: the case needs an interval between -recrawl-min and -recrawl-max", age)
	}
	_, post := h.Posterior(prior)
	var want, mean float64
	for j, w := range post {
		want += w * g(atomRate(j)*age.Seconds()) / atomRate(j)
		mean += w * atomRate(j)
	}
	if got := p.Value(rate, 1, age); math.Abs(got-want) > 1e-6*want {
		t.Errorf("index at its planned visit in %v: %.4g, the posterior's %.4g (rate %.3g, posterior mean %.3g)", age, got, want, rate, mean)
	}
	if later := p.Value(rate, 1, 10*age); later <= 1/mean {
		t.Errorf("index at 10x its interval %.4g, not above the posterior mean's ceiling 1/%.3g", later, mean)
	}
}
