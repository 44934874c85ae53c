package synthweb

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/simhash"
)

// trapsConfig is a web big enough for every trap class to appear many
// times, with the special hosts so that traps meet them too.
func trapsConfig() Config {
	cfg := featuresConfig()
	cfg.Hosts = 50
	cfg.PagesPerHost = 10
	cfg.Traps = true
	return cfg
}

// fetched is one page as the crawler would see it.
type fetched struct {
	target string
	status int
	doc    *parse.Document
	fp     uint64
}

func fetchPage(tb testing.TB, w *Web, host, target string) fetched {
	tb.Helper()
	pageURL := "http://" + host + target
	got := get(tb, rawClient(), pageURL)
	doc, err := parse.Parse([]byte(got.body), got.header.Get("Content-Type"), pageURL, nil, parse.Options{})
	if err != nil {
		tb.Fatalf("parse %s: %v", pageURL, err)
	}
	return fetched{target: target, status: got.status, doc: doc, fp: simhash.Fingerprint(doc.Text)}
}

// targetOf returns the canonical request target of a link to host, or ""
// for a link elsewhere.
func targetOf(tb testing.TB, host, link string) string {
	tb.Helper()
	u, err := url.Parse(link)
	if err != nil {
		tb.Fatalf("parse link %q: %v", link, err)
	}
	if u.Host != host {
		return ""
	}
	t := u.EscapedPath()
	if u.RawQuery != "" {
		t += "?" + u.RawQuery
	}
	c, _ := CanonicalTarget(t)
	return c
}

func near(a, b uint64) bool { return simhash.Distance(a, b) <= simhash.MaxDistance }

