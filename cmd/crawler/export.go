package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/crawlcluster/crawler/internal/version"
	"github.com/crawlcluster/crawler/pkg/backend"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/wacz"
)

const exportUsage = `usage: crawler export -wacz FILE -data DIR [-title T]
       crawler export -wacz FILE -db URL -blobs URL [-title T]
       crawler export -opensearch -data DIR [-out FILE] [-index NAME]

Writes a crawl as a WACZ package (archive/, indexes/index.cdxj,
pages/pages.jsonl, datapackage.json) that ReplayWeb.page and pywb open, then
reads the package back and checks its digests and index: the crawl in the
data folder DIR, or a cluster's, from its metadata store (-db, for the
pages) and its blob store (-blobs, folder or S3, for the WARC segments and
their indexes). Run it on a crawl that is not running: a segment being
written has no index yet.
`

// runExport is `crawler export`: exit 0 written and checked, 1 an error, 2
// usage.
func runExport(args []string) int {
	for _, a := range args {
		if a == "-opensearch" || a == "--opensearch" {
			return runExportOpenSearch(args)
		}
	}
	fs := flag.NewFlagSet("crawler export", flag.ContinueOnError)
	out := fs.String("wacz", "", "the WACZ file to write (required)")
	data := fs.String("data", "", "the crawl's data folder (the crawler command's crawl)")
	db := fs.String("db", "", "a cluster's metadata store, postgres://... (with -blobs, instead of -data)")
	blobs := fs.String("blobs", "", "a cluster's blob store, s3://bucket/prefix?... or file:///dir (with -db)")
	title := fs.String("title", "", "the package's title (default: the data folder's name)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), exportUsage+"\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *out == "" || fs.NArg() > 0 || (*data == "") == (*db == "" || *blobs == "") || (*data != "" && (*db != "" || *blobs != "")) {
		fmt.Fprintln(os.Stderr, "crawler export: want -wacz FILE and either -data DIR or -db URL with -blobs URL")
		return exitUsage
	}
	src := exportSource{db: *db, blobs: *blobs}
	if *data != "" {
		abs, err := filepath.Abs(*data)
		if err == nil {
			_, err = os.Stat(filepath.Join(abs, "crawl.db"))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "crawler export: no crawl in %s: %v\n", *data, err)
			return exitUsage
		}
		src = exportSource{db: "sqlite://" + filepath.Join(abs, "crawl.db"), blobs: "file://" + filepath.Join(abs, "warc")}
	}
	if *title == "" {
		*title = "crawl"
		if *data != "" {
			*title = filepath.Base(filepath.Clean(*data))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := exportWACZ(ctx, *out, src, *title); err != nil {
		fmt.Fprintf(os.Stderr, "crawler export: %v\n", err)
		return exitError
	}
	return exitOK
}

// exportSource names the stores a crawl is exported from: a data folder's
// as URLs, or a cluster's.
type exportSource struct{ db, blobs string }

func exportWACZ(ctx context.Context, out string, src exportSource, title string) error {
	db, err := backend.OpenStore(ctx, src.db)
	if err != nil {
		return err
	}
	defer db.Close()
	pages, err := exportPages(ctx, db)
	if err != nil {
		return err
	}
	var arc wacz.Archive
	if dir, ok := backend.IsLocalBlobs(src.blobs); ok {
		arc = wacz.Dir(dir)
	} else {
		bs, err := backend.OpenBlobs(ctx, src.blobs)
		if err != nil {
			return err
		}
		defer bs.Close()
		arc = &wacz.Objects{Store: bs}
	}
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	sum, err := wacz.Write(ctx, f, arc, pages, wacz.Options{Title: title, Software: version.Product("crawler")})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := verifyWACZ(tmp); err != nil {
		return fmt.Errorf("check %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s: %d segments, %d index lines, %d pages (%d segments indexed now, for want of their own index)\n",
		out, sum.Segments, sum.Records, sum.Pages, sum.Indexed)
	return nil
}

func verifyWACZ(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	rep, err := wacz.Verify(f, st.Size())
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return errors.New(strings.Join(rep.Problems, "; "))
	}
	return nil
}

// exportPages lists the crawl's HTML pages, one entry per URL (its first
// capture answered 200), seeds marked: requisites, sitemaps and
// sub-resources are no pages to start from.
func exportPages(ctx context.Context, db store.Reader) ([]wacz.Page, error) {
	var pages []wacz.Page
	seen := map[string]bool{}
	err := db.Captures(ctx, func(c store.Capture) error {
		if c.Status != 200 || seen[c.URL] || !isHTML(c.ContentType) {
			return nil
		}
		seen[c.URL] = true
		pages = append(pages, wacz.Page{ID: c.FetchID, URL: c.URL, TS: c.FetchedAt, Title: c.Title})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list captures: %w", err)
	}
	kept := pages[:0]
	for _, p := range pages {
		info, err := db.URLInfo(ctx, p.URL)
		if err != nil {
			return nil, fmt.Errorf("look up %s: %w", p.URL, err)
		}
		if info.URL != nil && info.URL.Kind != store.KindPage {
			continue
		}
		p.Seed = info.URL != nil && info.URL.Depth == 0
		kept = append(kept, p)
	}
	return kept, nil
}

func isHTML(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "text/html" || mt == "application/xhtml+xml"
}
