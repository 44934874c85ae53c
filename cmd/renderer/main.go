// Command renderer is the render tier of a cluster: a member of consumer group
// "renderers" on crawl.render that renders the pages the parsers sent in a
// pool of headless Chromium tabs and hands the rendered DOM back to
// crawl.pages. Every request a page makes goes through the crawl: the fetcher
// that owns its host fetches it, and the renderer reads it back from the store
// and the WARC.
//
//	renderer -broker kafka://HOST:9092 -db postgres://... -blobs s3://bucket/warc?endpoint=... [flags]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/backend"
	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/ops"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/renderer"
	"github.com/crawlcluster/crawler/pkg/store"
)

const uses = backend.Broker | backend.DB | backend.Blobs

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("renderer", flag.ContinueOnError)
	var (
		be    backend.Config
		log   config.Log
		flags renderer.Flags
	)
	be.RegisterFlags(fs, uses)
	log.RegisterFlags(fs)
	flags.RegisterFlags(fs)
	listen := fs.String("listen", ":9104", "address for /metrics, /-/healthy and /-/ready (empty = off)")
	defaultDelay := fs.Duration("default-delay", time.Second, "a host's delay, for the render bound's budgets (-render-budget), until the store has the one its fetcher keeps: the fetchers' -default-delay")
	showVersion := version.Flag(fs)
	if code := config.Parse(fs, os.Args[1:]); code >= 0 {
		return code
	}
	if *showVersion {
		version.Print(os.Stdout, "renderer")
		return 0
	}
	if err := be.Validate(uses); err != nil {
		fmt.Fprintf(os.Stderr, "renderer: %v\n", err)
		return 2
	}
	if err := flags.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "renderer: %v\n", err)
		return 2
	}
	logger := log.Logger(os.Stderr).With("component", "renderer")
	path, err := browser.Find(flags.Browser)
	if err != nil {
		logger.Error("find the browser", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	core, err := backend.OpenCore(ctx, be)
	if err != nil {
		logger.Error("open backends", "err", err)
		return 1
	}
	defer core.Close()
	blobs, err := backend.OpenBlobs(ctx, be.Blobs, blob.WithRegisterer(core.Registry))
	if err != nil {
		logger.Error("open blob store", "err", err)
		return 1
	}
	defer blobs.Close()
	var r *renderer.Renderer
	res, bcfg, rcfg := flags.Build(path, *defaultDelay, core.Store, renderer.BlobRecords(blobs),
		func(ctx context.Context, recs ...*kgo.Record) error { return r.Produce(ctx, recs...) })
	bcfg.Log = logger.With("component", "browser")
	if rs, ok := core.Store.(interface{ Render() store.RenderStore }); ok {
		// Asked at a sampled page's turn: the parsers' verdicts, read from
		// the store they record them in, a second old at most.
		rcfg.Again = render.NewDecider(render.Policy{Mode: render.ModeAuto, VerdictTTL: time.Second}, rs.Render())
		if c, ok := core.Store.(store.Controller); ok {
			defer rcfg.Again.Watch(ctx, c.Control(), logger)() // the console's render mode of a host; stopped before the store closes
		}
	}
	newPool := func() (*browser.Pool, error) { return browser.New(ctx, bcfg) }
	r, err = renderer.New(rcfg, newPool, res, core.Brokers.ClientOptions(logger), core.Registry, logger)
	if err != nil {
		logger.Error("build renderer", "err", err)
		return 1
	}
	srv, err := ops.Listen(*listen, core.Registry)
	if err != nil {
		logger.Error("listen", "addr", *listen, "err", err)
		return 1
	}
	go srv.Serve(logger)
	defer srv.Shutdown()
	srv.SetReady(true)
	logger.Info("renderer running", "ops", srv.Addr(), "browser", path, "tabs", flags.Tabs)
	err = r.Run(ctx)
	srv.SetReady(false)
	if cerr := r.Close(); cerr != nil {
		logger.Warn("close the browser", "err", cerr)
	}
	if err != nil {
		logger.Error("renderer stopped", "err", err)
		return 1
	}
	logger.Info("renderer stopped")
	return 0
}
