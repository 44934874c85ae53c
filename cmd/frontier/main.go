// Command frontier is the control plane of a cluster: the REST API that takes seeds
// and answers look-ups, topic creation, and consumer-lag monitoring.
//
//	frontier -broker kafka://HOST:9092 -db postgres://... [-listen :8080] [-api-tokens-file F]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/backend"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/console"
	"github.com/crawlcluster/crawler/pkg/lag"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/submit"
)

const uses = backend.Broker | backend.DB

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("frontier", flag.ContinueOnError)
	var (
		be  backend.Config
		log config.Log
	)
	be.RegisterFlags(fs, uses)
	log.RegisterFlags(fs)
	listen := fs.String("listen", ":8080", "address of the REST API, /metrics and the health endpoints")
	tokensFile := fs.String("api-tokens-file", "", "file of bearer tokens, one per line ('#' comments); CRAWLER_API_TOKENS (comma-separated) also works; none = no auth")
	maxSeeds := fs.Int("max-seeds", api.DefaultMaxSeeds, "URLs accepted in one seeds request")
	blobs := fs.String("blobs", "", "the WARC storage the parsers write to (s3://... or file:///DIR), to serve each capture's WARC record at GET /api/v1/captures/{id}/warc; empty: not served")
	consolePublic := fs.Bool("console-public", false, "answer the API's read-only (GET) routes, and so the console's pages, without a token; control actions still need one")
	showVersion := version.Flag(fs)
	if code := config.Parse(fs, os.Args[1:]); code >= 0 {
		return code
	}
	if *showVersion {
		version.Print(os.Stdout, "frontier")
		return 0
	}
	if err := be.Validate(uses); err != nil {
		fmt.Fprintf(os.Stderr, "frontier: %v\n", err)
		return 2
	}
	logger := log.Logger(os.Stderr).With("component", "frontier")
	tokens, names, err := api.LoadTokens(*tokensFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "frontier: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	core, err := backend.OpenCore(ctx, be)
	if err != nil {
		logger.Error("open backends", "err", err)
		return 1
	}
	defer core.Close()
	reg, st, brokers := core.Registry, core.Store, core.Brokers
	cl, err := kgo.NewClient(brokers.ClientOptions(logger)...)
	if err != nil {
		logger.Error("kafka client", "err", err)
		return 1
	}
	defer cl.Close()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = queue.EnsureTopics(tctx, cl, queue.PagesPartitions)
	cancel()
	if err != nil {
		logger.Error("create topics", "err", err)
		return 1
	}
	adm := kadm.NewClient(cl)
	exporter := lag.New(adm, []string{queue.GroupFetchers, queue.GroupParsers, queue.GroupRenderers}, reg, lag.WithLogger(logger))
	go func() { _ = exporter.Run(ctx, 15*time.Second) }()

	view := &clusterView{store: st, start: time.Now()}
	var records api.RecordReader
	if *blobs != "" {
		bs, err := backend.OpenBlobs(ctx, *blobs)
		if err != nil {
			logger.Error("open WARC storage", "err", err)
			return 1
		}
		defer bs.Close()
		records = bs
	}
	srv := api.New(api.Config{Tokens: tokens, TokenNames: names, MaxSeeds: *maxSeeds, Public: *consolePublic}, submit.New(st, cl), st, view, reg, logger.With("component", "api"),
		api.WithCluster(exporter), api.WithRecords(records), api.WithConsole(console.Handler(console.Access{Tokens: len(tokens) > 0, Public: *consolePublic})))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("listen", "addr", *listen, "err", err)
		return 1
	}
	hs := srv.NewHTTPServer(*listen)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	srv.SetReady(true)
	logger.Info("frontier running", "api", ln.Addr().String(), "auth", len(tokens) > 0)

	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			logger.Error("api server", "err", err)
			return 1
		}
	}
	// Readiness off first, so load balancers stop sending before the server stops.
	srv.SetReady(false)
	// Submissions are small; a client that holds its request open longer must
	// not hold the stop past a few seconds (DESIGN.md invariant 9).
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	logger.Info("frontier stopped")
	return 0
}

// clusterView is the live part of /api/v1/stats in cluster mode: the store's
// capture count for the throughput (the fetchers' own counts are in other
// processes). The frontier tier holds no frontier, and its workers come from
// the consumer groups (api.WithCluster).
type clusterView struct {
	store interface {
		Stats(context.Context) (store.Stats, error)
	}
	start time.Time
}

// Pages counts captures stored: what the cluster has crawled.
func (c *clusterView) Pages(ctx context.Context) (int64, error) {
	st, err := c.store.Stats(ctx)
	return st.Captures, err
}

func (c *clusterView) LiveStats(context.Context) api.LiveStats {
	return api.LiveStats{Mode: "cluster", Uptime: time.Since(c.start)}
}

func (c *clusterView) LiveHost(string) (api.LiveHost, bool) { return api.LiveHost{}, false }
