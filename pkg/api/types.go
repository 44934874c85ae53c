package api

import (
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/lag"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The API's response bodies. Every route answers in one style: snake_case
// names, RFC 3339 times that are null (or absent) when unknown rather than the
// year 1, durations as seconds in numbers named *_seconds, 64-bit hashes as
// decimal strings (JavaScript numbers lose precision above 2^53). They are
// built from the store's and the live process's types here, so the store's
// Go structs stay free of JSON concerns; api/openapi.yaml documents each, and
// TestOpenAPISchemasMatchStructs keeps the two in step.

// timeOrNil is nil for the zero time, so "never" reads null.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// secondsOrNil is nil for a zero duration, the store's "unknown".
func secondsOrNil(d time.Duration) *float64 {
	if d == 0 {
		return nil
	}
	s := d.Seconds()
	return &s
}

func hashString(h int64) string { return strconv.FormatInt(h, 10) }

// statsView is GET /api/v1/stats.
type statsView struct {
	Mode            string          `json:"mode"`   // embedded, cluster, or store (no live view)
	Paused          bool            `json:"paused"` // the whole crawl, by an operator (control.go)
	At              time.Time       `json:"at"`
	UptimeSeconds   *float64        `json:"uptime_seconds"`
	URLs            urlCountsView   `json:"urls"`
	Throughput      *throughputView `json:"throughput"`
	Hosts           hostCountsView  `json:"hosts"`
	Errors          errorCountsView `json:"errors"`
	Queue           queueView       `json:"queue"`
	Storage         storageView     `json:"storage"`
	Workers         workersView     `json:"workers"`
	EstimatedFinish finishView      `json:"estimated_finish"`
	Recrawl         *scheduleView   `json:"recrawl"`
}

type urlCountsView struct {
	Discovered       int64            `json:"discovered"`
	Queued           int64            `json:"queued"`
	Fetched          int64            `json:"fetched"`
	Succeeded        int64            `json:"succeeded"`
	Failed           int64            `json:"failed"`
	DuplicateContent int64            `json:"duplicate_content"`
	BlockedByRobots  int64            `json:"blocked_by_robots"`
	ExcludedAsTraps  int64            `json:"excluded_as_traps"`
	SitemapsNotFound int64            `json:"sitemaps_not_found"` // no error of the site, so not in http_4xx
	Excluded         excludedView     `json:"excluded"`
	ByState          map[string]int64 `json:"by_state"`
	FailedByReason   map[string]int64 `json:"failed_by_reason"`
	// ReasonDescriptions say what the reasons counted mean (those that
	// have a description).
	ReasonDescriptions map[string]string `json:"reason_descriptions"`
}

type excludedView struct {
	Total    int64            `json:"total"`
	ByReason map[string]int64 `json:"by_reason"`
}

type throughputView struct {
	Current         float64     `json:"current"`
	Average         float64     `json:"average"`
	Peak            float64     `json:"peak"`
	WindowSeconds   float64     `json:"window_seconds"`
	IntervalSeconds float64     `json:"interval_seconds"`
	History         []ratePoint `json:"history"`
}

type ratePoint struct {
	Time           time.Time `json:"time"`
	PagesPerSecond float64   `json:"pages_per_second"`
}

type hostCountsView struct {
	Total      int64  `json:"total"`
	Active     *int64 `json:"active"`
	Waiting    *int64 `json:"waiting"`
	BackingOff *int64 `json:"backing_off"`
	Blocked    int64  `json:"blocked"`
	Paused     int64  `json:"paused"`
	// Cluster fetchers whose reports the frontier numbers sum; null when
	// they come from this process's own frontier or the store keeps none.
	ReportingFetchers *int64 `json:"reporting_fetchers"`
}

type errorCountsView struct {
	Network int64 `json:"network"`
	Timeout int64 `json:"timeout"`
	HTTP4xx int64 `json:"http_4xx"`
	HTTP5xx int64 `json:"http_5xx"`
	Robots  int64 `json:"robots"`
}

type queueView struct {
	Queued     int64   `json:"queued"`
	InFrontier *int64  `json:"in_frontier"`
	InFlight   *int64  `json:"in_flight"`
	ByLevel    []int64 `json:"by_level"`
}

type storageView struct {
	Captures     int64            `json:"captures"`
	ByStatus     map[string]int64 `json:"captures_by_status"` // "2xx".."5xx", "other"
	Bytes        int64            `json:"bytes"`
	WARCBytes    int64            `json:"warc_bytes"`
	WARCSegments int64            `json:"warc_segments"`
}

type workersView struct {
	Groups []workerGroupView `json:"groups"`
	Error  string            `json:"error,omitempty"`
}

type workerGroupView struct {
	Name       string           `json:"name"`
	Members    int              `json:"members"`
	State      string           `json:"state,omitempty"`
	Lag        *int64           `json:"lag"`
	LagByTopic map[string]int64 `json:"lag_by_topic,omitempty"`
	MemberList []memberView     `json:"member_list"`
}

type memberView struct {
	ID         string             `json:"id"`
	ClientID   string             `json:"client_id"`
	Host       string             `json:"host"`
	Partitions map[string][]int32 `json:"partitions"`
	Lag        map[string]int64   `json:"lag"`
}

type finishView struct {
	Seconds   *float64   `json:"seconds"`
	At        *time.Time `json:"at"`
	Remaining *int64     `json:"remaining"`
	Basis     string     `json:"basis"` // queue, max_pages, or unknown
	// Held is how many URLs the trap budgets hold that the crawl may still
	// admit; SecondsWithHeld the estimate were every one of them admitted.
	Held            *int64   `json:"held"`
	SecondsWithHeld *float64 `json:"seconds_with_held"`
}

type scheduleView struct {
	Scheduled        int64      `json:"scheduled"`
	Due              int64      `json:"due"`
	OldestDueSeconds float64    `json:"oldest_due_seconds"`
	NextDue          *time.Time `json:"next_due"`
}

// failureReason reports whether a failed-or-excluded reason is a failure: a
// fetch that failed (fetch.Reason), or a result that could not be encoded;
// every other reason excludes.
func failureReason(r string) bool { return fetch.FailureReason(r) || r == "encode_result" }

func robotsReason(r string) bool { return r == "robots" || r == "robots_unavailable" }

// countsOf turns the store's counters into the operator's URL and error counts.
func countsOf(st store.Stats) (urlCountsView, errorCountsView) {
	u := urlCountsView{
		Queued:           st.URLs[store.StateQueued],
		Succeeded:        st.URLs[store.StateStored],
		Failed:           st.URLs[store.StateFailed],
		Fetched:          st.URLs[store.StateFetched] + st.URLs[store.StateStored] + st.URLs[store.StateFailed],
		DuplicateContent: st.Revisits + st.NearDups,
		ByState:          map[string]int64{},
		FailedByReason:   map[string]int64{},
		Excluded:         excludedView{ByReason: map[string]int64{}},
	}
	for s, n := range st.URLs {
		u.ByState[string(s)] = n
		u.Discovered += n
	}
	var e errorCountsView
	for r, n := range st.Reasons {
		switch {
		case failureReason(r):
			u.FailedByReason[r] += n
			switch r {
			case fetch.ReasonTimeout, "fetch_timeout": // the name older rows have
				e.Timeout += n
			case "fetch_canceled", "encode_result":
			default:
				e.Network += n
			}
		default:
			u.Excluded.ByReason[r] += n
		}
	}
	for r, n := range st.Excluded {
		u.Excluded.ByReason[r] += n
		u.Discovered += n
	}
	for r, n := range u.Excluded.ByReason {
		u.Excluded.Total += n
		if strings.HasPrefix(r, "trap_") {
			u.ExcludedAsTraps += n
		}
		if robotsReason(r) {
			u.BlockedByRobots += n
		}
	}
	u.ReasonDescriptions = descriptionsOf(u.FailedByReason, u.Excluded.ByReason)
	// A URL a robots.txt rule refuses is the crawler being polite, not an
	// error; one held because its host's robots.txt could not be read is.
	e.Robots = u.Excluded.ByReason[robots.ReasonUnavailable] + u.FailedByReason[robots.ReasonUnavailable]
	// Likewise a sitemap the site does not have: the crawler asked for
	// /sitemap.xml on its own, or robots.txt named one that is not there.
	u.SitemapsNotFound = st.SitemapsNotFound
	e.HTTP4xx = st.Statuses["4xx"] - st.SitemapsNotFound
	e.HTTP5xx = st.Statuses["5xx"]
	return u, e
}

// urlView is GET /api/v1/urls.
type urlView struct {
	Normalized   string         `json:"normalized"`
	Hash         string         `json:"hash"`
	Host         string         `json:"host"`
	State        string         `json:"state"` // a URL state, or not_admitted
	Reason       string         `json:"reason,omitempty"`
	ReasonText   string         `json:"reason_description,omitempty"`
	Kind         string         `json:"kind,omitempty"`
	Depth        int            `json:"depth"`
	Level        int            `json:"level"`
	Score        int            `json:"score"`
	Attempts     int            `json:"attempts"`
	Redirects    int            `json:"redirects"`
	Parent       string         `json:"parent,omitempty"`
	CrawlID      string         `json:"crawl_id,omitempty"`
	DiscoveredAt *time.Time     `json:"discovered_at"`
	FetchedAt    *time.Time     `json:"fetched_at"`
	Status       int            `json:"status"`
	ETag         string         `json:"etag,omitempty"`
	LastModified string         `json:"last_modified,omitempty"`
	Location     string         `json:"location,omitempty"` // where its newest capture redirected to
	Recrawl      *recrawlView   `json:"recrawl"`
	Exclusion    *exclusionView `json:"exclusion"`
	Robots       robotsDecision `json:"robots"`
	Render       *renderView    `json:"render"`
	Captures     []captureView  `json:"captures"`
	Links        linksView      `json:"links"`
	Partition    *int32         `json:"partition"`
}

type recrawlView struct {
	NextFetchAt      *time.Time `json:"next_fetch_at"`
	FetchCount       int        `json:"fetch_count"`
	ChangeCount      int        `json:"change_count"`
	UnchangedSeconds float64    `json:"unchanged_seconds"`
	ChangedSeconds   float64    `json:"changed_seconds"`
	LastChangeAt     *time.Time `json:"last_change_at"`
	LastVisitAt      *time.Time `json:"last_visit_at"`
	Misses           int        `json:"misses"`
	Streak           int        `json:"streak"`
	ChangesPerDay    float64    `json:"changes_per_day"`
}

type exclusionView struct {
	Reason  string     `json:"reason"`
	Parent  string     `json:"parent,omitempty"`
	Depth   int        `json:"depth"`
	CrawlID string     `json:"crawl_id,omitempty"`
	At      *time.Time `json:"at"`
}

// robotsDecision says whether robots.txt lets the crawler fetch a URL now, and why.
type robotsDecision struct {
	Allowed *bool      `json:"allowed"` // null when the host's robots.txt was never fetched or is unreadable
	Why     string     `json:"why"`     // rule, no_rule, robots_txt, allow_all, disallow_all, not_fetched
	Rule    *ruleView  `json:"rule"`
	Kind    string     `json:"kind,omitempty"`
	Expires *time.Time `json:"expires"`
}

type ruleView struct {
	Allow   bool   `json:"allow"`
	Pattern string `json:"pattern"`
	Line    string `json:"line"` // as a robots.txt line: "Disallow: /private"
}

func ruleOf(r *robots.Rule) *ruleView {
	if r == nil {
		return nil
	}
	word := "Disallow"
	if r.Allow {
		word = "Allow"
	}
	return &ruleView{Allow: r.Allow, Pattern: r.Pattern, Line: word + ": " + r.Pattern}
}

type captureView struct {
	ID              int64       `json:"id"`
	FetchID         string      `json:"fetch_id"`
	FetchedAt       *time.Time  `json:"fetched_at"`
	DurationSeconds *float64    `json:"duration_seconds"` // request to end of body; null when unknown
	Status          int         `json:"status"`
	ContentType     string      `json:"content_type"`
	Length          int64       `json:"length"`
	Truncated       string      `json:"truncated,omitempty"`
	PayloadDigest   string      `json:"payload_digest"`
	ContentSHA256   string      `json:"content_sha256,omitempty"`
	SimHash         string      `json:"simhash,omitempty"`
	Change          string      `json:"change,omitempty"`
	Changed         *bool       `json:"changed"`
	RevisitOf       *captureRef `json:"revisit_of"`
	NearDuplicateOf *captureRef `json:"near_duplicate_of"`
	Title           string      `json:"title,omitempty"`
	Description     string      `json:"description,omitempty"`
	Language        string      `json:"language,omitempty"`
	Canonical       string      `json:"canonical,omitempty"`
	NoIndex         bool        `json:"noindex"`
	Links           int         `json:"links"`
	LinksDropped    int         `json:"links_dropped"`
	ETag            string      `json:"etag,omitempty"`
	LastModified    string      `json:"last_modified,omitempty"`
	Location        string      `json:"location,omitempty"` // a redirect's target, absolute
	// Why a document (a PDF, docx or odt) was not read, or read only in part.
	DocReason            string    `json:"document_reason,omitempty"`
	DocReasonDescription string    `json:"document_reason_description,omitempty"`
	WARC                 *warcView `json:"warc"`
}

type captureRef struct {
	ID  int64  `json:"id"`
	URL string `json:"url,omitempty"` // "" when the capture could not be read
}

type warcView struct {
	File     string `json:"file"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	RecordID string `json:"record_id"`
	Href     string `json:"href"` // GET it for the raw record
}

// changedOf reads a recrawl outcome as changed or not; nil when the fetch
// was not compared with a previous copy.
func changedOf(change string) *bool {
	var v bool
	switch change {
	case "changed", "gone":
		v = true
	case "not_modified", "identical", "near":
		v = false
	default:
		return nil
	}
	return &v
}

func captureOf(c store.Capture) captureView {
	v := captureView{
		ID: c.ID, FetchID: c.FetchID, FetchedAt: timeOrNil(c.FetchedAt), DurationSeconds: secondsOrNil(c.Duration), Status: c.Status,
		ContentType: c.ContentType, Length: c.Length, Truncated: c.Truncated, PayloadDigest: c.PayloadDigest,
		Change: c.Change, Changed: changedOf(c.Change), Title: c.Title, Description: c.Description,
		Language: c.Language, Canonical: c.Canonical, NoIndex: c.NoIndex, Links: c.Links, LinksDropped: c.LinksDropped, ETag: c.ETag, LastModified: c.LastModified,
		Location: c.Location, DocReason: c.DocReason, DocReasonDescription: describe(c.DocReason),
	}
	if len(c.ContentSHA256) > 0 {
		v.ContentSHA256 = hex.EncodeToString(c.ContentSHA256)
	}
	if c.SimHash != 0 {
		v.SimHash = strconv.FormatUint(c.SimHash, 16)
	}
	if c.RevisitOf != 0 {
		v.RevisitOf = &captureRef{ID: c.RevisitOf}
	}
	if c.NearDupOf != 0 {
		v.NearDuplicateOf = &captureRef{ID: c.NearDupOf}
	}
	if c.WARCFile != "" {
		v.WARC = &warcView{File: c.WARCFile, Offset: c.WARCOffset, Length: c.WARCLength, RecordID: c.WARCRecordID,
			Href: "/api/v1/captures/" + strconv.FormatInt(c.ID, 10) + "/warc"}
	}
	return v
}

type linksView struct {
	OutCount int64      `json:"out_count"`
	InCount  int64      `json:"in_count"`
	InHosts  int64      `json:"inlink_hosts"`
	Out      []linkView `json:"out"`
	In       []linkView `json:"in"`
}

type linkView struct {
	URL   string `json:"url"` // "" when the URL is not admitted
	Hash  string `json:"hash"`
	State string `json:"state"` // a URL state, or not_admitted
}

func linksOf(l store.Links) linksView {
	conv := func(ls []store.Link) []linkView {
		out := make([]linkView, 0, len(ls))
		for _, x := range ls {
			st := string(x.State)
			if st == "" {
				st = notAdmitted
			}
			out = append(out, linkView{URL: x.URL, Hash: hashString(x.Hash), State: st})
		}
		return out
	}
	return linksView{OutCount: l.OutCount, InCount: l.InCount, InHosts: l.InHosts, Out: conv(l.Out), In: conv(l.In)}
}

const notAdmitted = "not_admitted"

func urlViewOf(normalized string, info store.URLInfo) urlView {
	v := urlView{Normalized: normalized, Hash: hashString(store.HashURL(normalized)), State: notAdmitted, Captures: []captureView{}}
	if u := info.URL; u != nil {
		p := u.Partition
		v.Host, v.State, v.Reason, v.Kind = u.Host, string(u.State), u.Reason, u.Kind.String()
		v.Depth, v.Level, v.Score, v.Attempts, v.Redirects = u.Depth, u.Level, u.Score, u.Attempts, u.Redirects
		v.Parent, v.CrawlID, v.Status, v.ETag, v.LastModified = u.Parent, u.CrawlID, u.Status, u.ETag, u.LastModified
		v.DiscoveredAt, v.FetchedAt, v.Partition = timeOrNil(u.DiscoveredAt), timeOrNil(u.FetchedAt), &p
		r := u.Recrawl
		v.Recrawl = &recrawlView{
			NextFetchAt: timeOrNil(r.NextFetchAt), FetchCount: r.FetchCount, ChangeCount: r.ChangeCount,
			UnchangedSeconds: seconds(r.Unchanged), ChangedSeconds: seconds(r.ChangedTime),
			LastChangeAt: timeOrNil(r.LastChangeAt), LastVisitAt: timeOrNil(r.LastVisitAt),
			Misses: r.Misses, Streak: r.Streak, ChangesPerDay: r.ChangeRate,
		}
	}
	if e := info.Exclusion; e != nil {
		v.Exclusion = &exclusionView{Reason: e.Reason, Parent: e.Parent, Depth: e.Depth, CrawlID: e.CrawlID, At: timeOrNil(e.At)}
		if info.URL == nil {
			v.Host, v.Reason, v.Parent, v.Depth, v.CrawlID = e.Host, e.Reason, e.Parent, e.Depth, e.CrawlID
		}
	}
	for _, c := range info.Captures {
		v.Captures = append(v.Captures, captureOf(c))
	}
	if len(info.Captures) > 0 {
		v.Location = info.Captures[0].Location
	}
	v.ReasonText = describe(v.Reason)
	return v
}

// hostView is GET /api/v1/hosts/{host}.
type hostView struct {
	Host          string              `json:"host"`
	Known         bool                `json:"known"` // the store has a row for it
	Fetching      bool                `json:"fetching"`
	Partition     *int32              `json:"partition"`
	Robots        *robotsView         `json:"robots"`
	Delay         delayView           `json:"delay"`
	NextAllowedAt *time.Time          `json:"next_allowed_at"`
	Budget        budgetView          `json:"budget"`
	Errors        int                 `json:"errors"`
	Excluded      int64               `json:"excluded"`
	Queue         *hostQueueView      `json:"queue"`
	Patterns      []pattern.Usage     `json:"patterns"`
	Rewrites      []pattern.RuleUsage `json:"rewrites"`
	RecentFetches []fetchView         `json:"recent_fetches"`
	Throughput    hostRateView        `json:"throughput"`
	UpdatedAt     *time.Time          `json:"updated_at"`
}

// hostRateView is a host's fetches per bucket over the last hour.
type hostRateView struct {
	BucketSeconds float64     `json:"bucket_seconds"`
	LastHour      int64       `json:"last_hour"`
	History       []ratePoint `json:"history"`
}

// hostRateOf spreads the store's buckets over every bucket from since to
// now, the empty ones included, so a chart shows the pauses.
func hostRateOf(buckets []store.Bucket, since, now time.Time, width time.Duration) hostRateView {
	v := hostRateView{BucketSeconds: width.Seconds(), History: []ratePoint{}}
	counts := map[int64]int64{}
	for _, b := range buckets {
		counts[b.Start.UnixMilli()] = b.Count
		v.LastHour += b.Count
	}
	w := width.Milliseconds()
	for t := since.UnixMilli() / w * w; t <= now.UnixMilli(); t += w {
		// A point is stamped with its interval's end, as the crawl's are.
		v.History = append(v.History, ratePoint{Time: time.UnixMilli(t + w).UTC(), PagesPerSecond: float64(counts[t]) / width.Seconds()})
	}
	return v
}

type robotsView struct {
	Kind              string     `json:"kind"`
	Status            int        `json:"status"`
	Error             string     `json:"error,omitempty"`
	Reason            string     `json:"reason,omitempty"`
	ReasonText        string     `json:"reason_description,omitempty"`
	FetchedAt         *time.Time `json:"fetched_at"`
	Expires           *time.Time `json:"expires"`
	Failures          int        `json:"failures"`
	CrawlDelaySeconds *float64   `json:"crawl_delay_seconds"`
	Rules             []ruleView `json:"rules"`
	Sitemaps          []string   `json:"sitemaps"`
}

type delayView struct {
	Seconds          *float64 `json:"seconds"`
	Source           string   `json:"source"` // robots, clamp, default, or unknown
	RobotsSeconds    *float64 `json:"robots_crawl_delay_seconds"`
	BackoffSeconds   float64  `json:"backoff_seconds"`
	EffectiveSeconds *float64 `json:"effective_seconds"` // delay with the backoff, what separates two requests now
}

type budgetView struct {
	Admitted int64 `json:"admitted"` // URLs admitted; the per-host budget counts these
	Held     *int  `json:"held"`     // URLs the pattern budgets held back (live)
	Parked   *int  `json:"parked"`   // of which waiting for their budget to grow (live)
}

type hostQueueView struct {
	Queued  int   `json:"queued"`
	ByLevel []int `json:"by_level"`
}

type fetchView struct {
	URL             string     `json:"url"`
	State           string     `json:"state"`
	Reason          string     `json:"reason,omitempty"`
	Status          int        `json:"status"`
	Attempts        int        `json:"attempts"`
	FetchedAt       *time.Time `json:"fetched_at"`
	DurationSeconds *float64   `json:"duration_seconds"` // null when no capture of the fetch holds it
}

// decodeRobots decodes a stored robots.txt entry; nil when absent or unreadable.
func decodeRobots(b []byte) *robots.Entry {
	if len(b) == 0 {
		return nil
	}
	var e robots.Entry
	if e.UnmarshalBinary(b) != nil {
		return nil
	}
	return &e
}

func robotsViewOf(e *robots.Entry) *robotsView {
	if e == nil {
		return nil
	}
	v := &robotsView{Kind: e.Kind.String(), Status: e.Status, Error: e.Error, Reason: e.FailureReason(), FetchedAt: timeOrNil(e.FetchedAt),
		Expires: timeOrNil(e.Expires), Failures: e.Failures, Rules: []ruleView{}, Sitemaps: e.Sitemaps()}
	v.ReasonText = describe(v.Reason)
	if v.Sitemaps == nil {
		v.Sitemaps = []string{}
	}
	if d, ok := e.CrawlDelay(); ok {
		s := d.Seconds()
		v.CrawlDelaySeconds = &s
	}
	for _, r := range e.Rules() {
		v.Rules = append(v.Rules, *ruleOf(&r))
	}
	return v
}

// delayOf says what the host's delay is and where it comes from: robots.txt's
// Crawl-delay as written, that value clamped to the crawler's bounds, or the
// crawler's default.
func delayOf(d, backoff time.Duration, known bool, e *robots.Entry) delayView {
	v := delayView{Source: "unknown", BackoffSeconds: seconds(backoff)}
	cd, hasCD := e.CrawlDelay()
	if hasCD {
		s := cd.Seconds()
		v.RobotsSeconds = &s
	}
	if !known {
		return v
	}
	s, eff := d.Seconds(), max(d, backoff).Seconds()
	v.Seconds, v.EffectiveSeconds = &s, &eff
	switch {
	case hasCD && cd == d:
		v.Source = "robots"
	case hasCD:
		v.Source = "clamp"
	default:
		v.Source = "default"
	}
	return v
}

func fetchViewOf(f store.Fetch) fetchView {
	u := f.URL
	return fetchView{URL: u.URL, State: string(u.State), Reason: u.Reason, Status: u.Status, Attempts: u.Attempts,
		FetchedAt: timeOrNil(u.FetchedAt), DurationSeconds: secondsOrNil(f.Duration)}
}

// hostListView is GET /api/v1/hosts.
type hostListView struct {
	Order string         `json:"order"`
	Hosts []hostListItem `json:"hosts"`
}

type hostListItem struct {
	Host           string     `json:"host"`
	Partition      int32      `json:"partition"`
	Admitted       int64      `json:"admitted"`
	Errors         int        `json:"errors"`
	Excluded       int64      `json:"excluded"`
	DelaySeconds   float64    `json:"delay_seconds"`
	BackoffSeconds float64    `json:"backoff_seconds"`
	NextAllowedAt  *time.Time `json:"next_allowed_at"`
	UpdatedAt      *time.Time `json:"updated_at"`
}

func hostListItemOf(h store.Host) hostListItem {
	return hostListItem{Host: h.Host, Partition: h.Partition, Admitted: int64(h.Pages), Errors: h.Errors, Excluded: h.Excluded,
		DelaySeconds: seconds(h.Delay), BackoffSeconds: seconds(h.Backoff), NextAllowedAt: timeOrNil(h.NextAllowed), UpdatedAt: timeOrNil(h.UpdatedAt)}
}

// workersOf turns the cluster's consumer groups into the workers view.
func workersOf(groups []lag.Group) []workerGroupView {
	out := make([]workerGroupView, 0, len(groups))
	for _, g := range groups {
		v := workerGroupView{Name: g.Name, Members: len(g.Members), State: g.State, LagByTopic: g.Lag, MemberList: []memberView{}}
		if g.Lag != nil {
			var total int64
			for _, n := range g.Lag {
				total += n
			}
			v.Lag = &total
		}
		for _, m := range g.Members {
			mv := memberView{ID: m.ID, ClientID: m.ClientID, Host: m.Host, Partitions: m.Partitions, Lag: m.Lag}
			if mv.Partitions == nil {
				mv.Partitions = map[string][]int32{}
			}
			if mv.Lag == nil {
				mv.Lag = map[string]int64{}
			}
			v.MemberList = append(v.MemberList, mv)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// renderView is a URL's render decision (store.RenderDecision).
type renderView struct {
	Decision      string    `json:"decision"`
	Reason        string    `json:"reason"`
	Section       string    `json:"section"`
	At            time.Time `json:"at"`
	Compared      bool      `json:"compared"`
	Gained        bool      `json:"gained"`
	LinksHTML     int       `json:"links_html"`
	LinksRendered int       `json:"links_rendered"`
	TextHTML      int       `json:"text_html"`
	TextRendered  int       `json:"text_rendered"`
	// Detail is what the render waited for and what the page raised;
	// null without a render, or one recorded before details.
	Detail *store.RenderDetail `json:"detail"`
}

func renderViewOf(d store.RenderDecision) *renderView {
	v := &renderView{Decision: d.Decision, Reason: d.Reason, Section: d.Section, At: d.At, Compared: d.Compared, Gained: d.Gained,
		LinksHTML: d.LinksHTML, LinksRendered: d.LinksRendered, TextHTML: d.TextHTML, TextRendered: d.TextRendered}
	if d.Detail != "" {
		var det store.RenderDetail
		// The parser wrote it; a row it cannot read shows no detail
		// rather than failing the look-up.
		if json.Unmarshal([]byte(d.Detail), &det) == nil {
			v.Detail = &det
		}
	}
	return v
}
