package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func testPolicy() Policy {
	p := DefaultPolicy()
	p.Min, p.Default, p.Max = time.Second, 10*time.Second, 1000*time.Second
	return p
}

// observeRegular feeds n visits every interval to a page changing as a
// Poisson process with rate lambda (per second).
func observeRegular(rng *rand.Rand, lambda float64, interval time.Duration, n int) History {
	var h History
	at := time.Unix(0, 0)
	h.Observe(First, at)
	for range n {
		at = at.Add(interval)
		o := Identical
		if rng.Float64() < -math.Expm1(-lambda*interval.Seconds()) {
			o = Changed
		}
		h.Observe(o, at)
	}
	return h
}

// TestRateIsBiasReduced checks the estimator against the naive one on a page
// that changes about as often as it is visited: the naive count of changes per
// time observed cannot exceed 1/I, the estimator finds the rate.
func TestRateIsBiasReduced(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lambda := range []float64{0.05, 0.2, 0.5} {
		var sum float64
		const runs = 200
		for range runs {
			h := observeRegular(rng, lambda, 2*time.Second, 100)
			r, ok := h.Rate()
			if !ok {
				t.Fatal("no rate after 100 visits")
			}
			sum += r
		}
		got := sum / runs
		if math.Abs(got-lambda)/lambda > 0.1 {
			t.Errorf("lambda %v: mean estimate %.4f, more than 10%% off", lambda, got)
		}
		naive := 1 - math.Exp(-lambda*2) // changes seen per visit
		if lambda > 0.2 && naive/2 > 0.9*lambda {
			t.Errorf("test is weak: naive estimate %.4f close to lambda %v", naive/2, lambda)
		}
	}
}

// TestIrregularVisitsEstimate: the same estimator with visits at varying
// intervals stays close.
func TestIrregularVisitsEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const lambda = 0.1
	var sum float64
	const runs = 200
	for range runs {
		var h History
		at := time.Unix(0, 0)
		h.Observe(First, at)
		for range 100 {
			d := time.Duration((2 + rng.Float64()*18) * float64(time.Second))
			at = at.Add(d)
			o := Near
			if rng.Float64() < -math.Expm1(-lambda*d.Seconds()) {
				o = Changed
			}
			h.Observe(o, at)
		}
		r, _ := h.Rate()
		sum += r
	}
	if got := sum / runs; math.Abs(got-lambda)/lambda > 0.15 {
		t.Errorf("mean estimate %.4f for lambda %v", got, lambda)
	}
}

func TestNeverChangingDriftsToMax(t *testing.T) {
	p := testPolicy()
	var h History
	at := time.Unix(0, 0)
	h.Observe(First, at)
	next := p.Next(h, First, at, 1, false)
	if next.Sub(at) != p.Default {
		t.Fatalf("first revisit after %v, want -recrawl-default %v", next.Sub(at), p.Default)
	}
	var prev time.Duration
	var steps int
	for steps = 0; steps < 100; steps++ {
		at = next
		h.Observe(NotModified, at)
		next = p.Next(h, NotModified, at, 1, false)
		d := next.Sub(at)
		if d < prev {
			t.Fatalf("visit %d: interval fell from %v to %v for a page that never changed", steps, prev, d)
		}
		if d == p.Max {
			break
		}
		prev = d
	}
	if steps < 2 || steps >= 100 {
		t.Errorf("reached -recrawl-max after %d unchanged visits; want a drift over several", steps)
	}
}

// TestChangedEveryVisitIsProbed: a page found changed at every visit only
// tells that it changes at least about once per interval, so the interval
// shrinks until the estimate shows whether the page can be kept fresh; one
// that changes far faster is then left at the maximum interval within a few
// visits, instead of being fetched at the default interval for ever.
func TestChangedEveryVisitIsProbed(t *testing.T) {
	p := testPolicy()
	var h History
	at := time.Unix(0, 0)
	h.Observe(First, at)
	next := p.Next(h, First, at, 1, false)
	prev := next.Sub(at)
	visits := 0
	for ; visits < 20; visits++ {
		at = next
		h.Observe(Changed, at)
		next = p.Next(h, Changed, at, 1, false)
		d := next.Sub(at)
		if d == p.Max {
			break
		}
		if d >= prev {
			t.Fatalf("visit %d: interval %v after %v, want shorter while every visit finds a change", visits, d, prev)
		}
		prev = d
	}
	if visits == 0 || visits > 6 {
		t.Errorf("page changing at every visit left at -recrawl-max after %d visits, want within 1..6", visits+1)
	}

	// Once a visit finds the copy unchanged the estimate stands on its own:
	// a page changing about once per default keeps an interval near it,
	// unchanged visits in a row notwithstanding.
	h = observeRegular(rand.New(rand.NewPCG(9, 10)), 1/p.Default.Seconds(), p.Default, 40)
	h.Streak = 3
	at = time.Unix(1000, 0)
	if d := p.Next(h, Identical, at, 1, false).Sub(at); d > 2*p.Default {
		t.Errorf("page changing once per default with 3 unchanged visits in a row: interval %v, want under %v", d, 2*p.Default)
	}
}

