package synthweb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shapes of the application hosts (Config.Apps), as in Web.AppHosts and
// Report.Apps. Each host has one; see the package comment.
const (
	AppInline     = "inline"      // links and text in an inline JSON block, built by the bundle
	AppFetch      = "fetch"       // the bundle fetches the page's links and text from AppAPIPath
	AppRouter     = "router"      // one shell for every path; the bundle's route table renders it
	AppBlockedAPI = "blocked_api" // as AppFetch, but robots.txt disallows /api/; a few inline links
	AppHung       = "hung"        // as AppInline, plus AppHangPage and AppHangFetchPage, which never settle
	AppRunaway    = "runaway"     // as AppInline, plus AppRunawayPage, which allocates without end
	AppMixed      = "mixed"       // as AppInline, plus pages under AppGuidePrefix rendered on the server
)

var appShapes = []string{AppInline, AppFetch, AppRouter, AppBlockedAPI, AppHung, AppRunaway, AppMixed}

// AppShapes returns the shapes of the application hosts in the order
// Config.Apps deals them out (before the seeded shuffle).
func AppShapes() []string { return slices.Clone(appShapes) }

// Targets on the application hosts that tests name.
const (
	AppBundlePath    = "/static/app.js"       // the one bundle of a host, the same URL on every page
	AppAPIPath       = "/api/page"            // ?id=home for "/", ?id=N for /p/N.html
	AppIndexPath     = "/api/index"           // Config.AppChains: ?id= as AppAPIPath, answers {"next": its URL}
	AppMainPath      = "/static/app-main.js"  // Config.AppChains: the code AppBundlePath loads
	AppSiteStylePath = "/static/site.css"     // Config.AppChains: the stylesheet in <head>; 404 on odd hosts
	AppHangAPIPath   = "/api/hang"            // answers after Config.AppHang, or when the client or the web goes
	AppHangPage      = "/app/hang.html"       // AppHung: a setInterval that keeps changing the DOM
	AppHangFetchPage = "/app/hang-fetch.html" // AppHung: a fetch of AppHangAPIPath
	AppRunawayPage   = "/app/runaway.html"    // AppRunaway: allocates until something stops it
	AppGuidePrefix   = "/guide/"              // AppMixed: /guide/N.html, rendered on the server (Web.ServerRenderedPath)

	// On the third-party host (an ordinary one, see Web.AppHosts): a
	// script every app page loads, and one robots.txt disallows.
	WidgetPath  = "/widget/embed.js"
	TrackerPath = "/track/t.js"
)

// Request.Kind of the sub-resources of application pages. Their documents
// are "page".
const (
	KindBundle = "bundle" // AppBundlePath
	KindStyle  = "style"  // the stylesheet the bundle inserts
	KindAPI    = "api"    // AppAPIPath
	KindHang   = "hang"   // AppHangAPIPath
	KindScript = "script" // WidgetPath and TrackerPath on the third-party host
	KindImage  = "image"
	KindFont   = "font"
	KindMedia  = "media"
)

const (
	appStylePath  = "/static/app.css"
	appFontPath   = "/static/font.woff2"
	appLogoPath   = "/static/img/logo.png"
	appBannerPath = "/static/img/banner.png"
	appVideoPath  = "/static/media/intro.webm"

	// appTextBytes is the prose of one app page: enough that rendering
	// finds materially more text than the shell's, little enough to keep
	// a router's route table small.
	appTextBytes = 400

	// An AppMixed host has appGuideFactor server-rendered pages per
	// PagesPerHost: a section large enough that a render tier which
	// learns it saves most of its renders. Their prose, appGuideTextBytes,
	// is an article's, far above what a shell's visible text can be
	// (pkg/render reads under 256 bytes as an empty shell).
	appGuideFactor    = 3
	appGuideTextBytes = 1200

	// DefaultAppHang is how long AppHangAPIPath keeps a request waiting.
	DefaultAppHang = 60 * time.Second
)

// appSite is what an application host serves besides the pre-rendered
// resources.
type appSite struct {
	shape     string
	reachable []string        // targets a crawler reaches from "/" without breaking robots: MustFetch
	hidden    map[string]bool // targets only links from a robots-disallowed API lead to
	notFound  *resource       // AppRouter: the shell, answered 404 on any unknown path

	serverRendered int // AppMixed: the reachable pages under AppGuidePrefix
}

// appLink and appData are the JSON the bundle builds a page from: inline,
// from the API, or from the router's table.
type appLink struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

type appData struct {
	Title string    `json:"title"`
	Text  string    `json:"text"`
	Links []appLink `json:"links"`
}

