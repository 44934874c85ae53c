// Command freshness is `make bench-freshness`: it crawls a changing
// synthetic web continuously with our crawler under the adaptive recrawl
// policy, then under the uniform policy given the same number of requests
// (calibrated over up to -rounds runs), and prints the freshness the web's
// audit measured for each, overall, over the pages that change and per change
// class, with the ratios (package loadtest/freshness).
//
//	go run ./loadtest/cmd/freshness -json freshness.json
//
// Run it from the repository root (or pass -root). It builds ./cmd/crawler
// unless -crawler names a binary; with -cluster it crawls with the cluster
// instead (the backends of make bench's cluster row must be installed). The exit status is 0 when every crawl ran
// without error or violation, 1 otherwise, 2 for a usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/crawlcluster/crawler/loadtest/freshness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	o := freshness.DefaultOptions()
	fs := flag.NewFlagSet("freshness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.Web.RegisterFlags(fs, "")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each crawl (real time)")
	fs.DurationVar(&o.Delay, "delay", o.Delay, "per-host delay of the crawler")
	fs.DurationVar(&o.Min, "recrawl-min", o.Min, "the crawler's -recrawl-min (real time)")
	fs.DurationVar(&o.Default, "recrawl-default", o.Default, "the adaptive run's -recrawl-default (real time): the scale of its budget")
	fs.DurationVar(&o.Max, "recrawl-max", o.Max, "the crawler's -recrawl-max (real time)")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, "uniform runs at most, to match the adaptive run's requests")
	fs.Float64Var(&o.Match, "match", o.Match, "stop calibrating once requests are within this fraction")
	fs.StringVar(&o.CrawlerBin, "crawler", "", "our crawler binary (default: build ./cmd/crawler)")
	root := fs.String("root", ".", "repository root, to build ./cmd/crawler (or the cluster's binaries)")
	fs.BoolVar(&o.Cluster, "cluster", false, "crawl with the cluster (frontier, fetchers, parsers on PostgreSQL, Redis, S3 and the broker, as make bench's cluster row) instead of the embedded crawler")
	fs.IntVar(&o.Fetchers, "fetchers", 2, "with -cluster: fetcher processes")
	fs.IntVar(&o.Parsers, "parsers", 2, "with -cluster: parser processes")
	fs.StringVar(&o.WorkDir, "work", "", "directory for seeds, logs and data (default: a new temporary directory)")
	jsonPath := fs.String("json", "", "write the result as JSON here")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	// The flags registered by the web include -change; this command always
	// runs the changing web.
	o.Web.Change.Enabled = true
	if o.WorkDir == "" {
		d, err := os.MkdirTemp("", "freshness-*")
		if err != nil {
			fmt.Fprintln(stderr, "freshness:", err)
			return 1
		}
		o.WorkDir = d
	}
	o.Root = *root
	if o.CrawlerBin == "" && !o.Cluster {
		o.CrawlerBin = filepath.Join(o.WorkDir, "crawler")
		cmd := exec.Command("go", "build", "-o", o.CrawlerBin, "./cmd/crawler")
		cmd.Dir, cmd.Stdout, cmd.Stderr = *root, stderr, stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(stderr, "freshness: go build ./cmd/crawler:", err)
			return 1
		}
	}
	o.Log = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := freshness.Compare(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := freshness.Table(stdout, res); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *jsonPath != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*jsonPath, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	code := 0
	for _, r := range append([]freshness.Run{res.Adaptive}, res.Uniform...) {
		if r.Error != "" || r.Violations > 0 {
			code = 1
		}
	}
	return code
}
