// Command crawler runs a whole crawl in one process: the frontier, fetcher and
// parser tiers over an embedded Kafka broker, SQLite metadata and local WARC files.
//
//	crawler -data DIR [-seeds FILE] [flags] [URL ...]
//
// Running it again on the same folder resumes. See the README for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/metrics"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/console"
	"github.com/crawlcluster/crawler/pkg/embedded"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg embedded.Config
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	showVersion := version.Flag(fs)
	var gc gcFlags
	gc.register(fs)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	tokensFile := fs.String("api-tokens-file", "", "file of bearer tokens for the API and console of -listen, one per line ('#' comments); CRAWLER_API_TOKENS (comma-separated) also works; none = no auth")
	fs.BoolVar(&cfg.API.Public, "console-public", false, "answer the API's read-only (GET) routes, and so the console's pages, without a token; control actions still need one")
	memProfile := fs.String("memprofile", "", "write a heap profile to this file whenever the live heap reaches a new peak (checked every 5s; go tool pprof)")
	config.Usage(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: crawler -data DIR [-seeds FILE] [flags] [URL ...]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if err := config.ApplyEnv(fs, os.LookupEnv); err != nil {
		fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
		return 2
	}
	if *showVersion {
		version.Print(os.Stdout, "crawler")
		return 0
	}
	cfg.Seeds = fs.Args()
	if err := errors.Join(cfg.Validate(), gc.validate()); err != nil {
		fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
		return 2
	}
	gc.apply(os.LookupEnv)
	tokens, names, err := api.LoadTokens(*tokensFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
		return 2
	}
	cfg.API.Tokens, cfg.API.TokenNames = tokens, names
	cfg.APIOptions = append(cfg.APIOptions, api.WithConsole(console.Handler(console.Access{Tokens: len(tokens) > 0, Public: cfg.API.Public})))
	log := cfg.Logger(os.Stderr)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "crawler: cpu profile: %v\n", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *memProfile != "" {
		pctx, stopProfile := context.WithCancel(ctx)
		defer stopProfile()
		go peakHeapProfile(pctx, *memProfile, 5*time.Second, log)
	}
	sum, err := embedded.Run(ctx, cfg, log)
	if err != nil {
		log.Error("crawl failed", "err", err)
		return 1
	}
	log.Info("crawl finished",
		"reason", sum.Reason,
		"duration", sum.Duration.Round(1e6).String(),
		"fetched_this_run", sum.Fetched,
		"urls", sum.Store.URLs,
		"captures", sum.Store.Captures,
		"revisits", sum.Store.Revisits,
		"near_duplicates", sum.Store.NearDups,
		"excluded", sum.Store.Excluded,
		"failed_or_excluded", sum.Store.Reasons,
		"hosts", sum.Store.Hosts,
		"seen_filter_urls", sum.SeenURLs,
		"seen_filter_bytes", sum.SeenBytes,
	)
	return 0
}

// peakHeapProfile writes the heap profile to path each time the live heap
// after a GC exceeds every earlier reading: what held the memory at the peak,
// not at the end of the run, when most of it is gone.
func peakHeapProfile(ctx context.Context, path string, every time.Duration, log *slog.Logger) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() <= peak {
			continue
		}
		peak = sample[0].Value.Uint64()
		if err := writeHeapProfile(path); err != nil {
			log.Warn("heap profile", "err", err)
			return
		}
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
