package cluster

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/store"
)

// controlCall sends a control action to the frontier tier's API.
func controlCall(t *testing.T, api, method, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, api+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return out
}

// quiet waits until the web has seen no request for 3 s.
func quiet(t *testing.T, w *synthweb.Web, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last, since := -1, time.Now()
	for time.Now().Before(deadline) {
		if n := len(w.Requests()); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 3*time.Second {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the crawl still requests pages after %v", limit)
}

// TestClusterControls: a host paused and a URL pattern excluded through the
// frontier tier's API hold across two fetchers and across the rebalances of
// one stopping and another joining: the paused host gets no request until it
// is resumed, whichever fetcher owns it, and no URL the pattern matches is
// requested after it; the pattern's queued URLs are recorded excluded. The
// audit log holds each action.
func TestClusterControls(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 8, 30
	w := serveWeb(t, cfg)
	c := newCluster(t)
	// 250 ms between requests: 30 pages take 8 s or more a host. The
	// fetchers sign their requests, so the log says who sent each.
	fetcher := func(name string) *proc {
		return c.startFetcher(name, "-default-delay", "250ms", "-user-agent", userAgentOf(name))
	}
	f1 := fetcher("fetcher-1")
	f2 := fetcher("fetcher-2")
	c.startParser("parser-1")
	submitSeeds(t, c.api, w.Seeds())

	// The paused host is one fetcher-1 serves, so that it moves to another
	// fetcher while paused when fetcher-1 stops; the pattern is on one of
	// fetcher-2's.
	owner := func(host string) string {
		ua := ""
		for _, r := range w.Requests() {
			if r.Host == host && r.Kind == "page" {
				ua = r.UserAgent
			}
		}
		return ua
	}
	pages := func(host string) int {
		n := 0
		for _, r := range w.Requests() {
			if r.Host == host && r.Kind == "page" {
				n++
			}
		}
		return n
	}
	var paused, trimmed string
	deadline := time.Now().Add(time.Minute)
	for paused == "" || trimmed == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no host with 3 pages fetched by each fetcher in a minute (paused %q, trimmed %q)", paused, trimmed)
		}
		time.Sleep(50 * time.Millisecond)
		paused, trimmed = "", ""
		for _, h := range w.Hosts() {
			if pages(h) < 3 {
				continue
			}
			switch owner(h) {
			case userAgentOf("fetcher-1"):
				paused = h
			case userAgentOf("fetcher-2"):
				trimmed = h
			}
		}
	}
	controlCall(t, c.api, "POST", "/api/v1/hosts/"+paused+"/pause", "")
	pausedAt := time.Now()
	odd := `^http://` + regexp.QuoteMeta(trimmed) + `/p/\d*[13579]\.html$`
	body, _ := json.Marshal(map[string]string{"pattern": odd, "syntax": "regexp"})
	controlCall(t, c.api, "POST", "/api/v1/exclusions", string(body))
	// The controls hold from when the fetchers apply them: they poll about
	// once a second, later on a loaded machine. Each logs the new pattern
	// as it applies the first version that has it, and the pause with it.
	var applied time.Time
	for _, f := range []*proc{f1, f2} {
		at := waitLog(t, f.log, "exclusion pattern applied to queued URLs", pausedAt, 30*time.Second)
		t.Logf("%s applied the controls %v after the pause", f.name, at.Sub(pausedAt).Round(time.Millisecond))
		applied = maxTime(applied, at)
	}

	// Partitions move twice while the controls stand.
	time.Sleep(2 * time.Second)
	f1.stop(t)
	t.Logf("fetcher-1 stopped at +%v", time.Since(pausedAt).Round(time.Millisecond))
	time.Sleep(2 * time.Second)
	fetcher("fetcher-3")
	time.Sleep(6 * time.Second)
	// The window ends when the resume is sent: a fetcher may see it before
	// the call returns.
	resumedAt := time.Now()
	controlCall(t, c.api, "POST", "/api/v1/hosts/"+paused+"/resume", "")
	t.Logf("host resumed at +%v", resumedAt.Sub(pausedAt).Round(time.Millisecond))

	quiet(t, w, 4*time.Minute)
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
	reqs := w.Requests()
	re := regexp.MustCompile(odd)
	// The server stamps a request when its handler runs, late on a loaded
	// machine: a request sent before the window may be stamped inside it.
	st, blobs := c.openStores()
	late := testenv.BlobStampLateness(t, w, blobs)
	from := applied.Add(controlGrace + late)
	t.Logf("the server stamped requests up to %v after the fetchers started them", late.Round(time.Millisecond))
	var during, after int
	fetched := map[string]bool{}
	senders := map[string]map[string]int{} // before the pause / after the resume: fetcher: requests to the paused host
	for _, r := range reqs {
		if r.Status == http.StatusOK {
			fetched[r.Resource] = true
		}
		switch {
		case r.Host == paused && r.Start.After(from) && r.Start.Before(resumedAt):
			during++
			t.Errorf("request to paused host %s at +%v: %s", paused, r.Start.Sub(pausedAt).Round(time.Millisecond), r.Target)
		case r.Host == paused && r.Start.After(resumedAt):
			after++
		}
		if r.Host == paused {
			when := "before the pause"
			if r.Start.After(resumedAt) {
				when = "after the resume"
			}
			if senders[when] == nil {
				senders[when] = map[string]int{}
			}
			senders[when][r.UserAgent]++
		}
		if r.Host == trimmed && re.MatchString("http://"+r.Host+r.Target) && r.Start.After(from) {
			t.Errorf("excluded URL requested at +%v after the exclusion was applied: %s", r.Start.Sub(applied).Round(time.Millisecond), r.Target)
		}
	}
	t.Logf("paused host %s: %d requests while paused, %d after; senders %v", paused, during, after, senders)
	if after == 0 {
		t.Errorf("host %s got no request after its resume: the pause proved nothing", paused)
	}
	if senders["after the resume"][userAgentOf("fetcher-1")] > 0 {
		t.Errorf("the stopped fetcher-1 sent requests after the resume: %v", senders)
	}
	for _, m := range w.MustFetch() {
		if !fetched[m] && !strings.HasPrefix(m, trimmed+"/") {
			t.Errorf("not fetched: %s", m)
		}
	}
	rep := w.Audit(auditConfig())
	if rep.Overlaps.Count+rep.Politeness.Count+rep.Robots.Count > 0 {
		t.Errorf("overlaps %v, politeness %v, robots %v", rep.Overlaps, rep.Politeness, rep.Robots)
	}

	ctx := context.Background()
	queuedOut, refused := 0, 0
	for _, m := range w.MustFetch() {
		u := "http://" + m
		if !re.MatchString(u) || fetched[m] {
			continue
		}
		info, err := st.URLInfo(ctx, u)
		switch {
		case err != nil:
			t.Errorf("%s: %v", u, err)
		case info.URL != nil && info.URL.State == store.StateExcluded && info.URL.Reason == control.ReasonPattern:
			queuedOut++
		case info.URL == nil && info.Exclusion != nil && info.Exclusion.Reason == control.ReasonPattern:
			refused++
		default:
			t.Errorf("%s is neither fetched nor excluded by the pattern: %+v %+v", u, info.URL, info.Exclusion)
		}
	}
	t.Logf("pattern: %d queued URLs excluded, %d refused at admission", queuedOut, refused)
	if queuedOut == 0 {
		t.Error("the pattern excluded no queued URL: the test did not exercise the queue")
	}
	log, err := st.Control().AuditLog(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range log {
		got = append(got, a.Action+" "+a.Actor)
	}
	if want := "host.resume anonymous,exclusion.add anonymous,host.pause anonymous"; strings.Join(got, ",") != want {
		t.Errorf("audit log %v, want %s", got, want)
	}
}

// controlGrace is how long after the fetchers applied an action a request
// may still reach the web as before: a worker that took the host's turn
// just before sends it.
const controlGrace = 1500 * time.Millisecond

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
