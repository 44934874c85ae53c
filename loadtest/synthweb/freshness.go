package synthweb

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/recrawl"
)

// ChangeReport is the audit of a changing web (Config.Change): how fresh
// the crawler kept its copies and how it revisited. Pages are the changing
// pages ("/" and /p/N.html of every host that may be crawled).
type ChangeReport struct {
	Pages            int                `json:"pages"`              // changing pages that existed at some time in the window
	WindowSeconds    float64            `json:"window_seconds"`     // from the first request to the end of the crawl
	Freshness        float64            `json:"freshness"`          // time-averaged share of existing pages whose copy is the live version
	FreshnessByClass map[string]float64 `json:"freshness_by_class"` // the same within ChangeNever, ChangeSlow, ChangeFast
	// FreshnessChanging is the same over the pages that change (ChangeSlow
	// and ChangeFast): pages that never change are fresh under any policy
	// once fetched, so this is where revisit policies differ.
	FreshnessChanging float64 `json:"freshness_changing"`

	// The yardstick (pages never deleted, each from its first copy on, so
	// that discovery, which no revisit policy changes, is left out):
	// FreshnessFetched is the time-averaged share of those pages whose
	// copy is the live version, and OptimalFreshness and UniformFreshness
	// what the optimal policy knowing every page's true rate
	// (recrawl.Optimal) and a uniform one would get in expectation with
	// the same revisits per second; OptimalShare is FreshnessFetched over
	// OptimalFreshness.
	FreshnessFetched float64 `json:"freshness_fetched"`
	OptimalFreshness float64 `json:"optimal_freshness"`
	UniformFreshness float64 `json:"uniform_freshness"`
	OptimalShare     float64 `json:"optimal_share"`
	// OptimalRevisitsByClass is how the optimal policy would spend those
	// revisits per class, beside RevisitsByClass.
	OptimalRevisitsByClass map[string]float64 `json:"optimal_revisits_by_class"`

	PageRequests        int            `json:"page_requests"`        // requests for changing pages
	Revisits            int            `json:"revisits"`             // of those, for a page that had a final answer before
	RevisitsByClass     map[string]int `json:"revisits_by_class"`    // the same per ChangeNever, ChangeSlow, ChangeFast
	ConditionalRevisits int            `json:"conditional_revisits"` // revisits with If-None-Match or If-Modified-Since
	NotModified         int            `json:"not_modified"`         // 304 answers
	RequestsAfterGone   int            `json:"requests_after_gone"`  // requests for any resource that had answered 404 or 410 goneRetire times

	// ListedRevisitsByClass counts, per class, the revisits that came after
	// the host's sitemap of changing pages (sitemapPath) was fetched listing
	// a change of the page since its previous answer, which a crawler
	// reading <lastmod> knows will find a change; ListedLagByClass is their
	// mean lag in seconds from the first such sitemap fetch to the revisit.
	// With RevisitsByClass they tell the revisits a listing led from those
	// the schedule chose, and how long a listing's news waited.
	ListedRevisitsByClass map[string]int     `json:"listed_revisits_by_class"`
	ListedLagByClass      map[string]float64 `json:"listed_lag_seconds_by_class"`
	// IntervalByClass and IntervalCVByClass are the mean time in seconds
	// from a page's previous answer to its revisit, per class, and the
	// intervals' coefficient of variation: at the same mean, intervals that
	// vary more keep a page fresh less of the time ((1−e^(−λT))/(λT) is
	// convex in T).
	IntervalByClass   map[string]float64 `json:"interval_seconds_by_class"`
	IntervalCVByClass map[string]float64 `json:"interval_cv_by_class"`
	SitemapFetches    int                `json:"sitemap_fetches"` // 200 answers of the hosts' sitemaps of changing pages
	// PageRevisitsCVByClass is, per class, the coefficient of variation
	// between pages (never deleted) of their revisits per second from
	// their first copy, and PageRevisitsP10P90ByClass the 10th and 90th
	// percentiles in revisits per minute: intervals regular on average
	// (IntervalCVByClass pools them) can still be shared unevenly between
	// pages, which at the same total keeps the class fresh less of the time
	// (g(λ/r) is concave in r).
	PageRevisitsCVByClass     map[string]float64    `json:"page_revisits_cv_by_class"`
	PageRevisitsP10P90ByClass map[string][2]float64 `json:"page_revisits_per_minute_p10_p90_by_class"`
	// HostGapSeconds is the mean time from the end of a host's answer to
	// the start of its next request, and HostLongGapShare the share of
	// the hosts' time from first to last request spent in such gaps over
	// LongGap: where host delays bound the revisits, a crawler that makes
	// fewer of them either waits longer after each answer (the first) or
	// leaves hosts idle for want of a due visit at hand (the second).
	HostGapSeconds   float64 `json:"host_gap_seconds"`
	HostLongGapShare float64 `json:"host_long_gap_share"`
}

