// Package recrawl decides when a fetched URL is fetched again: it keeps a
// URL's change history, estimates how often the page changes, and turns the
// estimate into the next visit. It holds no state of its own; the history
// lives in the metadata store beside the URL (urls.next_fetch_at and the
// change statistics), so a partition that moves to another fetcher, or a
// process killed mid-crawl, loses no schedule.
//
// # Estimating the change rate
//
// A page is modelled as a Poisson process of changes with rate λ. A crawler
// only sees, at each visit, whether the page changed since the last one: a
// page checked every interval I that changed tells nothing about how many
// times. The naive estimate (changes seen / time observed) is then biased low
// and saturates at 1/I. Cho and Garcia-Molina ("Estimating frequency of
// change", ACM TOIT 2003) give the bias-reduced estimator for regular visits,
//
//	λ̂ = −ln((n − X + 0.5) / (n + 0.5)) / I
//
// for n visits of which X found a change. Visits here are irregular (the
// interval follows the estimate), so the history keeps the observed time
// split in two sums: time in intervals that ended unchanged (Tu) and time in
// intervals that ended changed (Tc, over X such intervals). Treating the
// changed intervals as equal to their mean t = Tc/X, the maximum-likelihood
// condition X·t·e^(−λt)/(1−e^(−λt)) = Tu has the closed form
// λ = ln(1 + X·t/Tu)/t, and the same half-observation correction gives
//
//	λ̂ = ln((Tu + (X + 0.5)·t) / (Tu + 0.5·t)) / t
//
// which is exactly Cho and Garcia-Molina's estimator when the visits are
// regular. A page never seen to change counts half a change (X = 0.5, t the
// mean interval): its estimate falls like 1/(time observed), so its interval
// drifts towards -recrawl-max instead of jumping there after one visit; a
// floor doubling per unchanged visit in a row (see Policy.Next) makes the
// drift geometric. A page found changed at every visit is the opposite case:
// the estimate only bounds its rate from below, so the interval shrinks geometrically until
// the estimate tells (see Policy.Next).
//
// # Choosing the interval
//
// See Policy.Interval: the Lagrangian solution of Cho and Garcia-Molina
// ("Effective page refresh policies for Web crawlers", ACM TODS 2003) for the
// most time-averaged freshness per request, which revisits pages that change
// faster than they can be kept fresh less often, not more.
package recrawl

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"time"
)

// Outcome is what one fetch of a URL found, compared with the copy the
// crawler held.
type Outcome string

const (
	First       Outcome = "first"        // no earlier copy
	Changed     Outcome = "changed"      // content differs beyond the near-duplicate distance
	NotModified Outcome = "not_modified" // 304 to a conditional request
	Identical   Outcome = "identical"    // same SHA-256 payload
	Near        Outcome = "near"         // same text within the SimHash near-duplicate distance (an ad, a timestamp)
	Gone        Outcome = "gone"         // 404 or 410
	Error       Outcome = "error"        // 5xx, 429 after retries, a network error
	Moved       Outcome = "moved"        // 301 or 308: the target replaces the URL
	Redirect    Outcome = "redirect"     // another 3xx with a Location: no page here, the target is one
	Other       Outcome = "other"        // another status (3xx without Location, 4xx): no content to compare
)

// Unchanged reports whether the outcome confirms the held copy.
func (o Outcome) Unchanged() bool { return o == NotModified || o == Identical || o == Near }

// History is what the store keeps per URL to schedule it.
type History struct {
	Fetches     int           // answers observed (fetch_count)
	Changes     int           // intervals that ended with a change (change_count)
	Unchanged   time.Duration // time known unchanged: intervals that ended unchanged, and from a dated change's window to the visit that saw it (Tu)
	ChangedTime time.Duration // total length of intervals known to hold a change: the changed intervals, or their dated change's window (Tc)
	LastFetch   time.Time     // previous answer with content, the start of the open interval
	LastChange  time.Time     // when a change was last seen (the visit that saw it)
	Misses      int           // consecutive errors or gone answers
	Streak      int           // consecutive answers that confirmed the copy
}

