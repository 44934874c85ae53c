// Package api is the crawler's REST interface (served by the frontier tier, and by
// the embedded crawler): seed submission, crawl statistics, URL and host look-ups,
// health and readiness, and Prometheus metrics.
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
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	apidoc "github.com/crawlcluster/crawler/api"
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

// Live reports what only the running process knows (throughput, frontier).
type Live interface {
	LiveStats() map[string]any
	LiveHost(host string) (map[string]any, bool)
}

// Cluster reports on the cluster's consumer groups: in cluster mode the frontier
// tier knows how many fetchers and parsers are alive from their group membership.
// pkg/lag's Exporter implements it.
type Cluster interface {
	// Members returns the live members of each consumer group, by group name.
	Members(ctx context.Context) (map[string]int, error)
}

// How long the stats handler waits for the cluster's group descriptions.
const clusterTimeout = 5 * time.Second

// Option configures optional parts of a Server.
type Option func(*Server)

// WithCluster adds the consumer groups' live members to GET /api/v1/stats.
func WithCluster(c Cluster) Option { return func(s *Server) { s.cluster = c } }

// WithConsole serves h (the operator console, pkg/console) for every path outside
// /api/, /-/ and /metrics; unknown /api/ paths still get the JSON 404. The console's
// files hold no crawl data, so they are served without a token.
func WithConsole(h http.Handler) Option { return func(s *Server) { s.console = h } }

// Config configures the server.
type Config struct {
	Tokens       []string // bearer tokens; none = no auth (embedded mode on loopback)
	MaxSeeds     int
	MaxBodyBytes int64
	// Public answers GET routes without a token even when tokens are set, so that
	// the console's read-only pages open without logging in (-console-public);
	// every other method still needs a token.
	Public bool
}

// Server holds the handlers.
type Server struct {
	cfg     Config
	sub     Submitter
	store   store.Reader
	live    Live
	cluster Cluster
	console http.Handler
	gather  prometheus.Gatherer
	// SHA-256 of each token
	tokenSums [][sha256.Size]byte
	log       *slog.Logger
	ready     atomic.Bool
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
	}
	for _, o := range opts {
		o(s)
	}
	return s
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
		{"GET", "/api/v1/hosts/{host}", s.getHost, false},
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
	return &http.Server{
		Addr:              addr,
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
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

type statsResponse struct {
	Store    store.Stats    `json:"store"`
	Schedule *scheduleStats `json:"recrawl,omitempty"`
	Live     map[string]any `json:"live,omitempty"`
	Cluster  *clusterStats  `json:"cluster,omitempty"`
}

// scheduleStats is the recrawl schedule as the stats answer shows it.
type scheduleStats struct {
	Scheduled        int64      `json:"scheduled"`
	Due              int64      `json:"due"`
	OldestDueSeconds float64    `json:"oldest_due_seconds"`
	NextDue          *time.Time `json:"next_due,omitempty"`
}

type clusterStats struct {
	Members map[string]int `json:"members,omitempty"`
	Error   string         `json:"error,omitempty"`
}

func (s *Server) getStats(w http.ResponseWriter, r *http.Request) {
	st, err := s.store.Stats(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read stats: "+err.Error())
		return
	}
	out := statsResponse{Store: st}
	now := time.Now()
	if sch, err := s.store.Schedule(r.Context(), now); err != nil {
		s.log.Warn("read recrawl schedule for stats", "err", err)
	} else {
		out.Schedule = &scheduleStats{Scheduled: sch.Scheduled, Due: sch.Due}
		if !sch.OldestDue.IsZero() {
			out.Schedule.OldestDueSeconds = now.Sub(sch.OldestDue).Seconds()
		}
		if !sch.NextDue.IsZero() {
			out.Schedule.NextDue = &sch.NextDue
		}
	}
	if s.live != nil {
		out.Live = s.live.LiveStats()
	}
	if s.cluster != nil {
		// The store's numbers are worth answering with even when Kafka is not.
		ctx, cancel := context.WithTimeout(r.Context(), clusterTimeout)
		members, err := s.cluster.Members(ctx)
		cancel()
		switch {
		case err != nil:
			s.log.Warn("describe consumer groups for stats", "err", err)
			out.Cluster = &clusterStats{Error: "describe consumer groups: " + err.Error()}
		case members == nil:
			out.Cluster = &clusterStats{Members: map[string]int{}}
		default:
			out.Cluster = &clusterStats{Members: members}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

var norm = urlnorm.New(urlnorm.DefaultPolicy())

func (s *Server) getURL(w http.ResponseWriter, r *http.Request) {
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
	info, err := s.store.URLInfo(r.Context(), n)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "url not known: "+n)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "look up url: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"normalized": n, "info": info})
}

func (s *Server) getHost(w http.ResponseWriter, r *http.Request) {
	host := strings.ToLower(r.PathValue("host"))
	h, err := s.store.Host(r.Context(), host)
	out := map[string]any{"host": host}
	switch {
	case err == nil:
		if rs, ok := robotsState(h.Robots); ok {
			out["robots"] = rs
		}
		h.Robots = nil // binary; decoded above
		out["stored"] = h
	case !errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusInternalServerError, "look up host: "+err.Error())
		return
	}
	live, ok := map[string]any(nil), false
	if s.live != nil {
		live, ok = s.live.LiveHost(host)
	}
	if ok {
		out["live"] = live
	}
	if err != nil && !ok {
		writeError(w, http.StatusNotFound, "host not known: "+host)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// robotsState decodes a stored robots.txt entry for the host look-up.
func robotsState(b []byte) (map[string]any, bool) {
	if len(b) == 0 {
		return nil, false
	}
	var e robots.Entry
	if e.UnmarshalBinary(b) != nil {
		return nil, false
	}
	out := map[string]any{"kind": e.Kind.String(), "status": e.Status, "fetched_at": e.FetchedAt, "expires": e.Expires, "failures": e.Failures}
	if e.Error != "" {
		out["error"] = e.Error
	}
	if sm := e.Sitemaps(); len(sm) > 0 {
		out["sitemaps"] = sm
	}
	return out, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": msg, "code": code})
}
