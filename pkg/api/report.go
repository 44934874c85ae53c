package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// A crawl's report (GET /api/v1/report, and the files the embedded crawler
// writes at every stop, pkg/report) sums the crawl up from the store alone:
// the same answer from the crawler that ran it, from one serving the finished
// folder, and from `crawler report`. It reads every capture once, so it is
// built on request or at a stop, never polled.

// Limits of a report's lists.
const (
	reportSeeds   = 1000
	reportHosts   = 50
	reportTypes   = 20
	reportBuckets = 120 // the timeline's points at most
)

// ReportView is a crawl's report.
type ReportView struct {
	GeneratedAt time.Time       `json:"generated_at"`
	URLs        urlCountsView   `json:"urls"`
	Errors      errorCountsView `json:"errors"`
	Hosts       int64           `json:"hosts"`
	Storage     storageView     `json:"storage"`
	// Statuses counts captures by exact HTTP status ("200", "404"; "0" for
	// none), ContentTypes by media type without parameters, the
	// reportTypes commonest, the rest under "other".
	Statuses     map[string]int64 `json:"statuses"`
	ContentTypes map[string]int64 `json:"content_types"`
	Timeline     ReportTimeline   `json:"timeline"`
	Seeds        []ReportSeed     `json:"seeds"` // null when the store cannot list them
	BusiestHosts []hostListItem   `json:"busiest_hosts"`
	// Held are the URLs the trap defences excluded or hold, by reason.
	Held []ReportReason `json:"held"`
}

// ReportTimeline is the crawl's captures over time.
type ReportTimeline struct {
	BucketSeconds float64       `json:"bucket_seconds"`
	Points        []ReportPoint `json:"points"`
}

// ReportPoint is one bucket of the crawl's captures by fetch time.
type ReportPoint struct {
	Time           time.Time `json:"time"`
	Pages          int64     `json:"pages"`
	Bytes          int64     `json:"bytes"`
	Errors         int64     `json:"errors"` // captures with a 4xx or 5xx status, but sitemaps not found
	BytesPerSecond float64   `json:"bytes_per_second"`
}

// ReportSeed is one URL the crawl started from.
type ReportSeed struct {
	URL        string `json:"url"`
	State      string `json:"state"`
	Reason     string `json:"reason,omitempty"`
	Status     int    `json:"status"`
	RedirectTo string `json:"redirect_to,omitempty"`
	// Pages are the captures under the seed: URLs that begin with its
	// folder (its redirect's, when it redirected).
	Pages int64 `json:"pages"`
}

// ReportReason is a count of URLs by the reason they were held.
type ReportReason struct {
	Reason      string `json:"reason"`
	Count       int64  `json:"count"`
	Description string `json:"description,omitempty"`
}

