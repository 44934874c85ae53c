// Command parser is the parser tier of a cluster: a member of consumer group
// "parsers" on crawl.pages that archives fetch results as WARC in object storage,
// stores their metadata and sends discovered links back to crawl.urls.
//
//	parser -broker kafka://HOST:9092 -db postgres://... -blobs s3://bucket/warc?endpoint=... [flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/backend"
	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/ops"
	"github.com/crawlcluster/crawler/pkg/parser"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/warc"
)

const uses = backend.Broker | backend.DB | backend.Blobs

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("parser", flag.ContinueOnError)
	var (
		be   backend.Config
		log  config.Log
		prof config.Profile
	)
	be.RegisterFlags(fs, uses)
	log.RegisterFlags(fs)
	prof.RegisterFlags(fs)
	listen := fs.String("listen", ":9102", "address for /metrics, /-/healthy and /-/ready (empty = off)")
	userAgent := fs.String("user-agent", "crawlcluster/0.1 (+https://github.com/crawlcluster/crawler)", "the fetchers' User-Agent; its product token is honoured in meta robots and X-Robots-Tag")
	robotsAgent := fs.String("robots-agent", "", "product token for meta robots / X-Robots-Tag (default: from -user-agent)")
	batch := fs.Int("batch", 500, "fetch results per batch at most (one WARC segment per batch when -blobs is remote)")
	batchWait := fs.Duration("batch-wait", parser.DefaultBatchWait, "how long a batch may gather fetch results (up to 1 MiB) before it is processed; longer batches cost less per page and add latency")
	gzipLevel := fs.Int("warc-gzip-level", warc.DefaultLevel, "gzip level of WARC records, 1 (fastest) to 9 (smallest); the default 3 takes 28% less CPU per record than 6 for 4-8% more bytes on uncompressed HTML")
	operator := fs.String("warc-operator", "", "who runs the crawl and how to reach them, for the operator field of every WARC file's warcinfo record (empty: left out)")
	var recrawlPolicy recrawl.Policy
	recrawlPolicy.RegisterFlags(fs)
	index := fs.Bool("index", false, "write each stored page's title, description, headings and text to the full-text index of the search API; off by default for its CPU cost (off: search finds nothing this parser stores)")
	linkGraph := fs.Bool("link-graph", true, "store the link graph (each stored page's out-links) for the URL look-up's in- and out-links; off saves an index write per link")
	var requisites parser.RequisiteFlags
	requisites.RegisterFlags(fs)
	var renderFlags render.Flags
	renderFlags.RegisterFlags(fs, render.ModeNever)
	spool := fs.String("spool", filepath.Join(os.TempDir(), "crawler-parser-spool"), "local folder where WARC segments are written before upload")
	showVersion := version.Flag(fs)
	if code := config.Parse(fs, os.Args[1:]); code >= 0 {
		return code
	}
	if *showVersion {
		version.Print(os.Stdout, "parser")
		return 0
	}
	renderPolicy, renderErr := renderFlags.Policy()
	if err := errors.Join(be.Validate(uses), recrawlPolicy.Validate(), requisites.Validate(), renderErr); err != nil {
		fmt.Fprintf(os.Stderr, "parser: %v\n", err)
		return 2
	}
	agent := *robotsAgent
	if agent == "" {
		agent = robots.ProductToken(*userAgent)
	}
	logger := log.Logger(os.Stderr).With("component", "parser")
	stopProfile, err := prof.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "parser: %v\n", err)
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

	// A local folder is written in place and fsynced per batch; object storage gets
	// one segment per batch, uploaded before the batch's metadata is committed.
	// The warcinfo record names the crawl's software, machine, operator,
	// User-Agent and robots.txt policy (always obeyed); a hostname the
	// system does not give is left out.
	hostname, _ := os.Hostname()
	segCfg := warc.SegmentConfig{Prefix: "crawl", Software: version.Product("parser"), Hostname: hostname, Operator: *operator,
		UserAgent: *userAgent, Robots: "obey", RobotsAgent: agent, Level: *gzipLevel}
	remote := false
	if dir, ok := backend.IsLocalBlobs(be.Blobs); ok {
		segCfg.Dir = dir
	} else {
		blobs, err := backend.OpenBlobs(ctx, be.Blobs, blob.WithRegisterer(reg))
		if err != nil {
			logger.Error("open blob store", "err", err)
			return 1
		}
		defer blobs.Close()
		remote = true
		segCfg.Dir = *spool
		segCfg.OnClose = parser.UploadSegments(ctx, blobs)
	}
	segments, err := warc.NewSegmentWriter(segCfg)
	if err != nil {
		logger.Error("open WARC segments", "err", err)
		return 1
	}
	var decider *render.Decider
	if rs, ok := st.(interface{ Render() store.RenderStore }); ok {
		// Pages go to crawl.render only where a renderer tier consumes it
		// (deploy/helm's renderer.enabled sets -render auto).
		decider = render.NewDecider(renderPolicy, rs.Render())
		if c, ok := st.(store.Controller); ok && decider.Enabled() {
			defer decider.Watch(ctx, c.Control(), logger)() // the console's render mode of a host; stopped before the store closes
		}
	}
	p, err := parser.New(parser.Config{RobotsAgent: agent, BatchSize: *batch, BatchWait: *batchWait, RollEachBatch: remote, Recrawl: recrawlPolicy, Render: decider, NoLinkGraph: !*linkGraph, Requisites: requisites.Limit(), NoSearchIndex: !*index}, st, segments, brokers.ClientOptions(logger), reg, logger)
	if err != nil {
		logger.Error("build parser", "err", err)
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
	logger.Info("parser running", "ops", srv.Addr(), "remote_blobs", remote)
	err = p.Run(ctx)
	srv.SetReady(false)
	if cerr := segments.Close(); cerr != nil {
		logger.Error("close WARC segments", "err", cerr)
	}
	if err != nil {
		logger.Error("parser stopped", "err", err)
		return 1
	}
	logger.Info("parser stopped")
	return 0
}