// Observe records a fetch at time at with outcome o.
func (h *History) Observe(o Outcome, at time.Time) { h.ObserveDated(o, at, Dated{}) }

// Dated is when a page's last change happened as far as an answer tells:
// between From and To (a Last-Modified is to the second, and a server may
// round either way; a sitemap's <lastmod> may be to the day). The zero
// value tells nothing.
type Dated struct {
	From, To time.Time
	// Until, when set, ends the time known unchanged after the window: a
	// sitemap's <lastmod> holds until the sitemap was fetched and says
	// nothing of what came after it.
	Until time.Time
	// Current, when set, is a time at which the held copy was known to be
	// the live version (a sitemap fetched then listed the page with a
	// <lastmod> before the copy): the time from the last visit to it was
	// unchanged, whatever the visit found.
	Current time.Time
}

// ObserveDated is Observe with the window in which the page last changed,
// when the answer tells it (a Last-Modified that moved, a sitemap's
// <lastmod>). A changed interval then says more than "at least one
// change": there was one in the window and none after it, which is a
// changed interval as long as the window followed by time known
// unchanged, while what came before the window, any number of changes,
// says nothing and is left out. That is what tells a page changing every
// few seconds, found changed at every visit, from a slower one that
// happened to change before each visit: the first's last change is always
// just before the visit. (Taking the window's end as a mere bound, with
// all the interval before it as changed time, throws that away: a page
// changing every 4 s visited every 27 s was then estimated at once per
// 11 s, worse than without the dates.) A window outside the interval (a
// clock off, a date that did not move) says nothing and is ignored. A
// sitemap's word also shortens the interval the visit judges: with
// Current the time up to it is unchanged, so a change found lies after it.
func (h *History) ObserveDated(o Outcome, at time.Time, when Dated) {
	h.Fetches++
	switch o {
	case Gone, Error:
		h.Misses++
		return
	}
	h.Misses = 0
	if o.Unchanged() || o == Redirect || o == Moved {
		h.Streak++
	} else {
		h.Streak = 0
	}
	if o == First || h.LastFetch.IsZero() || !at.After(h.LastFetch) {
		if o == First || h.LastFetch.IsZero() {
			h.LastFetch, h.LastChange = at, at
		}
		return
	}
	if c := when.Current; (o == Changed || o.Unchanged()) && c.After(h.LastFetch) && c.Before(at) {
		h.Unchanged += c.Sub(h.LastFetch)
		h.LastFetch = c
	}
	d := at.Sub(h.LastFetch)
	switch {
	case o == Changed && when.valid(h.LastFetch, at):
		from, to := latest(when.From, h.LastFetch), earliest(when.To, at)
		end := at
		if u := when.Until; u.After(to) && u.Before(at) {
			end = u
		}
		h.Changes++
		h.ChangedTime += to.Sub(from)
		h.Unchanged += end.Sub(to)
		h.LastChange = at
	case o == Changed:
		h.Changes++
		h.ChangedTime += d
		h.LastChange = at
	case o.Unchanged():
		h.Unchanged += d
	default:
		return // no content compared: the interval stays open
	}
	h.LastFetch = at
}