// TestTooFast: the pages the adaptive policy does not chase are exactly
// those it gives the maximum interval for being too fast; importance raises
// the cut-off; the uniform baseline chases everything.
func TestTooFast(t *testing.T) {
	p := testPolicy()
	for _, every := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, p.Default, 100 * p.Default} {
		lambda := 1 / every.Seconds()
		if fast, atMax := p.TooFast(lambda, 1), p.Interval(lambda, 1) == p.Max && every < p.Default; fast != atMax {
			t.Errorf("page changing every %v: TooFast %v, at the max interval for its speed %v", every, fast, atMax)
		}
	}
	if !p.TooFast(1, 1) || p.TooFast(1, 100) {
		t.Error("a page 100 times as important is worth chasing at the rate an ordinary one is not")
	}
	p.Kind = Uniform
	if p.TooFast(1, 1) {
		t.Error("uniform policy: TooFast")
	}
}

// TestIntervalFavoursWhatCanBeKeptFresh checks the shape of the optimal
// policy: pages changing faster than can be kept fresh get the longest
// interval, slow ones long intervals, the shortest go in between.
func TestIntervalFavoursWhatCanBeKeptFresh(t *testing.T) {
	p := testPolicy()
	per := func(every time.Duration) time.Duration { return p.Interval(1/every.Seconds(), 1) }
	veryFast, mid, slow := per(time.Second), per(5*time.Second), per(200*time.Second)
	if veryFast != p.Max {
		t.Errorf("page changing every 1s (default 10s): interval %v, want max %v", veryFast, p.Max)
	}
	if mid >= slow || mid >= veryFast {
		t.Errorf("intervals: every 1s -> %v, every 5s -> %v, every 200s -> %v; want the middle one shortest", veryFast, mid, slow)
	}
	if got := per(p.Default); got < p.Default*99/100 || got > p.Default*101/100 {
		t.Errorf("page changing once per default: interval %v, want about %v", got, p.Default)
	}
	if hi, lo := p.Interval(1/5.0, 4), p.Interval(1/5.0, 0.25); hi >= mid || lo <= mid {
		t.Errorf("weights: important %v, average %v, minor %v; want important < average < minor", hi, mid, lo)
	}
	if p.Interval(0, 1) != p.Max {
		t.Error("rate 0 must give the max interval")
	}
}

func TestBackoffAndRetire(t *testing.T) {
	p := testPolicy()
	var h History
	at := time.Unix(0, 0)
	h.Observe(First, at)
	var prev time.Duration
	for i := 1; i < p.Retire; i++ {
		h.Observe(Gone, at)
		d := p.Next(h, Gone, at, 1, false).Sub(at)
		if d <= prev {
			t.Fatalf("gone %d: interval %v not longer than %v", i, d, prev)
		}
		prev = d
	}
	h.Observe(Gone, at)
	if next := p.Next(h, Gone, at, 1, false); !next.IsZero() {
		t.Errorf("after %d gone answers: next visit %v, want retired", p.Retire, next)
	}
	h.Observe(Identical, at.Add(time.Hour))
	if h.Misses != 0 {
		t.Errorf("an answer with content did not reset misses: %d", h.Misses)
	}
	for range 30 {
		h.Observe(Error, at)
	}
	if next := p.Next(h, Error, at, 1, false); next.IsZero() || next.Sub(at) != p.Max {
		t.Errorf("errors: next %v, want the max interval, never retired", next)
	}
}

func TestUniformAndOff(t *testing.T) {
	p := testPolicy()
	p.Kind = Uniform
	h := observeRegular(rand.New(rand.NewPCG(5, 6)), 1, time.Second, 20)
	at := time.Unix(100, 0)
	if d := p.Next(h, Changed, at, 1, false).Sub(at); d != p.Default {
		t.Errorf("uniform: %v, want %v", d, p.Default)
	}
	p.Enabled = false
	if !p.Next(h, Changed, at, 1, false).IsZero() {
		t.Error("disabled policy scheduled a visit")
	}
}

func TestValueOrdersStaleAndChaseable(t *testing.T) {
	p := testPolicy()
	slowStale := p.Value(1/20.0, 1, 60*time.Second)
	slowFresh := p.Value(1/20.0, 1, time.Second)
	hopeless := p.Value(10, 1, 60*time.Second)
	if !(slowStale > slowFresh && slowStale > hopeless) {
		t.Errorf("values: stale slow page %.3f, recently fetched %.3f, changing 10/s %.3f", slowStale, slowFresh, hopeless)
	}
}

