// Package api is the crawler's REST interface (served by the frontier tier, and by
// the embedded crawler): seed submission, the operator's crawl statistics, URL and
// host look-ups, host tables, captures' WARC records, health and readiness, and
// Prometheus metrics. Bodies are built by the views of types.go, in one JSON style.
//
// The routes are described by the OpenAPI document in api/openapi.yaml, which the
// server also serves at GET /api/v1/openapi.yaml; the tests check every route and
// every body they see against it. Every 4xx and 5xx answer of the handlers carries
// a JSON body {"error": "...", "code": N}, including 404 for an unknown route and
// 405 (with Allow) for a known route asked with the wrong method. Request bodies
// are size-limited, NewHTTPServer sets timeouts, and when tokens are configured
// (see LoadTokens) every /api/v1/ route but the document needs
// "Authorization: Bearer TOKEN", compared in constant time. Health, readiness and
// metrics stay open for probes and scrapers.
package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	apidoc "github.com/crawlcluster/crawler/api"
	"github.com/crawlcluster/crawler/pkg/lag"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/submit"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// Limits of the seeds endpoint.
const (
	DefaultMaxSeeds     = 10_000
	DefaultMaxBodyBytes = 8 << 20
)

// Submitter enqueues seeds.
type Submitter interface {
	Submit(ctx context.Context, seeds []submit.Seed, crawlID string) ([]submit.Result, error)
}

// Live reports what only the running process knows: its page count (the
// throughput's), its frontier, its workers.
type Live interface {
	// Pages returns the pages fetched so far (embedded crawler) or stored
	// (cluster): the server samples it each second for the throughput.
	Pages(ctx context.Context) (int64, error)
	LiveStats(ctx context.Context) LiveStats
	// LiveHost returns the host's state in this process's frontier; false
	// when the process does not fetch it.
	LiveHost(host string) (LiveHost, bool)
}

// LiveStats is the live part of GET /api/v1/stats.
type LiveStats struct {
	Mode     string         // "embedded" or "cluster"
	Uptime   time.Duration  // since the process started
	Frontier *FrontierStats // nil when the process holds no frontier (the frontier tier)
	// Workers are the process's own consumer groups (the embedded crawler);
	// nil leaves them to the Cluster option.
	Workers []lag.Group
	// MaxPages bounds the run (crawler -max-pages), 0 when unbounded or
	// unknown; Fetched counts the run's fetches against it.
	MaxPages, Fetched int64
}

// FrontierStats is what the process's frontier holds.
type FrontierStats struct {
	Queued        int64   // URLs in its queues
	InFlight      int64   // requests under way
	Active        int64   // hosts leased (a request in flight)
	Waiting       int64   // hosts waiting for their next-allowed time
	BackingOff    int64   // hosts whose delay grew from errors or slow answers
	QueuedByLevel []int64 // queued per priority level, 0 most urgent
}

// LiveHost is a host in the process's frontier.
type LiveHost struct {
	Partition      int32
	NextAllowed    time.Time
	Delay, Backoff time.Duration
	Queued         int
	ByLevel        []int               // queued per priority level, 0 most urgent
	Patterns       []pattern.Usage     // the host's busiest URL spaces and families
	Rewrites       []pattern.RuleUsage // duplicate-producing rewrites learned on the host
	Held, Parked   int                 // URLs the pattern budgets held back, and of those waiting to be released
}

// Cluster reports on the cluster's consumer groups: in cluster mode the frontier
// tier knows the fetchers and parsers from their group membership. pkg/lag's
// Exporter implements it.
type Cluster interface {
	// Groups describes each consumer group: members, assignments, lag.
	Groups(ctx context.Context) ([]lag.Group, error)
}