func TestTrapSpaces(t *testing.T) {
	day := time.Date(2024, 6, 15, 0, 0, 0, 0, time.UTC)
	hex16 := idFormats[0]
	tests := []struct {
		name   string
		space  trapSpace
		target string
		label  string
		links  []string // hrefs in order; nil: target is not in the space
	}{
		{"path calendar", pathCalendar{prefix: "/events/", layout: "2006/01/", label: "January", start: day},
			"/events/2024/06/", "June", []string{"/events/2024/05/", "/events/2024/07/", "/events/2025/06/"}},
		{"path calendar, month first", pathCalendar{prefix: "/diary/", layout: "01-2006/", label: "Jan", start: day},
			"/diary/01-2025/", "Jan", []string{"/diary/12-2024/", "/diary/02-2025/", "/diary/01-2026/"}},
		{"path calendar, bad month", pathCalendar{prefix: "/events/", layout: "2006/01/", label: "January", start: day},
			"/events/2024/13/", "", nil},
		{"path calendar, other spelling", pathCalendar{prefix: "/events/", layout: "2006/01/", label: "January", start: day},
			"/events/2024/6/", "", nil},
		{"query calendar", queryCalendar{path: "/agenda", key: "date", layout: "2006-01-02", label: "Monday", start: day},
			"/agenda?date=2024-06-15", "Saturday", []string{"/agenda?date=2024-06-14", "/agenda?date=2024-06-16", "/agenda?date=2024-06-22"}},
		{"query calendar, dotted", queryCalendar{path: "/whatson.php", key: "d", layout: "02.01.2006", label: "Mon", start: day},
			"/whatson.php?d=31.12.2024", "Tue", []string{"/whatson.php?d=30.12.2024", "/whatson.php?d=01.01.2025", "/whatson.php?d=07.01.2025"}},
		{"query calendar, other key", queryCalendar{path: "/agenda", key: "date", layout: "2006-01-02", label: "Monday", start: day},
			"/agenda?day=2024-06-15", "", nil},
		{"pagination", pagination{path: "/list", key: "page", first: 1, step: 1},
			"/list?page=5", "Page 5", []string{"/list?page=6", "/list?page=7", "/list?page=4"}},
		{"pagination, first page", pagination{path: "/list", key: "page", first: 1, step: 1},
			"/list?page=1", "Page 1", []string{"/list?page=2", "/list?page=3"}},
		{"pagination, far", pagination{path: "/list", key: "page", first: 1, step: 1},
			"/list?page=1000000", "Page 1000000", []string{"/list?page=1000001", "/list?page=1000002", "/list?page=999999"}},
		{"pagination, zero", pagination{path: "/list", key: "page", first: 1, step: 1}, "/list?page=0", "", nil},
		{"pagination, leading zero", pagination{path: "/list", key: "page", first: 1, step: 1}, "/list?page=05", "", nil},
		{"pagination, offset", pagination{path: "/items/", key: "offset", first: 0, step: 20},
			"/items/?offset=40", "Page 3", []string{"/items/?offset=60", "/items/?offset=80", "/items/?offset=20"}},
		{"pagination, offset off step", pagination{path: "/items/", key: "offset", first: 0, step: 20}, "/items/?offset=30", "", nil},
		{"facets", facets{path: "/shop", keys: []string{"color", "size", "sort"}, values: facetValues},
			"/shop?size=m&color=red", "", []string{"/shop?color=blue&size=m", "/shop?color=red&size=l", "/shop?color=red&size=m&sort=price"}},
		{"facets, none", facets{path: "/shop", keys: []string{"color", "size", "sort"}, values: facetValues},
			"/shop", "", []string{"/shop?color=red", "/shop?size=xs", "/shop?sort=price"}},
		{"facets, last value wraps to none", facets{path: "/shop", keys: []string{"color", "size", "sort"}, values: facetValues},
			"/shop?color=grey", "", []string{"/shop", "/shop?color=grey&size=xs", "/shop?color=grey&sort=price"}},
		{"facets, unknown key", facets{path: "/shop", keys: []string{"color", "size", "sort"}, values: facetValues}, "/shop?brand=acme", "", nil},
		{"facets, unknown value", facets{path: "/shop", keys: []string{"color", "size", "sort"}, values: facetValues}, "/shop?color=pink", "", nil},
		{"facets, repeated key", facets{path: "/shop", keys: []string{"color", "size", "sort"}, values: facetValues}, "/shop?color=red&color=blue", "", nil},
		{"soft 404", soft404{prefix: "/wiki/", start: "start/", steps: []string{"a/", "b/"}},
			"/wiki/anything/at/all/", "all", []string{"a/", "b/"}},
		{"soft 404, file", soft404{prefix: "/kb/", start: "home/", steps: []string{"x/", "y/", "z/"}},
			"/kb/no-such-page.html", "no-such-page.html", []string{"x/", "y/", "z/"}},
		{"soft 404, outside", soft404{prefix: "/wiki/", start: "start/", steps: []string{"a/", "b/"}}, "/wikipedia/", "", nil},
		{"session path, wrong alphabet", session{before: "/s/", after: "/p/3.html", id: hex16}, "/s/0123456789ABCDEF/p/3.html", "", nil},
		{"session path, short id", session{before: "/s/", after: "/p/3.html", id: hex16}, "/s/0123/p/3.html", "", nil},
		{"session path, other page", session{before: "/s/", after: "/p/3.html", id: hex16}, "/s/0123456789abcdef/p/4.html", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := tt.space.page(tt.target)
			if ok != (tt.links != nil) {
				t.Fatalf("page(%q) ok = %v, want %v", tt.target, ok, tt.links != nil)
			}
			if !ok {
				return
			}
			var hrefs []string
			for _, l := range v.links {
				hrefs = append(hrefs, l.href)
			}
			if !slices.Equal(hrefs, tt.links) {
				t.Errorf("links %q, want %q", hrefs, tt.links)
			}
			if tt.label != "" && v.label != tt.label {
				t.Errorf("label %q, want %q", v.label, tt.label)
			}
			if _, ok := tt.space.page(tt.space.entry()); !ok {
				t.Errorf("entry %q is not in the space", tt.space.entry())
			}
		})
	}

	// Session ids: any id of the host's format works, every link carries
	// a fresh one of the same format.
	for _, s := range []session{
		{before: "/s/", after: "/p/3.html", id: hex16, seed: 1},
		{before: "/p/3.html;visit=", id: idFormats[3], seed: 2},
		{before: "/p/3.html?visitor=", id: idFormats[4], seed: 3},
	} {
		t.Run("session "+s.before, func(t *testing.T) {
			target := s.entry()
			seen := map[string]bool{target: true}
			for range 5 {
				v, ok := s.page(target)
				if !ok || len(v.links) != 2 {
					t.Fatalf("page(%q) = %v, %v", target, v, ok)
				}
				for _, l := range v.links {
					if seen[l.href] {
						t.Errorf("%q links %q again", target, l.href)
					}
					seen[l.href] = true
					if _, ok := s.page(l.href); !ok {
						t.Errorf("%q links %q, which is not in the space", target, l.href)
					}
				}
				target = v.links[0].href
			}
		})
	}
}

