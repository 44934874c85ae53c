package synthweb

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DefaultTolerance is the slack every time comparison of the audit allows. Start and End are
// read on the server's clock around the handler, a little after the bytes
// arrive and a little before the last ones reach the crawler, and the
// crawler's timers are coarse; 2 ms absorbs that without hiding a crawler
// that ignores its delay.
const DefaultTolerance = 2 * time.Millisecond

// defaultMaxExamples is how many examples a Violations keeps when
// AuditConfig.MaxExamples is zero.
const defaultMaxExamples = 10

// AuditConfig is the crawler's side of the audit: the settings it ran with.
type AuditConfig struct {
	Agent        string        // robots product token whose group applies; "" means Config.Agent
	DefaultDelay time.Duration // between two requests to a host whose robots.txt has no Crawl-delay
	MinDelay     time.Duration // lower clamp of a Crawl-delay
	MaxDelay     time.Duration // upper clamp of a Crawl-delay; 0 means none
	MaxRetries   int           // re-requests allowed after a 5xx, a 429 or no answer
	Tolerance    time.Duration // slack of the time checks; 0 means DefaultTolerance, negative means none
	MaxExamples  int           // examples kept per violation category; 0 means 10

	// Per server address (Request.Addr; an IPv6 /64 counts as one, as in
	// the crawler): requests in flight at once and the least interval
	// between two requests' starts. 0 means not checked.
	IPConcurrency int
	IPDelay       time.Duration
}

// DefaultAuditConfig returns the settings the command's flags default to.
func DefaultAuditConfig() AuditConfig {
	return AuditConfig{DefaultDelay: time.Second, MaxRetries: 2}
}

// RegisterFlags adds the crawler's politeness settings to fs, each flag name
// prefixed with prefix and defaulting to c's current value. The robots
// agent is not among them: it is the web's (Config.Agent).
func (c *AuditConfig) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.DurationVar(&c.DefaultDelay, prefix+"default-delay", c.DefaultDelay, "crawler's delay between two requests to a host without Crawl-delay")
	fs.DurationVar(&c.MinDelay, prefix+"min-delay", c.MinDelay, "crawler's lower clamp of a robots Crawl-delay")
	fs.DurationVar(&c.MaxDelay, prefix+"max-delay", c.MaxDelay, "crawler's upper clamp of a robots Crawl-delay (0: none)")
	fs.IntVar(&c.MaxRetries, prefix+"max-retries", c.MaxRetries, "crawler's re-requests of a URL after a 5xx, a 429 or no answer")
	fs.IntVar(&c.IPConcurrency, prefix+"ip-concurrency", c.IPConcurrency, "crawler's limit of requests in flight at once to one server address (0: not checked)")
	fs.DurationVar(&c.IPDelay, prefix+"ip-delay", c.IPDelay, "crawler's least interval between the starts of two requests to one server address (0: not checked)")
	fs.DurationVar(&c.Tolerance, prefix+"tolerance", c.Tolerance, "slack of the audit's time checks, for the server's own clock stamps on a loaded machine (0: 2ms)")
}

// Validate reports settings no crawler can have.
func (c AuditConfig) Validate() error {
	switch {
	case c.DefaultDelay < 0 || c.MinDelay < 0 || c.MaxDelay < 0:
		return fmt.Errorf("%w: negative delay", ErrConfig)
	case c.MaxDelay != 0 && c.MaxDelay < c.MinDelay:
		return fmt.Errorf("%w: max delay %v below min delay %v", ErrConfig, c.MaxDelay, c.MinDelay)
	case c.MaxRetries < 0:
		return fmt.Errorf("%w: max retries %d < 0", ErrConfig, c.MaxRetries)
	case c.MaxExamples < 0:
		return fmt.Errorf("%w: max examples %d < 0", ErrConfig, c.MaxExamples)
	case c.IPConcurrency < 0:
		return fmt.Errorf("%w: ip concurrency %d < 0", ErrConfig, c.IPConcurrency)
	case c.IPDelay < 0:
		return fmt.Errorf("%w: negative ip delay", ErrConfig)
	}
	return nil
}

// clamp applies MinDelay and MaxDelay to a Crawl-delay.
func (c AuditConfig) clamp(d time.Duration) time.Duration {
	d = max(d, c.MinDelay)
	if c.MaxDelay > 0 {
		d = min(d, c.MaxDelay)
	}
	return d
}

