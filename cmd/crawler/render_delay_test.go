package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
)

// TestRenderAtPolitenessDelays crawls application hosts built as real sites
// are (synthweb.Config.AppChains: a stylesheet, present or 404, before the
// bundle at the end of <body>; a bundle that loads a second script; data
// fetched in two steps; a host whose robots.txt disallows the data) at host
// delays of 0.2 s and 1 s, the crawler's default. A render's sub-resources
// arrive one politeness delay after another, so the network is quiet while
// the page still waits: every application page reachable through rendered
// links is fetched all the same, none twice, every request polite and
// allowed (sub-resources counted), the disallowed data never asked for, no
// ordinary host rendered.
func TestRenderAtPolitenessDelays(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawls with a browser; skipped with -short")
	}
	browsertest.Need(t)
	for _, delay := range []time.Duration{200 * time.Millisecond, time.Second} {
		t.Run(delay.String(), func(t *testing.T) {
			// Side by side: each waits on its hosts' delays far more than
			// it computes (113 and 130 s one after the other in a make
			// test, a sixth of the package's time).
			t.Parallel()
			cfg := synthweb.AppChainsConfig()
			w, seeds := startWeb(t, cfg)
			data := filepath.Join(t.TempDir(), "data")
			args := crawlArgs(data, seeds, "-render", "auto", "-render-tabs", "2", "-render-heap-mib", "64",
				"-default-delay", delay.String(), "-max-delay", (4 * delay).String(), "-max-duration", "5m")
			// Bounded, with room: a crawl here takes 1.5-2.5 minutes, and
			// one cut short by -max-duration exits 0 with the deepest pages
			// of the chains never requested.
			start := time.Now()
			runCrawler(t, args)
			took := time.Since(start)
			ac := auditConfig()
			ac.DefaultDelay, ac.MaxDelay = delay, 4*delay
			rep := w.Audit(ac)
			t.Logf("crawl took %v; audit:\n%s", took.Round(time.Millisecond), rep.String())
			checkRenderedApps(t, w, rep, data)
			if t.Failed() {
				logAppRequests(t, w, start)
			}
		})
	}
}

// checkRenderedApps judges a crawl of application hosts: coverage, the
// render checks, robots, and the render decisions in the store.
func checkRenderedApps(t *testing.T, w *synthweb.Web, rep synthweb.Report, data string) {
	t.Helper()
	for _, p := range rep.RenderProblems() {
		t.Error(p)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	appHosts := w.AppHosts()
	var lines []string
	err = db.Captures(context.Background(), func(c store.Capture) error {
		d, err := db.Render().RenderDecisionOf(context.Background(), c.URLHash)
		if err != nil {
			return nil
		}
		host, path := splitURL(c.URL)
		if appHosts[host] == "" {
			t.Errorf("ordinary page %s has a render decision: %+v", c.URL, d)
			return nil
		}
		lines = append(lines, fmt.Sprintf("%s %s%s: %s links %d->%d (%s) %s", appHosts[host], host, path, d.Decision, d.LinksHTML, d.LinksRendered, d.Reason, d.Detail))
		if d.Decision != store.RenderRendered {
			return nil
		}
		// The look-up says what each render waited for: on the
		// robots-blocked host, the data refused; elsewhere every
		// sub-resource of the host answered.
		var det store.RenderDetail
		if err := json.Unmarshal([]byte(d.Detail), &det); err != nil || len(det.Subresources) == 0 {
			t.Errorf("%s: render detail %q (%v)", c.URL, d.Detail, err)
			return nil
		}
		for _, s := range det.Subresources {
			sh, sp := splitURL(s.URL)
			switch {
			case sh != host:
			case appHosts[host] == synthweb.AppBlockedAPI && strings.HasPrefix(sp, "/api/"):
				if !strings.Contains(s.Error, "robots") {
					t.Errorf("%s: the disallowed %s answered %+v", c.URL, s.URL, s)
				}
			case s.Status == 0 || s.Pending:
				t.Errorf("%s: sub-resource %+v", c.URL, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for host := range appHosts {
		if !t.Failed() {
			break // what the store holds of the sub-resources tells why a page was missed
		}
		for _, p := range []string{synthweb.AppSiteStylePath, synthweb.AppBundlePath, synthweb.AppMainPath, synthweb.AppIndexPath + "?id=home", synthweb.AppAPIPath + "?id=home"} {
			u := "http://" + host + p
			info, err := db.URLInfo(context.Background(), u)
			switch {
			case err != nil:
				lines = append(lines, fmt.Sprintf("%s %s: %v", appHosts[host], u, err))
			case info.URL != nil:
				lines = append(lines, fmt.Sprintf("%s %s: %s %s kind %s level %d, %d captures", appHosts[host], u, info.URL.State, info.URL.Reason, info.URL.Kind, info.URL.Level, len(info.Captures)))
			case info.Exclusion != nil:
				lines = append(lines, fmt.Sprintf("%s %s: excluded %+v", appHosts[host], u, *info.Exclusion))
			}
		}
	}
	slices.Sort(lines)
	t.Logf("render decisions:\n%s", strings.Join(lines, "\n"))
}

// logAppRequests logs what the application hosts received, in order, to
// tell a page that waited for its sub-resources from one that did not.
func logAppRequests(t *testing.T, w *synthweb.Web, start time.Time) {
	t.Helper()
	apps := w.AppHosts()
	var b strings.Builder
	for _, r := range w.Requests() {
		if apps[r.Host] != "" {
			fmt.Fprintf(&b, "%8.3fs %s %s %s %d (%s)\n", r.Start.Sub(start).Seconds(), apps[r.Host], r.Host, r.Target, r.Status, r.Kind)
		}
	}
	t.Logf("requests to the application hosts:\n%s", b.String())
}
