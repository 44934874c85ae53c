package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/report"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

const reportUsage = `usage: crawler report -data DIR [-json]

Writes the crawl report of the data folder DIR again, from its store as it is now:
DIR/report.json (the API's GET /api/v1/report) and DIR/report.html (the same as one
page that loads nothing), and prints their paths. Every stop of the crawler writes
them too. With -json it prints the JSON instead and writes nothing.
`

// runReport is crawler report: the report of a data folder, built as a stop
// builds it. It may run beside a crawler on the same folder (SQLite readers
// do not block its writer).
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawler report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data", "", "the crawl's data folder (as crawler -data)")
	asJSON := fs.Bool("json", false, "print the report's JSON to stdout and write no file")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), reportUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "crawler report: give the data folder with -data, and nothing else (-h for the flags)")
		return exitUsage
	}
	db := filepath.Join(*dir, "crawl.db")
	if _, err := os.Stat(db); err != nil {
		fmt.Fprintf(stderr, "crawler report: %s holds no crawl: %v\n", *dir, err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		fmt.Fprintf(stderr, "crawler report: %v\n", err)
		return exitError
	}
	defer st.Close()
	v, err := api.BuildReport(ctx, st, time.Now())
	if err == nil && *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(v)
	} else if err == nil {
		if err = report.Write(*dir, v, "written by crawler report"); err == nil {
			fmt.Fprintln(stdout, filepath.Join(*dir, report.HTMLFile))
			fmt.Fprintln(stdout, filepath.Join(*dir, report.JSONFile))
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "crawler report: %v\n", err)
		return exitError
	}
	return exitOK
}