// Report is the audit's verdict. Each Violations counts one category; a
// request breaking several rules counts once in each.
type Report struct {
	Requests      int            `json:"requests"`       // requests in the log
	Hosts         int            `json:"hosts"`          // hosts that received at least one request
	RobotsFetches int            `json:"robots_fetches"` // robots.txt requests, redirect targets included
	MustFetch     int            `json:"must_fetch"`     // len(Web.MustFetch())
	Fetched       int            `json:"fetched"`        // MustFetch resources fetched (see the Missing rule)
	Coverage      float64        `json:"coverage"`       // Fetched / MustFetch; 1 when MustFetch is empty
	TrapRequests  map[string]int `json:"trap_requests"`  // requests into each trap, its entry included

	// Per trap instance (Request.TrapInstance, or host key + "#" + Trap in
	// a log without it): a crawler's trap defence should keep both the
	// requests per instance and the share of the crawl small.
	TrapInstances               int            `json:"trap_instances"`                  // instances that received at least one request
	TrapRequestsPerInstanceMean float64        `json:"trap_requests_per_instance_mean"` // over those instances; 0 when there are none
	TrapRequestsPerInstanceMax  int            `json:"trap_requests_per_instance_max"`
	TrapInstanceRequests        map[string]int `json:"trap_instance_requests"` // requests per instance
	TrapShare                   float64        `json:"trap_share"`             // trap requests / Requests (robots.txt included); 0 for an empty log

	Overlaps   Violations `json:"overlaps"`    // a request started before the host's previous one ended
	Politeness Violations `json:"politeness"`  // a request started less than the effective delay after the previous one ended
	Robots     Violations `json:"robots"`      // no usable robots.txt answer before it, or disallowed for the agent
	RetryAfter Violations `json:"retry_after"` // a request sooner than a 429/503's Retry-After allowed
	Duplicates Violations `json:"duplicates"`  // a resource requested after a final answer, or too many times
	Missing    Violations `json:"missing"`     // a MustFetch resource not fetched
	Forbidden  Violations `json:"forbidden"`   // a MustNotFetch resource requested

	// Misdirected: with Config.Addresses, a request whose Host header named
	// no host of the address it arrived on (answered 421). It counts per
	// IP but is in no host's checks.
	Misdirected Violations `json:"misdirected"`

	// How much of the time politeness allowed the crawler used: per host,
	// every gap from the end of a request to the start of the next, over
	// the delay in force.
	Gaps GapStats `json:"gaps"`
	// The same over the gaps a robots Crawl-delay set (Config.CrawlDelayShare):
	// longer delays, which a schedule's timer, not its throughput, has to meet.
	CrawlDelayGaps GapStats `json:"crawl_delay_gaps"`

	// Per server address (see AuditConfig.IPConcurrency): every request
	// counts, robots.txt and misdirected ones included; a request of a log
	// without Addr counts when its host key is an IP address.
	Addresses     int               `json:"addresses"`      // server addresses that received at least one request
	MaxPerIP      int               `json:"max_per_ip"`     // the most requests in flight at once to any one address
	PerIP         map[string]IPLoad `json:"per_ip"`         // by address (an IPv6 /64 as its prefix)
	IPConcurrency Violations        `json:"ip_concurrency"` // a request started with IPConcurrency or more already in flight to its address
	IPInterval    Violations        `json:"ip_interval"`    // a request started less than IPDelay after the previous start at its address

	// With Config.Change: a changing page revisited without If-None-Match
	// or If-Modified-Since although its latest final answer, a 200 or a
	// 304 confirming one, came with an ETag or a Last-Modified.
	UnconditionalRevisits Violations    `json:"unconditional_revisits"`
	Change                *ChangeReport `json:"change,omitempty"` // nil unless the web changes

	// With Config.Apps: what the application hosts received, per host and
	// shape. Its Media violations count in OK.
	Apps *AppsReport `json:"apps,omitempty"`

	ipChecked struct{ concurrency, interval bool } // String shows a per-IP check that was off only if it found something
}

// GapStats sums up the gaps between a host's requests, end to next start,
// each over the delay in force then. A gap of 1.2 delays wasted a sixth of
// the time the host allowed. Gaps of a host that had nothing to ask (its
// links not found yet) count too, so the median, not the mean, is the
// figure: it is what a host with work waits.
type GapStats struct {
	Count       int     `json:"count"`
	Median      float64 `json:"median_over_delay"` // 0 with no gap
	P90         float64 `json:"p90_over_delay"`
	Utilisation float64 `json:"utilisation"` // 1 / Median: the share of the allowed rate a busy host gets
}

