package main

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/console/consoletest"
)

// TestConsole drives the operator console of a running crawl of the synthetic
// web in headless Chromium, as an operator would: logs in through the form,
// opens every page (a screenshot of each goes to test-artifacts/console/),
// checks that the numbers shown are the API's and that each fits its box at
// every width of consoletest.Widths, submits a seed through the form
// and finds it in the store, pauses a host and sees in the web's log that it
// gets no request while paused, and fails on any error in the page's console.
func TestConsole(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl in a browser; skipped with -short")
	}
	b := browsertest.Start(t)
	shots := browsertest.ArtifactsDir(t, "console")

	cfg := synthweb.DefaultConfig()
	// 8 hosts x 60 pages at 300 ms a page: each host takes 18 s or more, long
	// enough to pause one with pages still queued.
	cfg.Hosts, cfg.PagesPerHost = 8, 60
	// The special cases and traps give the pages what overflowed before:
	// robots.txt rules, exclusions by reason, busy URL patterns.
	cfg.Features, cfg.Traps = true, true
	w, seeds := startWeb(t, cfg)
	const token = "console-test-token"
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# the console test's operator\n"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	args := crawlArgs(filepath.Join(t.TempDir(), "data"), seeds, "-listen", addr, "-api-tokens-file", tokens,
		"-default-delay", "300ms")
	args = without(args, "-exit-when-idle") // the console is watched after the crawl is done
	p := startCrawler(t, args)
	t.Cleanup(func() {
		// CI once saw the pause not reach the frontier in 30 s; what the
		// crawler said about its controls and any trouble is the clue.
		if t.Failed() {
			t.Logf("the crawler's warnings, errors and control lines:\n%s", p.grep("level=WARN", "level=ERROR", "control", "pause"))
		}
	})
	c := &consoletest.Console{B: b, Base: "http://" + addr, Token: token}
	waitAPI(t, p, c.Base)

	// The shell is open; the data is not.
	c.B.Do(t, 30*time.Second, chromedp.Navigate(c.Base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.Screenshot(t, shots, "login")
	resp, err := http.Get(c.Base + "/api/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/stats without a token: %s, want 401", resp.Status)
	}
	c.Login(t)
	b.Screenshot(t, shots, "overview-running")

	// Control: a seed through the form, and a host paused while it has pages queued.
	controls := c.Serves(t, "/api/v1/hosts/{host}/pause")
	if !controls {
		t.Log("the control routes are not served yet: the pause, exclusion and audit parts do not run")
		b.Allow(regexp.MustCompile(`(?i)status of 404|status of 405`))
	}
	c.Open(t, "#/control", "#seed-form")
	newSeed := "http://" + w.Hosts()[1] + "/console-seed?from=form"
	c.B.Do(t, 30*time.Second,
		chromedp.SendKeys(chromedp.CSS("#seed-urls"), newSeed),
		chromedp.Click(chromedp.CSS("#seed-submit")),
		chromedp.WaitVisible(chromedp.CSS(`#seed-result [data-status]`)),
	)
	status := browsertest.Eval[string](t, b, `document.querySelector('#seed-result [data-status]').dataset.status`)
	if status != "accepted" {
		t.Errorf("seed %s through the form: %q, want accepted", newSeed, status)
	}
	paused := w.Hosts()[0]
	var pausedAt, resumedAt time.Time
	if controls {
		c.B.Do(t, 30*time.Second,
			chromedp.SetValue(chromedp.CSS("#host-name"), paused),
			chromedp.Click(chromedp.CSS("#host-pause")),
			chromedp.WaitVisible(chromedp.CSS(`#host-result [data-result]`)),
		)
		shown := time.Now()
		// The window starts when the fetcher has the pause (it polls the
		// controls about once a second, later under load), a request it
		// had leased already aside (controlGrace).
		pausedAt = applied(t, "the host's pause", hostsPaused(t, c.Base, 1))
		t.Logf("the fetcher had the pause %v after the page showed it", pausedAt.Sub(shown).Round(time.Millisecond))
		b.Screenshot(t, shots, "control")
		resumeAt := pausedAt.Add(6 * time.Second)
		time.Sleep(controlGrace)
		steerThroughConsole(t, c, w, paused)
		time.Sleep(time.Until(resumeAt))
		// The window ends when the resume is sent, not when the page shows its
		// answer: a fetcher may poll the new version before the browser has
		// rendered the result (CI saw a request 0.12 s after the click).
		resumedAt = time.Now()
		c.B.Do(t, 30*time.Second,
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#host-result').replaceChildren()`),
			chromedp.SetValue(chromedp.CSS("#host-name"), paused),
			chromedp.Click(chromedp.CSS("#host-resume")),
			chromedp.WaitVisible(chromedp.CSS(`#host-result [data-result]`)),
		)
	} else {
		b.Screenshot(t, shots, "control")
	}

	// Mid-crawl, for the README (docs/img/console.png is a copy).
	c.Open(t, "#/overview", `[data-page="overview"] [data-api][data-loaded]`)
	c.Refreshed(t)
	c.CheckLayout(t, shots, "overview-busy")

	waitIdle(t, w, 2*time.Minute, operator{base: c.Base, token: token})

	if controls {
		var during, after int
		for _, r := range w.Requests() {
			if r.Host != paused {
				continue
			}
			switch {
			case r.Start.After(pausedAt.Add(controlGrace)) && r.Start.Before(resumedAt):
				during++
				t.Errorf("request to paused host %s at +%v after the pause: %s", paused, r.Start.Sub(pausedAt).Round(time.Millisecond), r.Target)
			case r.Start.After(resumedAt):
				after++
			}
		}
		t.Logf("paused host %s: %d requests while paused, %d after the resume", paused, during, after)
		if after == 0 {
			t.Errorf("host %s got no request after its resume: it had nothing queued, so the pause proved nothing", paused)
		}
		c.Open(t, "#/control", "#audit[data-loaded]")
		audit := browsertest.Eval[string](t, b, `document.querySelector('#audit').textContent`)
		if !strings.Contains(audit, paused) {
			t.Errorf("the audit log on the control page does not name %s: %.300s", paused, audit)
		}
		c.CheckLayout(t, shots, "control-audit")
	}

	// Idle: every number must be the API's.
	c.WaitRatesSettled(t, 30*time.Second)
	c.Open(t, "#/overview", `[data-page="overview"] [data-api][data-loaded]`)
	c.Refreshed(t)
	n := c.CheckNumbers(t, consoletest.Tolerance{Float: 0.1})
	t.Logf("overview: %d numbers match the API", n)
	if n < 10 {
		t.Errorf("overview shows %d numbers from the API, want at least 10", n)
	}
	c.CheckLayout(t, shots, "overview")
	// The one fetcher holds every partition of crawl.urls (the page said 0).
	if n := browsertest.Eval[string](t, b, `(() => {
		const h = Array.from(document.querySelectorAll('[data-page="overview"] h3')).find((x) => x.textContent.startsWith('fetchers'));
		const row = h && h.nextElementSibling && h.nextElementSibling.nextElementSibling.querySelector('tbody tr');
		return row ? row.children[2].textContent : 'no fetchers table';
	})()`); n != "256" {
		t.Errorf("the workers card shows %q partitions for the embedded fetcher, want 256", n)
	}

	if c.Serves(t, "/api/v1/hosts") {
		t.Logf("hosts: %d numbers match the API", c.CheckHosts(t, consoletest.Tolerance{Float: 0.1}))
		c.CheckLayout(t, shots, "hosts")
	}
	c.Open(t, "#/hosts/"+url.PathEscape(paused), `[data-page="hosts"] [data-api][data-loaded]`)
	t.Logf("host page: %d numbers match the API", c.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}))
	c.CheckLayout(t, shots, "host")
	ruled := hostWithRules(t, c, w.Hosts())
	c.Open(t, "#/hosts/"+url.PathEscape(ruled), `[data-page="hosts"] [data-api][data-loaded]`)
	c.CheckLayout(t, shots, "host-robots")

	// A URL through the search box.
	seed := w.Seeds()[2]
	c.Open(t, "#/urls", `[data-page="urls"] input[type=search]`)
	c.B.Do(t, 30*time.Second,
		chromedp.SendKeys(chromedp.CSS(`[data-page="urls"] input[type=search]`), seed),
		chromedp.Click(chromedp.CSS(`[data-page="urls"] form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-page="urls"] [data-api][data-loaded]`)),
	)
	page := browsertest.Eval[string](t, b, `document.querySelector('[data-page="urls"] [data-api]').textContent`)
	info := c.Get(t, "/api/v1/urls?url="+url.QueryEscape(seed))
	if norm, _ := consoletest.Lookup(info, "/normalized"); norm == nil || !strings.Contains(page, norm.(string)) {
		t.Errorf("URL page does not show the normalized form %v", norm)
	}
	if st, _ := consoletest.Lookup(info, "/state"); st != nil && !strings.Contains(page, st.(string)) {
		t.Errorf("URL page does not show the state %v", st)
	}
	t.Logf("URL page: %d numbers match the API", c.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}))
	c.CheckLayout(t, shots, "url")

	// A redirect's page says where it went, its target its one out-link.
	hop := "http://" + w.Hosts()[0] + "/chain/1"
	c.Open(t, "#/urls/"+url.PathEscape(hop), `[data-page="urls"] [data-api][data-loaded]`)
	page = browsertest.Eval[string](t, b, `document.querySelector('[data-page="urls"] [data-api]').textContent`)
	info = c.Get(t, "/api/v1/urls?url="+url.QueryEscape(hop))
	if loc, _ := consoletest.Lookup(info, "/location"); loc == nil || !strings.Contains(page, loc.(string)) {
		t.Errorf("the redirect %s: location %v, not on its page", hop, loc)
	}
	if n, _ := consoletest.Lookup(info, "/links/out_count"); n != 1.0 || !strings.Contains(page, "1 link: the redirect's target") {
		t.Errorf("the redirect %s: %v out-links, page %.400q; want its target as its one out-link", hop, n, page)
	}
	c.CheckLayout(t, shots, "url-redirect")

	// The crawl log, filtered through its form: only the host's captures.
	c.Open(t, "#/log", `[data-page="log"] #crawl-log[data-loaded]`)
	c.CheckLayout(t, shots, "log")
	logged := w.Hosts()[2]
	c.B.Do(t, 30*time.Second,
		chromedp.SetValue(chromedp.CSS("#log-host"), logged),
		chromedp.SetValue(chromedp.CSS("#log-status"), "2xx"),
		chromedp.Click(chromedp.CSS("#log-filter")),
		chromedp.WaitVisible(chromedp.CSS(`#crawl-log[data-api*="status=2xx"][data-loaded] table`)),
	)
	rows := browsertest.Eval[[]string](t, b, `Array.from(document.querySelectorAll('#crawl-log tbody tr')).map((tr) => tr.textContent)`)
	for _, r := range rows {
		if !strings.Contains(r, "http://"+logged+"/") {
			t.Errorf("the crawl log filtered to %s shows %q", logged, r)
		}
	}
	if n := c.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}); len(rows) == 0 || n < len(rows) {
		t.Errorf("the crawl log filtered to %s: %d rows, %d numbers matching the API", logged, len(rows), n)
	}

	// The report: its numbers are the API's, and they fit.
	c.Open(t, "#/report", `[data-page="report"] [data-api][data-loaded]`)
	if n := c.CheckNumbers(t, consoletest.Tolerance{Float: 0.1}); n < 20 {
		t.Errorf("the report page shows %d numbers from the API, want 20 or more", n)
	}
	c.CheckLayout(t, shots, "report-page")

	// The seed from the form is in the store.
	if status, v := c.Call(t, "GET", "/api/v1/urls?url="+url.QueryEscape(newSeed)); status != 200 {
		t.Errorf("seed submitted through the console: look-up %d %v, want it in the store", status, v)
	}

	b.CheckNoErrors(t)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := p.wait(t, time.Minute); err != nil {
		t.Errorf("crawler exited with %v after SIGTERM", err)
	}
}