// appPage is one document of an application host.
type appPage struct {
	target string
	id     string    // AppAPIPath's id
	data   appData   // everything the bundle can show
	inline []appLink // AppBlockedAPI: the links in the page itself
	script string    // extra inline script (the hung and runaway pages)
	// hydrated: the server already built into #app what the bundle
	// builds (AppMixed's guide pages).
	hydrated bool
}

// isApp reports whether host idx is an application host: the last
// Config.Apps hosts, so that the special hosts of Features (the first six)
// and the ordinary hosts keep their indexes, seeds and graphs.
func (c Config) isApp(idx int) bool { return idx >= c.Hosts-c.Apps }

// planApps deals the shapes out to the application hosts: a seeded order
// of all seven, repeated, so that any seven consecutive app hosts have
// every shape. It also picks the third-party host: the first ordinary
// host with a plain robots.txt, which then disallows /track/.
func (w *Web) planApps() {
	if w.cfg.Apps == 0 {
		return
	}
	order := rand.New(rand.NewPCG(uint64(w.cfg.Seed), 0xa995)).Perm(len(appShapes))
	k := 0
	for _, h := range w.hosts {
		if !w.cfg.isApp(h.idx) {
			continue
		}
		h.app = &appSite{shape: appShapes[order[k%len(order)]], hidden: map[string]bool{}}
		k++
		// Always a robots.txt, even on host 0: the renderer's requests
		// must be judged against rules it read.
		g := robotsGroup{agents: []string{"*"}, disallow: []string{"/cgi-bin/"}}
		if h.app.shape == AppBlockedAPI {
			g.disallow = append(g.disallow, "/api/")
		}
		h.robots = robotsPolicy{status: http.StatusOK, groups: []robotsGroup{g}}
	}
	for _, h := range w.hosts {
		if h.app == nil && h.role == rolePlain && h.robots.status == http.StatusOK {
			w.widget = h
			h.robots.groups[0].disallow = append(h.robots.groups[0].disallow, "/track/")
			break
		}
	}
}

// buildWidget serves the third-party scripts app pages load.
func (h *host) buildWidget() {
	h.static[WidgetPath] = staticAsset(KindScript, "text/javascript; charset=utf-8", []byte(widgetJS))
	h.static[TrackerPath] = staticAsset(KindScript, "text/javascript; charset=utf-8", []byte(trackerJS))
	h.mustNotFetch(TrackerPath)
}

// AppHosts returns the shape of every application host by host key.
func (w *Web) AppHosts() map[string]string {
	out := map[string]string{}
	for _, h := range w.hosts {
		if h.app != nil {
			out[h.key] = h.app.shape
		}
	}
	return out
}

// ThirdPartyHost returns the key of the ordinary host that serves
// WidgetPath and TrackerPath to the app pages, or "" when there is none
// (no application hosts, or no ordinary host with a plain robots.txt).
func (w *Web) ThirdPartyHost() string {
	if w.widget == nil {
		return ""
	}
	return w.widget.key
}

// ServerRenderedPath reports whether path is one of the pages of an AppMixed
// host that are rendered on the server: a shell's markers, and in the HTML
// already every link and all the text the bundle shows. A render tier
// gains nothing there, and should learn that per section.
func (w *Web) ServerRenderedPath(hostKey, path string) bool {
	for _, h := range w.hosts {
		if h.key == hostKey {
			return h.app != nil && h.app.shape == AppMixed && isGuide(path) && h.static[path] != nil
		}
	}
	return false
}

func isGuide(target string) bool { return strings.HasPrefix(target, AppGuidePrefix) }

