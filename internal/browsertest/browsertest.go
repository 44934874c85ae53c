// Package browsertest starts a headless Chromium for tests that check a page in a
// real browser (the operator console): launched with flags that keep it off the
// internet and out of the user's profile, its console watched so that a test can
// fail on any error the page logs or throws, and screenshots kept as artifacts.
//
// Tests skip when Chromium is not installed, unless CRAWLER_REQUIRE_BROWSER=1
// (CI sets it, so a missing browser fails there instead of passing silently).
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/modroot"
)

// RequireEnv makes a missing browser a failure instead of a skip.
const RequireEnv = "CRAWLER_REQUIRE_BROWSER"

// ArtifactsEnv names the folder screenshots go to, instead of test-artifacts/ at
// the module's root.
const ArtifactsEnv = "CRAWLER_ARTIFACTS"

// Candidates are the Chromium binaries looked for, Debian's first.
var Candidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"}

// Browser is one test's headless Chromium with one tab.
type Browser struct {
	ctx context.Context

	mu      sync.Mutex
	errs    []string
	allowed []*regexp.Regexp
}

// Need returns the Chromium to run, or skips t when there is none (fails
// it under CRAWLER_REQUIRE_BROWSER=1): for tests that start the crawler's
// own browser (the render tier) rather than a tab of their own.
func Need(t testing.TB) string {
	t.Helper()
	path := findChromium()
	if path == "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("no Chromium found (%s) and %s=1", strings.Join(Candidates, ", "), RequireEnv)
		}
		t.Skipf("no Chromium found (%s); set %s=1 to fail instead", strings.Join(Candidates, ", "), RequireEnv)
	}
	return path
}

// Start launches Chromium for t and opens a tab, or skips t when there is none.
// The browser is stopped when t ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	path := Need(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("metrics-recording-only", true),
		// Nothing but loopback: every other request goes to a proxy that is not
		// there (Chromium sends loopback addresses directly), so it fails
		// without a name being resolved.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	b := &Browser{ctx: ctx}
	// The first call starts the browser and binds it to its context, so it
	// gets the tab's own (a timeout would stop the browser with it); a browser
	// that hangs on start is stopped by a timer instead. Console then
	// subscribes before any page loads.
	hung := time.AfterFunc(60*time.Second, cancel)
	err := chromedp.Do(ctx)
	hung.Stop()
	if err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type != chromedp.ConsoleError && !m.IsException() {
				continue
			}
			b.mu.Lock()
			b.errs = append(b.errs, describe(m))
			b.mu.Unlock()
		}
	}()
	return b
}

func describe(m chromedp.ConsoleMessage) string {
	s := m.String()
	if m.Source != "" {
		s = "[" + m.Source + "] " + s
	}
	if m.URL != "" {
		s += fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
	}
	if m.Exception != nil && m.Exception.Exception != nil && m.Exception.Exception.Description != "" {
		s += "\n" + m.Exception.Exception.Description
	}
	return s
}

func findChromium() string {
	for _, c := range Candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// Context is the tab's context, for chromedp.Do and chromedp.Run.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs actions in the tab with a timeout, failing t on an error.
func (b *Browser) Do(t testing.TB, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("not done within %v: %w", timeout, err)
		}
		t.Fatalf("browser: %v\npage errors so far: %q\npage text: %.3000s", err, b.Errors(), b.text())
	}
}

// text is what the page shows, for a failure's message.
func (b *Browser) text() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return v
}

// Eval evaluates a JavaScript expression in the page into a T.
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Allow stops messages matching re from counting as errors: a test that provokes
// an error answer on purpose (a 404 the browser logs) names it here.
func (b *Browser) Allow(re *regexp.Regexp) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, re)
}

// Errors returns every console error and uncaught exception of the page so far,
// less the allowed ones.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
next:
	for _, e := range b.errs {
		for _, re := range b.allowed {
			if re.MatchString(e) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// CheckNoErrors fails t with every console error and exception seen so far.
func (b *Browser) CheckNoErrors(t testing.TB) {
	t.Helper()
	for _, e := range b.Errors() {
		t.Errorf("page console: %s", e)
	}
}

// Screenshot saves a PNG of the whole page as name.png in dir and returns its path.
func (b *Browser) Screenshot(t testing.TB, dir, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ArtifactsDir returns the folder for a test's artifacts, created: sub under
// $CRAWLER_ARTIFACTS when set, else under test-artifacts/ at the module's root,
// which CI keeps and git ignores.
func ArtifactsDir(t testing.TB, sub string) string {
	t.Helper()
	root := os.Getenv(ArtifactsEnv)
	if root == "" {
		mod, err := modroot.Find()
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(mod, "test-artifacts")
	}
	dir := filepath.Join(root, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