// valid reports whether the window overlaps the interval (start, end]
// and says something: a window covering the whole interval says no more
// than that it changed.
func (d Dated) valid(start, end time.Time) bool {
	if d.From.IsZero() || d.To.Before(d.From) || !d.To.After(start) || !d.From.Before(end) {
		return false
	}
	return d.From.After(start) || d.To.Before(end)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Rate returns the estimated changes per second and whether there is any
// observation to base it on.
func (h History) Rate() (float64, bool) {
	tu, tc := h.Unchanged.Seconds(), h.ChangedTime.Seconds()
	if tu+tc <= 0 {
		return 0, false
	}
	x := float64(h.Changes)
	var t float64
	if h.Changes > 0 {
		t = tc / x
	} else {
		// Never seen to change: half a change over the mean interval. The
		// number of unchanged intervals is not kept, so Fetches-1 stands in
		// (the first fetch opens no interval).
		x = 0.5
		t = tu / float64(max(h.Fetches-1, 1))
	}
	return math.Log((tu+(x+0.5)*t)/(tu+0.5*t)) / t, true
}

// Policies.
const (
	Adaptive = "adaptive" // interval from the estimated change rate (Interval)
	Uniform  = "uniform"  // every page every -recrawl-default: the baseline
)

// Policy configures scheduling. Its zero value schedules nothing.
type Policy struct {
	Enabled bool
	Kind    string        // Adaptive or Uniform
	Min     time.Duration // no revisit sooner (a sitemap's lastmod aside)
	Max     time.Duration // no page left longer
	Default time.Duration // first revisit, and the scale of the adaptive policy
	Share   float64       // revisits' share of a host's requests while new pages wait for it
	Retire  int           // consecutive 404/410 answers after which a URL is no longer visited
}

// Defaults an operator of an open-web crawl would expect.
const (
	DefaultMin     = time.Hour
	DefaultMax     = 30 * 24 * time.Hour
	DefaultDefault = 24 * time.Hour
	DefaultShare   = 0.5
	DefaultRetire  = 3
)

// DefaultPolicy returns the flags' defaults.
func DefaultPolicy() Policy {
	return Policy{Enabled: true, Kind: Adaptive, Min: DefaultMin, Max: DefaultMax, Default: DefaultDefault, Share: DefaultShare, Retire: DefaultRetire}
}

// RegisterFlags registers the recrawl flags.
func (p *Policy) RegisterFlags(fs *flag.FlagSet) {
	d := DefaultPolicy()
	fs.BoolVar(&p.Enabled, "recrawl", d.Enabled, "revisit fetched URLs as they change (false: every URL is fetched once)")
	fs.StringVar(&p.Kind, "recrawl-policy", d.Kind, "adaptive (interval from each page's estimated change rate and importance) or uniform (every page every -recrawl-default)")
	fs.DurationVar(&p.Min, "recrawl-min", d.Min, "shortest interval between two visits of a page (a sitemap <lastmod> newer than the copy may bring a visit sooner)")
	fs.DurationVar(&p.Max, "recrawl-max", d.Max, "longest interval between two visits of a page")
	fs.DurationVar(&p.Default, "recrawl-default", d.Default, "first revisit of a page; also the scale of the adaptive policy (no page is revisited more often than about 0.9x this unless it is more important than average)")
	fs.Float64Var(&p.Share, "recrawl-share", d.Share, "share (0..1] of a host's requests revisits may take while new pages of the host wait; 1 = no reserve for discovery")
	fs.IntVar(&p.Retire, "recrawl-retire", d.Retire, "consecutive 404/410 answers after which a URL is retired")
}

// Validate reports settings the scheduler cannot honour.
func (p Policy) Validate() error {
	if !p.Enabled {
		return nil
	}
	var errs []error
	if p.Kind != Adaptive && p.Kind != Uniform {
		errs = append(errs, fmt.Errorf("-recrawl-policy %q: want %s or %s", p.Kind, Adaptive, Uniform))
	}
	if p.Min <= 0 || p.Max < p.Min {
		errs = append(errs, fmt.Errorf("-recrawl-min %v, -recrawl-max %v: want 0 < min <= max", p.Min, p.Max))
	}
	if p.Default < p.Min || p.Default > p.Max {
		errs = append(errs, fmt.Errorf("-recrawl-default %v: want within [-recrawl-min, -recrawl-max]", p.Default))
	}
	if p.Share <= 0 || p.Share > 1 {
		errs = append(errs, fmt.Errorf("-recrawl-share %v: want (0, 1]", p.Share))
	}
	if p.Retire < 1 {
		errs = append(errs, fmt.Errorf("-recrawl-retire %d: want at least 1", p.Retire))
	}
	return errors.Join(errs...)
}

// Weight maps an admission score (0..100) to an importance weight: 1 at 75,
// an ordinary page two or three links deep, and doubling every 50 points, so
// a seed's home page (100) counts 1.4 such pages and a deep or media URL
// (50) 0.7. The score is a depth heuristic, not a measure of how much a page
// is read, so its weight is mild: doubling every 25 points from 50, as first
// written, made pages near the seeds 3.5 times as important as the rest, and
// the policy chased those among them that change faster than they can be
// kept fresh (a request every interval for a third of their time fresh)
// with requests an unweighted freshness measure counts as wasted.
func Weight(score int) float64 {
	return math.Exp2(float64(min(max(score, 0), 100)-75) / 50)
}

// Next returns when to visit a URL again after an answer with outcome o at
// time at, given its history with that answer observed, or the zero time when
// it is not to be visited again (retired, or scheduling is off). sitemap marks
// a sitemap, whose value is the changes of the pages it lists, not its own
// freshness.
func (p Policy) Next(h History, o Outcome, at time.Time, weight float64, sitemap bool) time.Time {
	if !p.Enabled || o == Gone && h.Misses >= p.Retire || o == Moved {
		// A permanent redirect hands the URL over to its target, which
		// has a schedule of its own.
		return time.Time{}
	}
	if h.Misses > 0 {
		return p.backoff(h, at)
	}
	if o == Redirect {
		// A temporary redirect is no page to keep fresh: its target is
		// crawled on its own schedule, and where the redirect points is
		// checked ever more rarely, the default interval doubled per
		// redirect answer in a row, up to Max. Under either policy, so
		// that they are compared on pages.
		return at.Add(p.clamp(seconds(p.Default.Seconds() * math.Exp2(float64(min(h.Streak-1, 60))))))
	}
	if p.Kind == Uniform {
		return at.Add(p.Default)
	}
	lambda, ok := h.Rate()
	switch {
	case !ok:
		return at.Add(p.Default)
	case sitemap:
		// Visit about twice per expected change: each visit then reveals
		// the changed pages while they are fresh news.
		return at.Add(p.clamp(seconds(0.5 / max(lambda, 1e-12))))
	}
	d := p.Interval(lambda, weight)
	if h.Changes > 0 && h.Unchanged == 0 && d < p.Max {
		// Changed at every visit: the estimate only says λ ≳ 1/interval.
		// Shorten the interval geometrically (the mean interval over 2^X
		// after X changes) to learn whether the page can be kept fresh;
		// a few probes take the estimate past the policy's cut-off for a page
		// that changes too fast (then d = Max), where visiting at this
		// interval for ever would spend a request per visit on nothing.
		d = min(d, p.clamp(seconds(h.ChangedTime.Seconds()/float64(h.Changes)/math.Exp2(float64(min(h.Changes, 30))))))
	}
	if h.Streak > 0 && h.Changes == 0 {
		// The estimate of a page never seen to change falls only like 1/time
		// observed, so the interval alone would grow linearly: a page
		// unchanged k times in a row waits at least Default·2^k. Once a
		// change has been seen the estimate stands on its own: a floor
		// there would stretch the intervals of exactly the pages worth
		// revisiting.
		d = max(d, p.clamp(seconds(p.Default.Seconds()*math.Pow(2, float64(min(h.Streak, 60))))))
	}
	return at.Add(d)
}

// backoff spaces the visits of a URL whose answers are errors or gone: the
// default interval, doubled per miss in a row.
func (p Policy) backoff(h History, at time.Time) time.Time {
	d := p.Default << min(h.Misses-1, 20)
	if d <= 0 || d > p.Max {
		d = p.Max
	}
	return at.Add(max(d, p.Min))
}

// marginal is the freshness per request at the margin the adaptive policy
// holds every page to, in seconds: the value that gives a page changing once
// per Default an interval of Default (g(1) = 1 − 2/e).
func (p Policy) marginal() float64 {
	return (1 - 2/math.E) * p.Default.Seconds()
}

// Interval is the adaptive policy's interval for a page with change rate
// lambda (per second) and importance weight.
//
// Cho and Garcia-Molina maximise Σ wᵢ·F(λᵢ, fᵢ), the time-averaged freshness
// of pages revisited at frequencies fᵢ, F(λ, f) = (f/λ)(1 − e^(−λ/f)), under
// a budget Σ fᵢ = B. The Lagrange condition ∂F/∂f = μ/w gives, with r = λ/f
// the changes per interval,
//
//	g(r) = 1 − (1 + r)·e^(−r) = μ·λ / w
//
// g rises from 0 to 1, so pages with μλ/w ≥ 1 get no revisits at all: they
// change so often that no affordable interval keeps them fresh, and every
// request spent on them is worth more elsewhere. Slow pages get r ≈ √(2μλ/w),
// an interval growing like 1/√λ; the shortest intervals go to pages in
// between. μ, the freshness a request must buy, is set from Default (see
// marginal), so Default is the policy's scale and the per-host budgets of
// the fetcher (politeness, -recrawl-share) decide which due pages go first
// when a host cannot take them all.
func (p Policy) Interval(lambda, weight float64) time.Duration {
	if lambda <= 0 || weight <= 0 {
		return p.Max
	}
	if p.TooFast(lambda, weight) {
		return p.Max
	}
	target := p.marginal() * lambda / weight
	// g is increasing: bisection on r in (0, 50] converges without care.
	lo, hi := 0.0, 50.0
	for range 60 {
		mid := (lo + hi) / 2
		if g(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return p.clamp(seconds((lo + hi) / 2 / lambda))
}

// TooFast reports whether the adaptive policy leaves a page with change
// rate lambda (per second) and importance weight unchased: it changes faster
// than any interval the budget affords keeps it fresh (see Interval). A
// sitemap <lastmod> saying such a page changed is no reason to fetch it.
func (p Policy) TooFast(lambda, weight float64) bool {
	return p.Kind == Adaptive && lambda > 0 && weight > 0 && p.marginal()*lambda/weight >= 0.999
}

func g(r float64) float64 { return -math.Expm1(-r) - r*math.Exp(-r) }

// Value is the index a due visit is ranked by when a host cannot take all
// its due visits: the freshness per request a page of change rate lambda
// last fetched age ago would be revisited at if its interval were age,
// w·g(λ·age)/λ (the Lagrange condition of Interval solved for the
// marginal). Serving the highest first holds every page of a host to one
// marginal, the optimum for the host's budget (Optimal), whatever that
// budget is: a page never seen to change (λ small) ranks near 0 however old
// its copy, a page changing faster than it can be kept fresh tops out at
// w/λ, and a page whose planned interval was from Plan ranks at the
// policy's marginal when due. The fetcher spends a host's scarce revisit
// slots on the highest values first.
//
// A page with no estimate (fetched once, before its host's other pages had
// shown anything) ranks at the most any rate could be worth at its age,
// w·a·max g(x)/x: its second visit is what teaches the rate. Ranked as a
// page changing once per Default (as before), its index topped out at
// Default where host delays left slots only for higher ones, and 5% of
// the slow pages were never visited again (TestPolicyNearOptimal, 50x40).
func (p Policy) Value(lambda, weight float64, age time.Duration) float64 {
	a := max(age.Seconds(), 0)
	if lambda <= 0 {
		return weight * a * peakIndex
	}
	return weight * g(lambda*a) / lambda
}

// peakIndex is the most g(x)/x reaches (at x ≈ 1.7934): a page revisited
// age a after its last fetch is worth at most a·peakIndex per unit weight,
// whatever its rate.
var peakIndex = g(1.7934) / 1.7934

// ValueChanged is Value for a page known to have changed since its copy was
// fetched (a sitemap listed a <lastmod> after it): the revisit is sure to
// find a change, so it buys the fresh time until the next one, w/λ, which
// Value only approaches at ages long against 1/λ. Ranked by its age, such a
// page waited behind pages merely likely to have changed, and in a cluster,
// where a listing's visit comes later, often until the page changed again.
func (p Policy) ValueChanged(lambda, weight float64) float64 {
	return weight / p.valueRate(lambda)
}

// valueRate is the rate Value ranks a page by: its estimate, or for a page
// with none one change per Default.
func (p Policy) valueRate(lambda float64) float64 {
	if lambda <= 0 {
		return 1 / p.Default.Seconds()
	}
	return lambda
}

func (p Policy) clamp(d time.Duration) time.Duration {
	return min(max(d, p.Min), p.Max)
}

func seconds(s float64) time.Duration {
	if s >= float64(math.MaxInt64)/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * 1e9)
}
