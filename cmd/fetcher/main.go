// Command fetcher is the fetcher tier of a cluster: a member of consumer group
// "fetchers" on crawl.urls that admits URLs into the store and fetches them politely.
//
//	fetcher -broker kafka://HOST:9092 -db postgres://... -cache redis://HOST:6379/0 [flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/backend"
	"github.com/crawlcluster/crawler/pkg/cache"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/fetcher"
	"github.com/crawlcluster/crawler/pkg/ops"
	"github.com/crawlcluster/crawler/pkg/store"
)

const uses = backend.Broker | backend.DB | backend.Cache

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("fetcher", flag.ContinueOnError)
	var (
		be   backend.Config
		cfg  = fetcher.Config{HoldPages: fetcher.ClusterHoldPages, HoldURLs: fetcher.ClusterHoldURLs}
		log  config.Log
		prof config.Profile
	)
	be.RegisterFlags(fs, uses)
	cfg.RegisterFlags(fs)
	log.RegisterFlags(fs)
	prof.RegisterFlags(fs)
	listen := fs.String("listen", ":9101", "address for /metrics, /-/healthy and /-/ready (empty = off)")
	reportEvery := fs.Duration("frontier-report-interval", store.FrontierReportInterval, fmt.Sprintf("how often the fetcher writes a snapshot of its frontier to the store, which the frontier tier's stats sum; at most %v (the API ignores reports older than %v)", store.FrontierReportInterval, store.FrontierReportFresh))
	showVersion := version.Flag(fs)
	if code := config.Parse(fs, os.Args[1:]); code >= 0 {
		return code
	}
	if *showVersion {
		version.Print(os.Stdout, "fetcher")
		return 0
	}
	var reportErr error
	if *reportEvery <= 0 || *reportEvery > store.FrontierReportInterval {
		reportErr = fmt.Errorf("frontier-report-interval %v: want above 0 and at most %v", *reportEvery, store.FrontierReportInterval)
	}
	if err := errors.Join(be.Validate(uses), cfg.Validate(), reportErr); err != nil {
		fmt.Fprintf(os.Stderr, "fetcher: %v\n", err)
		return 2
	}
	logger := log.Logger(os.Stderr).With("component", "fetcher")
	stopProfile, err := prof.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fetcher: %v\n", err)
		return 2
	}
	defer stopProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	core, err := backend.OpenCore(ctx, be)
	if err != nil {
		logger.Error("open backends", "err", err)
		return 1
	}
	defer core.Close()
	reg, st, brokers := core.Registry, core.Store, core.Brokers
	shared, err := backend.OpenCache(ctx, be.Cache, cache.WithRegisterer(reg))
	switch {
	case errors.Is(err, cache.ErrUnreachable):
		// A fetcher that joins during an outage fetches as the running
		// ones do through it: each host's politeness kept locally, and
		// the cache used again once it answers.
		logger.Warn("shared cache unreachable; fetching without it until it answers", "err", err)
	case err != nil:
		logger.Error("open cache", "err", err)
		return 1
	}
	defer shared.Close()
	opts := []fetcher.Option{fetcher.WithCache(shared), fetcher.WithServerSlots(shared)}
	// The frontier tier's stats sum the fetchers' frontiers from the store.
	if fl, ok := st.(store.Fleet); ok {
		opts = append(opts, fetcher.WithFrontierReports(fl.Fleet(), *reportEvery))
	}
	f, err := fetcher.New(cfg, st, brokers.ClientOptions(logger), reg, logger, opts...)
	if err != nil {
		logger.Error("build fetcher", "err", err)
		return 1
	}
	srv, err := ops.Listen(*listen, reg)
	if err != nil {
		logger.Error("listen", "addr", *listen, "err", err)
		return 1
	}
	go srv.Serve(logger)
	defer srv.Shutdown()
	srv.SetReady(true)
	logger.Info("fetcher running", "ops", srv.Addr())
	// -max-pages ends the run as a signal does; either way the stop takes
	// seconds (the fetcher's -stop-grace, then flush and commit).
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	go func() {
		select {
		case <-f.LimitReached():
			logger.Info("stop began", "reason", "max-pages")
			stopRun()
		case <-ctx.Done():
			logger.Info("stop began", "reason", "signal")
		}
	}()
	// Every fetcher reads the cluster-wide backlogs, so all of them hold
	// together while the parser tier or admission is behind.
	go f.RunBackpressure(runCtx, time.Second)
	err = f.Run(runCtx)
	srv.SetReady(false)
	if err != nil {
		logger.Error("fetcher stopped", "err", err)
		return 1
	}
	logger.Info("fetcher stopped")
	return 0
}