// buildApp renders an application host: its shells, bundle, API answers
// and static assets, and records which pages a crawler can reach.
func (h *host) buildApp() {
	cfg := h.web.cfg
	a := h.app
	pages := h.appPages()
	byTarget := map[string]*appPage{}
	for i := range pages {
		byTarget[pages[i].target] = &pages[i]
	}

	var routes map[string]appData
	if a.shape == AppRouter {
		routes = map[string]appData{}
		for _, p := range pages {
			routes[p.target] = p.data
		}
	}
	name := newTextGen(h.vocab, pathRNG(cfg.Seed, h.idx, "/app:name")).title()
	for i := range pages {
		p := &pages[i]
		h.static[p.target] = newResource(http.StatusOK, "page", ctHTML, h.appShell(name, p))
		if a.shape == AppFetch || a.shape == AppBlockedAPI {
			target, _ := CanonicalTarget(AppAPIPath + "?id=" + p.id)
			h.static[target] = staticAsset(KindAPI, "application/json", mustJSON(p.data))
			if a.shape == AppBlockedAPI {
				h.mustNotFetch(target)
			}
			if cfg.AppChains {
				index, _ := CanonicalTarget(AppIndexPath + "?id=" + p.id)
				h.static[index] = staticAsset(KindAPI, "application/json", mustJSON(map[string]string{"next": target}))
				if a.shape == AppBlockedAPI {
					h.mustNotFetch(index)
				}
			}
		}
	}
	if cfg.AppChains {
		h.static[AppBundlePath] = staticAsset(KindBundle, "text/javascript; charset=utf-8", []byte(loaderJS))
		h.static[AppMainPath] = staticAsset(KindBundle, "text/javascript; charset=utf-8", appBundle(a.shape, routes, true))
		if h.idx%2 == 0 {
			h.static[AppSiteStylePath] = staticAsset(KindStyle, "text/css; charset=utf-8", []byte(appCSS))
		}
	} else {
		h.static[AppBundlePath] = staticAsset(KindBundle, "text/javascript; charset=utf-8", appBundle(a.shape, routes, false))
	}
	h.static[appStylePath] = staticAsset(KindStyle, "text/css; charset=utf-8", []byte(appCSS))
	h.static[appFontPath] = staticAsset(KindFont, "font/woff2", fontBody)
	h.static[appLogoPath] = staticAsset(KindImage, "image/png", pngBody)
	h.static[appBannerPath] = staticAsset(KindImage, "image/png", pngBody)
	h.static[appVideoPath] = staticAsset(KindMedia, "video/webm", webmBody)
	if a.shape == AppRouter {
		shell := h.static["/"]
		nf := *shell
		nf.status, nf.kind = http.StatusNotFound, "notfound"
		nf.header = shell.header.Clone()
		delete(nf.header, "Etag")
		a.notFound = &nf
	}

	// What a crawler can reach: every link the scripts build, except
	// that on AppBlockedAPI only the inline ones are allowed to be seen.
	nav := func(p *appPage) []appLink {
		if a.shape == AppBlockedAPI {
			return p.inline
		}
		return p.data.Links
	}
	seen := map[string]bool{"/": true}
	queue := []string{"/"}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		a.reachable = append(a.reachable, t)
		for _, l := range nav(byTarget[t]) {
			if !seen[l.Href] && byTarget[l.Href] != nil {
				seen[l.Href] = true
				queue = append(queue, l.Href)
			}
		}
	}
	slices.Sort(a.reachable)
	for _, p := range pages {
		if !seen[p.target] {
			a.hidden[p.target] = true
		}
	}
	for _, t := range a.reachable {
		h.mustFetch(t)
		if byTarget[t].hydrated {
			a.serverRendered++
		}
	}
}

// appPages draws the host's documents: "/", /p/N.html and the shape's
// special pages, with the links the scripts build on each.
//
// AppMixed's guide pages link the next guide page, Fanout-1 random ones
// and "/", never a /p/ page: from the first one, linked only by the home
// page's script, every guide page is reachable through HTML links, and no
// /p/ page is.
func (h *host) appPages() []appPage {
	cfg := h.web.cfg
	shape := h.app.shape
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(h.idx)<<20|0xa99))
	n := cfg.PagesPerHost
	pageLink := func(i int) appLink {
		return appLink{Href: fmt.Sprintf("/p/%d.html", i), Text: fmt.Sprintf("Page %d", i)}
	}
	home := appLink{Href: "/", Text: "Home"}
	guideLink := func(i int) appLink {
		return appLink{Href: fmt.Sprintf("%s%d.html", AppGuidePrefix, i), Text: fmt.Sprintf("Guide %d", i)}
	}
	randoms := func(ls []appLink) []appLink {
		for range cfg.Fanout - 1 {
			ls = append(ls, pageLink(rng.IntN(n)))
		}
		return ls
	}
	text := func(target string, n int) (string, string) {
		g := newTextGen(h.vocab, pathRNG(cfg.Seed, h.idx, target))
		return g.title(), strings.Join(g.paragraphs(n), " ")
	}
	// On AppBlockedAPI the inline links make a chain through the first
	// half of the pages; the rest are only in the API's answers.
	inlineChain := (n + 1) / 2

	var pages []appPage
	add := func(target, id string, links, inline []appLink, script string) {
		title, prose := text(target, appTextBytes)
		p := appPage{target: target, id: id, data: appData{Title: title, Text: prose, Links: links}, script: script}
		if shape == AppBlockedAPI {
			p.inline = inline
		}
		pages = append(pages, p)
	}
	homeLinks := randoms([]appLink{pageLink(0)})
	switch shape {
	case AppHung:
		homeLinks = append(homeLinks, appLink{Href: AppHangPage, Text: "Live ticker"}, appLink{Href: AppHangFetchPage, Text: "Live feed"})
	case AppRunaway:
		homeLinks = append(homeLinks, appLink{Href: AppRunawayPage, Text: "Gallery"})
	case AppMixed:
		homeLinks = append(homeLinks, guideLink(0))
	}
	add("/", "home", homeLinks, []appLink{pageLink(0)}, "")
	for i := range n {
		links := []appLink{home}
		inline := []appLink{home}
		if i+1 < n {
			links = append(links, pageLink(i+1))
			if i+1 < inlineChain {
				inline = append(inline, pageLink(i+1))
			}
		}
		add(pageLink(i).Href, strconv.Itoa(i), randoms(links), inline, "")
	}
	switch shape {
	case AppHung:
		add(AppHangPage, "hang", []appLink{home}, nil, hangTickerJS)
		add(AppHangFetchPage, "hang-fetch", []appLink{home}, nil, hangFetchJS)
	case AppRunaway:
		add(AppRunawayPage, "runaway", []appLink{home}, nil, runawayJS)
	case AppMixed:
		g := appGuideFactor * n
		for i := range g {
			links := []appLink{home}
			if i+1 < g {
				links = append(links, guideLink(i+1))
			}
			for range cfg.Fanout - 1 {
				links = append(links, guideLink(rng.IntN(g)))
			}
			target := guideLink(i).Href
			title, prose := text(target, appGuideTextBytes)
			pages = append(pages, appPage{target: target, id: "guide-" + strconv.Itoa(i),
				data: appData{Title: title, Text: prose, Links: links}, hydrated: true})
		}
	}
	return pages
}

