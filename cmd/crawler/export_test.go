package main

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/warciotest"
	"github.com/crawlcluster/crawler/pkg/wacz"
)

// TestExportWACZ crawls the requisite site with -requisites, exports it
// with `crawler export -wacz` and judges the package: datapackage.json's
// sizes and SHA-256 digests hold, the CDXJ index is sorted and has one
// line per response and revisit record (and none other), every requisite
// and page of the crawl is in it, pages.jsonl lists the pages with the
// seed marked, and warcio.js reads every record of every WARC in it with
// no digest mismatch.
func TestExportWACZ(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	site := startRequisiteSite(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	crawlRequisiteSite(t, site, data, "-requisites")
	out := filepath.Join(dir, "crawl.wacz")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, crawlerBinary(t), "export", "-wacz", out, "-data", data).CombinedOutput(); err != nil {
		t.Fatalf("crawler export: %v\n%s", err, b)
	}
	rep := verifyFile(t, out)
	t.Logf("package: %d segments, %d response and revisit records, %d index lines, %d pages", rep.Segments, rep.Records, rep.Lines, rep.Pages)
	if len(rep.Problems) > 0 {
		t.Fatalf("package problems:\n%s", strings.Join(rep.Problems, "\n"))
	}
	// The hub and its five pages; the "image" that answers HTML is a
	// requisite, not a page.
	if rep.Pages != 6 || rep.Segments == 0 || rep.Lines != rep.Records {
		t.Errorf("package: %+v; want 6 pages and one index line per record", rep)
	}

	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	index, pages := "", ""
	for _, f := range zr.File {
		switch {
		case f.Name == "indexes/index.cdxj":
			index = readZipFile(t, f)
		case f.Name == "pages/pages.jsonl":
			pages = readZipFile(t, f)
		case strings.HasPrefix(f.Name, "archive/"):
			path := filepath.Join(dir, filepath.Base(f.Name))
			if err := os.WriteFile(path, []byte(readZipFile(t, f)), 0o644); err != nil {
				t.Fatal(err)
			}
			sum := warciotest.Check(t, path)
			if len(sum.PayloadDigestMismatches) > 0 || len(sum.BlockDigestMismatches) > 0 || len(sum.Warnings) > 0 {
				t.Errorf("warcio.js on %s: payload mismatches %s, block mismatches %s, warnings %v", f.Name, sum.PayloadDigestMismatches, sum.BlockDigestMismatches, sum.Warnings)
			}
			if sum.Records == 0 {
				t.Errorf("warcio.js read no record of %s", f.Name)
			}
		}
	}
	for _, p := range append([]string{"/index.html"}, requisitePaths...) {
		if !strings.Contains(index, `"url":"`+site.main.URL+p+`"`) {
			t.Errorf("index has no line for %s", p)
		}
	}
	if !strings.Contains(pages, `"url":"`+site.main.URL+`/index.html","ts":`) || strings.Count(pages, `"seed":true`) != 1 || strings.Contains(pages, "fake.html") {
		t.Errorf("pages.jsonl:\n%s", pages)
	}
}

func verifyFile(t *testing.T, path string) wacz.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wacz.Verify(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func readZipFile(t *testing.T, f *zip.File) string {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