// LongGap is where HostLongGapShare counts a gap as idle: 2.5 times the
// 400 ms host delay the delay-limited measurements use.
const LongGap = time.Second

// hostGaps fills HostGapSeconds and HostLongGapShare from reqs, in order
// of Start.
func hostGaps(rep *ChangeReport, reqs []Request) {
	type span struct{ first, lastEnd time.Time }
	hosts := map[string]*span{}
	var gaps, long, total float64
	n := 0
	for _, r := range reqs {
		h := hosts[r.Host]
		if h == nil {
			hosts[r.Host] = &span{first: r.Start, lastEnd: r.End}
			continue
		}
		if gap := r.Start.Sub(h.lastEnd); gap > 0 {
			gaps += gap.Seconds()
			n++
			if gap > LongGap {
				long += gap.Seconds()
			}
		}
		if r.End.After(h.lastEnd) {
			h.lastEnd = r.End
		}
	}
	for _, h := range hosts {
		total += h.lastEnd.Sub(h.first).Seconds()
	}
	if n > 0 {
		rep.HostGapSeconds = gaps / float64(n)
	}
	if total > 0 {
		rep.HostLongGapShare = long / total
	}
}

// goneRetire is how many 404 or 410 answers should make a crawler retire
// a URL; later requests are counted, not held against it.
const goneRetire = 3

// pageHistory is what the audit knows of a changing page by construction.
type pageHistory struct {
	class   string      // ChangeNever, ChangeSlow, ChangeFast
	rate    float64     // changes per second of real time; 0: never
	changes []time.Time // instants at which versions 1, 2, ... went live, increasing
	deleted time.Time   // zero: not deleted
}

// versionAt is the version live at t: a request that started at t was
// served it.
func (h *pageHistory) versionAt(t time.Time) int {
	return sort.Search(len(h.changes), func(i int) bool { return h.changes[i].After(t) })
}

// changeWorld is the changing web as the audit sees it.
type changeWorld struct {
	pages map[string]*pageHistory // by resource id
	end   time.Time               // end of the crawl; zero: the log's last End
}

// changeWorld returns the changing pages' histories up to the end of the
// crawl, or nil for a web that does not change.
func (w *Web) changeWorld() *changeWorld {
	if !w.cfg.Change.Enabled {
		return nil
	}
	cw := &changeWorld{pages: map[string]*pageHistory{}, end: w.closedAt}
	end := w.closedAt
	if end.IsZero() {
		end = w.clock()
	}
	for _, h := range w.hosts {
		for _, p := range h.live {
			cw.pages[h.key+p.target] = p.history(end)
		}
	}
	return cw
}

// history returns what the audit needs of the page up to end.
func (p *livePage) history(end time.Time) *pageHistory {
	epoch := p.host.web.epoch
	p.mu.Lock()
	p.grow(end.Sub(epoch))
	ph := &pageHistory{class: p.class, changes: make([]time.Time, 0, len(p.changes))}
	if p.mean > 0 {
		ph.rate = 1 / p.mean.Seconds()
	}
	for _, c := range p.changes {
		if at := epoch.Add(c); !at.After(end) && !(p.deletes && c >= p.deleteAt) {
			ph.changes = append(ph.changes, at)
		}
	}
	p.mu.Unlock()
	if p.deletes {
		ph.deleted = epoch.Add(p.deleteAt)
	}
	return ph
}

// copyAt is a 200 answer of a changing page: from end on, the crawler
// holds version.
type copyAt struct {
	end     time.Time
	version int
}