// TestValueChangedTopsValue: a page known to have changed is worth w/λ,
// what Value only approaches with age, so it outranks its own class at any
// age (equal once the change is all but sure); a slow page known changed outranks a fast one however stale.
func TestValueChangedTopsValue(t *testing.T) {
	p := testPolicy()
	for _, lambda := range []float64{1.0 / 600, 1.0 / 24, 1.0 / 4} {
		known := p.ValueChanged(lambda, 2)
		for _, age := range []time.Duration{time.Second, time.Minute, time.Hour} {
			if v := p.Value(lambda, 2, age); v > known || (age == time.Second && v >= known) {
				t.Errorf("λ %.4f/s: Value at %v = %.3f, above ValueChanged %.3f", lambda, age, v, known)
			}
		}
		if v := p.Value(lambda, 2, 1000*time.Hour); math.Abs(v-known) > 1e-6*known {
			t.Errorf("λ %.4f/s: Value at 1000 h = %.3f, want its limit ValueChanged %.3f", lambda, v, known)
		}
	}
	if slow, fast := p.ValueChanged(1.0/24, 1), p.Value(1.0/4, 1, time.Hour); slow <= fast {
		t.Errorf("slow page known changed %.3f, fast page an hour old %.3f", slow, fast)
	}
}

// TestValueUnknownRate: a page with no estimate ranks at the most any rate
// could be worth at its age, so it is above every known page of the same
// age and, unlike them, grows without bound: a saturated host serves it
// in time and its second visit teaches the rate.
func TestValueUnknownRate(t *testing.T) {
	p := testPolicy()
	for _, age := range []time.Duration{time.Second, 25 * time.Second, time.Hour} {
		unknown := p.Value(0, 2, age)
		for _, lambda := range []float64{1.0 / 86400, 1.0 / 600, 1.0 / 24, 1.0 / 4, 10} {
			if v := p.Value(lambda, 2, age); v > unknown*(1+1e-9) {
				t.Errorf("age %v: λ %.5f/s worth %.3f, above an unknown rate's %.3f", age, lambda, v, unknown)
			}
		}
	}
	if a, b := p.Value(0, 1, time.Minute), p.Value(0, 1, 2*time.Minute); math.Abs(b-2*a) > 1e-9 || a <= 0 {
		t.Errorf("unknown rate: worth %.3f at 1 min, %.3f at 2 min; want growing with age", a, b)
	}
	if v := p.Value(0, 1, 0); v != 0 {
		t.Errorf("unknown rate just fetched: worth %v, want 0", v)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*Policy){
		func(p *Policy) { p.Kind = "x" },
		func(p *Policy) { p.Min = 0 },
		func(p *Policy) { p.Max = p.Min / 2 },
		func(p *Policy) { p.Default = p.Max * 2 },
		func(p *Policy) { p.Share = 0 },
		func(p *Policy) { p.Retire = 0 },
	} {
		p := DefaultPolicy()
		bad(&p)
		if p.Validate() == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// TestDatedChangesTellFastFromSlow: visited every 27 s, with the page's
// Last-Modified (to the second, rounded up, and taken as a change
// within a second of it, as the parser takes it), a page changing every 4 s is estimated near its rate and one
// changing every 24 s near its own, as their posteriors on a neutral
// prior say too. Without the dates the fast page is only "changed at
// almost every visit", and its estimate falls a third short.
func TestDatedChangesTellFastFromSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 24))
	const interval, visits = 27.0, 40
	for _, lambda := range []float64{1.0 / 4, 1.0 / 24} {
		var dated, undated, mean float64
		const runs = 50
		for range runs {
			var hd, hu History
			at := time.Unix(0, 0)
			hd.Observe(First, at)
			hu.Observe(First, at)
			last := 0.0 // the latest change
			next := rng.ExpFloat64() / lambda
			for v := 1; v <= visits; v++ {
				now := interval * float64(v)
				changed := false
				for next <= now {
					last, changed = next, true
					next += rng.ExpFloat64() / lambda
				}
				o := Identical
				var when Dated
				if changed {
					o = Changed
					lm := time.Unix(0, 0).Add(seconds(math.Ceil(last)))
					when = Dated{From: lm.Add(-time.Second), To: lm.Add(time.Second)}
				}
				end := time.Unix(0, 0).Add(seconds(now))
				hd.ObserveDated(o, end, when)
				hu.Observe(o, end)
			}
			rd, _ := hd.Rate()
			ru, _ := hu.Rate()
			dated += rd / runs
			undated += ru / runs
			_, post := hd.Posterior(blend(nil, nil, 1))
			for j, w := range post {
				mean += w * atomRate(j) / runs
			}
		}
		t.Logf("rate %.4f: dated estimate %.4f, posterior mean %.4f; undated %.4f", lambda, dated, mean, undated)
		if math.Abs(dated-lambda)/lambda > 0.3 || math.Abs(mean-lambda)/lambda > 0.3 {
			t.Errorf("rate %.4f: dated estimate %.4f, posterior mean %.4f, want within 30%%", lambda, dated, mean)
		}
		if lambda > 0.1 && undated > 0.7*lambda {
			t.Errorf("test is weak: undated estimate %.4f of a page changing at %.4f", undated, lambda)
		}
	}
}