func gapStats(ratios []float64) GapStats {
	if len(ratios) == 0 {
		return GapStats{}
	}
	slices.Sort(ratios)
	at := func(q float64) float64 { return ratios[min(int(q*float64(len(ratios))), len(ratios)-1)] }
	g := GapStats{Count: len(ratios), Median: at(0.5), P90: at(0.9)}
	if g.Median > 0 {
		g.Utilisation = 1 / g.Median
	}
	return g
}

// IPLoad is what one server address received.
type IPLoad struct {
	Requests    int           `json:"requests"`
	Hosts       int           `json:"hosts"`           // host keys among them, misdirected requests aside
	MaxInFlight int           `json:"max_in_flight"`   // the most requests in flight at once
	MinInterval time.Duration `json:"min_interval_ns"` // the shortest time between two starts; 0 with fewer than two requests
}

// Violations counts the breaches of one rule and keeps the first few as
// readable examples.
type Violations struct {
	Count    int      `json:"count"`
	Examples []string `json:"examples,omitempty"` // at most AuditConfig.MaxExamples
}

func (v *Violations) add(limit int, format string, args ...any) {
	v.Count++
	if len(v.Examples) < limit {
		v.Examples = append(v.Examples, fmt.Sprintf(format, args...))
	}
}

// category pairs a Violations with its name in String.
type category struct {
	name string
	v    *Violations
}

func (r *Report) categories() []category {
	cs := []category{
		{"overlaps", &r.Overlaps},
		{"politeness", &r.Politeness},
		{"robots", &r.Robots},
		{"retry-after", &r.RetryAfter},
		{"duplicates", &r.Duplicates},
		{"missing", &r.Missing},
		{"forbidden", &r.Forbidden},
		{"unconditional-revisits", &r.UnconditionalRevisits},
		{"misdirected", &r.Misdirected},
		{"ip-concurrency", &r.IPConcurrency},
		{"ip-interval", &r.IPInterval},
	}
	if r.Apps != nil {
		cs = append(cs, category{"media", &r.Apps.Media})
	}
	return cs
}

// OK reports whether no rule was broken. Traps alone do not fail a crawl.
func (r Report) OK() bool {
	for _, c := range r.categories() {
		if c.v.Count > 0 {
			return false
		}
	}
	return true
}

// String is a summary for a terminal: totals, coverage, traps, then each
// category with its examples.
func (r Report) String() string {
	var b strings.Builder
	verdict := "OK"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "synthweb audit: %s\n", verdict)
	fmt.Fprintf(&b, "  requests:    %d to %d hosts, %d of them for robots.txt\n", r.Requests, r.Hosts, r.RobotsFetches)
	fmt.Fprintf(&b, "  coverage:    %.1f%% (%d of %d must-fetch resources)\n", 100*r.Coverage, r.Fetched, r.MustFetch)
	b.WriteString("  traps:      ")
	if len(r.TrapRequests) == 0 {
		b.WriteString(" none")
	}
	for i, name := range slices.Sorted(maps.Keys(r.TrapRequests)) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %d", name, r.TrapRequests[name])
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  instances:   %d trapped, %.1f requests each on average, %d at most; %.1f%% of all requests\n",
		r.TrapInstances, r.TrapRequestsPerInstanceMean, r.TrapRequestsPerInstanceMax, 100*r.TrapShare)
	if r.Change != nil {
		r.Change.string(&b)
	}
	if r.Apps != nil {
		r.Apps.string(&b)
	}
	r.ipString(&b)
	for _, c := range r.categories() {
		switch {
		case c.v.Count > 0:
		case c.v == &r.UnconditionalRevisits && r.Change == nil:
			continue // a web that does not change has no revisits
		case c.v == &r.Misdirected:
			continue // only a web with Config.Addresses can have any
		case c.v == &r.IPConcurrency && !r.ipChecked.concurrency, c.v == &r.IPInterval && !r.ipChecked.interval:
			continue
		}
		fmt.Fprintf(&b, "  %-12s %d\n", c.name+":", c.v.Count)
		for _, e := range c.v.Examples {
			fmt.Fprintf(&b, "    - %s\n", e)
		}
		if more := c.v.Count - len(c.v.Examples); more > 0 && len(c.v.Examples) > 0 {
			fmt.Fprintf(&b, "    ... and %d more\n", more)
		}
	}
	return b.String()
}