// change audits revisits and validators over the requests in order of
// Start, then freshness.
func (a *auditor) change(reqs []Request, cw *changeWorld) {
	rep := &ChangeReport{FreshnessByClass: map[string]float64{}, RevisitsByClass: map[string]int{},
		ListedRevisitsByClass: map[string]int{}, ListedLagByClass: map[string]float64{},
		IntervalByClass: map[string]float64{}, IntervalCVByClass: map[string]float64{}}
	intervalSq := map[string]float64{}
	a.rep.Change = rep
	hostGaps(rep, reqs)
	type state struct {
		answered bool      // a final answer came before
		last     time.Time // when the latest final answer started
		lastOK   *Request  // the latest 200 answer, unless a final answer other than 304 came after it
		gone     int       // 404 and 410 answers
	}
	states := map[string]*state{}
	sitemaps := map[string][]time.Time{} // per host, the starts of its sitemapPath's 200 answers so far
	copies := map[string][]copyAt{}
	revisits := map[string]int{}
	for i := range reqs {
		r := &reqs[i]
		if r.Kind == "robots" {
			continue
		}
		if r.Kind == "sitemap" && r.Status == http.StatusOK && strings.HasSuffix(r.Resource, sitemapPath) {
			sitemaps[r.Host] = append(sitemaps[r.Host], r.Start)
			rep.SitemapFetches++
		}
		st := states[r.Resource]
		if st == nil {
			st = &state{}
			states[r.Resource] = st
		}
		if st.gone >= goneRetire {
			rep.RequestsAfterGone++
		}
		if r.Status == http.StatusNotFound || r.Status == http.StatusGone {
			st.gone++
		}
		ph := cw.pages[r.Resource]
		if ph == nil {
			continue
		}
		rep.PageRequests++
		if st.answered {
			rep.Revisits++
			rep.RevisitsByClass[ph.class]++
			revisits[r.Resource]++
			iv := r.Start.Sub(st.last).Seconds()
			rep.IntervalByClass[ph.class] += iv
			intervalSq[ph.class] += iv * iv
			if lag, ok := listedLag(ph, sitemaps[r.Host], st.last, r.Start); ok {
				rep.ListedRevisitsByClass[ph.class]++
				rep.ListedLagByClass[ph.class] += lag.Seconds()
			}
			switch {
			case r.IfNoneMatch || r.IfModifiedSince:
				rep.ConditionalRevisits++
			case st.lastOK != nil && st.lastOK.Validators:
				a.rep.UnconditionalRevisits.add(a.max, "%s revisited at %s without If-None-Match or If-Modified-Since; its 200 at %s sent validators",
					short(r.Resource), a.at(r.Start), a.at(st.lastOK.Start))
			}
		}
		switch {
		case r.Status == http.StatusOK:
			st.lastOK = r
			copies[r.Resource] = append(copies[r.Resource], copyAt{end: r.End, version: ph.versionAt(r.Start)})
		case r.Status == http.StatusNotModified:
			rep.NotModified++
		case isFinal(r.Status):
			// A page gone (404, 410) or moved: the copy's validators no
			// longer apply.
			st.lastOK = nil
		}
		if isFinal(r.Status) {
			st.answered, st.last = true, r.Start
		}
	}
	for class, n := range rep.ListedRevisitsByClass {
		rep.ListedLagByClass[class] /= float64(n)
	}
	for class, n := range rep.RevisitsByClass {
		mean := rep.IntervalByClass[class] / float64(n)
		rep.IntervalByClass[class] = mean
		if mean > 0 {
			rep.IntervalCVByClass[class] = math.Sqrt(max(intervalSq[class]/float64(n)-mean*mean, 0)) / mean
		}
	}
	end := cw.end
	if end.IsZero() {
		for _, r := range reqs {
			if r.End.After(end) {
				end = r.End
			}
		}
	}
	if len(reqs) > 0 && end.After(a.t0) {
		freshness(rep, cw.pages, copies, a.t0, end)
		yardstick(rep, cw.pages, copies, revisits, end)
	}
}

