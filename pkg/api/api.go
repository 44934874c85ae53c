// Package api is the crawler's REST interface (served by the frontier tier, and by
// the embedded crawler): seed submission, crawl statistics, URL and host look-ups,
// health and readiness, and Prometheus metrics.
//
// Every 4xx and 5xx answer carries a JSON body {"error": "...", "code": N}, request
// bodies are size-limited, and when tokens are configured every /api/ route needs
// "Authorization: Bearer TOKEN", compared in constant time.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

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

// Config configures the server.
type Config struct {
	Tokens       []string // bearer tokens; none = no auth (embedded mode on loopback)
	MaxSeeds     int
	MaxBodyBytes int64
}

// Server holds the handlers.
type Server struct {
	cfg    Config
	sub    Submitter
	store  store.Reader
	live   Live
	gather prometheus.Gatherer
	log    *slog.Logger
	ready  atomic.Bool
}

// New returns a server; call SetReady once the components run.
func New(cfg Config, sub Submitter, st store.Reader, live Live, gather prometheus.Gatherer, log *slog.Logger) *Server {
	if cfg.MaxSeeds <= 0 {
		cfg.MaxSeeds = DefaultMaxSeeds
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &Server{cfg: cfg, sub: sub, store: st, live: live, gather: gather, log: log}
}

// SetReady flips readiness; the termination path sets it false first.
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// Handler returns the routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/frontier/urls", s.auth(s.postURLs))
	mux.HandleFunc("GET /api/v1/stats", s.auth(s.getStats))
	mux.HandleFunc("GET /api/v1/urls", s.auth(s.getURL))
	mux.HandleFunc("GET /api/v1/hosts/{host}", s.auth(s.getHost))
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			writeError(w, http.StatusServiceUnavailable, "not ready")
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	if s.gather != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(s.gather, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { writeError(w, http.StatusNotFound, "no such route") })
	return mux
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
		if len(s.cfg.Tokens) > 0 {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			match := 0
			for _, t := range s.cfg.Tokens {
				// Check every token so timing does not reveal which one matched.
				match |= subtle.ConstantTimeCompare([]byte(got), []byte(t))
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

func (s *Server) getStats(w http.ResponseWriter, r *http.Request) {
	st, err := s.store.Stats(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read stats: "+err.Error())
		return
	}
	out := map[string]any{"store": st}
	if s.live != nil {
		out["live"] = s.live.LiveStats()
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
		h.Robots = nil // binary; the live view describes it
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