// appShell renders the HTML of an app page: nothing a crawler can follow,
// little visible text, the data the bundle needs. A hydrated page has the
// same markers (the bundle, #app, the <noscript> plea, the data), but #app
// and <title> hold already what the bundle would put there.
func (h *host) appShell(name string, p *appPage) []byte {
	shape := h.app.shape
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	if p.hydrated {
		name = p.data.Title
	}
	b.WriteString(html.EscapeString(name))
	b.WriteString("</title>\n")
	chains := h.web.cfg.AppChains
	if chains {
		// Render-blocking, and ahead of the bundle in the host's queue.
		b.WriteString("<link rel=\"stylesheet\" href=\"" + AppSiteStylePath + "\">\n")
	} else {
		b.WriteString("<script src=\"" + AppBundlePath + "\" defer></script>\n")
	}
	if wh := h.web.widget; wh != nil {
		fmt.Fprintf(&b, "<script src=\"%s%s\" async></script>\n<script src=\"%s%s\" async></script>\n",
			wh.base, WidgetPath, wh.base, TrackerPath)
	}
	b.WriteString("</head>\n<body>\n<div id=\"app\"")
	if shape != AppRouter { // a router's shell is the same on every path
		b.WriteString(" data-page=\"" + html.EscapeString(p.id) + "\"")
	}
	b.WriteString(">")
	if p.hydrated {
		writeHydrated(&b, p.data)
	}
	b.WriteString("</div>\n<noscript><p>Please enable JavaScript to use this site.</p></noscript>\n")
	b.WriteString("<img src=\"" + appLogoPath + "\" alt=\"\" width=\"16\" height=\"16\">\n")
	b.WriteString("<video src=\"" + appVideoPath + "\" preload=\"auto\" muted width=\"16\" height=\"16\"></video>\n")
	switch shape {
	case AppInline, AppHung, AppRunaway, AppMixed:
		writeInlineData(&b, p.data)
	case AppBlockedAPI:
		d := p.data
		d.Links = p.inline
		writeInlineData(&b, d)
	}
	if p.script != "" {
		b.WriteString("<script>\n" + p.script + "</script>\n")
	}
	if chains {
		b.WriteString("<script src=\"" + AppBundlePath + "\"></script>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
}

// writeInlineData embeds d for the bundle. encoding/json escapes <, > and
// &, so the block cannot end the script element early.
func writeInlineData(b *bytes.Buffer, d appData) {
	b.WriteString("<script type=\"application/json\" id=\"app-data\">")
	b.Write(mustJSON(d))
	b.WriteString("</script>\n")
}

// writeHydrated writes the elements the bundle's show() builds from d, in
// the same order and without whitespace between them, so that the DOM
// after the bundle ran has the same links and text as the HTML.
func writeHydrated(b *bytes.Buffer, d appData) {
	fmt.Fprintf(b, "<h1>%s</h1><p>%s</p><ul>", html.EscapeString(d.Title), html.EscapeString(d.Text))
	for _, l := range d.Links {
		fmt.Fprintf(b, "<li><a href=\"%s\">%s</a></li>", html.EscapeString(l.Href), html.EscapeString(l.Text))
	}
	b.WriteString("</ul>")
}

func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("synthweb: marshal %T: %v", v, err)) // plain structs of strings: cannot happen
	}
	return out
}