// steerThroughConsole uses the rest of the control page while host paused
// stands still: its queue exported through the page is the API's, a delay and
// a render mode set through the form are in force, and an exclusion pattern is
// added and deleted.
func steerThroughConsole(t *testing.T, c *consoletest.Console, w *synthweb.Web, paused string) {
	t.Helper()
	clear := chromedp.Evaluate[chromedp.Void](`document.querySelector('#host-result').replaceChildren()`)
	// The paused host's queue can still grow (other hosts link to it), so the
	// console's export must lie between the API's before and after it.
	queueLen := func() int {
		return len(strings.Fields(rawGet(t, c, "/api/v1/hosts/"+url.PathEscape(paused)+"/queue")))
	}
	before := queueLen()
	c.B.Do(t, 30*time.Second, clear,
		chromedp.SetValue(chromedp.CSS("#host-name"), paused),
		chromedp.Click(chromedp.CSS("#host-export")),
		chromedp.WaitVisible(chromedp.CSS(`#host-result [data-result]`)),
	)
	shown := browsertest.Eval[string](t, c.B, `(document.querySelector('#host-result [data-exported]') || {dataset: {}}).dataset.exported || document.querySelector('#host-result').textContent`)
	after := queueLen()
	if n, err := strconv.Atoi(shown); err != nil || n < before || n > after || n == 0 {
		t.Errorf("queue of paused host %s exported through the console: %q URLs, the API exports %d before and %d after (want between, not 0)", paused, shown, before, after)
	}
	t.Logf("paused host %s: %s queued URLs exported through the console, %d then %d by the API", paused, shown, before, after)

	slowed := w.Hosts()[3]
	c.B.Do(t, 30*time.Second, clear,
		chromedp.SetValue(chromedp.CSS("#host-name"), slowed),
		chromedp.SetValue(chromedp.CSS("#host-delay"), "0.5"),
		chromedp.SetValue(chromedp.CSS("#host-render"), "never"),
		chromedp.Click(chromedp.CSS("#host-apply")),
		chromedp.WaitVisible(chromedp.CSS(`#host-result [data-result]`)),
	)
	found := false
	hosts, _ := consoletest.Lookup(c.Get(t, "/api/v1/control"), "/hosts")
	for _, h := range asSlice(hosts) {
		if m, ok := h.(map[string]any); ok && m["host"] == slowed {
			found = m["delay_seconds"] == 0.5 && m["render"] == "never"
		}
	}
	if !found {
		t.Errorf("delay 0.5 s and render mode never set through the console for %s: not in GET /api/v1/control: %v", slowed, hosts)
	}

	pattern := "http://" + w.Hosts()[4] + "/never-linked-*"
	c.B.Do(t, 30*time.Second,
		chromedp.SetValue(chromedp.CSS("#exclusion-pattern"), pattern),
		chromedp.Click(chromedp.CSS("#exclusion-add")),
		chromedp.WaitVisible(chromedp.CSS(`#exclusion-list [data-delete]`)),
	)
	if list := browsertest.Eval[string](t, c.B, `document.querySelector('#exclusion-list').textContent`); !strings.Contains(list, pattern) {
		t.Errorf("exclusion list after adding %s through the console: %.300s", pattern, list)
	}
	// The list shows "sending…" as soon as Delete is clicked and is drawn
	// again once the call is answered: wait for the empty list drawn then
	// (a paragraph; "sending…" is a span).
	c.B.Do(t, 30*time.Second,
		chromedp.Click(chromedp.CSS(`#exclusion-list [data-delete]`)),
		chromedp.WaitVisible(chromedp.CSS(`#exclusion-list > p.muted`)),
	)
	if n, _ := consoletest.Lookup(c.Get(t, "/api/v1/exclusions"), "/exclusions"); len(asSlice(n)) != 0 {
		t.Errorf("exclusions after deleting through the console: %v", n)
	}
}

