// Command crawler runs a whole crawl in one process: the frontier, fetcher and
// parser tiers over an embedded Kafka broker, SQLite metadata and local WARC files.
//
//	crawler -data DIR [-seeds FILE] [flags] [URL ...]
//	crawler export -wacz FILE -data DIR
//	crawler export -opensearch -data DIR [-out FILE]
//	crawler report -data DIR [-json]
//
// Running it again on the same folder resumes. See the README for the flags.
//
// Exit status: 0 the crawl ran (and fetched something, or had nothing to
// do), 1 an error stopped it, 2 a usage error (bad flags, or nothing to
// crawl: no seed, no -listen, no crawl in the folder), 3 the crawl ended by
// itself without fetching a single page although it had something to fetch.
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

	"github.com/crawlcluster/crawler/internal/periodic"
	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/config"
	"github.com/crawlcluster/crawler/pkg/console"
	"github.com/crawlcluster/crawler/pkg/embedded"
	"github.com/crawlcluster/crawler/pkg/store"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "export" {
		os.Exit(runExport(os.Args[2:]))
	}
	os.Exit(run())
}

// The exit statuses, for scripts (README: exit status).
const (
	exitOK             = 0
	exitError          = 1
	exitUsage          = 2
	exitNothingFetched = 3
)

const exitStatusUsage = `
Exit status:
  0  the crawl ran: it fetched pages, or had nothing to do (a finished crawl resumed)
  1  an error stopped it (start-up, storage, disk full)
  2  usage: bad flags, or nothing to crawl (no seed URL, no -listen, and no crawl in -data to resume)
  3  the crawl ended (-exit-when-idle, -max-pages, -max-duration) without fetching a single page
     although it had URLs to fetch: every one failed (DNS, connection, TLS, timeout, robots.txt
     unreachable), was refused by robots.txt, or every seed was rejected
A run stopped by SIGINT or SIGTERM exits 0. The last log line, msg="crawl finished", says why the
run ended and what it did.
`

func run() int {
	if len(os.Args) > 1 && os.Args[1] == "export" {
		return runExport(os.Args[2:])
	}
	if len(os.Args) > 1 && os.Args[1] == "report" {
		return runReport(os.Args[2:], os.Stdout, os.Stderr)
	}
	var cfg embedded.Config
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	showVersion := version.Flag(fs)
	var gc gcFlags
	gc.register(fs)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	tokensFile := fs.String("api-tokens-file", "", "file of bearer tokens for the API and console of -listen, one per line ('#' comments); CRAWLER_API_TOKENS (comma-separated) also works; none = no auth")
	fs.BoolVar(&cfg.API.Public, "console-public", false, "answer the API's read-only (GET) routes, and so the console's pages, without a token; control actions still need one")
	memProfile := fs.String("memprofile", "", "write a heap profile to this file whenever the live heap reaches a new peak (checked every 5s; go tool pprof), and to PATH.end at exit, whose allocation counts cover the whole run")
	config.Usage(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: crawler -data DIR [-seeds FILE] [flags] [URL ...]\n       crawler export -wacz FILE -data DIR   (crawler export -h)\n\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), exitStatusUsage)
	}
	if code := config.ParseArgs(fs, os.Args[1:]); code >= 0 {
		return code
	}
	if *showVersion {
		version.Print(os.Stdout, "crawler")
		return exitOK
	}
	cfg.Seeds = fs.Args()
	if err := errors.Join(cfg.Validate(), gc.validate()); err != nil {
		config.UsageError(fs, err)
		return exitUsage
	}
	gc.apply(os.LookupEnv)
	tokens, names, err := api.LoadTokens(*tokensFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
		return exitUsage
	}
	cfg.API.Tokens, cfg.API.TokenNames = tokens, names
	cfg.APIOptions = append(cfg.APIOptions, api.WithConsole(console.Handler(console.Access{Tokens: len(tokens) > 0, Public: cfg.API.Public})))
	log := cfg.Logger(os.Stderr)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
			return exitUsage
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "crawler: cpu profile: %v\n", err)
			return exitUsage
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
		// The peak's profile counts allocation only up to the peak; the run's
		// whole allocation (alloc_space per page) needs one more at the end.
		defer func() {
			if err := writeHeapProfile(*memProfile + ".end"); err != nil {
				log.Warn("heap profile", "err", err)
			}
		}()
	}
	sum, err := embedded.Run(ctx, cfg, log)
	if errors.Is(err, embedded.ErrNothingToCrawl) {
		fmt.Fprintf(os.Stderr, "crawler: %v\n", err)
		return exitUsage
	}
	if err != nil {
		log.Error("crawl failed", "err", err)
		return exitError
	}
	return finished(log, sum)
}

// finished logs the run's one summary line and returns its exit status.
func finished(log *slog.Logger, sum embedded.Summary) int {
	code, level := exitOK, slog.LevelInfo
	c := sum.Changes()
	attrs := []any{
		"reason", sum.Reason,
		"fetched", sum.Fetched(),
		"requests", sum.Requests,
		"request_errors", sum.Errors,
		"failed", c.Failed,
		"excluded", c.Excluded,
		"held", c.Held,
		"queued", sum.Store.URLs[store.StateQueued],
	}
	if sum.NothingFetched() {
		code, level = exitNothingFetched, slog.LevelError
		attrs = append(attrs, "why", sum.Why(3))
	}
	attrs = append(attrs, "exit", code,
		"duration", sum.Duration.Round(time.Millisecond).String(),
		"urls", sum.Store.URLs,
		"captures", sum.Store.Captures,
		"revisits", sum.Store.Revisits,
		"near_duplicates", sum.Store.NearDups,
		"hosts", sum.Store.Hosts,
		"seen_filter_urls", sum.SeenURLs,
		"seen_filter_bytes", sum.SeenBytes,
	)
	log.Log(context.Background(), level, "crawl finished", attrs...)
	return code
}

// peakHeapProfile writes the heap profile to path each time the live heap
// after a GC exceeds every earlier reading: what held the memory at the peak,
// not at the end of the run, when most of it is gone.
func peakHeapProfile(ctx context.Context, path string, every time.Duration, log *slog.Logger) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	periodic.Every(ctx, every, func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() <= peak {
			return
		}
		peak = sample[0].Value.Uint64()
		if err := writeHeapProfile(path); err != nil {
			log.Warn("heap profile", "err", err)
			stop() // a path that failed once (a full disk, no such folder) is not tried every interval
		}
	})
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
