package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/internal/officetest"
	"github.com/crawlcluster/crawler/internal/pdftest"
	"github.com/crawlcluster/crawler/pkg/console/consoletest"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
)

// TestCrawlPDFs crawls a site of PDFs on loopback: generated ones (text,
// links, compressed content, a password), the PDFs Debian ships in its doc
// packages when installed, and a docx and an odt. Judged from the server's
// log (the links found only in documents were requested), from the crawl's
// search index (their text is found, the encrypted one's is not), and from
// the encrypted PDF's URL page, in the API and the console, which says why
// it was not read.
func TestCrawlPDFs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	files := map[string][]byte{
		"/guide.pdf": pdftest.Make(pdftest.Doc{Title: "Walrus field guide", Pages: []string{"Tusks and whiskers", "Pinnipeds of the Arctic"},
			Links: []string{"/from-pdf.html", "/second.pdf"}}),
		"/second.pdf":     pdftest.Make(pdftest.Doc{Pages: []string{"Narwhal migration routes"}, Compress: true}),
		"/locked.pdf":     pdftest.Make(pdftest.Doc{Pages: []string{"zebra secrets"}, Encrypted: true}),
		"/from-pdf.html":  []byte(`<html><head><title>Reached from a PDF</title></head><body>Only a PDF links here: kittiwake.</body></html>`),
		"/notes.docx":     officetest.Make(officetest.Doc{Format: "docx", Title: "Puffin notes", Paragraphs: []string{"Sandeels for the chicks"}, Links: []string{"/from-docx.html"}}),
		"/notes.odt":      officetest.Make(officetest.Doc{Format: "odt", Paragraphs: []string{"Gannets diving offshore"}}),
		"/from-docx.html": []byte(`<html><body>Only a docx links here: guillemot.</body></html>`),
	}
	index := `<html><body><a href="/guide.pdf">guide</a> <a href="/locked.pdf">locked</a> <a href="/notes.docx">docx</a> <a href="/notes.odt">odt</a>`
	debian := map[string]string{"/libtasn1.pdf": "/usr/share/doc/libtasn1-doc/libtasn1.pdf", "/mime.pdf": "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"}
	for path, file := range debian {
		if b, err := os.ReadFile(file); err == nil {
			files[path] = b
			index += `<a href="` + path + `">` + path + `</a>`
		} else {
			t.Logf("%s: %v (not installed)", file, err)
		}
	}
	files["/index.html"] = []byte(index + `</body></html>`)
	var mu sync.Mutex
	var requested []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requested = append(requested, r.URL.Path)
		mu.Unlock()
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		switch filepath.Ext(r.URL.Path) {
		case ".pdf":
			w.Header().Set("Content-Type", "application/pdf")
		case ".docx":
			w.Header().Set("Content-Type", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
		case ".odt":
			w.Header().Set("Content-Type", "application/octet-stream") // the name says what it is
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()

	data := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, crawlerBinary(t), "-data", data, "-index", "-user-agent", agent+"/1.0 (+http://example.test/bot)",
		"-allow-private-networks", "-exit-when-idle", "-default-delay", "20ms", "-min-delay", "20ms", "-max-duration", "2m",
		srv.URL+"/index.html").CombinedOutput()
	if err != nil {
		t.Fatalf("crawl: %v\n%s", err, docSiteTail(out, 30))
	}
	mu.Lock()
	for _, p := range []string{"/from-pdf.html", "/second.pdf", "/from-docx.html"} {
		if !slices.Contains(requested, p) {
			t.Errorf("%s, linked only from a PDF, was not requested; requests: %v", p, requested)
		}
	}
	mu.Unlock()

	db, err := sqlite.Open(context.Background(), filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]string{"pinnipeds arctic": "/guide.pdf", "narwhal migration": "/second.pdf", "kittiwake": "/from-pdf.html",
		"sandeels chicks": "/notes.docx", "gannets diving": "/notes.odt", "guillemot": "/from-docx.html"}
	if _, ok := files["/libtasn1.pdf"]; ok {
		want["distinguished encoding rules"] = "/libtasn1.pdf"
	}
	if _, ok := files["/mime.pdf"]; ok {
		want["shared mime database"] = "/mime.pdf"
	}
	for q, path := range want {
		urls, err := storetest.SearchURLs(db, q)
		if err != nil || len(urls) == 0 || urls[0] != srv.URL+path {
			t.Errorf("search %q: %v %v, want %s first", q, urls, err, path)
		}
	}
	if urls, err := storetest.SearchURLs(db, "zebra"); err != nil || len(urls) != 0 {
		t.Errorf("the encrypted PDF's text is found: %v %v", urls, err)
	}

	db.Close()

	// The encrypted PDF's URL page says why it has no text: the same
	// folder served, in the API and in the console.
	addr := freeLoopbackAddr(t)
	p := startCrawler(t, []string{"-data", data, "-user-agent", agent + "/1.0 (+http://example.test/bot)", "-allow-private-networks", "-listen", addr})
	c := &consoletest.Console{Base: "http://" + addr}
	waitAPI(t, p, c.Base)
	locked := srv.URL + "/locked.pdf"
	caps := asSlice(c.Get(t, "/api/v1/urls?url="+url.QueryEscape(locked)).(map[string]any)["captures"])
	if len(caps) != 1 || caps[0].(map[string]any)["document_reason"] != "pdf_encrypted" {
		t.Errorf("%s captures %v, want one with document_reason pdf_encrypted", locked, caps)
	}
	c.B = browsertest.Start(t)
	c.B.Do(t, 30*time.Second, chromedp.Navigate(c.Base+"/#/urls"), chromedp.WaitVisible(chromedp.CSS(`[data-page="urls"] form`)))
	c.Open(t, "#/urls/"+url.PathEscape(locked), `[data-page="urls"] [data-api][data-loaded]`, `span.doc-reason`)
	if shown := browsertest.Eval[string](t, c.B, `document.querySelector('span.doc-reason').textContent + ' | ' + document.querySelector('span.doc-reason').title`); !strings.HasPrefix(shown, "pdf_encrypted | ") || !strings.Contains(shown, "password") {
		t.Errorf("console URL page shows %q, want pdf_encrypted with its description", shown)
	}
	c.B.CheckNoErrors(t)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := p.wait(t, time.Minute); err != nil {
		t.Errorf("crawler exited with %v after SIGTERM", err)
	}

	// The same index, exported for OpenSearch.
	nd, err := exec.CommandContext(ctx, crawlerBinary(t), "export", "-opensearch", "-data", data, "-index", "pdfs").Output()
	if err != nil {
		t.Fatalf("crawler export: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(nd), "\n"), "\n")
	var guide bool
	for i := 1; i < len(lines); i += 2 {
		if !strings.HasPrefix(lines[i-1], `{"index":{"_index":"pdfs","_id":"`) {
			t.Fatalf("line %d %q: want a bulk index action", i, lines[i-1])
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &doc); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		guide = guide || doc["url"] == srv.URL+"/guide.pdf" && strings.Contains(doc["text"].(string), "Pinnipeds") && doc["title"] == "Walrus field guide"
	}
	if len(lines)%2 != 0 || !guide {
		t.Errorf("export: %d lines, guide.pdf with its text and title: %v", len(lines), guide)
	}
	for _, args := range [][]string{{"export"}, {"export", "-opensearch"}, {"export", "-opensearch", "-data", t.TempDir()}} {
		err := exec.Command(crawlerBinary(t), args...).Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUsage {
			t.Errorf("crawler %v: %v, want exit status %d", args, err, exitUsage)
		}
	}
}