// hostWithRules returns the host whose robots.txt has the most rules: the
// robots card's table is the page's widest.
func hostWithRules(t *testing.T, c *consoletest.Console, hosts []string) string {
	t.Helper()
	best, most := hosts[0], -1
	for _, h := range hosts {
		rules, _ := consoletest.Lookup(c.Get(t, "/api/v1/hosts/"+url.PathEscape(h)), "/robots/rules")
		if n := len(asSlice(rules)); n > most {
			best, most = h, n
		}
	}
	if most <= 0 {
		t.Errorf("no host of the web has robots.txt rules: the robots table's layout is not checked")
	}
	return best
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// rawGet answers an API path with the token as text, failing t unless 200.
func rawGet(t *testing.T, c *consoletest.Console, path string) string {
	t.Helper()
	req, err := http.NewRequest("GET", c.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, b)
	}
	return string(b)
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func without(args []string, flag string) []string {
	out := args[:0:0]
	for _, a := range args {
		if a != flag {
			out = append(out, a)
		}
	}
	return out
}

// waitAPI waits until the crawler's API answers its readiness probe.
func waitAPI(t *testing.T, p *crawlerProcess, base string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready in 60 s (%v); log:\n%s", base, err, p.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitIdle waits until the web has seen no request for 3 s.
func waitIdle(t *testing.T, w *synthweb.Web, limit time.Duration, api operator) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		n := len(w.Requests())
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 3*time.Second && settled(t, api) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the crawl still requests pages after %v", limit)
}

// settled reports whether the crawler's own account of its work is empty:
// nothing queued, in its frontier or in flight, and no record waiting in a
// consumer group. A quiet server alone is not enough: URLs the trap budgets
// hold wait for the verdicts on their section's pages, which a loaded
// machine can take seconds to produce.
func settled(t *testing.T, api operator) bool {
	t.Helper()
	code, st := api.call(t, "GET", "/api/v1/stats", "")
	if code != http.StatusOK {
		return false
	}
	q, _ := st["queue"].(map[string]any)
	for _, k := range []string{"queued", "in_frontier", "in_flight"} {
		if n, ok := q[k].(float64); ok && n != 0 {
			return false
		}
	}
	workers, _ := st["workers"].(map[string]any)
	groups, _ := workers["groups"].([]any)
	for _, g := range groups {
		if lag, _ := g.(map[string]any)["lag"].(float64); lag != 0 {
			return false
		}
	}
	return true
}