// appBundle is the host's script: the shape, the router's table, then the
// code every shape shares.
func appBundle(shape string, routes map[string]appData, index bool) []byte {
	var b bytes.Buffer
	b.WriteString("'use strict';\n")
	b.WriteString("const SHAPE = " + strconv.Quote(shape) + ";\n")
	b.WriteString("const INDEX = " + strconv.FormatBool(index) + ";\n")
	b.WriteString("const ROUTES = ")
	if routes == nil {
		b.WriteString("{}")
	} else {
		b.Write(mustJSON(routes)) // map keys sorted: the same bytes on every start
	}
	b.WriteString(";\n")
	b.WriteString(bundleJS)
	return b.Bytes()
}

// staticAsset is a sub-resource a browser may cache for the crawl.
func staticAsset(kind, ctype string, body []byte) *resource {
	r := newResource(http.StatusOK, kind, []string{ctype}, body)
	r.header["Cache-Control"] = []string{"public, max-age=86400"}
	return r
}

// dynamicApp answers what an application host makes per request: the hung
// API, and on a router every unknown path (the shell, with 404). It returns
// nil, having set rec.Kind, when the hung request was given up.
func (h *host) dynamicApp(ctx context.Context, target string, rec *Request) (res *resource, ok bool) {
	switch {
	case h.app.shape == AppHung && (target == AppHangAPIPath || strings.HasPrefix(target, AppHangAPIPath+"?")):
		if h.web.wait(ctx, h.web.cfg.AppHang) {
			return hangAnswer, true
		}
		rec.Kind = KindHang
		return nil, true
	case h.app.notFound != nil && !strings.HasPrefix(target, "/static/") && !strings.HasPrefix(target, "/api/"):
		return h.app.notFound, true
	}
	return nil, false
}

var hangAnswer = staticAsset(KindHang, "text/plain; charset=utf-8", []byte("The live feed has closed.\n"))

var (
	pngBody = func() []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
			panic(err) // a 1x1 image into memory cannot fail
		}
		return b.Bytes()
	}()
	// Not fonts or videos a browser can decode, only something of the
	// right type to count: a renderer must not ask for them at all.
	fontBody = append([]byte("wOF2"), make([]byte, 60)...)
	webmBody = append([]byte{0x1a, 0x45, 0xdf, 0xa3}, make([]byte, 60)...)
)

// The scripts. Plain ES2017, no dependencies.
const (
	// bundleJS builds the page into #app from the data the shape gives,
	// inserts the stylesheet (whose @font-face asks for the font) and a
	// banner image.
	bundleJS = `(() => {
  const app = document.getElementById('app');
  const el = (tag, text) => {
    const e = document.createElement(tag);
    if (text) e.textContent = text;
    return e;
  };
  const show = (page, more) => {
    if (!more) {
      app.textContent = '';
      document.title = page.title;
      app.appendChild(el('h1', page.title));
      app.appendChild(el('p', page.text));
    }
    const ul = el('ul');
    for (const l of page.links) {
      const a = el('a', l.text);
      a.href = l.href;
      const li = el('li');
      li.appendChild(a);
      ul.appendChild(li);
    }
    app.appendChild(ul);
  };
  const decorate = () => {
    const css = el('link');
    css.rel = 'stylesheet';
    css.href = '/static/app.css';
    document.head.appendChild(css);
    const img = el('img');
    img.src = '/static/img/banner.png';
    img.alt = '';
    img.width = 16;
    img.height = 16;
    document.body.appendChild(img);
  };
  const inline = () => JSON.parse(document.getElementById('app-data').textContent);
  const api = async () => {
    let url = '/api/page?id=' + encodeURIComponent(app.dataset.page);
    if (INDEX) {
      const r = await fetch('/api/index?id=' + encodeURIComponent(app.dataset.page));
      if (!r.ok) throw new Error('the index answered ' + r.status);
      url = (await r.json()).next;
    }
    const r = await fetch(url);
    if (!r.ok) throw new Error('the API answered ' + r.status);
    return r.json();
  };
  const notFound = {title: 'Not found', text: 'There is no such page.', links: [{href: '/', text: 'Home'}]};
  const route = () => show(ROUTES[location.pathname] || notFound);
  const main = async () => {
    decorate();
    switch (SHAPE) {
    case 'router':
      route();
      document.addEventListener('click', (e) => {
        const a = e.target.closest('a');
        if (!a || a.origin !== location.origin || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        history.pushState(null, '', a.pathname);
        route();
      });
      window.addEventListener('popstate', route);
      break;
    case 'fetch':
      show(await api());
      break;
    case 'blocked_api':
      show(inline());
      try {
        show(await api(), true);
      } catch (e) {
        app.appendChild(el('p', 'More links could not be loaded.'));
      }
      break;
    default:
      show(inline());
    }
  };
  main().catch((e) => app.appendChild(el('p', 'This page could not be built: ' + e.message)));
})();
`

	// loaderJS is Config.AppChains' bundle: it loads the code, as a
	// site's entry chunk loads the rest.
	loaderJS = `(() => {
  const s = document.createElement('script');
  s.src = '/static/app-main.js';
  document.head.appendChild(s);
})();
`

	appCSS = `@font-face { font-family: "Synth Sans"; src: url("/static/font.woff2") format("woff2"); }
body { font-family: "Synth Sans", sans-serif; margin: 2em; }
`

	// hangTickerJS never lets the DOM settle.
	hangTickerJS = `document.addEventListener('DOMContentLoaded', () => {
  const p = document.createElement('p');
  document.body.appendChild(p);
  let n = 0;
  setInterval(() => { p.textContent = 'Live update ' + (++n); }, 20);
});
`

	// hangFetchJS waits for an answer that comes only after Config.AppHang.
	hangFetchJS = `document.addEventListener('DOMContentLoaded', () => {
  const p = document.createElement('p');
  p.textContent = 'Loading the live feed...';
  document.body.appendChild(p);
  fetch('/api/hang').then((r) => r.text()).then((t) => { p.textContent = t; }, (e) => { p.textContent = 'The feed failed: ' + e.message; });
});
`

	// runawayJS allocates 4 MiB or more per task, without end, once the
	// page is built; data-arrays on <body> counts the arrays held.
	runawayJS = `document.addEventListener('DOMContentLoaded', () => {
  const hog = [];
  const grow = () => {
    for (let i = 0; i < 8; i++) hog.push(new Array(1 << 17).fill('runaway ' + hog.length));
    document.body.dataset.arrays = String(hog.length);
    setTimeout(grow, 0);
  };
  grow();
});
`

	widgetJS = `(() => {
  const p = document.createElement('p');
  p.className = 'widget';
  p.textContent = 'Shared with the synthetic widget.';
  document.body.appendChild(p);
})();
`

	trackerJS = `(() => { window.synthTracked = true; })();
`
)