// Audit judges the request log against cfg, the crawler's settings, by the
// rules in the package comment. It first waits for the handlers in flight,
// so every request answered before the call is in the log even though a
// handler records its request just after the client has the answer. Call
// it once the crawler is done. cfg should pass Validate.
func (w *Web) Audit(cfg AuditConfig) Report {
	w.handling.Lock()
	//lint:ignore SA2001 the lock is taken only to wait for the handlers holding it
	w.handling.Unlock()
	wd := world{
		agent:        w.cfg.Agent,
		robots:       make(map[string]robotsPolicy, len(w.hosts)),
		mustFetch:    w.mustFetch,
		mustNotFetch: w.mustNotFetch,
		change:       w.changeWorld(),
	}
	for _, h := range w.hosts {
		wd.robots[h.key] = h.robots
		if h.app != nil {
			wd.apps = append(wd.apps, h.appWorld())
		}
	}
	return audit(w.Requests(), wd, cfg)
}

// world is what the audit knows by construction. Its own type lets tests
// audit hand-made logs against hand-made worlds.
type world struct {
	agent        string                  // Config.Agent, used when AuditConfig.Agent is empty
	robots       map[string]robotsPolicy // by host key; a missing host has no robots.txt
	mustFetch    []string                // resource ids
	mustNotFetch map[string]bool         // resource ids
	change       *changeWorld            // nil: the web does not change
	apps         []appWorld              // with Config.Apps, in host order; nil: none
}

// auditor holds one audit's settings and verdict.
type auditor struct {
	cfg   AuditConfig
	agent string
	tol   time.Duration
	max   int       // examples per category
	t0    time.Time // first Start: examples show times relative to it
	rep   Report

	fetched map[string]bool // MustFetch resources fetched, by the Missing rule
	gaps    []float64       // every host's gaps over their delay (Report.Gaps)
	cdGaps  []float64       // those under a Crawl-delay (Report.CrawlDelayGaps)
}

