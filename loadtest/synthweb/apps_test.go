package synthweb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/render"
)

// appsConfig is a web of two ordinary hosts (the second serves the
// third-party scripts) and one application host of each shape.
func appsConfig() Config {
	cfg := DefaultConfig()
	cfg.Apps = len(appShapes)
	cfg.Hosts = 2 + cfg.Apps
	cfg.PagesPerHost = 6
	cfg.Fanout = 3
	cfg.Seed = 3
	return cfg
}

// appHostsByShape returns the web's application host of each shape.
func appHostsByShape(t *testing.T, w *Web) map[string]*host {
	t.Helper()
	out := map[string]*host{}
	for _, h := range w.hosts {
		if h.app != nil {
			out[h.app.shape] = h
		}
	}
	if len(out) != len(appShapes) {
		t.Fatalf("shapes %v, want one host of each of %v", w.AppHosts(), appShapes)
	}
	return out
}

var inlineDataRE = regexp.MustCompile(`<script type="application/json" id="app-data">([^<]*)</script>`)

// inlineData decodes a shell's inline JSON; ok is false when it has none.
func inlineData(t *testing.T, body string) (d appData, ok bool) {
	t.Helper()
	m := inlineDataRE.FindStringSubmatch(body)
	if m == nil {
		return d, false
	}
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("inline data %q: %v", m[1], err)
	}
	return d, true
}

func decodeJSON(t *testing.T, body string) appData {
	t.Helper()
	var d appData
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("JSON %q: %v", short(body), err)
	}
	return d
}

// routes decodes the route table a router's bundle carries.
func routes(t *testing.T, bundle string) map[string]appData {
	t.Helper()
	_, rest, ok := strings.Cut(bundle, "const ROUTES = ")
	line, _, _ := strings.Cut(rest, ";\n")
	var out map[string]appData
	if err := json.Unmarshal([]byte(line), &out); !ok || err != nil {
		t.Fatalf("no route table in the bundle (%v):\n%s", err, short(bundle))
	}
	return out
}

