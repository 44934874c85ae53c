package main

import (
	"bytes"
	"context"
	"image"
	_ "image/png" // screenshots
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/internal/warciotest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// TestRenderApps crawls a web whose application hosts build their links in
// scripts (one host of each shape) beside ordinary hosts, with -render auto.
// Every page reachable without breaking robots is fetched once, through the
// DOM; every sub-resource the browsers asked for went through the fetcher
// (robots, politeness, no image, font or video, each bundle once); the
// ordinary hosts were never rendered; the hung and runaway pages were
// bounded and recorded; the WARC holds a conversion record per rendered
// page, and one per screenshot (-render-screenshots), that warcio.js reads
// too. On the mixed host the verdict is per
// section: every client-built page is rendered, the server-rendered
// section, whose pages have the same signals, stops being rendered once
// learnt. An ordinary host an operator set to "always" before the run has
// every page rendered.
func TestRenderApps(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl with a browser; skipped with -short")
	}
	browsertest.Need(t)
	cfg := synthweb.DefaultConfig()
	shapes := synthweb.AppShapes()
	cfg.Hosts, cfg.PagesPerHost, cfg.Apps = len(shapes)+4, 8, len(shapes)
	cfg.AppHang = 8 * time.Second
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data")
	// An operator set an ordinary host to "always" (console, PATCH
	// /api/v1/hosts/{host}) before this run: its pages, which have no
	// script, are rendered all the same, from the first.
	forced := w.Hosts()[2]
	setRenderMode(t, data, forced, store.RenderAlways)
	start := time.Now()
	// Bounded, with room: beside other packages' crawls and browsers (a
	// load of 18 on two cores) the crawl ran into crawlArgs' 3 minutes,
	// cut short with pages never asked for and the runaway page's render
	// not recorded.
	runCrawler(t, crawlArgs(data, seeds, "-render", "auto", "-render-timeout", "6s", "-render-heap-mib", "64", "-render-tabs", "2",
		"-render-screenshots", "-max-duration", "8m"))
	took := time.Since(start)

	rep := w.Audit(auditConfig())
	t.Logf("crawl took %v; audit:\n%s", took.Round(time.Millisecond), rep.String())
	apps := rep.Apps
	if apps == nil {
		t.Fatal("the audit has no application report")
	}
	for _, p := range rep.RenderProblems() {
		t.Error(p)
	}
	if rep.Missing.Count > 0 {
		logMissing(t, data, rep.Missing.Examples)
	}
	if apps.APIRequests == 0 {
		t.Error("no application API request: the fetch() shape was not rendered")
	}

	// The decisions, from the store.
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	appHosts := w.AppHosts() // host key -> shape
	shapeOf := func(u string) string {
		h, _ := splitURL(u)
		return appHosts[h]
	}
	byShape := map[string]map[string]int{} // shape -> decision -> count
	failed := map[string]string{}
	reasons := map[string]string{} // URL path -> reason
	// The mixed host's pages by part: "server" (Web.ServerRenderedPath) or
	// "client", then decision.
	mixed := map[string]map[string]int{"server": {}, "client": {}}
	sectionSkips := map[string]int{} // reason -> server-rendered pages skipped for it
	forcedRendered := 0
	err = db.Captures(context.Background(), func(c store.Capture) error {
		d, err := db.Render().RenderDecisionOf(context.Background(), c.URLHash)
		if err != nil {
			return nil
		}
		shape := shapeOf(c.URL)
		if h, _ := splitURL(c.URL); h == forced {
			if d.Decision != store.RenderRendered || !strings.HasPrefix(d.Reason, "operator (console): always") {
				t.Errorf("page %s of the host set to always: %+v", c.URL, d)
			}
			forcedRendered++
			return nil
		}
		if shape == "" {
			t.Errorf("ordinary page %s has a render decision: %+v", c.URL, d)
			return nil
		}
		if byShape[shape] == nil {
			byShape[shape] = map[string]int{}
		}
		byShape[shape][d.Decision]++
		host, path := splitURL(c.URL)
		reasons[path] = d.Reason
		if shape == synthweb.AppMixed {
			part := "client"
			if w.ServerRenderedPath(host, path) {
				part = "server"
				if d.Decision == store.RenderSkipped {
					sectionSkips[d.Reason]++
				}
			}
			mixed[part][d.Decision]++
		}
		if d.Decision == store.RenderFailed {
			failed[c.URL] = d.Reason
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("render decisions by shape: %v; failed: %v", byShape, failed)
	for _, s := range shapes {
		if byShape[s][store.RenderRendered] == 0 {
			t.Errorf("no page of shape %s rendered", s)
		}
	}
	// The runaway page hits the V8 heap limit (ErrCrashed) within its
	// render's bound on a machine that gives the renderer its share of a
	// core. When the machine is loaded enough that it does not, the
	// render's bound ends it instead and the page is taken as it is then,
	// as the hung page is (CI, at a load of 6-8: rendered). Either way it
	// is bounded; what must not happen is a snapshot taken as if the page
	// had settled while its script was still allocating.
	// TestRenderRunawayFromTimers (pkg/browser) holds the crash itself.
	var runaway bool
	for u, why := range failed {
		// On a loaded machine the tab may stop answering before the heap
		// limit ends it: recorded as failed "hung" (a clean-clone CI run of
		// 304ae10), which is as much a recorded end as a crash.
		if strings.HasSuffix(u, synthweb.AppRunawayPage) && (strings.Contains(why, "crashed") || strings.Contains(why, "hung")) {
			runaway = true
		}
	}
	if why, ok := reasons[synthweb.AppRunawayPage]; !runaway && ok && strings.Contains(why, "timed out") {
		t.Logf("the runaway page was cut off at its render's bound, not by the heap limit: %q", why)
		runaway = true
	}
	if !runaway {
		t.Errorf("the runaway page was neither recorded as failed (crashed) nor taken at its render's bound: %q; failed: %v", reasons[synthweb.AppRunawayPage], failed)
	}
	// The page that never stops changing is taken as it is at the timeout.
	if why := reasons[synthweb.AppHangPage]; !strings.Contains(why, "timed out") {
		t.Errorf("the page that never settles was recorded as %q", why)
	}
	checkMixedSections(t, apps, mixed, sectionSkips)

	// Conversion records: the DOM of each rendered page and, with
	// -render-screenshots, its screenshot, each referring to a response
	// record, read back by pkg/warc and by warcio.js.
	segs, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	conversions := 0
	for _, seg := range segs {
		sum := warciotest.Check(t, seg)
		conversions += sum.Types[warc.TypeConversion]
		if len(sum.BlockDigestMismatches) > 0 || len(sum.PayloadDigestMismatches) > 0 {
			t.Errorf("warcio.js: digest mismatches in %s: %s %s", seg, sum.BlockDigestMismatches, sum.PayloadDigestMismatches)
		}
	}
	doms, shots := readConversions(t, segs)
	t.Logf("host %s set to always: %d pages rendered", forced, forcedRendered)
	if forcedRendered == 0 {
		t.Errorf("no page of %s, set to always before the crawl, was rendered", forced)
	}
	rendered := forcedRendered
	for _, m := range byShape {
		rendered += m[store.RenderRendered]
	}
	t.Logf("%d rendered pages: %d DOM and %d screenshot conversion records", rendered, doms, shots)
	if doms != rendered || conversions != doms+shots {
		t.Errorf("%d DOM conversion records (warcio.js: %d conversion records, %d of them screenshots) for %d rendered pages", doms, conversions, shots, rendered)
	}
	// A page that timed out, or whose capture failed, has none; most have one.
	if shots == 0 || shots > rendered {
		t.Errorf("%d screenshots for %d rendered pages with -render-screenshots", shots, rendered)
	}
	checkStored(t, w, data)
}

// readConversions counts the conversion records of the segments: rendered
// DOMs (text/html) and screenshots, each an image that decodes. Each must
// refer to the record it was derived from.
func readConversions(t *testing.T, segs []string) (doms, shots int) {
	t.Helper()
	for _, seg := range segs {
		f, err := os.Open(seg)
		if err != nil {
			t.Fatal(err)
		}
		rd := warc.NewReader(f)
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read %s: %v", seg, err)
			}
			if rec.Type() != warc.TypeConversion {
				continue
			}
			target := rec.Header.Get(warc.FieldTargetURI)
			if rec.Header.Get(warc.FieldRefersTo) == "" {
				t.Errorf("conversion record of %s refers to nothing", target)
			}
			switch ct := rec.Header.Get(warc.FieldContentType); {
			case strings.HasPrefix(ct, "text/html"):
				doms++
			case strings.HasPrefix(ct, "image/"):
				shots++
				if _, _, err := image.DecodeConfig(bytes.NewReader(rec.Block)); err != nil {
					t.Errorf("screenshot of %s (%s, %d bytes) does not decode: %v", target, ct, len(rec.Block), err)
				}
			default:
				t.Errorf("conversion record of %s with content type %q", target, ct)
			}
		}
		f.Close()
	}
	return doms, shots
}

// checkMixedSections judges the render decisions on the mixed host (by part,
// then decision): every client-built page rendered; in the server-rendered
// section, whose pages have the shell's signals but nothing more to show,
// at least one page skipped on the section's verdict and fewer rendered
// than the section has pages. How many were rendered before the verdict
// depends on the renders in flight when it formed: no exact count.
func checkMixedSections(t *testing.T, apps *synthweb.AppsReport, mixed map[string]map[string]int, skips map[string]int) {
	t.Helper()
	var host synthweb.AppHostReport
	for _, hr := range apps.Hosts {
		if hr.Shape == synthweb.AppMixed {
			host = hr
		}
	}
	client := host.Reachable - host.ServerRendered
	t.Logf("mixed host %s: %d client-built pages, decisions %v; %d server-rendered, decisions %v; skipped because %v",
		host.Host, client, mixed["client"], host.ServerRendered, mixed["server"], skips)
	if host.ServerRendered == 0 || client == 0 {
		t.Fatalf("mixed host: %+v, want both parts", host)
	}
	if got := mixed["client"][store.RenderRendered]; got != client {
		t.Errorf("mixed host: %d of %d client-built pages rendered", got, client)
	}
	if got := mixed["server"][store.RenderRendered]; got >= host.ServerRendered {
		t.Errorf("mixed host: %d of %d server-rendered pages rendered, want fewer", got, host.ServerRendered)
	}
	onVerdict := 0
	for why, n := range skips {
		if strings.Contains(why, "section") && strings.Contains(why, synthweb.AppGuidePrefix) {
			onVerdict += n
		}
	}
	if onVerdict == 0 {
		t.Errorf("mixed host: no server-rendered page skipped on the verdict of section %s: %v", synthweb.AppGuidePrefix, skips)
	}
}

// setRenderMode stores an operator's render mode for host in the crawl's
// store at data, as the console does, before the crawler opens it.
func setRenderMode(t *testing.T, data, host, mode string) {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	hc := store.HostControl{Host: host, Delay: store.NoOverride, PageBudget: store.NoOverride, Render: mode, UpdatedAt: now}
	if err := db.Control().SetHostControl(ctx, hc, store.AuditEntry{At: now, Actor: "test", Action: "host.update", Target: host}); err != nil {
		t.Fatal(err)
	}
}