// TestObserveDatedIgnoresOutOfRange: a window outside the interval (a
// server clock off, a date that did not move, a date in the future), one
// covering all of it, or one on an answer that found no change records
// what Observe records.
func TestObserveDatedIgnoresOutOfRange(t *testing.T) {
	start := time.Unix(1000, 0)
	at := start.Add(30 * time.Second)
	w := func(from, to time.Duration) Dated { return Dated{From: start.Add(from), To: start.Add(to)} }
	inside := w(9*time.Second, 11*time.Second)
	for _, o := range []Outcome{Changed, Identical, NotModified, Gone, Redirect} {
		for _, when := range []Dated{{}, w(-time.Hour, -time.Minute), w(-2*time.Second, 0), w(30*time.Second, 31*time.Second),
			w(-time.Second, 31*time.Second), w(11*time.Second, 9*time.Second), inside} {
			if o == Changed && when == inside {
				continue
			}
			var a, b History
			a.Observe(First, start)
			b.Observe(First, start)
			a.Observe(o, at)
			b.ObserveDated(o, at, when)
			if a != b {
				t.Errorf("%s dated %v: %+v, want %+v", o, when, b, a)
			}
		}
	}
	// Inside it: changed within the window, unchanged after it, nothing
	// said of the time before it. A window reaching past the interval's
	// ends is cut to them.
	for _, c := range []struct {
		when               Dated
		changed, unchanged time.Duration
	}{{inside, 2 * time.Second, 19 * time.Second}, {w(-time.Minute, 5*time.Second), 5 * time.Second, 25 * time.Second}, {w(29*time.Second, time.Minute), time.Second, 0}} {
		var h History
		h.Observe(First, start)
		h.ObserveDated(Changed, at, c.when)
		if h.Changes != 1 || h.ChangedTime != c.changed || h.Unchanged != c.unchanged {
			t.Errorf("dated %v: %+v, want changed %v, unchanged %v", c.when, h, c.changed, c.unchanged)
		}
	}
}

// TestObserveSitemapWord: a sitemap's word that the copy was current at
// some time makes the time before it unchanged, so a change found at the
// visit lies after it; a dated change with Until leaves out what came
// after the sitemap; an answer without content ignores both.
func TestObserveSitemapWord(t *testing.T) {
	start := time.Unix(1000, 0)
	at := start.Add(30 * time.Second)
	sec := func(d int) time.Time { return start.Add(time.Duration(d) * time.Second) }
	cases := []struct {
		name           string
		o              Outcome
		when           Dated
		changed, unchg time.Duration
		changes        int
	}{
		{"current, then changed", Changed, Dated{Current: sec(20)}, 10 * time.Second, 20 * time.Second, 1},
		{"current, unchanged", Identical, Dated{Current: sec(20)}, 0, 30 * time.Second, 0},
		{"current after the visit", Changed, Dated{Current: sec(31)}, 30 * time.Second, 0, 1},
		{"current and a Last-Modified", Changed, Dated{From: sec(24), To: sec(26), Current: sec(20)}, 2 * time.Second, 24 * time.Second, 1},
		{"dated until the sitemap", Changed, Dated{From: sec(9), To: sec(11), Until: sec(20)}, 2 * time.Second, 9 * time.Second, 1},
		{"until before the window", Changed, Dated{From: sec(9), To: sec(11), Until: sec(5)}, 2 * time.Second, 19 * time.Second, 1},
	}
	for _, c := range cases {
		var h History
		h.Observe(First, start)
		h.ObserveDated(c.o, at, c.when)
		if h.ChangedTime != c.changed || h.Unchanged != c.unchg || h.Changes != c.changes || !h.LastFetch.Equal(at) {
			t.Errorf("%s: changed %v, unchanged %v, %d changes, last fetch %v; want %v, %v, %d, %v",
				c.name, h.ChangedTime, h.Unchanged, h.Changes, h.LastFetch, c.changed, c.unchg, c.changes, at)
		}
	}
	var a, b History
	a.Observe(First, start)
	b.Observe(First, start)
	a.Observe(Redirect, at)
	b.ObserveDated(Redirect, at, Dated{Current: sec(20)})
	if a != b {
		t.Errorf("a redirect with a sitemap's word: %+v, want %+v", b, a)
	}
}