func TestAppShapes(t *testing.T) {
	w := startWeb(t, appsConfig())
	c := rawClient()
	mustFetch := map[string]bool{}
	for _, id := range w.MustFetch() {
		mustFetch[id] = true
	}
	mustNot := map[string]bool{}
	for _, id := range w.MustNotFetch() {
		mustNot[id] = true
	}
	shapes := appHostsByShape(t, w)
	if got := len(w.AppHosts()); got != len(appShapes) {
		t.Errorf("AppHosts has %d hosts, want %d", got, len(appShapes))
	}
	for _, shape := range appShapes {
		h := shapes[shape]
		t.Run(shape, func(t *testing.T) {
			pages := h.appPages()
			htmlLinks := map[string][]string{} // target -> the targets its HTML links
			bundle := get(t, c, h.base+AppBundlePath)
			if bundle.status != 200 || !strings.Contains(bundle.header.Get("Cache-Control"), "max-age") || bundle.header.Get("ETag") == "" ||
				!strings.HasPrefix(bundle.header.Get("Content-Type"), "text/javascript") {
				t.Errorf("bundle: %d %v", bundle.status, bundle.header)
			}
			robots := get(t, c, h.base+"/robots.txt").body
			if blocked := strings.Contains(robots, "Disallow: /api/\n"); blocked != (shape == AppBlockedAPI) {
				t.Errorf("robots.txt disallows /api/: %v, want %v:\n%s", blocked, shape == AppBlockedAPI, robots)
			}
			var home string
			hidden := 0
			for _, p := range pages {
				a := get(t, c, h.base+p.target)
				if a.status != 200 {
					t.Fatalf("%s: %d", p.target, a.status)
				}
				if p.target == "/" {
					home = a.body
				}
				// An HTML-only crawler finds nothing to follow.
				doc, err := parse.Parse([]byte(a.body), a.header.Get("Content-Type"), h.base+p.target, nil, parse.Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range doc.Links {
					htmlLinks[p.target] = append(htmlLinks[p.target], strings.TrimPrefix(l.URL, h.base))
				}
				if p.hydrated {
					checkHydrated(t, p, a.body, doc, htmlLinks[p.target])
				} else if len(doc.Links) != 0 || len(doc.Text) > 20 {
					t.Errorf("%s: the HTML has links %v and text %q", p.target, doc.Links, doc.Text)
				}
				// Every page, the server-rendered ones included, has
				// the signals that make a render tier try it.
				if sig := render.Read([]byte(a.body), doc); !sig.Strong() {
					t.Errorf("%s: signals %+v are not strong", p.target, sig)
				}
				for _, want := range []string{`<div id="app"`, "<noscript><p>Please enable JavaScript", `<script src="` + AppBundlePath + `" defer>`, `<img src="`} {
					if !strings.Contains(a.body, want) {
						t.Errorf("%s lacks %q", p.target, want)
					}
				}
				if len(p.data.Links) == 0 || p.data.Text == "" {
					t.Errorf("%s: the scripts would build no links or text: %+v", p.target, p.data)
				}
				inline, hasInline := inlineData(t, a.body)
				switch shape {
				case AppInline, AppHung, AppRunaway, AppMixed:
					if !hasInline || !slices.Equal(inline.Links, p.data.Links) || inline.Text != p.data.Text {
						t.Errorf("%s: inline data %+v, want %+v", p.target, inline, p.data)
					}
				case AppFetch, AppBlockedAPI:
					api := get(t, c, h.base+AppAPIPath+"?id="+p.id)
					if d := decodeJSON(t, api.body); api.status != 200 || !slices.Equal(d.Links, p.data.Links) {
						t.Errorf("%s: the API answered %d %+v, want %+v", p.target, api.status, d, p.data)
					}
					if shape == AppFetch && hasInline {
						t.Errorf("%s: inline data on a fetch host", p.target)
					}
					if shape == AppBlockedAPI {
						if !hasInline || !slices.Equal(inline.Links, p.inline) || len(inline.Links) >= len(p.data.Links) {
							t.Errorf("%s: inline links %v, want %v, fewer than the API's %v", p.target, inline.Links, p.inline, p.data.Links)
						}
						apiID := h.key + AppAPIPath + "?id=" + p.id
						if !mustNot[apiID] {
							t.Errorf("%s is not in MustNotFetch", apiID)
						}
					}
				case AppRouter:
					if hasInline || a.body != home {
						t.Errorf("%s: the router's shell differs from the home page's", p.target)
					}
					if d := routes(t, bundle.body)[p.target]; !slices.Equal(d.Links, p.data.Links) {
						t.Errorf("%s: route %+v, want %+v", p.target, d, p.data)
					}
				}
				if h.app.hidden[p.target] {
					hidden++
					if mustFetch[h.key+p.target] {
						t.Errorf("%s: hidden behind the API, yet in MustFetch", p.target)
					}
				} else if !mustFetch[h.key+p.target] {
					t.Errorf("%s: reachable, yet not in MustFetch", p.target)
				}
			}
			if want := shape == AppBlockedAPI; (hidden > 0) != want || hidden == len(pages)-1 {
				t.Errorf("%d of %d pages hidden", hidden, len(pages))
			}
			switch shape {
			case AppRouter:
				nf := get(t, c, h.base+"/no/such/route")
				if nf.status != 404 || nf.body != home {
					t.Errorf("unknown route: %d, shell %v", nf.status, nf.body == home)
				}
			case AppHung:
				for _, p := range []string{AppHangPage, AppHangFetchPage} {
					if !mustFetch[h.key+p] {
						t.Errorf("%s not in MustFetch", p)
					}
				}
				if b := get(t, c, h.base+AppHangPage).body; !strings.Contains(b, "setInterval(") {
					t.Errorf("%s has no setInterval", AppHangPage)
				}
				if b := get(t, c, h.base+AppHangFetchPage).body; !strings.Contains(b, "fetch('"+AppHangAPIPath+"')") {
					t.Errorf("%s does not fetch %s", AppHangFetchPage, AppHangAPIPath)
				}
			case AppRunaway:
				if b := get(t, c, h.base+AppRunawayPage).body; !mustFetch[h.key+AppRunawayPage] || !strings.Contains(b, "new Array(") {
					t.Errorf("%s: no allocation loop, or not in MustFetch", AppRunawayPage)
				}
			case AppMixed:
				checkMixedParts(t, w, h, pages, htmlLinks)
			}
			for _, p := range pages {
				if got, want := w.ServerRenderedPath(h.key, p.target), shape == AppMixed && p.hydrated; got != want {
					t.Errorf("%s: ServerRenderedPath %v, want %v", p.target, got, want)
				}
			}
		})
	}

	// The third-party host: an ordinary one, whose robots.txt disallows the
	// tracker every app page loads.
	tp := w.ThirdPartyHost()
	if tp == "" || w.AppHosts()[tp] != "" {
		t.Fatalf("third-party host %q", tp)
	}
	if r := get(t, c, "http://"+tp+"/robots.txt").body; !strings.Contains(r, "Disallow: /track/\n") {
		t.Errorf("third-party robots.txt:\n%s", r)
	}
	if !mustNot[tp+TrackerPath] {
		t.Errorf("the tracker is not in MustNotFetch")
	}
	if a := get(t, c, "http://"+tp+WidgetPath); a.status != 200 {
		t.Errorf("widget: %d", a.status)
	}
}

// checkHydrated checks a server-rendered page: the <title> and the HTML's
// #app hold the page's title, all its prose and every link the bundle
// builds, in order; enough text that it is no empty shell.
func checkHydrated(t *testing.T, p appPage, body string, doc *parse.Document, links []string) {
	t.Helper()
	var want []string
	for _, l := range p.data.Links {
		want = append(want, l.Href)
	}
	if !slices.Equal(links, want) {
		t.Errorf("%s: HTML links %v, want the bundle's %v", p.target, links, want)
	}
	if doc.Title != p.data.Title || !strings.Contains(doc.Text, p.data.Title) || !strings.Contains(doc.Text, p.data.Text) {
		t.Errorf("%s: title %q and text %q, want %q and %q", p.target, doc.Title, short(doc.Text), p.data.Title, short(p.data.Text))
	}
	if sig := render.Read([]byte(body), doc); sig.LittleText || !sig.NoScriptJS || !slices.Contains(sig.Reasons, "noscript") {
		t.Errorf("%s: signals %+v, want much text and the <noscript> plea", p.target, sig)
	}
}

// checkMixedParts checks the two parts of an AppMixed host: the home page's
// script links into both; from the first guide page every guide page is
// reachable through HTML links, and no /p/ page is.
func checkMixedParts(t *testing.T, w *Web, h *host, pages []appPage, htmlLinks map[string][]string) {
	t.Helper()
	guides := 0
	for _, p := range pages {
		if p.hydrated != isGuide(p.target) {
			t.Errorf("%s: hydrated %v", p.target, p.hydrated)
		}
		if p.hydrated {
			guides++
		}
	}
	n := w.cfg.PagesPerHost
	if guides != appGuideFactor*n || h.app.serverRendered != guides || len(h.app.reachable) != 1+n+guides {
		t.Errorf("%d guide pages, %d server-rendered reachable, %d reachable; want %d guide pages of %d",
			guides, h.app.serverRendered, len(h.app.reachable), appGuideFactor*n, 1+n+appGuideFactor*n)
	}
	first := AppGuidePrefix + "0.html"
	if !slices.ContainsFunc(pages[0].data.Links, func(l appLink) bool { return l.Href == first }) ||
		!slices.ContainsFunc(pages[0].data.Links, func(l appLink) bool { return l.Href == "/p/0.html" }) {
		t.Errorf("the home page's script links %v, want %s and /p/0.html", pages[0].data.Links, first)
	}
	seen := map[string]bool{first: true}
	queue := []string{first}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, l := range htmlLinks[t] {
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	for _, p := range pages {
		if seen[p.target] != (p.hydrated || p.target == "/") {
			t.Errorf("%s: reached through HTML links from %s: %v", p.target, first, seen[p.target])
		}
	}
}

// TestAppsLeaveOrdinaryHostsAlone: adding application hosts changes no
// ordinary page, and no ordinary page links into an application host.
func TestAppsLeaveOrdinaryHostsAlone(t *testing.T) {
	plain := DefaultConfig()
	plain.Hosts, plain.PagesPerHost, plain.Seed = 4, 8, 5
	withApps := plain
	withApps.Hosts, withApps.Apps = 10, 6
	// Host count changes the cross links' draws; compare against a web
	// whose ordinary hosts are the same four.
	a, b := startWeb(t, plain), startWeb(t, withApps)
	for i := range 4 {
		ha, hb := a.hosts[i], b.hosts[i]
		for target, ra := range ha.static {
			rb := hb.static[target]
			if rb == nil {
				t.Errorf("host %d %s: missing with apps", i, target)
				continue
			}
			if target == "/robots.txt" {
				continue // the third-party host disallows /track/
			}
			// Only the port differs between the two webs.
			if got, want := strings.ReplaceAll(string(rb.body), hb.key[strings.LastIndex(hb.key, ":"):], ":P"),
				strings.ReplaceAll(string(ra.body), ha.key[strings.LastIndex(ha.key, ":"):], ":P"); got != want {
				t.Errorf("host %d %s differs with apps", i, target)
			}
		}
		for target, rb := range hb.static {
			for _, app := range b.hosts[4:] {
				if strings.Contains(string(rb.body), app.base) {
					t.Errorf("host %d %s links to application host %s", i, target, app.key)
				}
			}
		}
	}
}

func TestAppsConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
	}{
		{"negative", func(c *Config) { c.Apps = -1 }},
		{"more than hosts", func(c *Config) { c.Apps = c.Hosts + 1 }},
		{"features need six other hosts", func(c *Config) { c.Features, c.Hosts, c.Apps = true, 8, 3 }},
		{"negative hang", func(c *Config) { c.Apps, c.AppHang = 1, -time.Second }},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Validate = %v", c.name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Hosts, cfg.Apps = 6, 6 // host 0 too, which otherwise has no robots.txt
	w := startWeb(t, cfg)
	if len(w.AppHosts()) != 6 || w.ThirdPartyHost() != "" {
		t.Errorf("all app hosts: %v, third party %q", w.AppHosts(), w.ThirdPartyHost())
	}
	if r := get(t, rawClient(), "http://"+w.hosts[0].key+"/robots.txt"); r.status != 200 {
		t.Errorf("app host 0 robots.txt: %d", r.status)
	}

	// With every other feature: the app hosts have no traps, hubs or
	// changing pages, which would give an HTML crawler links into them.
	all := featuresConfig()
	all.Hosts, all.Apps, all.Traps, all.Change.Enabled = 8+len(appShapes), len(appShapes), true, true
	w = startWeb(t, all)
	for _, h := range w.hosts[8:] {
		if h.app == nil || len(h.traps) != 0 || h.live != nil || h.sitemap {
			t.Errorf("host %d: app %v, %d traps, live %v, sitemap %v", h.idx, h.app != nil, len(h.traps), h.live != nil, h.sitemap)
		}
	}
	if len(w.AppHosts()) != len(appShapes) || w.ThirdPartyHost() != w.hosts[6].key {
		t.Errorf("apps %v, third party %q, want %s", w.AppHosts(), w.ThirdPartyHost(), w.hosts[6].key)
	}
}

// TestAppHangBounded: the hung API answers by itself after AppHang, and
// gives up when the client leaves or the web closes.
func TestAppHangBounded(t *testing.T) {
	cfg := appsConfig()
	cfg.AppHang = 300 * time.Millisecond
	w := startWeb(t, cfg)
	h := appHostsByShape(t, w)[AppHung]
	url := h.base + AppHangAPIPath

	start := time.Now()
	a := get(t, rawClient(), url)
	if took := time.Since(start); a.status != 200 || took < cfg.AppHang {
		t.Errorf("answered %d after %v, want 200 after %v", a.status, took, cfg.AppHang)
	}
	if r := logEntry(t, w, h.key, AppHangAPIPath); r.Kind != KindHang || r.Status != 200 {
		t.Errorf("log: %+v", r)
	}

	cfg.AppHang = time.Hour
	w2 := startWeb(t, cfg)
	h2 := appHostsByShape(t, w2)[AppHung]
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := <-slowRequest(t, ctx, h2.base+AppHangAPIPath); err == nil {
		t.Error("the hung API answered within 100ms")
	}
	if r := logEntry(t, w2, h2.key, AppHangAPIPath); r.Status != 0 || r.Kind != KindHang {
		t.Errorf("a request the client left: %+v, want status 0", r)
	}
	done := slowRequest(t, context.Background(), h2.base+AppHangAPIPath+"?n=2")
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- w2.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the hung request outlived Close by 10s")
	}
	if err := <-closed; err != nil {
		t.Error(err)
	}
}

