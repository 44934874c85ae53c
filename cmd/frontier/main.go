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
	"sync"
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
	tokens, err := api.LoadTokens(*tokensFile)
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
	cl, err := kgo.NewClient(queue.ClientOptions(brokers.Seeds, logger)...)
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

	view := &clusterView{adm: adm, store: st, start: time.Now()}
	view.rates(ctx) // the baseline for the average
	srv := api.New(api.Config{Tokens: tokens, MaxSeeds: *maxSeeds, Public: *consolePublic}, submit.New(st, cl), st, view, reg, logger.With("component", "api"),
		api.WithCluster(exporter), api.WithConsole(console.Handler()))
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

// clusterView is the live part of /api/v1/stats: what the consumer groups say, and
// throughput from the store's capture count.
type clusterView struct {
	adm   *kadm.Client
	store interface {
		Stats(context.Context) (store.Stats, error)
	}
	start time.Time

	mu        sync.Mutex
	first     int64 // captures when first asked
	lastAt    time.Time
	lastCount int64
	rate      float64
}

// rates returns pages/s since the previous call (at least a second apart) and on
// average since the frontier started.
func (c *clusterView) rates(ctx context.Context) (current, average float64) {
	st, err := c.store.Stats(ctx)
	if err != nil {
		return 0, 0
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastAt.IsZero() {
		c.first, c.lastAt, c.lastCount = st.Captures, now, st.Captures
		return 0, 0
	}
	if d := now.Sub(c.lastAt); d >= time.Second {
		c.rate = float64(st.Captures-c.lastCount) / d.Seconds()
		c.lastAt, c.lastCount = now, st.Captures
	}
	return c.rate, float64(st.Captures-c.first) / max(now.Sub(c.start).Seconds(), 1e-9)
}

func (c *clusterView) LiveStats() map[string]any {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[string]any{}
	out["pages_per_second"], out["avg_pages_per_second"] = c.rates(ctx)
	lags, err := c.adm.Lag(ctx, queue.GroupFetchers, queue.GroupParsers)
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	groups := map[string]any{}
	for _, g := range []string{queue.GroupFetchers, queue.GroupParsers} {
		l, ok := lags[g]
		if !ok {
			continue
		}
		entry := map[string]any{"members": len(l.Members), "state": l.State, "lag": l.Lag.Total()}
		if err := l.Error(); err != nil {
			entry["error"] = err.Error()
		}
		groups[g] = entry
	}
	out["groups"] = groups
	return out
}

func (c *clusterView) LiveHost(string) (map[string]any, bool) { return nil, false }
