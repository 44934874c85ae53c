package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/crawlcluster/crawler/pkg/export"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// exportFormat is one format of `crawler export`, chosen by its flag; a
// format is added as one more entry of exportFormats.
type exportFormat struct {
	flag, usage string
	run         func(ctx context.Context, o exportOptions) error
}

// exportOptions are the flags every format reads.
type exportOptions struct {
	data  string // the crawl's data folder
	out   string // file to write; "" or "-" = standard output
	index string // the OpenSearch index the documents go to
}

var exportFormats = []exportFormat{
	{"opensearch", "write the full-text index as NDJSON for the OpenSearch / Elasticsearch _bulk API", exportOpenSearch},
}

const openSearchUsage = `usage: crawler export -FORMAT -data DIR [-out FILE] [flags]

Writes what the crawl in DIR holds in FORMAT. It reads the folder's store and
can run beside the crawl. Exit status 0 done, 1 an error, 2 usage.

`

// runExportOpenSearch is `crawler export -opensearch`.
func runExportOpenSearch(args []string) int {
	fs := flag.NewFlagSet("crawler export", flag.ContinueOnError)
	var o exportOptions
	fs.StringVar(&o.data, "data", "", "the crawl's data folder (required)")
	fs.StringVar(&o.out, "out", "", "file to write (default: standard output)")
	fs.StringVar(&o.index, "index", "crawl", "-opensearch: the index the documents go to (_index of each action)")
	chosen := make([]*bool, len(exportFormats))
	for i, f := range exportFormats {
		chosen[i] = fs.Bool(f.flag, false, f.usage)
	}
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), openSearchUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	var format *exportFormat
	for i := range exportFormats {
		if *chosen[i] {
			if format != nil {
				fmt.Fprintf(os.Stderr, "crawler export: -%s and -%s: choose one format\n", format.flag, exportFormats[i].flag)
				return exitUsage
			}
			format = &exportFormats[i]
		}
	}
	switch {
	case format == nil:
		fmt.Fprintln(os.Stderr, "crawler export: no format; one of:")
		for _, f := range exportFormats {
			fmt.Fprintf(os.Stderr, "  -%s  %s\n", f.flag, f.usage)
		}
		return exitUsage
	case o.data == "":
		fmt.Fprintln(os.Stderr, "crawler export: -data is required")
		return exitUsage
	case fs.NArg() > 0:
		fmt.Fprintf(os.Stderr, "crawler export: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if _, err := os.Stat(filepath.Join(o.data, "crawl.db")); err != nil {
		fmt.Fprintf(os.Stderr, "crawler export: %s holds no crawl: %v\n", o.data, err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := format.run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "crawler export: %v\n", err)
		return exitError
	}
	return exitOK
}

// exportOpenSearch writes the full-text index in OpenSearch bulk format.
func exportOpenSearch(ctx context.Context, o exportOptions) (err error) {
	db, err := sqlite.Open(ctx, filepath.Join(o.data, "crawl.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	var w io.Writer = os.Stdout
	if o.out != "" && o.out != "-" {
		f, err := os.Create(o.out)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		w = f
	}
	n, err := export.OpenSearch(ctx, db.Search(), o.index, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "crawler export: %d pages written\n", n)
	return nil
}