// TestAuditAppRequests plays a renderer that breaks every rule once and
// checks each is counted, sub-resources included.
func TestAuditAppRequests(t *testing.T) {
	w := startWeb(t, appsConfig())
	c := rawClient()
	shapes := appHostsByShape(t, w)
	inline, blocked, mixed := shapes[AppInline], shapes[AppBlockedAPI], shapes[AppMixed]
	tp := "http://" + w.ThirdPartyHost()
	var hiddenPage string
	for p := range blocked.app.hidden {
		hiddenPage = p
	}
	for _, u := range []string{
		inline.base + "/robots.txt", blocked.base + "/robots.txt", tp + "/robots.txt",
		inline.base + "/", inline.base + AppBundlePath, inline.base + AppBundlePath, // the bundle twice
		inline.base + appLogoPath,                                  // an image
		inline.base + "/",                                          // a page twice
		blocked.base + "/", blocked.base + AppAPIPath + "?id=home", // disallowed
		blocked.base + hiddenPage,
		tp + WidgetPath,
		mixed.base + "/robots.txt", mixed.base + AppGuidePrefix + "2.html",
	} {
		get(t, c, u)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := w.Audit(AuditConfig{MaxRetries: 1})
	ar := rep.Apps
	if ar == nil {
		t.Fatal("no Apps in the report")
	}
	t.Logf("\n%s", rep)
	for _, s := range appShapes {
		if len(ar.Shapes[s]) != 1 {
			t.Errorf("shape %s: hosts %v", s, ar.Shapes[s])
		}
	}
	bundleID := inline.key + AppBundlePath
	checks := []struct {
		name      string
		got, want int
	}{
		{"bundle requests", ar.Bundles[bundleID], 2},
		{"repeated bundles", ar.RepeatedBundles.Count, 1},
		{"repeated documents", ar.RepeatedDocuments.Count, 1},
		{"duplicates", rep.Duplicates.Count, 2},
		{"media", ar.Media.Count, 1},
		{"images", ar.MediaRequests[KindImage], 1},
		{"api", ar.APIRequests, 1},
		{"api disallowed", ar.APIDisallowed, 1},
		{"robots", rep.Robots.Count, 1},
		{"forbidden", rep.Forbidden.Count, 1},
		{"hidden fetched", ar.HiddenFetched, 1},
		{"third party", ar.ThirdParty, 1},
		{"app pages fetched", ar.Fetched, 3},
		{"ordinary fetched", ar.OrdinaryFetched, 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	for _, hr := range ar.Hosts {
		switch hr.Host {
		case inline.key:
			if hr.Fetched != 1 || hr.Reachable != 7 || hr.Documents != 2 || hr.BundleRequests != 2 || hr.MediaRequests != 1 || hr.Requests != 6 {
				t.Errorf("inline host: %+v", hr)
			}
		case blocked.key:
			if hr.Fetched != 1 || hr.Hidden == 0 || hr.Reachable+hr.Hidden != 7 || hr.APIRequests != 1 || hr.HiddenFetched != 1 {
				t.Errorf("blocked host: %+v", hr)
			}
		case mixed.key:
			if hr.Fetched != 1 || hr.Reachable != 1+6+appGuideFactor*6 || hr.ServerRendered != appGuideFactor*6 || hr.Documents != 1 {
				t.Errorf("mixed host: %+v", hr)
			}
		default:
			if hr.ServerRendered != 0 {
				t.Errorf("%s host with server-rendered pages: %+v", hr.Shape, hr)
			}
		}
	}
	if rep.OK() || !strings.Contains(rep.String(), "  media:       1\n") || !strings.Contains(rep.String(), "blocked_api") {
		t.Errorf("OK %v with media requested:\n%s", rep.OK(), rep)
	}

	// Politeness counts sub-resources: with a delay none of the requests
	// after a host's first kept, every one of them breaks it.
	slow := w.Audit(AuditConfig{MaxRetries: 1, DefaultDelay: time.Hour, MaxExamples: 20})
	if slow.Politeness.Count != 10 || !strings.Contains(strings.Join(slow.Politeness.Examples, "\n"), AppBundlePath) {
		t.Errorf("politeness with a delay of an hour: %d, want 10: %v", slow.Politeness.Count, slow.Politeness.Examples)
	}

	// Without application hosts the report has none.
	if rep := startWeb(t, DefaultConfig()).Audit(AuditConfig{}); rep.Apps != nil || strings.Contains(rep.String(), "apps:") {
		t.Errorf("a web without apps reports them:\n%s", rep)
	}
}

// TestHTMLCrawlerMissesAppPages: a crawler that only parses HTML covers the
// ordinary hosts, special cases included, and nothing of the
// application hosts but their home pages.
func TestHTMLCrawlerMissesAppPages(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls for several seconds")
	}
	cfg := featuresConfig()
	cfg.Apps = len(appShapes)
	cfg.Hosts = 7 + cfg.Apps // the six special hosts, a plain one (the third party) and the apps
	w := startWeb(t, cfg)
	acfg := AuditConfig{DefaultDelay: 30 * time.Millisecond, MinDelay: 10 * time.Millisecond, MaxDelay: 150 * time.Millisecond, MaxRetries: 1}
	newPoliteCrawler(t, w, acfg).crawl(w.Seeds())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := w.Audit(acfg)
	ar := rep.Apps
	t.Logf("\n%s", rep)
	if ar.OrdinaryCoverage != 1 || ar.Fetched != len(ar.Hosts) || ar.Reachable <= 2*len(ar.Hosts) {
		t.Errorf("ordinary coverage %v; app pages fetched %d of %d, want only the %d home pages",
			ar.OrdinaryCoverage, ar.Fetched, ar.Reachable, len(ar.Hosts))
	}
	if ar.APIRequests+ar.HungRequests+sumValues(ar.Bundles) != 0 {
		t.Errorf("an HTML crawler requested sub-resources:\n%s", rep)
	}
	for _, c := range rep.categories() {
		if c.name != "missing" && c.v.Count != 0 {
			t.Errorf("%s: %d", c.name, c.v.Count)
		}
	}
}

// checkHydratedDOM compares, as the render tier does, the DOM the bundle
// built on a server-rendered page with the page's HTML: the same anchors
// (the DOM has one link more, the stylesheet the bundle inserts, which the
// crawl knows: the render asked for it), no new text but the third-party
// widget's line, no gain.
func checkHydratedDOM(t *testing.T, b *browsertest.Browser, url string) {
	t.Helper()
	served := get(t, rawClient(), url)
	dom := browsertest.Eval[string](t, b, `document.documentElement.outerHTML`)
	htmlDoc, err1 := parse.Parse([]byte(served.body), served.header.Get("Content-Type"), url, nil, parse.Options{})
	domDoc, err2 := parse.Parse([]byte(dom), "text/html; charset=utf-8", url, nil, parse.Options{})
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	anchors := func(d *parse.Document) (out []string) {
		for _, l := range d.Links {
			if l.Tag == "a" {
				out = append(out, l.URL)
			}
		}
		return out
	}
	if a, b := anchors(htmlDoc), anchors(domDoc); len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("%s: anchors in the HTML %v, in the DOM %v", url, a, b)
	}
	cmp := render.Compare(htmlDoc, domDoc)
	cmp.Judge(func(u string) bool { return strings.HasSuffix(u, appStylePath) })
	extra, ok := strings.CutPrefix(domDoc.Text, htmlDoc.Text)
	if cmp.Gained || cmp.NewLinks != 1 || !ok || len(extra) > len(" Shared with the synthetic widget.") {
		t.Errorf("%s: rendering found more: %+v; text beyond the HTML's: %q (%v)", url, cmp, extra, ok)
	}
	t.Logf("%s: %+v", url, cmp)
}

// poll waits until expr is true in the page.
func poll(expr string) chromedp.Action[chromedp.Void] {
	p := chromedp.Poll[bool](expr)
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		var v chromedp.Void
		_, err := p(ctx, tg)
		return v, err
	}
}

