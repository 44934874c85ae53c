package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The watch on the console must catch what the console test relies on it to
// catch: console.error, an uncaught exception, an unhandled rejection and a
// blocked request to another origin; and nothing on a clean page.
func TestBrowserCatchesPageErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	pages := map[string]string{
		"/clean":   `<p id="ok">fine</p><script>console.log("a log line is not an error")</script>`,
		"/error":   `<p id="ok">x</p><script>console.error("boom-console")</script>`,
		"/throw":   `<p id="ok">x</p><script>setTimeout(function(){ throw new Error("boom-throw") }, 0)</script>`,
		"/reject":  `<p id="ok">x</p><script>Promise.reject(new Error("boom-reject"))</script>`,
		"/allowed": `<p id="ok">x</p><script>console.error("expected-noise")</script>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>t</title><link rel=icon href=data:,>%s", body)
	}))
	defer srv.Close()

	b := Start(t)
	b.Allow(regexp.MustCompile("expected-noise"))
	want := map[string]string{"/clean": "", "/error": "boom-console", "/throw": "boom-throw", "/reject": "boom-reject", "/allowed": ""}
	for _, path := range []string{"/clean", "/error", "/throw", "/reject", "/allowed"} {
		before := len(b.Errors())
		b.Do(t, 20*time.Second, chromedp.Navigate(srv.URL+path), chromedp.WaitVisible(chromedp.CSS("#ok")), chromedp.Sleep(300*time.Millisecond))
		got := strings.Join(b.Errors()[before:], "\n")
		switch {
		case want[path] == "" && got != "":
			t.Errorf("%s: errors %q, want none", path, got)
		case want[path] != "" && !strings.Contains(got, want[path]):
			t.Errorf("%s: errors %q, want one with %q", path, got, want[path])
		}
	}
	// The page may not reach the internet: the request fails in the browser.
	b.Do(t, 20*time.Second, chromedp.Navigate(srv.URL+"/clean"), chromedp.WaitVisible(chromedp.CSS("#ok")))
	res := Eval[string](t, b, `fetch("http://example.com/").then(() => "reached", (e) => "failed: " + e.message)`)
	if !strings.HasPrefix(res, "failed") {
		t.Errorf("a fetch of http://example.com/ from the page: %s, want it to fail", res)
	}

	dir := t.TempDir()
	t.Setenv(ArtifactsEnv, dir)
	png := b.Screenshot(t, ArtifactsDir(t, "browsertest"), "clean")
	data, err := os.ReadFile(png)
	if err != nil || !strings.HasPrefix(string(data), "\x89PNG") || filepath.Dir(png) != filepath.Join(dir, "browsertest") {
		t.Errorf("screenshot %s: %d bytes, err %v, want a PNG under %s", png, len(data), err, dir)
	}
}