func audit(log []Request, wd world, cfg AuditConfig) Report {
	a := &auditor{cfg: cfg, agent: cmp.Or(cfg.Agent, wd.agent), tol: cfg.Tolerance, max: cfg.MaxExamples}
	switch {
	case a.tol == 0:
		a.tol = DefaultTolerance
	case a.tol < 0:
		a.tol = 0
	}
	if a.max <= 0 {
		a.max = defaultMaxExamples
	}
	a.rep.ipChecked.concurrency, a.rep.ipChecked.interval = cfg.IPConcurrency > 0, cfg.IPDelay > 0

	reqs := slices.Clone(log)
	for i := range reqs {
		if reqs[i].Resource == "" {
			c, _ := CanonicalTarget(reqs[i].Target)
			reqs[i].Resource = reqs[i].Host + c
		}
	}
	// The log is in order of completion; the rules speak of arrival.
	slices.SortStableFunc(reqs, func(x, y Request) int {
		return cmp.Or(x.Start.Compare(y.Start), x.End.Compare(y.End))
	})
	a.rep.Requests = len(reqs)
	a.rep.TrapRequests = map[string]int{}
	a.rep.TrapInstanceRequests = map[string]int{}
	if len(reqs) > 0 {
		a.t0 = reqs[0].Start
	}

	a.servers(reqs)
	// A misdirected request reached no host: it counts per IP only.
	served := make([]Request, 0, len(reqs))
	for _, r := range reqs {
		if r.Kind == kindMisdirected {
			a.rep.Misdirected.add(a.max, "%s %s requested at %s from %s, which serves no such host",
				r.Host, short(r.Target), a.at(r.Start), r.Addr)
			continue
		}
		served = append(served, r)
	}

	byHost := map[string][]Request{}
	for _, r := range served {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	a.rep.Hosts = len(byHost)
	for _, key := range slices.Sorted(maps.Keys(byHost)) {
		pol, ok := wd.robots[key]
		if !ok {
			pol = robotsPolicy{status: http.StatusNotFound}
		}
		a.host(byHost[key], pol)
	}
	a.rep.Gaps = gapStats(a.gaps)
	a.rep.CrawlDelayGaps = gapStats(a.cdGaps)
	a.resources(served, wd)
	if wd.change != nil {
		a.change(served, wd.change)
	}
	if wd.apps != nil {
		a.apps(served, wd)
	}
	return a.rep
}

// host checks politeness, Retry-After and robots for one host's requests,
// which are in order of Start.
func (a *auditor) host(reqs []Request, pol robotsPolicy) {
	// The Crawl-delay binds from the first robots.txt answer that carried
	// the rules: before it, the crawler could only know its default.
	crawlDelay, hasCrawlDelay := pol.crawlDelay(a.agent)
	crawlDelay = a.cfg.clamp(crawlDelay)
	var rulesAt time.Time
	var robotsAnswers []*Request // by End, answered only
	for i := range reqs {
		r := &reqs[i]
		if r.Kind != "robots" || r.Status == 0 {
			continue
		}
		robotsAnswers = append(robotsAnswers, r)
		if r.Status == http.StatusOK && (rulesAt.IsZero() || r.End.Before(rulesAt)) {
			rulesAt = r.End
		}
	}
	slices.SortStableFunc(robotsAnswers, func(x, y *Request) int { return x.End.Compare(y.End) })

	var (
		prev    *Request // among the requests started so far, the one that ended last
		retryOn *Request // a 429/503 with Retry-After whose next request is still to come
		nRobots int      // robots answers that ended before the current Start (within tolerance)
	)
	for i := range reqs {
		r := &reqs[i]
		if prev != nil {
			delay := a.cfg.DefaultDelay
			byRobots := hasCrawlDelay && !rulesAt.IsZero() && !r.Start.Before(rulesAt)
			if byRobots {
				delay = crawlDelay
			}
			gap := r.Start.Sub(prev.End)
			if gap >= 0 && delay > 0 {
				a.gaps = append(a.gaps, float64(gap)/float64(delay))
				if byRobots {
					a.cdGaps = append(a.cdGaps, float64(gap)/float64(delay))
				}
			}
			switch {
			case gap < -a.tol:
				a.rep.Overlaps.add(a.max, "%s %s started at %s, %v before %s ended",
					r.Host, short(r.Target), a.at(r.Start), round(-gap), short(prev.Target))
			case gap < delay-a.tol:
				a.rep.Politeness.add(a.max, "%s %s started at %s, %v after %s ended; delay %v",
					r.Host, short(r.Target), a.at(r.Start), round(gap), short(prev.Target), delay)
			}
		}
		if prev == nil || r.End.After(prev.End) {
			prev = r
		}

		if retryOn != nil {
			if wait := r.Start.Sub(retryOn.End); wait < retryOn.RetryAfter-a.tol {
				a.rep.RetryAfter.add(a.max, "%s %s started at %s, %v after %s answered %d with Retry-After %v",
					r.Host, short(r.Target), a.at(r.Start), round(wait), short(retryOn.Target), retryOn.Status, retryOn.RetryAfter)
			}
			retryOn = nil
		}
		if r.RetryAfter > 0 && (r.Status == http.StatusTooManyRequests || r.Status == http.StatusServiceUnavailable) {
			retryOn = r
		}

		for nRobots < len(robotsAnswers) && !robotsAnswers[nRobots].End.After(r.Start.Add(a.tol)) {
			nRobots++
		}
		if r.Kind == "robots" {
			continue
		}
		// The tolerance is for End only: a robots.txt request that started
		// after this one cannot have been waited for.
		var latest *Request
		for j := nRobots - 1; j >= 0; j-- {
			if robotsAnswers[j].Start.Before(r.Start) {
				latest = robotsAnswers[j]
				break
			}
		}
		target, _ := CanonicalTarget(r.Target)
		switch {
		case latest == nil:
			a.rep.Robots.add(a.max, "%s %s requested at %s before any robots.txt answer", r.Host, short(r.Target), a.at(r.Start))
		case latest.Status >= 500:
			a.rep.Robots.add(a.max, "%s %s requested at %s after robots.txt answered %d",
				r.Host, short(r.Target), a.at(r.Start), latest.Status)
		case !pol.allowed(a.agent, target):
			a.rep.Robots.add(a.max, "%s %s is disallowed for %s", r.Host, short(r.Target), a.agent)
		}
	}
}

// resources checks duplicates, forbidden and missing resources and counts
// traps, over all requests in order of Start.
func (a *auditor) resources(reqs []Request, wd world) {
	// In a changing web a crawler must come back: a request after a final
	// answer is a revisit, and a duplicate only if it started while that
	// answer was still in flight. Each visit may retry: the count starts
	// again after a final answer or once the retries are used up, since a
	// recrawler also revisits a page that keeps failing.
	revisits := wd.change != nil
	type state struct {
		requests    int       // of the current visit; of all time in a web that does not change
		exhausted   bool      // a visit used up its retries without a final answer
		finalStatus int       // 0 until a final answer
		finalEnd    time.Time // the latest End of a final answer
		lastStatus  int
	}
	seen := map[string]*state{}
	trapped := 0
	for _, r := range reqs {
		if r.Trap != "" {
			a.rep.TrapRequests[r.Trap]++
			a.rep.TrapInstanceRequests[cmp.Or(r.TrapInstance, trapInstanceID(r.Host, r.Trap))]++
			trapped++
		}
		if r.Kind == "robots" {
			a.rep.RobotsFetches++ // re-fetching robots.txt is legitimate
			continue
		}
		if wd.mustNotFetch[r.Resource] {
			a.rep.Forbidden.add(a.max, "%s requested at %s (answered %d)", short(r.Resource), a.at(r.Start), r.Status)
		}
		st := seen[r.Resource]
		if st == nil {
			st = &state{}
			seen[r.Resource] = st
		}
		st.requests++
		switch {
		case revisits && st.finalStatus != 0 && r.Start.Before(st.finalEnd.Add(-a.tol)):
			a.rep.Duplicates.add(a.max, "%s requested again at %s while a final %d was in flight",
				short(r.Resource), a.at(r.Start), st.finalStatus)
		case !revisits && st.finalStatus != 0:
			a.rep.Duplicates.add(a.max, "%s requested again at %s after a final %d",
				short(r.Resource), a.at(r.Start), st.finalStatus)
		case st.requests > a.cfg.MaxRetries+1:
			a.rep.Duplicates.add(a.max, "%s requested %d times at %s, more than %d retries allow",
				short(r.Resource), st.requests, a.at(r.Start), a.cfg.MaxRetries)
		}
		st.lastStatus = r.Status
		if isFinal(r.Status) {
			if st.finalStatus == 0 || revisits {
				st.finalStatus = r.Status
			}
			if revisits {
				st.requests = 0
				if r.End.After(st.finalEnd) {
					st.finalEnd = r.End
				}
			}
		} else if revisits && st.requests == a.cfg.MaxRetries+1 {
			st.requests, st.exhausted = 0, true
		}
	}

	a.rep.TrapInstances = len(a.rep.TrapInstanceRequests)
	for _, n := range a.rep.TrapInstanceRequests {
		a.rep.TrapRequestsPerInstanceMax = max(a.rep.TrapRequestsPerInstanceMax, n)
	}
	if a.rep.TrapInstances > 0 {
		a.rep.TrapRequestsPerInstanceMean = float64(trapped) / float64(a.rep.TrapInstances)
	}
	if a.rep.Requests > 0 {
		a.rep.TrapShare = float64(trapped) / float64(a.rep.Requests)
	}

	a.rep.MustFetch = len(wd.mustFetch)
	a.fetched = map[string]bool{}
	for _, id := range wd.mustFetch {
		st := seen[id]
		switch {
		case st == nil:
			a.rep.Missing.add(a.max, "%s never requested", short(id))
		case st.finalStatus != 0 || st.exhausted || st.requests > a.cfg.MaxRetries:
			a.rep.Fetched++ // answered, or retries exhausted
			a.fetched[id] = true
		default:
			a.rep.Missing.add(a.max, "%s requested %d times without a final answer (last %s)",
				short(id), st.requests, statusText(st.lastStatus))
		}
	}
	a.rep.Coverage = 1
	if a.rep.MustFetch > 0 {
		a.rep.Coverage = float64(a.rep.Fetched) / float64(a.rep.MustFetch)
	}
}

// isFinal reports whether an answer ends a resource's fetch: anything but
// no answer, a 429 or a 5xx, which a crawler may retry.
func isFinal(status int) bool {
	return status != 0 && status != http.StatusTooManyRequests && status < 500
}

func statusText(status int) string {
	if status == 0 {
		return "no answer"
	}
	return fmt.Sprint(status)
}

// at formats t relative to the first request of the log.
func (a *auditor) at(t time.Time) string {
	return "+" + round(t.Sub(a.t0)).String()
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }

// short keeps examples readable whatever the crawler asked for (the huge
// query is 3 KiB).
func short(s string) string {
	const limit = 120
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}