// shapeOf reduces an entry URL to its shape: ids and numbers replaced.
var (
	idRun  = regexp.MustCompile(`[0-9A-Za-z]{12,}`)
	numRun = regexp.MustCompile(`[0-9]+`)
)

func shapeOf(entry string) string {
	return numRun.ReplaceAllString(idRun.ReplaceAllString(entry, "ID"), "N")
}

func TestTrapPlan(t *testing.T) {
	cfg := trapsConfig()
	w := startWeb(t, cfg)
	classes := map[string]int{}
	shapes := map[string]map[string]bool{}
	hubs := 0
	for _, h := range w.hosts {
		if h.role == roleRobots5xx {
			if len(h.traps) != 0 {
				t.Errorf("host %d (robots.txt 500) has %d traps", h.idx, len(h.traps))
			}
			continue
		}
		if n := len(h.traps); n < 1 || n > 3 {
			t.Errorf("host %d has %d trap instances, want 1-3", h.idx, n)
		}
		home := string(h.static["/"].body)
		seen := map[string]bool{}
		for _, tr := range h.traps {
			if seen[tr.class] {
				t.Errorf("host %d has two %s instances", h.idx, tr.class)
			}
			seen[tr.class] = true
			classes[tr.class]++
			if shapes[tr.class] == nil {
				shapes[tr.class] = map[string]bool{}
			}
			shapes[tr.class][shapeOf(tr.space.entry())] = true
			if tr.id != h.key+"#"+tr.class {
				t.Errorf("instance id %q", tr.id)
			}
			entry := `href="` + htmlEscape(tr.space.entry()) + `"`
			onto := string(h.static[fmt.Sprintf("/p/%d.html", tr.onto)].body)
			if !strings.Contains(home, entry) || !strings.Contains(onto, entry) {
				t.Errorf("host %d: %s entry %s not linked from / and /p/%d.html", h.idx, tr.class, entry, tr.onto)
			}
		}
		if hubHost(cfg.Seed, h.idx) {
			hubs++
		}
	}
	for _, c := range trapClasses {
		if classes[c] < 10 {
			t.Errorf("class %s has %d instances in %d hosts, want at least 10", c, classes[c], cfg.Hosts)
		}
		if len(shapes[c]) < 3 {
			t.Errorf("class %s has shapes %v, want at least 3", c, slices.Sorted(maps.Keys(shapes[c])))
		}
	}
	if hubs < 4 {
		t.Errorf("%d hub hosts of %d, want several", hubs, cfg.Hosts)
	}
	t.Logf("instances per class %v, %d hub hosts", classes, hubs)

	// Trap pages are made on request and never owed.
	for _, id := range w.MustFetch() {
		for _, h := range w.hosts {
			if target, ok := strings.CutPrefix(id, h.key); ok && strings.HasPrefix(target, "/") {
				if res := h.instancePage(target); res != nil {
					t.Errorf("MustFetch lists trap page %s (%s)", id, res.trap)
				}
			}
		}
	}

	// The plan depends on the seed and the host only.
	again := startWeb(t, cfg)
	for i, h := range w.hosts {
		var a, b []string
		for _, tr := range h.traps {
			a = append(a, tr.space.entry())
		}
		for _, tr := range again.hosts[i].traps {
			b = append(b, tr.space.entry())
		}
		if !slices.Equal(a, b) {
			t.Errorf("host %d: entries %q, then %q", i, a, b)
		}
	}
}

func htmlEscape(s string) string { return strings.ReplaceAll(s, "&", "&amp;") }

// portRun matches the port of a link: two webs do not share theirs.
var portRun = regexp.MustCompile(`:[0-9]+/`)