// AppsReport is the audit of the application hosts (Config.Apps). A
// renderer that works reaches every page a crawler can reach without
// breaking robots (Coverage 1), fetches each shared script and stylesheet
// once, never an image, font or video (Media, a violation), and no app
// page twice (RepeatedDocuments, also counted in Duplicates).
type AppsReport struct {
	Shapes map[string][]string `json:"shapes"` // shape -> host keys, in host order
	Hosts  []AppHostReport     `json:"hosts"`  // every application host, in host order

	Reachable int     `json:"reachable"` // app pages reachable from the home pages without breaking robots (in MustFetch)
	Fetched   int     `json:"fetched"`   // of those, fetched by the Missing rule
	Coverage  float64 `json:"coverage"`  // Fetched / Reachable

	// The rest of MustFetch: an HTML-only crawler should have 1 here.
	OrdinaryMustFetch int     `json:"ordinary_must_fetch"`
	OrdinaryFetched   int     `json:"ordinary_fetched"`
	OrdinaryCoverage  float64 `json:"ordinary_coverage"` // 1 when OrdinaryMustFetch is 0

	APIRequests   int `json:"api_requests"`   // requests of AppAPIPath on any app host
	APIDisallowed int `json:"api_disallowed"` // of those, ones robots.txt disallows (each also a Robots violation)
	HungRequests  int `json:"hung_requests"`  // requests of AppHangAPIPath
	HiddenFetched int `json:"hidden_fetched"` // requests of pages only a robots-disallowed API links to

	// Bundles counts the requests of every shared script and stylesheet
	// (KindBundle, KindStyle and the third-party KindScript) by resource
	// id: a renderer that caches them for the crawl asks once.
	Bundles    map[string]int `json:"bundles"`
	ThirdParty int            `json:"third_party"` // requests of the third-party scripts (KindScript)

	MediaRequests     map[string]int `json:"media_requests"`     // by kind: "image", "font", "media"
	Media             Violations     `json:"media"`              // an image, font or media request
	RepeatedDocuments Violations     `json:"repeated_documents"` // an app page requested again (also a Duplicates violation)
	RepeatedBundles   Violations     `json:"repeated_bundles"`   // a Bundles resource requested again (also a Duplicates violation)
}

// RenderChecks are the rules a crawl that renders the application hosts
// must keep, by name: every request, sub-resources included, polite and
// allowed by robots.txt, no image, font or video, no page and no shared
// script fetched twice. A Report without application hosts has only the
// first three.
func (r Report) RenderChecks() []NamedViolations {
	out := []NamedViolations{{"overlaps", r.Overlaps}, {"politeness", r.Politeness}, {"robots", r.Robots}}
	if a := r.Apps; a != nil {
		out = append(out, NamedViolations{"media", a.Media}, NamedViolations{"repeated documents", a.RepeatedDocuments},
			NamedViolations{"repeated bundles", a.RepeatedBundles})
	}
	return out
}

