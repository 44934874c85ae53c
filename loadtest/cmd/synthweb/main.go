// Command synthweb serves the synthetic web of package synthweb on loopback
// and audits a crawler from the servers' side.
//
// Usage:
//
//	synthweb [flags] -- CMD ARGS...
//	synthweb [flags]
//
// With a command, synthweb starts the web, writes the seed URLs one per
// line to -seeds-file and the hosts file to -hosts-file-out, replaces every
// "{seeds}" in ARGS with the seeds file's path and every "{hosts-file}"
// with the hosts file's, and runs CMD as the crawler with stdout and stderr
// passed through. At -timeout, or on SIGINT/SIGTERM, CMD's process group
// gets SIGTERM and, 10 s later, SIGKILL. Without a command, synthweb prints
// the seeds file's path on the first line of stdout, the hosts file's on
// the second, and serves until SIGINT or SIGTERM. Either file is temporary,
// and removed at exit, when its flag is empty.
//
// With -addresses N the hosts are named h0001.synth.test, ... and served
// by the Host header on N loopback addresses; the hosts file (/etc/hosts
// format, "127.0.1.1 h0001.synth.test") is how the crawler resolves them.
// Without it every host is its own address and the hosts file is a
// comment only.
//
// Either way it then stops the web, audits the request log against the
// crawler's settings (-agent, -default-delay, -min-delay, -max-delay,
// -max-retries, and per server address -ip-concurrency and -ip-delay),
// prints the report on stdout and, with -report-json, writes it as JSON.
// The exit status is 0 when the crawler succeeded and the audit is clean,
// 1 when either failed, 2 for a usage or start-up error.
//
// With -change the pages change over compressed time (-time-scale and the
// -change-* flags), hosts answer conditional requests with 304, and the
// report adds the crawler's freshness and revisits, for a recrawling
// crawler, for example:
//
//	synthweb -hosts 50 -pages 40 -agent crawlcluster -default-delay 200ms -change -timeout 2m -- \
//	    crawler -data DIR -seeds {seeds} -allow-private-networks -default-delay 200ms
//
// and 200 hosts on one address, for a crawler's per-IP politeness:
//
//	synthweb -hosts 200 -addresses 1 -ip-concurrency 2 -ip-delay 50ms -- \
//	    crawler -data DIR -seeds {seeds} -hosts-file {hosts-file} -allow-private-networks
//
// With -apps N the last N hosts are application hosts, whose links only
// scripts build (inline JSON, a JSON API, a client-side router, an API
// robots.txt disallows, a script that never settles, one that allocates
// without end; see package synthweb), and the report adds their coverage
// per shape, the API, bundle, image, font and media requests, for a
// crawler that renders pages:
//
//	synthweb -hosts 12 -apps 6 -- crawler -data DIR -seeds {seeds} -allow-private-networks -render auto
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options is the command line.
type options struct {
	web        synthweb.Config
	audit      synthweb.AuditConfig
	seedsFile  string
	hostsFile  string
	timeout    time.Duration
	reportJSON string
	child      []string // CMD ARGS...; empty means serve until a signal
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	o := options{web: synthweb.DefaultConfig(), audit: synthweb.DefaultAuditConfig()}
	fs := flag.NewFlagSet("synthweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage:\n  synthweb [flags] -- CMD ARGS...   run CMD as the crawler ({seeds} in ARGS is the seeds file, {hosts-file} the hosts file), then audit\n"+
			"  synthweb [flags]                  print the seeds file's and the hosts file's paths, serve until SIGINT/SIGTERM, then audit\n\nFlags:\n")
		fs.PrintDefaults()
	}
	o.web.RegisterFlags(fs, "")
	o.audit.RegisterFlags(fs, "")
	fs.StringVar(&o.seedsFile, "seeds-file", "", "write the seed URLs here (default: a temporary file, removed at exit)")
	fs.StringVar(&o.hostsFile, "hosts-file-out", "", "write the hosts file (/etc/hosts format: the host names of -addresses and their addresses) here (default: a temporary file, removed at exit)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "stop CMD after this long (0: never)")
	fs.StringVar(&o.reportJSON, "report-json", "", "also write the audit report as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.child = fs.Args()
	switch {
	case o.timeout < 0:
		return o, fmt.Errorf("-timeout %v is negative", o.timeout)
	case len(o.child) > 0 && o.child[0] == "":
		return o, errors.New("empty command after --")
	}
	if err := o.web.Validate(); err != nil {
		return o, err
	}
	return o, o.audit.Validate()
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "synthweb: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	web, err := synthweb.Start(o.web)
	if err != nil {
		logger.Error("start web", "err", err)
		return 2
	}
	seeds, removeSeeds, err := writeFile(o.seedsFile, "synthweb-seeds-*.txt", "seeds", []byte(strings.Join(web.Seeds(), "\n")+"\n"))
	if err != nil {
		logger.Error("write seeds", "err", err)
		web.Close()
		return 2
	}
	defer removeSeeds()
	hosts, removeHosts, err := writeFile(o.hostsFile, "synthweb-hosts-*", "hosts file", []byte(web.HostsFile()))
	if err != nil {
		logger.Error("write hosts file", "err", err)
		web.Close()
		return 2
	}
	defer removeHosts()
	logger.Info("serving", "hosts", len(web.Hosts()), "addresses", o.web.Addresses, "first", web.Hosts()[0],
		"seeds_file", seeds, "hosts_file", hosts,
		"must_fetch", len(web.MustFetch()), "features", o.web.Features, "change", o.web.Change.Enabled, "apps", o.web.Apps)

	crawlerOK := true
	if len(o.child) == 0 {
		fmt.Fprintln(stdout, seeds)
		fmt.Fprintln(stdout, hosts)
		<-ctx.Done()
		logger.Info("stopping on signal")
	} else {
		expand := strings.NewReplacer("{seeds}", seeds, "{hosts-file}", hosts)
		args := make([]string, len(o.child)-1)
		for i, a := range o.child[1:] {
			args[i] = expand.Replace(a)
		}
		logger.Info("running crawler", "cmd", o.child[0], "args", args, "timeout", o.timeout)
		start := time.Now()
		err := runCrawler(ctx, o.timeout, o.child[0], args, stdout, stderr)
		if err != nil {
			crawlerOK = false
			logger.Error("crawler failed", "err", err, "after", time.Since(start).Round(time.Millisecond))
		} else {
			logger.Info("crawler finished", "after", time.Since(start).Round(time.Millisecond))
		}
	}

	// Close waits for requests in flight, so the log is complete.
	if err := web.Close(); err != nil {
		logger.Error("stop web", "err", err)
	}
	rep := web.Audit(o.audit)
	fmt.Fprint(stdout, rep.String())
	if o.reportJSON != "" {
		if err := writeJSON(o.reportJSON, rep); err != nil {
			logger.Error("write report", "err", err)
			return 1
		}
	}
	if !crawlerOK || !rep.OK() {
		return 1
	}
	return 0
}

// writeFile writes body, the what of the run, to path, or to a new
// temporary file named after pattern when path is empty, in which case
// remove deletes it.
func writeFile(path, pattern, what string, body []byte) (written string, remove func(), err error) {
	if path != "" {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return "", nil, fmt.Errorf("write %s to %s: %w", what, path, err)
		}
		return path, func() {}, nil
	}
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", nil, fmt.Errorf("create %s: %w", what, err)
	}
	remove = func() { os.Remove(f.Name()) }
	if _, err := f.Write(body); err != nil {
		f.Close()
		remove()
		return "", nil, fmt.Errorf("write %s to %s: %w", what, f.Name(), err)
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, fmt.Errorf("write %s to %s: %w", what, f.Name(), err)
	}
	return f.Name(), remove, nil
}

func writeJSON(path string, rep synthweb.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report to %s: %w", path, err)
	}
	return nil
}