func TestTrapsOff(t *testing.T) {
	cfg := trapsConfig()
	cfg.Traps = false
	w := startWeb(t, cfg)
	on := startWeb(t, trapsConfig())
	for i, h := range w.hosts {
		if len(h.traps) != 0 {
			t.Errorf("host %d has traps with Traps off", i)
		}
		a := portRun.ReplaceAll(h.static["/p/1.html"].body, nil)
		b := portRun.ReplaceAll(on.hosts[i].static["/p/1.html"].body, nil)
		if !slices.Equal(a, b) && !slices.ContainsFunc(on.hosts[i].traps, func(tr *trapInstance) bool { return tr.onto == 1 }) {
			t.Errorf("host %d: /p/1.html differs with Traps on, though no trap links from it", i)
		}
	}
	if n, m := len(w.MustFetch()), len(on.MustFetch()); n >= m {
		t.Errorf("MustFetch has %d resources without traps, %d with: the hubs are missing", n, m)
	}
}

// TestTrapInstancesServe walks into every instance of a 50-host web as a
// crawler would: each page answers 200, is logged with its class and
// instance, links to pages of the instance not seen before, and is a
// near-duplicate of the instance's other pages but of nothing else.
func TestTrapInstancesServe(t *testing.T) {
	w := startWeb(t, trapsConfig())
	steps := 10
	if testing.Short() {
		steps = 4
	}
	type firstPage struct {
		id string
		fp uint64
	}
	var firsts []firstPage
	perClass := map[string]int{}
	for _, h := range w.hosts {
		ordinary := map[uint64]string{}
		for _, p := range []string{"/", "/p/0.html", "/p/1.html", "/p/2.html"} {
			ordinary[fetchPage(t, w, h.key, p).fp] = p
		}
		for _, tr := range h.traps {
			perClass[tr.class]++
			if testing.Short() && perClass[tr.class] > 3 {
				continue
			}
			t.Run(tr.id, func(t *testing.T) {
				inSpace := func(target string) bool { _, ok := tr.space.page(target); return ok }
				queue := []string{tr.space.entry()}
				seen := map[string]bool{queue[0]: true}
				var pages []fetched
				for len(pages) < steps && len(queue) > 0 {
					// Depth first, as deep as a trap goes.
					target := queue[len(queue)-1]
					queue = queue[:len(queue)-1]
					p := fetchPage(t, w, h.key, target)
					if p.status != 200 {
						t.Fatalf("%s answered %d", target, p.status)
					}
					fresh := 0
					for _, l := range p.doc.Links {
						lt := targetOf(t, h.key, l.URL)
						if lt == "" || !inSpace(lt) || seen[lt] {
							continue
						}
						seen[lt] = true
						fresh++
						queue = append(queue, lt)
					}
					if fresh == 0 {
						t.Errorf("%s links no new page of the instance", target)
					}
					pages = append(pages, p)
				}
				if len(pages) < steps {
					t.Fatalf("the space ended after %d pages", len(pages))
				}
				for i, a := range pages {
					for _, b := range pages[:i] {
						if d := simhash.Distance(a.fp, b.fp); d > simhash.MaxDistance {
							t.Errorf("%s and %s are %d bits apart", a.target, b.target, d)
						}
					}
					if p, ok := nearAny(a.fp, ordinary); ok && !strings.HasPrefix(tr.class, "session") {
						t.Errorf("%s is a near-duplicate of the ordinary page %s", a.target, p)
					}
				}
				firsts = append(firsts, firstPage{tr.id, pages[0].fp})

				if strings.HasPrefix(tr.class, "session") {
					// The real page's content is behind the id.
					real := fetchPage(t, w, h.key, fmt.Sprintf("/p/%d.html", tr.onto))
					prose := real.doc.Text[:200]
					if !strings.Contains(pages[0].doc.Text, prose) {
						t.Errorf("%s does not show /p/%d.html's text %q", pages[0].target, tr.onto, prose)
					}
				}

				// The log names the class and the instance.
				want := map[string]bool{}
				for _, p := range pages {
					want[p.target] = true
				}
				deadline := time.Now().Add(3 * time.Second)
				for len(want) > 0 && time.Now().Before(deadline) {
					for _, r := range w.Requests() {
						if r.Host != h.key || !want[strings.TrimPrefix(r.Resource, h.key)] {
							continue
						}
						delete(want, strings.TrimPrefix(r.Resource, h.key))
						if r.Kind != "trap" || r.Trap != tr.class || r.TrapInstance != tr.id {
							t.Errorf("%s logged kind %q trap %q instance %q, want trap %q instance %q",
								r.Target, r.Kind, r.Trap, r.TrapInstance, tr.class, tr.id)
						}
					}
					time.Sleep(time.Millisecond)
				}
				if len(want) > 0 {
					t.Errorf("not logged: %v", slices.Sorted(maps.Keys(want)))
				}
			})
		}
	}
	for i, a := range firsts {
		for _, b := range firsts[:i] {
			if near(a.fp, b.fp) {
				t.Errorf("instances %s and %s are near-duplicates of each other", a.id, b.id)
			}
		}
	}
}