// RecordReader reads a byte range of a stored WARC segment (blob.Store does).
type RecordReader interface {
	ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// How long the stats handler waits for the cluster's group descriptions.
const clusterTimeout = 5 * time.Second

// Option configures optional parts of a Server.
type Option func(*Server)

// WithCluster adds the consumer groups' members and lag to GET /api/v1/stats.
func WithCluster(c Cluster) Option { return func(s *Server) { s.cluster = c } }

// WithRecords serves captures' WARC records (GET /api/v1/captures/{id}/warc)
// from r, where the captures' segments are.
func WithRecords(r RecordReader) Option { return func(s *Server) { s.records = r } }

// WithConsole serves h (the operator console, pkg/console) for every path outside
// /api/, /-/ and /metrics; unknown /api/ paths still get the JSON 404. The console's
// files hold no crawl data, so they are served without a token.
func WithConsole(h http.Handler) Option { return func(s *Server) { s.console = h } }

// Config configures the server.
type Config struct {
	Tokens []string // bearer tokens; none = no auth (embedded mode on loopback)
	// TokenNames names some tokens (token -> name, from LoadTokens) for the
	// audit log; a token without a name is logged as a short hash of it.
	TokenNames   map[string]string
	MaxSeeds     int
	MaxBodyBytes int64
	// Public answers GET routes without a token even when tokens are set, so that
	// the console's read-only pages open without logging in (-console-public);
	// every other method still needs a token.
	Public bool
	// ReadOnly refuses every request that would change the crawl (seeds,
	// control actions) with 409: the embedded crawler serving a finished
	// crawl's folder without fetching.
	ReadOnly bool
}

// Server holds the handlers.
type Server struct {
	cfg     Config
	sub     Submitter
	store   store.Reader
	live    Live
	cluster Cluster
	console http.Handler
	records RecordReader
	gather  prometheus.Gatherer
	rate    Throughput
	stop    context.CancelFunc
	stopped sync.WaitGroup
	// SHA-256 of each token
	tokenSums  [][sha256.Size]byte
	tokenNames []string // of tokenSums' tokens, "" when unnamed
	log        *slog.Logger
	ready      atomic.Bool
}

// New returns a server; call SetReady once the components run. live, gather and
// the options may be nil or absent.
func New(cfg Config, sub Submitter, st store.Reader, live Live, gather prometheus.Gatherer, log *slog.Logger, opts ...Option) *Server {
	if cfg.MaxSeeds <= 0 {
		cfg.MaxSeeds = DefaultMaxSeeds
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	// An empty token would match "Authorization: Bearer " with nothing after it.
	cfg.Tokens = slices.DeleteFunc(slices.Clone(cfg.Tokens), func(t string) bool { return t == "" })
	s := &Server{cfg: cfg, sub: sub, store: st, live: live, gather: gather, log: log}
	for _, t := range cfg.Tokens {
		s.tokenSums = append(s.tokenSums, sha256.Sum256([]byte(t)))
		s.tokenNames = append(s.tokenNames, cfg.TokenNames[t])
	}
	for _, o := range opts {
		o(s)
	}
	if live != nil {
		ctx, stop := context.WithCancel(context.Background())
		s.stop = stop
		s.stopped.Add(1)
		go func() {
			defer s.stopped.Done()
			s.sample(ctx)
		}()
	}
	return s
}

// sample feeds the throughput from the live page count once a second.
func (s *Server) sample(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if n, err := s.live.Pages(ctx); err == nil {
			s.rate.Sample(time.Now(), n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Close stops the throughput sampling; the http.Server of NewHTTPServer calls
// it on Shutdown.
func (s *Server) Close() {
	if s.stop != nil {
		s.stop()
		s.stopped.Wait()
	}
}

// SetReady flips readiness; the termination path sets it false first.
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// route is one operation of the API; api/openapi.yaml documents each.
type route struct {
	method, path string
	handler      http.HandlerFunc
	open         bool // served without a token
}

func (s *Server) routes() []route {
	rs := []route{
		{"POST", "/api/v1/frontier/urls", s.postURLs, false},
		{"GET", "/api/v1/stats", s.getStats, false},
		{"GET", "/api/v1/urls", s.getURL, false},
		{"GET", "/api/v1/hosts", s.getHosts, false},
		{"GET", "/api/v1/hosts/{host}", s.getHost, false},
		{"GET", "/api/v1/report", s.getReport, false},
		{"GET", "/api/v1/captures", s.getCaptures, false},
		{"GET", "/api/v1/captures/{id}/warc", s.getWARC, false},
		{"GET", "/api/v1/search", s.getSearch, false},
		{"GET", "/api/v1/openapi.yaml", getOpenAPI, true},
		{"GET", "/-/healthy", getHealthy, true},
		{"GET", "/-/ready", s.getReady, true},
	}
	rs = append(rs, s.controlRoutes()...)
	if s.gather != nil {
		rs = append(rs, route{"GET", "/metrics", promhttp.HandlerFor(s.gather, promhttp.HandlerOpts{}).ServeHTTP, true})
	}
	return rs
}

// Handler returns the routes.
func (s *Server) Handler() http.Handler { return s.mux() }

// mux registers each route under its method, and each path once more without one:
// http.ServeMux answers a method mismatch with a plain-text 405, and the fallback
// answers it in JSON instead, with the Allow header.
func (s *Server) mux() *http.ServeMux {
	mux := http.NewServeMux()
	var paths []string
	allowed := map[string][]string{}
	for _, r := range s.routes() {
		h := r.handler
		if s.cfg.ReadOnly && r.method != http.MethodGet {
			h = refuseReadOnly
		}
		if !r.open {
			h = s.auth(h)
		}
		mux.HandleFunc(r.method+" "+r.path, h)
		if allowed[r.path] == nil {
			paths = append(paths, r.path)
		}
		allowed[r.path] = append(allowed[r.path], r.method)
		if r.method == http.MethodGet {
			allowed[r.path] = append(allowed[r.path], http.MethodHead)
		}
	}
	for _, path := range paths {
		slices.Sort(allowed[path])
		allow := strings.Join(allowed[path], ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; allowed: %s", r.Method, path, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.console != nil && !strings.HasPrefix(r.URL.Path, "/api/") {
			s.console.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusNotFound, "no such route: "+r.URL.Path)
	})
	return mux
}

func refuseReadOnly(w http.ResponseWriter, _ *http.Request) {
	writeError(w, http.StatusConflict, "this crawler serves a finished crawl read-only and fetches nothing; "+
		"run it with a seed (or without -listen) to crawl again")
}

// nonZero is m less its zero counts (a store's counters table keeps rows
// that came back to 0), never nil: JSON {} rather than null.
func nonZero(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, n := range m {
		if n != 0 {
			out[k] = n
		}
	}
	return out
}

func getOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(apidoc.OpenAPI)
}

func getHealthy(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) getReady(w http.ResponseWriter, _ *http.Request) {
	if !s.ready.Load() {
		writeError(w, http.StatusServiceUnavailable, "not ready")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// NewHTTPServer wraps the handler with timeouts suited to an API.
func (s *Server) NewHTTPServer(addr string) *http.Server {
	hs := &http.Server{
		Addr:              addr,
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	hs.RegisterOnShutdown(s.Close)
	return hs
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
		if len(s.tokenSums) > 0 && !(s.cfg.Public && readOnly) {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			ok := strings.EqualFold(scheme, "Bearer") // RFC 9110: the scheme is case-insensitive
			// Compare digests, so the time taken reveals neither a token's length
			// nor its prefix, and check every token so it does not reveal which matched.
			sum := sha256.Sum256([]byte(got))
			match := 0
			for _, t := range s.tokenSums {
				match |= subtle.ConstantTimeCompare(sum[:], t[:])
			}
			if !ok || match != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="crawler"`)
				writeError(w, http.StatusUnauthorized, "missing or invalid bearer token")
				return
			}
		}
		h(w, r)
	}
}

type seedsRequest struct {
	URLs    []submit.Seed `json:"urls"`
	CrawlID string        `json:"crawl_id"`
}

type seedsResponse struct {
	Accepted  int             `json:"accepted"`
	Rejected  int             `json:"rejected"`
	Duplicate int             `json:"duplicate"`
	Results   []submit.Result `json:"results"`
}

func (s *Server) postURLs(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	var req seedsRequest
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "invalid JSON: trailing data after the object")
		return
	}
	switch {
	case len(req.URLs) == 0:
		writeError(w, http.StatusBadRequest, `"urls" must hold at least one entry`)
		return
	case len(req.URLs) > s.cfg.MaxSeeds:
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%d urls in one request; the maximum is %d", len(req.URLs), s.cfg.MaxSeeds))
		return
	case len(req.CrawlID) > 128:
		writeError(w, http.StatusBadRequest, "crawl_id longer than 128 bytes")
		return
	}
	results, err := s.sub.Submit(r.Context(), req.URLs, req.CrawlID)
	if err != nil && results == nil {
		s.log.Error("submit seeds", "err", err)
		writeError(w, http.StatusServiceUnavailable, "could not enqueue seeds: "+err.Error())
		return
	}
	resp := seedsResponse{Results: results}
	for _, res := range results {
		switch res.Status {
		case submit.Accepted:
			resp.Accepted++
		case submit.Duplicate:
			resp.Duplicate++
		default:
			resp.Rejected++
		}
	}
	if err != nil && resp.Accepted == 0 && resp.Rejected > 0 {
		s.log.Error("submit seeds", "err", err)
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// Limits of the look-ups: links listed per direction, captures resolved for
// their revisit and near-duplicate references, recent fetches of a host, and
// rows of a host table.
const (
	linkLimit         = 100
	captureRefLimit   = 50
	recentFetches     = 20
	defaultHostsLimit = 20
	maxHostsLimit     = 1000
)

func (s *Server) getStats(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st, err := s.store.Stats(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read stats: "+err.Error())
		return
	}
	now := time.Now()
	urls, errs := countsOf(st)
	out := statsView{
		Mode: "store", At: now.UTC(), URLs: urls, Errors: errs,
		Hosts:           hostCountsView{Total: st.Hosts, Blocked: st.BlockedHosts},
		Queue:           queueView{Queued: urls.Queued},
		Storage:         storageView{Captures: st.Captures, ByStatus: nonZero(st.Statuses), Bytes: st.ContentLen, WARCBytes: st.WARCBytes, WARCSegments: st.Segments},
		Workers:         workersView{Groups: []workerGroupView{}},
		EstimatedFinish: finishView{Basis: "unknown"},
	}
	if c, err := s.Controls(ctx); err != nil {
		s.log.Warn("read controls for stats", "err", err)
	} else if c != nil {
		out.Paused, out.Hosts.Paused = c.Paused, int64(c.PausedHosts)
	}
	if sch, err := s.store.Schedule(ctx, now); err != nil {
		s.log.Warn("read recrawl schedule for stats", "err", err)
	} else {
		out.Recrawl = &scheduleView{Scheduled: sch.Scheduled, Due: sch.Due, NextDue: timeOrNil(sch.NextDue)}
		if !sch.OldestDue.IsZero() {
			out.Recrawl.OldestDueSeconds = now.Sub(sch.OldestDue).Seconds()
		}
	}
	var ls LiveStats
	if s.live != nil {
		ls = s.live.LiveStats(ctx)
		out.Mode = ls.Mode
		up := ls.Uptime.Seconds()
		out.UptimeSeconds = &up
		out.Throughput = s.rate.view()
		out.setFrontier(ls.Frontier)
		if ls.Workers != nil {
			out.Workers.Groups = workersOf(ls.Workers)
		}
	}
	if ls.Frontier == nil {
		s.fleetFrontier(ctx, now, &out)
	}
	if s.cluster != nil {
		// The store's numbers are worth answering with even when Kafka is not.
		cctx, cancel := context.WithTimeout(ctx, clusterTimeout)
		groups, err := s.cluster.Groups(cctx)
		cancel()
		if err != nil {
			s.log.Warn("describe consumer groups for stats", "err", err)
			out.Workers.Error = "describe consumer groups: " + err.Error()
		} else {
			out.Workers.Groups = workersOf(groups)
		}
	}
	var held int64
	for _, r := range store.HeldReasons {
		held += st.Excluded[r]
	}
	out.EstimatedFinish = estimate(now, urls.Queued, held, ls, out.Throughput)
	writeJSON(w, http.StatusOK, out)
}

// setFrontier fills the numbers only a frontier knows; nil leaves them null.
func (v *statsView) setFrontier(f *FrontierStats) {
	if f == nil {
		return
	}
	v.Hosts.Active, v.Hosts.Waiting, v.Hosts.BackingOff = &f.Active, &f.Waiting, &f.BackingOff
	v.Queue.InFrontier, v.Queue.InFlight, v.Queue.ByLevel = &f.Queued, &f.InFlight, f.QueuedByLevel
}

// fleetFrontier fills the frontier's numbers from the cluster fetchers'
// reports (store.FleetStore) when this process holds no frontier: the sum
// of each live fetcher's latest, up to store.FrontierReportInterval old.
// Reports older than store.FrontierReportFresh, or marked gone, are of
// fetchers that died or left. A store that keeps no reports leaves
// reporting_fetchers null too; one that keeps none fresh says 0.
func (s *Server) fleetFrontier(ctx context.Context, now time.Time, out *statsView) {
	fl, ok := s.store.(store.Fleet)
	if !ok {
		return
	}
	reports, err := fl.Fleet().FrontierReports(ctx, now.Add(-store.FrontierReportFresh))
	if err != nil {
		s.log.Warn("read frontier reports for stats", "err", err)
		return
	}
	f, n := sumReports(reports)
	out.Hosts.ReportingFetchers = &n
	out.setFrontier(f)
}

// sumReports adds up the reports not marked gone; nil when there is none.
func sumReports(reports []store.FrontierReport) (*FrontierStats, int64) {
	var (
		f FrontierStats
		n int64
	)
	for _, r := range reports {
		if r.Gone {
			continue
		}
		n++
		f.Queued += r.Queued
		f.InFlight += r.InFlight
		f.Active += r.Active
		f.Waiting += r.Waiting
		f.BackingOff += r.BackingOff
		// Fetchers may run with different -levels.
		for len(f.QueuedByLevel) < len(r.ByLevel) {
			f.QueuedByLevel = append(f.QueuedByLevel, 0)
		}
		for i, q := range r.ByLevel {
			f.QueuedByLevel[i] += q
		}
	}
	if n == 0 {
		return nil, 0
	}
	return &f, n
}

// estimate is the time to finish at the current rate: what is queued, or what
// the run's page limit leaves when that is less.
func estimate(now time.Time, queued, held int64, ls LiveStats, tp *throughputView) finishView {
	remaining, basis := queued, "queue"
	if ls.MaxPages > 0 && ls.MaxPages-ls.Fetched < remaining {
		remaining, basis = max(ls.MaxPages-ls.Fetched, 0), "max_pages"
	}
	v := finishView{Remaining: &remaining, Held: &held, Basis: basis}
	switch {
	case remaining == 0:
		zero := 0.0
		v.Seconds, v.At = &zero, timeOrNil(now)
	case tp != nil && tp.Current > 0:
		sec := float64(remaining) / tp.Current
		v.Seconds, v.At = &sec, timeOrNil(now.Add(time.Duration(sec*float64(time.Second))))
	}
	if tp != nil && tp.Current > 0 && basis == "queue" {
		// Were every held URL released: the longest the crawl can still take.
		sec := float64(remaining+held) / tp.Current
		v.SecondsWithHeld = &sec
	}
	return v
}

var norm = urlnorm.New(urlnorm.DefaultPolicy())

func (s *Server) getURL(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	raw := r.URL.Query().Get("url")
	if raw == "" {
		writeError(w, http.StatusBadRequest, `query parameter "url" is required`)
		return
	}
	n, err := norm.Normalize(raw)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid url: "+err.Error())
		return
	}
	info, err := s.store.URLInfo(ctx, n)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "url not known: "+n)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "look up url: "+err.Error())
		return
	}
	v := urlViewOf(n, info)
	if v.Host == "" {
		v.Host = urlnorm.Authority(n)
	}
	var entry *robots.Entry
	h, err := s.store.Host(ctx, v.Host)
	switch {
	case err == nil:
		entry = decodeRobots(h.Robots)
	case !errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusInternalServerError, "look up host: "+err.Error())
		return
	}
	v.Robots = decisionOf(entry, n)
	if rs, ok := s.store.(interface{ Render() store.RenderStore }); ok {
		d, err := rs.Render().RenderDecisionOf(ctx, store.HashURL(n))
		switch {
		case err == nil:
			v.Render = renderViewOf(d)
		case !errors.Is(err, store.ErrNotFound):
			writeError(w, http.StatusInternalServerError, "look up render decision: "+err.Error())
			return
		}
	}
	if err := s.resolveRefs(ctx, v.Captures); err != nil {
		writeError(w, http.StatusInternalServerError, "look up captures: "+err.Error())
		return
	}
	l, err := s.store.Links(ctx, store.HashURL(n), linkLimit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "look up links: "+err.Error())
		return
	}
	v.Links = linksOf(l)
	writeJSON(w, http.StatusOK, v)
}

// decisionOf asks the host's robots entry about the URL now.
func decisionOf(e *robots.Entry, normalized string) robotsDecision {
	target := "/"
	if u, err := url.Parse(normalized); err == nil {
		target = u.RequestURI()
	}
	d := e.Decide(target)
	v := robotsDecision{Why: d.Why, Rule: ruleOf(d.Rule)}
	if e != nil {
		v.Kind, v.Expires = e.Kind.String(), timeOrNil(e.Expires)
	}
	if d.Why != "not_fetched" {
		v.Allowed = &d.Allowed
	}
	return v
}

// resolveRefs adds the URL of the captures a revisit or near-duplicate refers to.
func (s *Server) resolveRefs(ctx context.Context, cs []captureView) error {
	urls := map[int64]string{}
	for i := range cs {
		for _, ref := range []*captureRef{cs[i].RevisitOf, cs[i].NearDuplicateOf} {
			if ref == nil {
				continue
			}
			u, ok := urls[ref.ID]
			if !ok && len(urls) < captureRefLimit {
				c, err := s.store.Capture(ctx, ref.ID)
				switch {
				case err == nil:
					u = c.URL
				case !errors.Is(err, store.ErrNotFound):
					return err
				}
				urls[ref.ID] = u
			}
			ref.URL = u
		}
	}
	return nil
}

// hostBucket is the width of a host's throughput history points.
const hostBucket = time.Minute

func (s *Server) getHost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	host := strings.ToLower(r.PathValue("host"))
	h, err := s.store.Host(ctx, host)
	known := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusInternalServerError, "look up host: "+err.Error())
		return
	}
	var live LiveHost
	fetching := false
	if s.live != nil {
		live, fetching = s.live.LiveHost(host)
	}
	if !known && !fetching {
		writeError(w, http.StatusNotFound, "host not known: "+host)
		return
	}
	recent, err := s.store.RecentFetches(ctx, host, recentFetches)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "recent fetches: "+err.Error())
		return
	}
	entry := decodeRobots(h.Robots)
	v := hostView{
		Host: host, Known: known, Fetching: fetching, Robots: robotsViewOf(entry),
		Errors: h.Errors, Excluded: h.Excluded, Budget: budgetView{Admitted: int64(h.Pages)},
		Patterns: []pattern.Usage{}, Rewrites: []pattern.RuleUsage{}, RecentFetches: []fetchView{}, UpdatedAt: timeOrNil(h.UpdatedAt),
	}
	delay, backoff, next := h.Delay, h.Backoff, h.NextAllowed
	if known {
		v.Partition = &h.Partition
	}
	if fetching {
		// The frontier's state is newer than the last save.
		delay, backoff, next = live.Delay, live.Backoff, live.NextAllowed
		v.Partition = &live.Partition
		v.Queue = &hostQueueView{Queued: live.Queued, ByLevel: live.ByLevel}
		if v.Queue.ByLevel == nil {
			v.Queue.ByLevel = []int{}
		}
		v.Budget.Held, v.Budget.Parked = &live.Held, &live.Parked
		if live.Patterns != nil {
			v.Patterns = live.Patterns
		}
		if live.Rewrites != nil {
			v.Rewrites = live.Rewrites
		}
	}
	v.Delay = delayOf(delay, backoff, known || fetching, entry)
	v.NextAllowedAt = timeOrNil(next)
	for _, f := range recent {
		v.RecentFetches = append(v.RecentFetches, fetchViewOf(f))
	}
	now := time.Now()
	since := now.Add(-time.Hour)
	act, err := s.store.HostActivity(ctx, host, since, hostBucket)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "host activity: "+err.Error())
		return
	}
	v.Throughput = hostRateOf(act, since, now, hostBucket)
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) getHosts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	order := store.HostOrder(q.Get("sort"))
	if order == "" {
		order = store.HostsBusiest
	}
	if !slices.Contains(store.HostOrders, order) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("sort %q: want one of %v", order, store.HostOrders))
		return
	}
	limit := defaultHostsLimit
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxHostsLimit {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want 1..%d", l, maxHostsLimit))
			return
		}
		limit = n
	}
	hs, err := s.store.HostList(r.Context(), order, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "list hosts: "+err.Error())
		return
	}
	out := hostListView{Order: string(order), Hosts: []hostListItem{}}
	for _, h := range hs {
		out.Hosts = append(out.Hosts, hostListItemOf(h))
	}
	writeJSON(w, http.StatusOK, out)
}

// getWARC answers a capture's WARC record, as stored (a gzip member when the
// segment is compressed per record).
func (s *Server) getWARC(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeError(w, http.StatusBadRequest, "capture id must be a positive integer")
		return
	}
	if s.records == nil {
		writeError(w, http.StatusNotFound, "this server has no access to the WARC segments")
		return
	}
	c, err := s.store.Capture(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("capture %d not known", id))
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "look up capture: "+err.Error())
		return
	case c.WARCFile == "" || c.WARCLength <= 0:
		writeError(w, http.StatusNotFound, fmt.Sprintf("capture %d has no WARC record", id))
		return
	}
	b, err := s.records.ReadRange(r.Context(), c.WARCFile, c.WARCOffset, c.WARCLength)
	if err != nil {
		writeError(w, http.StatusBadGateway, "read WARC record: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/warc")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="capture-%d.warc%s"`, id, gzSuffix(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// gzSuffix names a gzip member as such.
func gzSuffix(b []byte) string {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return ".gz"
	}
	return ""
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Record IDs are "<urn:uuid:...>": readable beats \u003c, and the
	// console inserts text, never HTML.
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": msg, "code": code})
}