func (s *Server) getReport(w http.ResponseWriter, r *http.Request) {
	v, err := s.Report(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// Report builds the crawl's report from the store.
func (s *Server) Report(ctx context.Context) (ReportView, error) {
	return BuildReport(ctx, s.store, time.Now())
}

// BuildReport builds a crawl's report from its store, as of now.
func BuildReport(ctx context.Context, st store.Reader, now time.Time) (ReportView, error) {
	stats, err := st.Stats(ctx)
	if err != nil {
		return ReportView{}, fmt.Errorf("report: read stats: %w", err)
	}
	urls, errs := countsOf(stats)
	v := ReportView{
		GeneratedAt: now.UTC(), URLs: urls, Errors: errs, Hosts: stats.Hosts,
		Storage:  storageView{Captures: stats.Captures, ByStatus: nonZero(stats.Statuses), Bytes: stats.ContentLen, WARCBytes: stats.WARCBytes, WARCSegments: stats.Segments},
		Statuses: map[string]int64{}, ContentTypes: map[string]int64{}, BusiestHosts: []hostListItem{}, Held: []ReportReason{},
	}
	// A store that cannot list its seeds (a test's) leaves them null.
	if sl, ok := st.(store.SeedLister); ok {
		seeds, err := sl.Seeds(ctx, reportSeeds)
		if err != nil {
			return ReportView{}, fmt.Errorf("report: %w", err)
		}
		v.Seeds = make([]ReportSeed, 0, len(seeds))
		for _, sd := range seeds {
			v.Seeds = append(v.Seeds, ReportSeed{URL: sd.URL.URL, State: string(sd.State), Reason: sd.Reason, Status: sd.Status, RedirectTo: sd.RedirectTo})
		}
	}
	// Seeds by folder: a capture looks up each folder of its own URL
	// rather than comparing itself with every seed.
	folders := map[string][]int{}
	for i, sd := range v.Seeds {
		f := seedFolder(sd)
		folders[f] = append(folders[f], i)
	}
	var caps []fetched
	types := map[string]int64{}
	err = st.ReportCaptures(ctx, func(c store.ReportCapture) error {
		v.Statuses[strconv.Itoa(c.Status)]++
		types[mediaType(c.ContentType)]++
		caps = append(caps, fetched{at: c.FetchedAt, length: c.Length, err: httpError(c)})
		if len(folders) > 0 {
			for _, i := range foldersOf(c.URL, folders) {
				v.Seeds[i].Pages++
			}
		}
		return nil
	})
	if err != nil {
		return ReportView{}, fmt.Errorf("report: read captures: %w", err)
	}
	v.ContentTypes = commonest(types, reportTypes)
	v.Timeline = timelineOf(caps)
	hosts, err := st.HostList(ctx, store.HostsBusiest, reportHosts)
	if err != nil {
		return ReportView{}, fmt.Errorf("report: %w", err)
	}
	for _, h := range hosts {
		v.BusiestHosts = append(v.BusiestHosts, hostListItemOf(h))
	}
	for r, n := range urls.Excluded.ByReason {
		if strings.HasPrefix(r, "trap_") || slices.Contains(store.HeldReasons, r) {
			v.Held = append(v.Held, ReportReason{Reason: r, Count: n, Description: describe(r)})
		}
	}
	slices.SortFunc(v.Held, func(a, b ReportReason) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
	return v, nil
}

// fetched is what the timeline needs of a capture.
type fetched struct {
	at     time.Time
	length int64
	err    bool // a 4xx or 5xx answer (httpError)
}

// httpError tells whether a capture is one of the errors' http_4xx or
// http_5xx: a 4xx or 5xx answer, but a sitemap not found.
func httpError(c store.ReportCapture) bool {
	return c.Status >= 400 && c.Status < 600 && !store.SitemapNotFound(c.Kind, c.Status)
}

// foldersOf returns the seeds whose folder u begins with: one look-up per
// slash of u's path.
func foldersOf(u string, folders map[string][]int) []int {
	start := strings.Index(u, "://")
	if start < 0 {
		return nil
	}
	if q := strings.IndexAny(u, "?#"); q >= 0 {
		u = u[:q]
	}
	var out []int
	for i := start + 3; i < len(u); i++ {
		if u[i] == '/' {
			out = append(out, folders[u[:i+1]]...)
		}
	}
	return out
}

// seedFolder is what the URLs under a seed begin with: its URL up to the
// last slash of the path (of its redirect's URL when it redirected).
func seedFolder(s ReportSeed) string {
	u := cmp.Or(s.RedirectTo, s.URL)
	scheme := strings.Index(u, "://")
	if scheme < 0 {
		return u
	}
	if q := strings.IndexAny(u, "?#"); q >= 0 {
		u = u[:q]
	}
	if i := strings.LastIndexByte(u, '/'); i > scheme+2 {
		return u[:i+1]
	}
	return u + "/"
}

// mediaType is a Content-Type without its parameters, lower case.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.ToLower(strings.TrimSpace(ct))
	if ct == "" {
		return "none"
	}
	return ct
}

// commonest keeps the n largest counts and sums the rest under "other".
func commonest(m map[string]int64, n int) map[string]int64 {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
	out := map[string]int64{}
	for i, k := range keys {
		if i < n {
			out[k] += m[k]
		} else {
			out["other"] += m[k]
		}
	}
	return out
}

// timelineOf buckets captures by fetch time: whole seconds wide, as few as
// keep the timeline within reportBuckets points, empty buckets included so
// that a pause shows as one.
func timelineOf(caps []fetched) ReportTimeline {
	if len(caps) == 0 {
		return ReportTimeline{BucketSeconds: 60, Points: []ReportPoint{}}
	}
	first, last := caps[0].at, caps[0].at
	for _, c := range caps {
		if c.at.Before(first) {
			first = c.at
		}
		if c.at.After(last) {
			last = c.at
		}
	}
	width := max(time.Second, (last.Sub(first)/reportBuckets + time.Second - 1).Truncate(time.Second))
	start := first.Truncate(width)
	points := make([]ReportPoint, int(last.Sub(start)/width)+1)
	for i := range points {
		points[i].Time = start.Add(time.Duration(i) * width).UTC()
	}
	for _, c := range caps {
		p := &points[int(c.at.Sub(start)/width)]
		p.Pages++
		p.Bytes += c.length
		if c.err {
			p.Errors++
		}
	}
	for i := range points {
		points[i].BytesPerSecond = float64(points[i].Bytes) / width.Seconds()
	}
	return ReportTimeline{BucketSeconds: width.Seconds(), Points: points}
}