func nearAny(fp uint64, pages map[uint64]string) (string, bool) {
	for f, p := range pages {
		if near(fp, f) {
			return p, true
		}
	}
	return "", false
}

// TestHubs: the index pages of a hub are near-duplicates of each other, yet
// every page they list is real, distinct, owed and linked from nowhere else.
func TestHubs(t *testing.T) {
	cfg := trapsConfig()
	w := startWeb(t, cfg)
	must := map[string]bool{}
	for _, id := range w.MustFetch() {
		must[id] = true
	}
	found := 0
	for _, h := range w.hosts {
		if !hubHost(cfg.Seed, h.idx) || h.role == roleRobots5xx {
			continue
		}
		found++
		t.Run(h.key, func(t *testing.T) {
			home := fetchPage(t, w, h.key, "/")
			var start string
			for _, l := range home.doc.Links {
				target := targetOf(t, h.key, l.URL)
				for _, fam := range hubFamilies {
					if target == fmt.Sprintf(fam.index, "A") || target == fmt.Sprintf(fam.index, "1") {
						start = target
					}
				}
			}
			if start == "" {
				t.Fatal("/ links no hub")
			}
			var index []fetched
			entries := map[string]bool{}
			for target := start; ; {
				p := fetchPage(t, w, h.key, target)
				if p.status != 200 || !must[h.key+target] {
					t.Errorf("index page %s answered %d, MustFetch %v", target, p.status, must[h.key+target])
				}
				index = append(index, p)
				// The entries, then Next, then Home.
				links := p.doc.Links
				if len(links) < 3 {
					t.Fatalf("%s has %d links", target, len(links))
				}
				for _, l := range links[:len(links)-2] {
					entries[targetOf(t, h.key, l.URL)] = true
				}
				next := targetOf(t, h.key, links[len(links)-2].URL)
				if next == start || len(index) > 20 {
					break
				}
				target = next
			}
			if n := len(index); n < 8 || n > 15 {
				t.Errorf("%d index pages, want 8-15", n)
			}
			for i, a := range index {
				for _, b := range index[:i] {
					if !near(a.fp, b.fp) {
						t.Errorf("index pages %s and %s are %d bits apart", a.target, b.target, simhash.Distance(a.fp, b.fp))
					}
				}
			}
			var targets []fetched
			for e := range entries {
				if !must[h.key+e] {
					t.Errorf("entry %s is not MustFetch", e)
				}
				p := fetchPage(t, w, h.key, e)
				if p.status != 200 {
					t.Errorf("entry %s answered %d", e, p.status)
				}
				if near(p.fp, index[0].fp) {
					t.Errorf("entry %s is a near-duplicate of the index", e)
				}
				for _, q := range targets {
					if near(p.fp, q.fp) {
						t.Errorf("entries %s and %s are near-duplicates", e, q.target)
					}
				}
				targets = append(targets, p)
			}
			if len(entries) < 3*len(index) {
				t.Errorf("%d entries behind %d index pages", len(entries), len(index))
			}
			// Only the index pages lead to the entries.
			isIndex := map[string]bool{}
			for _, p := range index {
				isIndex[p.target] = true
			}
			for path, res := range h.static {
				if isIndex[path] {
					continue
				}
				for e := range entries {
					if strings.Contains(string(res.body), `href="`+e+`"`) {
						t.Errorf("%s links entry %s", path, e)
					}
				}
			}
			if t.Failed() {
				return
			}
			// Nor is any of them a trap.
			for _, r := range w.Requests() {
				if r.Host == h.key && r.Trap != "" {
					t.Errorf("hub request %s logged as trap %s", r.Target, r.Trap)
				}
			}
		})
	}
	if found == 0 {
		t.Fatal("no hub host")
	}
}