// RenderProblems is what a crawl that renders the application hosts got
// wrong, one line each: a reachable page not fetched (application or
// ordinary), a RenderChecks violation, the robots-disallowed API asked for
// or a page only it links to fetched. None for a crawl that did it all.
func (r Report) RenderProblems() []string {
	var out []string
	if a := r.Apps; a == nil {
		out = append(out, "the audit has no application report")
	} else {
		if a.Coverage != 1 || a.OrdinaryCoverage != 1 {
			out = append(out, fmt.Sprintf("coverage: application pages %.3f (%d of %d), ordinary %.3f (%d of %d)",
				a.Coverage, a.Fetched, a.Reachable, a.OrdinaryCoverage, a.OrdinaryFetched, a.OrdinaryMustFetch))
		}
		if a.APIDisallowed > 0 || a.HiddenFetched > 0 {
			out = append(out, fmt.Sprintf("robots-disallowed API called %d times, %d hidden pages fetched", a.APIDisallowed, a.HiddenFetched))
		}
	}
	for _, v := range r.RenderChecks() {
		if v.Count > 0 {
			out = append(out, fmt.Sprintf("%s: %d violations: %v", v.Name, v.Count, v.Examples))
		}
	}
	return out
}

// NamedViolations is one rule's violations with the rule's name.
type NamedViolations struct {
	Name string
	Violations
}

// AppHostReport is what one application host received.
type AppHostReport struct {
	Host      string  `json:"host"`
	Shape     string  `json:"shape"`
	Reachable int     `json:"reachable"` // pages reachable without breaking robots
	Fetched   int     `json:"fetched"`
	Coverage  float64 `json:"coverage"`
	Hidden    int     `json:"hidden"` // pages only the robots-disallowed API links to (AppBlockedAPI)
	// ServerRendered: of Reachable, the pages rendered on the server
	// (AppMixed, Web.ServerRenderedPath), where rendering finds nothing more.
	ServerRendered int `json:"server_rendered"`

	Requests          int `json:"requests"`  // all, robots.txt included
	Documents         int `json:"documents"` // requests of its pages (Kind "page"), repeats included
	RepeatedDocuments int `json:"repeated_documents"`
	BundleRequests    int `json:"bundle_requests"` // its bundle and stylesheet
	APIRequests       int `json:"api_requests"`
	HungRequests      int `json:"hung_requests"`
	MediaRequests     int `json:"media_requests"`
	HiddenFetched     int `json:"hidden_fetched"`
}

// appWorld is what the audit knows of an application host.
type appWorld struct {
	host      string
	shape     string
	reachable []string        // resource ids
	hidden    map[string]bool // resource ids

	serverRendered int
}

func (h *host) appWorld() appWorld {
	aw := appWorld{host: h.key, shape: h.app.shape, hidden: map[string]bool{}, serverRendered: h.app.serverRendered}
	for _, t := range h.app.reachable {
		aw.reachable = append(aw.reachable, h.key+t)
	}
	for t := range h.app.hidden {
		aw.hidden[h.key+t] = true
	}
	return aw
}