// TestAppPagesInBrowser proves the scripts work: in headless Chromium
// every page of every shape shows the links and text its data promises,
// without a script error; the router navigates by pushState; the hung
// pages keep going and the runaway page keeps allocating.
func TestAppPagesInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium through some twenty pages")
	}
	b := browsertest.Start(t)
	// Not errors of the scripts: the favicon nobody serves, and the font
	// that is only bytes of the right type.
	b.Allow(regexp.MustCompile(`favicon\.ico|[Ff]ont|OTS parsing`))
	cfg := appsConfig()
	cfg.AppHang = time.Second
	w := startWeb(t, cfg)
	shapes := appHostsByShape(t, w)
	ran := 0
	for _, shape := range appShapes {
		h := shapes[shape]
		t.Run(shape, func(t *testing.T) {
			ran++
			for _, p := range h.appPages() {
				if p.target != "/" && p.target != "/p/1.html" && p.target != AppGuidePrefix+"1.html" && !strings.HasPrefix(p.target, "/app/") {
					continue
				}
				url := h.base + p.target
				// The bundle decorates, then builds #app, in one task: once
				// the banner is in, #app is the bundle's (a hydrated #app
				// has links before).
				b.Do(t, 30*time.Second, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#app ul a")),
					chromedp.WaitReady(chromedp.CSS(`img[src="`+appBannerPath+`"]`)))
				want := p.data.Links
				if shape == AppBlockedAPI { // no robots.txt in a browser: the API's links come after the inline ones
					want = append(slices.Clone(p.inline), want...)
				}
				links := browsertest.Eval[[]string](t, b, fmt.Sprintf(
					`new Promise((ok) => { const f = () => { const a = [...document.querySelectorAll('#app a')];
					   if (a.length >= %d) ok(a.map((x) => x.getAttribute('href'))); else setTimeout(f, 20); }; f(); })`, len(want)))
				var hrefs []string
				for _, l := range want {
					hrefs = append(hrefs, l.Href)
				}
				if !slices.Equal(links, hrefs) {
					t.Errorf("%s: links %v, want %v", p.target, links, hrefs)
				}
				text := browsertest.Eval[string](t, b, `new Promise((ok) => setTimeout(() => ok(document.body.innerText), 50))`)
				if !strings.Contains(text, p.data.Title) || !strings.Contains(text, p.data.Text[:40]) {
					t.Errorf("%s: the page shows %q, not its title and text", p.target, short(text))
				}
				if p.hydrated {
					checkHydratedDOM(t, b, url)
				}
				switch p.target {
				case AppHangPage:
					b.Do(t, 10*time.Second, poll(`/Live update ([2-9]\d|\d{3,})/.test(document.body.innerText)`))
				case AppHangFetchPage:
					b.Do(t, 10*time.Second, poll(`document.body.innerText.includes('The live feed has closed.')`))
				case AppRunawayPage:
					// 4 MiB or more per task: 100 arrays is 50 MiB held, and growing.
					b.Do(t, 20*time.Second, poll(`Number(document.body.dataset.arrays) >= 100`),
						chromedp.Navigate("about:blank"))
				}
			}
			if shape != AppRouter {
				return
			}
			// A click on a link is taken by the router: the address changes
			// and the page is built from the route table, without a request.
			before := len(w.Requests())
			b.Do(t, 10*time.Second, chromedp.Navigate(h.base+"/"), chromedp.WaitReady(chromedp.CSS(`#app a[href="/p/0.html"]`)))
			loaded := len(w.Requests())
			pages := h.appPages()
			b.Do(t, 10*time.Second, chromedp.Click(chromedp.CSS(`#app a[href="/p/0.html"]`)),
				poll(fmt.Sprintf(`location.pathname === '/p/0.html' && document.querySelector('h1').textContent === %q`, pages[1].data.Title)),
				chromedp.NavigateBack(),
				poll(fmt.Sprintf(`location.pathname === '/' && document.querySelector('h1').textContent === %q`, pages[0].data.Title)))
			for _, r := range w.Requests()[loaded:] {
				if r.Host == h.key && r.Kind == "page" {
					t.Errorf("the router's click loaded %s (%d requests before the home page)", r.Target, before)
				}
			}
		})
	}
	b.CheckNoErrors(t)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if ran < len(appShapes) {
		return // -run chose some shapes
	}
	kinds := map[string]int{}
	for _, r := range w.Requests() {
		kinds[r.Kind]++
	}
	t.Logf("requests by kind: %v", kinds)
	// A browser left alone asks for all of it: what a renderer must filter.
	for _, k := range []string{KindBundle, KindStyle, KindAPI, KindHang, KindScript, KindImage} {
		if kinds[k] == 0 {
			t.Errorf("the browser never requested a %s: %v", k, kinds)
		}
	}
	if rep := w.Audit(AuditConfig{}); rep.Apps.Media.Count == 0 || rep.OK() {
		t.Errorf("the media a browser fetched did not fail the audit:\n%s", rep)
	}
}

