package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/report"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// reasonServed ends a run that served a finished crawl and fetched nothing.
const reasonServed = "served"

// writeReport writes the crawl's report into the data folder, as every stop
// does: the console goes away with the process, the report stays. A report
// that cannot be written is logged, not a failed run: the crawl itself is safe.
func writeReport(s *api.Server, dir, reason string, log *slog.Logger) {
	began := time.Now()
	v, err := s.Report(context.Background())
	if err == nil {
		err = report.Write(dir, v, "the run stopped: "+reason)
	}
	if err != nil {
		log.Error("crawl report", "err", err)
		return
	}
	log.Info("crawl report written", "html", filepath.Join(dir, report.HTMLFile), "json", filepath.Join(dir, report.JSONFile),
		"took", time.Since(began).Round(time.Millisecond))
}

// finishedCrawl reports whether the folder holds a crawl that ended: a stop
// wrote its report and nothing is left queued. A crawl stopped half-way has
// URLs queued and resumes instead.
func finishedCrawl(ctx context.Context, dir string, db *sqlite.DB) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, report.JSONFile)); errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("look for the crawl's report: %w", err)
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return false, err
	}
	return st.URLs[store.StateQueued] == 0, nil
}

// serveFinished serves a finished crawl's API and console, read-only, until
// ctx ends, and fetches nothing: crawler -data DIR -listen ADDR with no seed
// on a folder whose crawl ended.
func serveFinished(ctx context.Context, cfg Config, db *sqlite.DB, log *slog.Logger, start time.Time, st store.Stats) (Summary, error) {
	acfg := cfg.API
	acfg.ReadOnly = true
	opts := append([]api.Option{api.WithRecords(localWARC(filepath.Join(cfg.DataDir, "warc")))}, cfg.APIOptions...)
	s := api.New(acfg, nil, db, nil, prometheus.NewRegistry(), log.With("component", "api"), opts...)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return Summary{}, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	srv := s.NewHTTPServer(cfg.Listen)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.SetReady(true)
	log.Info("serving a finished crawl read-only: nothing is fetched; give a seed (or leave out -listen) to crawl again",
		"addr", ln.Addr().String(), "report", filepath.Join(cfg.DataDir, report.HTMLFile))
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	s.SetReady(false)
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = srv.Shutdown(sctx)
	cancel()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return Summary{}, fmt.Errorf("api server: %w", err)
	}
	return Summary{Duration: time.Since(start), Start: st, Store: st, Reason: reasonServed}, nil
}