// apps fills Report.Apps from the requests, in order of Start.
func (a *auditor) apps(reqs []Request, wd world) {
	ar := &AppsReport{Shapes: map[string][]string{}, Bundles: map[string]int{}, MediaRequests: map[string]int{}}
	a.rep.Apps = ar
	byHost := map[string]*AppHostReport{}
	hidden := map[string]bool{}
	ar.Hosts = make([]AppHostReport, len(wd.apps))
	for i, aw := range wd.apps {
		hr := &ar.Hosts[i]
		*hr = AppHostReport{Host: aw.host, Shape: aw.shape, Reachable: len(aw.reachable), Hidden: len(aw.hidden),
			ServerRendered: aw.serverRendered, Coverage: 1}
		byHost[aw.host] = hr
		ar.Shapes[aw.shape] = append(ar.Shapes[aw.shape], aw.host)
		for _, id := range aw.reachable {
			if a.fetched[id] {
				hr.Fetched++
			}
		}
		if hr.Reachable > 0 {
			hr.Coverage = float64(hr.Fetched) / float64(hr.Reachable)
		}
		ar.Reachable += hr.Reachable
		ar.Fetched += hr.Fetched
		for id := range aw.hidden {
			hidden[id] = true
		}
	}
	ar.Coverage = 1
	if ar.Reachable > 0 {
		ar.Coverage = float64(ar.Fetched) / float64(ar.Reachable)
	}
	ar.OrdinaryMustFetch = a.rep.MustFetch - ar.Reachable
	ar.OrdinaryFetched = a.rep.Fetched - ar.Fetched
	ar.OrdinaryCoverage = 1
	if ar.OrdinaryMustFetch > 0 {
		ar.OrdinaryCoverage = float64(ar.OrdinaryFetched) / float64(ar.OrdinaryMustFetch)
	}

	documents := map[string]int{}
	for _, r := range reqs {
		hr := byHost[r.Host] // nil on an ordinary host
		if hr != nil {
			hr.Requests++
		}
		switch r.Kind {
		case KindImage, KindFont, KindMedia:
			ar.MediaRequests[r.Kind]++
			ar.Media.add(a.max, "%s %s (%s) requested at %s", r.Host, short(r.Target), r.Kind, a.at(r.Start))
			if hr != nil {
				hr.MediaRequests++
			}
		case KindBundle, KindStyle, KindScript:
			ar.Bundles[r.Resource]++
			if n := ar.Bundles[r.Resource]; n > 1 {
				ar.RepeatedBundles.add(a.max, "%s requested for the %s time at %s", short(r.Resource), ordinal(n), a.at(r.Start))
			}
			if r.Kind == KindScript {
				ar.ThirdParty++
			} else if hr != nil {
				hr.BundleRequests++
			}
		case KindAPI:
			ar.APIRequests++
			target, _ := CanonicalTarget(r.Target)
			if !wd.robots[r.Host].allowed(a.agent, target) {
				ar.APIDisallowed++
			}
			if hr != nil {
				hr.APIRequests++
			}
		case KindHang:
			ar.HungRequests++
			if hr != nil {
				hr.HungRequests++
			}
		case "page":
			if hr == nil {
				continue
			}
			hr.Documents++
			documents[r.Resource]++
			if n := documents[r.Resource]; n > 1 {
				hr.RepeatedDocuments++
				ar.RepeatedDocuments.add(a.max, "%s requested for the %s time at %s", short(r.Resource), ordinal(n), a.at(r.Start))
			}
			if hidden[r.Resource] {
				hr.HiddenFetched++
				ar.HiddenFetched++
			}
		}
	}
}

func ordinal(n int) string {
	switch n {
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return strconv.Itoa(n) + "th"
}

// string adds the application hosts to Report.String.
func (ar *AppsReport) string(b *strings.Builder) {
	fmt.Fprintf(b, "  apps:        %d hosts;", len(ar.Hosts))
	for _, s := range appShapes {
		if n := len(ar.Shapes[s]); n > 0 {
			fmt.Fprintf(b, " %s %d", s, n)
		}
	}
	fmt.Fprintf(b, "\n               coverage %.1f%% (%d of %d reachable pages), ordinary hosts %.1f%% (%d of %d)\n",
		100*ar.Coverage, ar.Fetched, ar.Reachable, 100*ar.OrdinaryCoverage, ar.OrdinaryFetched, ar.OrdinaryMustFetch)
	fmt.Fprintf(b, "               api %d (%d disallowed), hung %d, hidden pages %d, shared scripts %d requests of %d URLs (%d repeated), third-party %d, app pages repeated %d\n",
		ar.APIRequests, ar.APIDisallowed, ar.HungRequests, ar.HiddenFetched,
		sumValues(ar.Bundles), len(ar.Bundles), ar.RepeatedBundles.Count, ar.ThirdParty, ar.RepeatedDocuments.Count)
	// Per shape: the hosts are in the JSON, and there may be hundreds.
	for _, s := range appShapes {
		var sum AppHostReport
		for _, hr := range ar.Hosts {
			if hr.Shape != s {
				continue
			}
			sum.Reachable += hr.Reachable
			sum.Fetched += hr.Fetched
			sum.Hidden += hr.Hidden
			sum.ServerRendered += hr.ServerRendered
			sum.Requests += hr.Requests
			sum.Documents += hr.Documents
			sum.BundleRequests += hr.BundleRequests
			sum.APIRequests += hr.APIRequests
			sum.HungRequests += hr.HungRequests
			sum.MediaRequests += hr.MediaRequests
		}
		if len(ar.Shapes[s]) == 0 {
			continue
		}
		cov := 1.0
		if sum.Reachable > 0 {
			cov = float64(sum.Fetched) / float64(sum.Reachable)
		}
		fmt.Fprintf(b, "    - %-11s %5.1f%% (%d of %d, %d hidden, %d server-rendered), %d requests: %d documents, %d bundle, %d api, %d hung, %d media\n",
			s+":", 100*cov, sum.Fetched, sum.Reachable, sum.Hidden, sum.ServerRendered,
			sum.Requests, sum.Documents, sum.BundleRequests, sum.APIRequests, sum.HungRequests, sum.MediaRequests)
	}
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