// listedLag is how long before a revisit at at the first sitemap fetch
// (of those at sitemaps, in order) that listed a change of the page made
// after the previous answer at prev came; ok is false when none did.
func listedLag(ph *pageHistory, sitemaps []time.Time, prev, at time.Time) (time.Duration, bool) {
	v := ph.versionAt(prev)
	if v >= len(ph.changes) || !ph.changes[v].Before(at) {
		return 0, false
	}
	changed := ph.changes[v]
	i := sort.Search(len(sitemaps), func(i int) bool { return !sitemaps[i].Before(changed) })
	if i == len(sitemaps) || !sitemaps[i].Before(at) {
		return 0, false
	}
	return at.Sub(sitemaps[i]), true
}

// yardstick compares the freshness of the pages that were never deleted,
// each from its first copy to the end, with what the optimal and the
// uniform policies would get from the same revisits per second.
func yardstick(rep *ChangeReport, pages map[string]*pageHistory, copies map[string][]copyAt, revisits map[string]int, end time.Time) {
	var lambdas []float64
	var classes []string
	var fresh, window float64
	n := 0
	perPage := map[string][]float64{} // revisits per second of each page, by class
	for _, id := range slices.Sorted(maps.Keys(pages)) {
		ph := pages[id]
		cs := copies[id]
		if !ph.deleted.IsZero() || len(cs) == 0 {
			continue
		}
		from := cs[0].end
		for _, c := range cs {
			if c.end.Before(from) {
				from = c.end
			}
		}
		if !end.After(from) {
			continue
		}
		for _, iv := range freshSpans(ph, cs, from, end) {
			fresh += iv[1].Sub(iv[0]).Seconds()
		}
		window += end.Sub(from).Seconds()
		n += revisits[id]
		perPage[ph.class] = append(perPage[ph.class], float64(revisits[id])/end.Sub(from).Seconds())
		lambdas = append(lambdas, ph.rate)
		classes = append(classes, ph.class)
	}
	if window <= 0 {
		return
	}
	rep.FreshnessFetched = fresh / window
	rep.PageRevisitsCVByClass, rep.PageRevisitsP10P90ByClass = map[string]float64{}, map[string][2]float64{}
	for class, rs := range perPage {
		var sum, sq float64
		for _, r := range rs {
			sum, sq = sum+r, sq+r*r
		}
		mean := sum / float64(len(rs))
		if mean > 0 {
			rep.PageRevisitsCVByClass[class] = math.Sqrt(max(sq/float64(len(rs))-mean*mean, 0)) / mean
		}
		slices.Sort(rs)
		rep.PageRevisitsP10P90ByClass[class] = [2]float64{60 * rs[len(rs)/10], 60 * rs[len(rs)*9/10]}
	}
	// Revisits per second over the mean page's window.
	span := window / float64(len(lambdas))
	budget := float64(n) / span
	rates, opt := recrawl.Optimal(lambdas, budget)
	rep.OptimalFreshness = opt
	rep.UniformFreshness = recrawl.UniformFreshness(lambdas, budget)
	if opt > 0 {
		rep.OptimalShare = rep.FreshnessFetched / opt
	}
	rep.OptimalRevisitsByClass = map[string]float64{}
	for i, r := range rates {
		rep.OptimalRevisitsByClass[classes[i]] += r * span
	}
}