// TestTrapInstanceOfOldTraps: the Features traps count as instances too.
func TestTrapInstanceOfOldTraps(t *testing.T) {
	w := startWeb(t, featuresConfig())
	hosts := w.Hosts()
	c := rawClient()
	for _, tt := range []struct {
		host           int
		target         string
		trap, instance string
	}{
		{1, "/calendar?month=2024-05", "calendar", "calendar"},
		{1, "/trap/a/", "repeat", "repeat"},
		{1, "/p/1.html?sid=0123", "session", "session"},
		{0, "/chain/8", "redirect_chain", "redirect_chain"},
		{0, "/p/1.html", "", ""},
	} {
		get(t, c, "http://"+hosts[tt.host]+tt.target)
		r := logEntry(t, w, hosts[tt.host], tt.target)
		want := ""
		if tt.instance != "" {
			want = hosts[tt.host] + "#" + tt.instance
		}
		if r.Trap != tt.trap || r.TrapInstance != want {
			t.Errorf("%s logged trap %q instance %q, want %q %q", tt.target, r.Trap, r.TrapInstance, tt.trap, want)
		}
	}
}

func TestAuditTrapInstances(t *testing.T) {
	inst := func(r Request, trap, id string) Request { r.Trap, r.TrapInstance = trap, id; return r }
	log := []Request{
		rq(hostOpen, "/robots.txt", 404, 0),
		rq(hostAgent, "/robots.txt", 200, 0),
		inst(rq(hostOpen, "/list?page=1", 200, 1000), "pagination", hostOpen+"#pagination"),
		inst(rq(hostOpen, "/list?page=2", 200, 2000), "pagination", hostOpen+"#pagination"),
		inst(rq(hostOpen, "/list?page=3", 200, 3000), "pagination", hostOpen+"#pagination"),
		trapOf(rq(hostOpen, "/calendar?month=2024-05", 200, 4000), "calendar"), // a log without instances
		inst(rq(hostAgent, "/shop", 200, 1000), "facets", hostAgent+"#facets"),
		rq(hostOpen, "/p/1.html", 200, 5000),
	}
	rep := audit(log, testWorld(nil, nil), AuditConfig{DefaultDelay: time.Second})
	wantInst := map[string]int{hostOpen + "#pagination": 3, hostOpen + "#calendar": 1, hostAgent + "#facets": 1}
	if !maps.Equal(rep.TrapInstanceRequests, wantInst) {
		t.Errorf("per instance %v, want %v", rep.TrapInstanceRequests, wantInst)
	}
	if rep.TrapInstances != 3 || rep.TrapRequestsPerInstanceMax != 3 ||
		math.Abs(rep.TrapRequestsPerInstanceMean-5.0/3) > 1e-9 || rep.TrapShare != 5.0/8 {
		t.Errorf("instances %d, mean %v, max %d, share %v; want 3, 1.67, 3, 0.625",
			rep.TrapInstances, rep.TrapRequestsPerInstanceMean, rep.TrapRequestsPerInstanceMax, rep.TrapShare)
	}
	if want := map[string]int{"pagination": 3, "calendar": 1, "facets": 1}; !maps.Equal(rep.TrapRequests, want) {
		t.Errorf("per trap %v, want %v", rep.TrapRequests, want)
	}
	if s, want := rep.String(), "instances:   3 trapped, 1.7 requests each on average, 3 at most; 62.5% of all requests"; !strings.Contains(s, want) {
		t.Errorf("String() lacks %q:\n%s", want, s)
	}
	empty := audit(nil, testWorld(nil, nil), AuditConfig{})
	if empty.TrapInstances != 0 || empty.TrapRequestsPerInstanceMean != 0 || empty.TrapShare != 0 || empty.TrapRequestsPerInstanceMax != 0 {
		t.Errorf("empty log: %+v", empty)
	}
}
