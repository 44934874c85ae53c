// Command bench is `make bench` (issue 5, part 2): it starts the synthetic web
// in this process and crawls a fresh instance of it with each of -crawlers
// (ours, the Colly peer, the Scrapy peer, our cluster), one after the other,
// all with the same settings, then prints one table with the ratios ours / peer
// and writes the results as JSON (-json) and a chart of pages/s over time
// (-png). A crawler whose binary or Python module is missing is skipped with a
// note, and so is the cluster when PostgreSQL, redis-server or versitygw is
// not installed.
//
// The cluster row starts 1 frontier, -fetchers fetchers and -parsers parsers
// with PostgreSQL, Redis, versitygw (S3) and the broker, all on this machine;
// its CPU is that of all of those processes, its peak RSS the sum of theirs
// (the breakdown is printed to standard error and kept in the JSON).
//
//	go run ./loadtest/cmd/bench -hosts 50 -pages 40 -delay 100ms -json bench.json -png bench.png
//
// The web's shape has flags of its own (-h lists them): -page-bytes-max
// spreads the pages' sizes over [-page-bytes, -page-bytes-max], and
// -crawl-delay-share gives that share of the hosts a robots.txt Crawl-delay
// from [-crawl-delay-min, -crawl-delay-max], each drawn by -seed. The web of
// Crawl-delay hosts and 5-40 KB pages (docs/performance.md, "Politeness
// utilisation"), a few minutes per crawler:
//
//	go run ./loadtest/cmd/bench -hosts 200 -pages 30 -delay 100ms \
//	    -page-bytes 5000 -page-bytes-max 40000 \
//	    -crawl-delay-share 0.5 -crawl-delay-min 200ms -crawl-delay-max 1s -crawlers ours,colly
//
// Its log and the table then give the utilisation of the gaps under a
// Crawl-delay apart (Colly does not honour Crawl-delay, so the audit counts
// its requests there as politeness violations). Keep -crawl-delay-max under
// the crawler's -max-delay (30s), which the audit does not know.
//
// Run it from the repository root (or pass -root). The exit status is 0 when
// every crawler that ran finished in time, 1 otherwise, 2 for a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/crawlcluster/crawler/internal/modroot"
	"github.com/crawlcluster/crawler/loadtest/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	o := bench.DefaultOptions()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.Web.RegisterFlags(fs, "")
	crawlers := fs.String("crawlers", strings.Join(o.Crawlers, ","), "crawlers to run, in order: ours, colly, scrapy, cluster, base (ours built from another commit, -base), cluster-base (the cluster built from another commit, -cluster-base)")
	fs.DurationVar(&o.Delay, "delay", o.Delay, "per-host delay of every crawler (end of one request to start of the next)")
	fs.StringVar(&o.UserAgent, "user-agent", o.UserAgent, "User-Agent of every crawler")
	fs.IntVar(&o.MaxPages, "max-pages", o.MaxPages, "page cap of every crawler")
	fs.IntVar(&o.Workers, "workers", o.Workers, "requests in flight over all hosts (ours -workers, colly -parallelism, scrapy -concurrency)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "deadline of each crawler; the child is killed then")
	fs.DurationVar(&o.Tolerance, "tolerance", o.Tolerance, "slack of the audit's time checks (0: 2ms)")
	fs.IntVar(&o.Fetchers, "fetchers", o.Fetchers, "cluster: fetcher processes (-workers and -max-pages are split over them)")
	fs.IntVar(&o.Parsers, "parsers", o.Parsers, "cluster: parser processes")
	fs.StringVar(&o.OursBin, "ours", "", "our crawler binary (default: build ./cmd/crawler)")
	oursFlags := fs.String("ours-flags", "", "extra flags for our crawler, space-separated (e.g. -requisites, to measure what page requisites cost)")
	fs.StringVar(&o.BaseBin, "base", "", "crawler base: our crawler binary of another commit, run with the same flags as ours (ratios ours/base)")
	baseFlags := fs.String("base-flags", "", "extra flags for base instead of -ours-flags (with -base the same binary as -ours: what a flag costs, e.g. -ours-flags -index -base-flags -index=false)")
	fs.StringVar(&o.ClusterBaseBins, "cluster-base", "", "crawler cluster-base: a folder with frontier, fetcher, parser and broker of another commit, run on the same backends as cluster (compare two builds of the cluster in one run)")
	fs.StringVar(&o.ClusterProfile, "cluster-profile", "", "folder for each cluster run's profiles: the fetchers' and parsers' CPU profiles (cluster only), PostgreSQL's heaviest statements, Redis INFO commandstats, the frontier's stats at the end")
	clusterFlags := fs.String("cluster-flags", "", "extra flags for every fetcher and parser of the cluster rows, space-separated (e.g. \"-listen 127.0.0.1:0\" to read their /metrics; the address is in their logs)")
	fs.StringVar(&o.Root, "root", "", "repository root (default: the nearest directory up holding go.mod)")
	fs.StringVar(&o.WorkDir, "work", "", "directory for seeds, logs and binaries (default: a new temporary directory)")
	jsonPath := fs.String("json", "", "write the results as JSON here")
	pngPath := fs.String("png", "", "write the pages/s chart as PNG here")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	o.OursFlags = strings.Fields(*oursFlags)
	o.ClusterFlags = strings.Fields(*clusterFlags)
	if *baseFlags != "" {
		o.BaseFlags = strings.Fields(*baseFlags)
	}
	o.Crawlers = nil
	for _, c := range strings.Split(*crawlers, ",") {
		if c = strings.TrimSpace(c); c != "" {
			o.Crawlers = append(o.Crawlers, c)
		}
	}
	if o.Root == "" {
		root, err := modroot.Find()
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v (pass -root)\n", err)
			return 2
		}
		o.Root = root
	}
	if o.WorkDir == "" {
		d, err := os.MkdirTemp("", "bench-*")
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 2
		}
		o.WorkDir = d
	}
	o.Log = stderr
	fmt.Fprintf(stderr, "bench: work dir %s\n", o.WorkDir)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, o)
	if res != nil && len(res.Crawlers) > 0 {
		bench.FormatTable(stdout, res)
		if *jsonPath != "" {
			if werr := bench.WriteJSON(*jsonPath, res); werr != nil {
				fmt.Fprintf(stderr, "bench: %v\n", werr)
				return 1
			}
		}
		if *pngPath != "" {
			if werr := bench.WritePNG(*pngPath, res); werr != nil {
				fmt.Fprintf(stderr, "bench: %v\n", werr)
				return 1
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	for _, r := range res.Crawlers {
		if r.Error != "" {
			return 1
		}
	}
	return 0
}