// freshness integrates, over [from, to), the share of existing pages whose
// copy is the live version, overall and per class. A page never fetched is
// stale; a deleted page leaves the denominator when it is deleted.
func freshness(rep *ChangeReport, pages map[string]*pageHistory, copies map[string][]copyAt, from, to time.Time) {
	type edge struct {
		at            time.Time
		class         string
		exists, fresh int
	}
	var edges []edge
	for _, id := range slices.Sorted(maps.Keys(pages)) {
		ph := pages[id]
		end := to
		if !ph.deleted.IsZero() && ph.deleted.Before(end) {
			end = ph.deleted
		}
		if !end.After(from) {
			continue
		}
		rep.Pages++
		edges = append(edges, edge{at: from, class: ph.class, exists: 1}, edge{at: end, class: ph.class, exists: -1})
		for _, iv := range freshSpans(ph, copies[id], from, end) {
			edges = append(edges, edge{at: iv[0], class: ph.class, fresh: 1}, edge{at: iv[1], class: ph.class, fresh: -1})
		}
	}
	slices.SortStableFunc(edges, func(x, y edge) int { return x.at.Compare(y.at) })

	// Overall under "", each class under its name.
	type sums struct {
		exists, fresh int
		share, time   float64 // ∫ fresh/exists dt and ∫ dt where exists > 0, in seconds
	}
	acc := map[string]*sums{"": {}}
	prev := from
	for _, e := range edges {
		if dt := e.at.Sub(prev).Seconds(); dt > 0 {
			for _, s := range acc {
				if s.exists > 0 {
					s.share += dt * float64(s.fresh) / float64(s.exists)
					s.time += dt
				}
			}
			prev = e.at
		}
		keys := []string{"", e.class}
		if e.class != ChangeNever {
			keys = append(keys, changingKey)
		}
		for _, key := range keys {
			s := acc[key]
			if s == nil {
				s = &sums{}
				acc[key] = s
			}
			s.exists += e.exists
			s.fresh += e.fresh
		}
	}
	rep.WindowSeconds = to.Sub(from).Seconds()
	for key, s := range acc {
		f := 0.0
		if s.time > 0 {
			f = s.share / s.time
		}
		switch key {
		case "":
			rep.Freshness = f
		case changingKey:
			rep.FreshnessChanging = f
		default:
			rep.FreshnessByClass[key] = f
		}
	}
}

// changingKey accumulates the pages that change in freshness; no class
// has this name.
const changingKey = "\x00changing"

// freshSpans returns the intervals within [from, to) during which the
// crawler's copy of the page (the version of its latest 200 answer, from
// that answer's End) is the live version.
func freshSpans(ph *pageHistory, copies []copyAt, from, to time.Time) [][2]time.Time {
	copies = slices.Clone(copies)
	slices.SortStableFunc(copies, func(x, y copyAt) int { return x.end.Compare(y.end) })
	live, held := ph.versionAt(from), -1
	next := live // index in ph.changes of the next version to go live
	k := 0
	for k < len(copies) && !copies[k].end.After(from) {
		held = copies[k].version
		k++
	}
	var out [][2]time.Time
	fresh, since := held == live, from
	for {
		at := to
		if next < len(ph.changes) && ph.changes[next].Before(at) {
			at = ph.changes[next]
		}
		if k < len(copies) && copies[k].end.Before(at) {
			at = copies[k].end
		}
		if !at.Before(to) {
			break
		}
		for next < len(ph.changes) && ph.changes[next].Equal(at) {
			live++
			next++
		}
		for k < len(copies) && copies[k].end.Equal(at) {
			held = copies[k].version
			k++
		}
		switch now := held == live; {
		case fresh && !now:
			out = append(out, [2]time.Time{since, at})
		case !fresh && now:
			since = at
		}
		fresh = held == live
	}
	if fresh && since.Before(to) {
		out = append(out, [2]time.Time{since, to})
	}
	return out
}

// string is the ChangeReport's part of Report.String.
func (c *ChangeReport) string(b *strings.Builder) {
	fmt.Fprintf(b, "  freshness:   %.1f%% over %.1fs of %d changing pages, %.1f%% of those that change (", 100*c.Freshness, c.WindowSeconds, c.Pages, 100*c.FreshnessChanging)
	for i, class := range slices.SortedFunc(maps.Keys(c.FreshnessByClass), func(x, y string) int {
		return cmp.Compare(classOrder(x), classOrder(y))
	}) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %.1f%%", class, 100*c.FreshnessByClass[class])
	}
	b.WriteString(")\n")
	fmt.Fprintf(b, "  yardstick:   %.1f%% fresh from the first copy on; optimal policy %.1f%%, uniform %.1f%% with the same revisits: %.3f of optimal\n",
		100*c.FreshnessFetched, 100*c.OptimalFreshness, 100*c.UniformFreshness, c.OptimalShare)
	fmt.Fprintf(b, "  revisits:    %d of %d page requests, %d conditional, %d answered 304; %d requests after %d answers 404/410\n",
		c.Revisits, c.PageRequests, c.ConditionalRevisits, c.NotModified, c.RequestsAfterGone, goneRetire)
}

func classOrder(class string) int {
	return slices.Index([]string{ChangeNever, ChangeSlow, ChangeFast}, class)
}