// TestAppChains: with Config.AppChains each application page has a
// stylesheet ahead of its bundle, at the end of <body>, a 404 on every
// other host; the bundle loads the code as a second script; a page that
// fetches its data asks an index for the data's URL first, and on the
// robots-blocked host both are disallowed and must not be fetched.
func TestAppChains(t *testing.T) {
	cfg := appsConfig()
	cfg.AppChains = true
	w := startWeb(t, cfg)
	c := rawClient()
	mustNot := map[string]bool{}
	for _, id := range w.MustNotFetch() {
		mustNot[id] = true
	}
	styles := map[int]int{} // status -> hosts
	for shape, h := range appHostsByShape(t, w) {
		home := get(t, c, h.base+"/").body
		css := strings.Index(home, `<link rel="stylesheet" href="`+AppSiteStylePath+`">`)
		script := strings.Index(home, `<script src="`+AppBundlePath+`"></script>`)
		if css < 0 || script < strings.Index(home, "</div>") || strings.Contains(home, " defer>") {
			t.Errorf("%s: the stylesheet at %d, the bundle at %d (not deferred, after #app):\n%s", shape, css, script, home)
		}
		styles[get(t, c, h.base+AppSiteStylePath).status]++
		if b := get(t, c, h.base+AppBundlePath).body; !strings.Contains(b, AppMainPath) {
			t.Errorf("%s: the bundle does not load %s:\n%s", shape, AppMainPath, b)
		}
		if b := get(t, c, h.base+AppMainPath).body; !strings.Contains(b, "const INDEX = true;") {
			t.Errorf("%s: the code does not fetch through the index:\n%s", shape, short(b))
		}
		if shape != AppFetch && shape != AppBlockedAPI {
			continue
		}
		var idx struct{ Next string }
		if err := json.Unmarshal([]byte(get(t, c, h.base+AppIndexPath+"?id=home").body), &idx); err != nil || idx.Next != AppAPIPath+"?id=home" {
			t.Errorf("%s: the index names %q (%v)", shape, idx.Next, err)
		}
		if d := decodeJSON(t, get(t, c, h.base+idx.Next).body); len(d.Links) == 0 {
			t.Errorf("%s: the data at %s has no links", shape, idx.Next)
		}
		if blocked := mustNot[h.key+AppIndexPath+"?id=home"]; blocked != (shape == AppBlockedAPI) {
			t.Errorf("%s: the index in MustNotFetch: %v", shape, blocked)
		}
	}
	if styles[200] == 0 || styles[404] == 0 {
		t.Errorf("stylesheet answers by status %v: want some present and some 404", styles)
	}
}
