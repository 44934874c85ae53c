// Package ops serves what operators and orchestrators poll on every process that
// has no REST API of its own: Prometheus metrics, liveness and readiness.
package ops

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server is the ops endpoint: GET /metrics, /-/healthy, /-/ready.
type Server struct {
	ready atomic.Bool
	srv   *http.Server
	ln    net.Listener
}

// Listen binds addr. An empty addr gives a Server that serves nothing.
func Listen(addr string, gather prometheus.Gatherer) (*Server, error) {
	s := &Server{}
	if addr == "" {
		return s, nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gather, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	return s, nil
}

// Addr returns the bound address, "" when not serving.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Serve runs until Shutdown.
func (s *Server) Serve(log *slog.Logger) {
	if s.srv == nil {
		return
	}
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("ops server", "err", err)
	}
}

// SetReady flips readiness; shutdown turns it off first.
func (s *Server) SetReady(ok bool) { s.ready.Store(ok) }

// Shutdown stops serving.
func (s *Server) Shutdown() {
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}
