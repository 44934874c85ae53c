package trapsim

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
	"github.com/crawlcluster/crawler/pkg/pattern"
)

var (
	trace    = flag.String("trapsim.trace", "", "SEED/HOST[/HOSTSxPAGES]: log every admission decision on that host of the web of that seed (50x40 unless given), e.g. 5/h007; wiki/SEED: of that seed's WikiWeb")
	caseless = flag.Float64("trapsim.caseless", 0, "the share of hosts of the traced web that answer any spelling of a path in other cases (trapweb.Config.CaselessHosts; 0: its default, negative: none)")
)

// TestTrace is a tool, not a check: with -trapsim.trace it logs what
// admission decided for every URL of one host of a generated web, with how
// each was found, to see why a trap got through or a real page was held.
func TestTrace(t *testing.T) {
	if *trace == "" {
		t.Skip("no -trapsim.trace SEED/HOST")
	}
	if s, ok := strings.CutPrefix(*trace, "wiki/"); ok {
		traceWiki(t, s)
		return
	}
	s, host, ok := strings.Cut(*trace, "/")
	seed, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil {
		t.Fatalf("-trapsim.trace %q: want SEED/HOST[/HOSTSxPAGES]", *trace)
	}
	hosts, pages := 50, 40
	if h, size, ok := strings.Cut(host, "/"); ok {
		host = h
		if _, err := fmt.Sscanf(size, "%dx%d", &hosts, &pages); err != nil {
			t.Fatalf("-trapsim.trace %q: want SEED/HOST[/HOSTSxPAGES]", *trace)
		}
	}
	w := trapweb.Generate(trapweb.Config{Seed: seed, Hosts: hosts, Pages: pages, CaselessHosts: *caseless})
	name := host + "." + w.Config().Domain
	r := Run(w, Options{Patterns: patterns(t), MaxTicks: *ticks, Raise: *raise, RestartEvery: *restart, Trace: func(u string, c pattern.Candidate, d pattern.Decision) {
		if !strings.Contains(u, "://"+name+"/") {
			return
		}
		cl, in := w.Classify(u)
		t.Logf("%v %-8s admit=%v %-20s fund=%v rule=%q held=%v grounded=%v hops=%d space=%s parent=%s url=%s", cl, in, d.Admit, d.Reason, d.Funds, d.Rule, c.Held, c.Grounded, c.Hops, c.Space, c.Parent, u)
	}, Fetched: func(tick int, u string, c pattern.Candidate) {
		if !strings.Contains(u, "://"+name+"/") {
			return
		}
		cl, in := w.Classify(u)
		t.Logf("GET tick %d %v %-8s grounded=%v hops=%d %s", tick, cl, in, c.Grounded, c.Hops, u)
	}})
	t.Logf("%s: %d held URLs admitted for their referrers", name, r.Corroborated[name])
	for _, u := range r.Top[name] {
		t.Logf("top %+v", u)
	}
	for id, n := range r.PerInstance {
		if strings.HasPrefix(id, host+"#") {
			t.Logf("%s: %d requests", id, n)
		}
	}
}

// traceWiki logs what admission decided for every URL of one WikiWeb, and
// which reachable pages were not fetched.
func traceWiki(t *testing.T, s string) {
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("-trapsim.trace wiki/%q: want wiki/SEED", s)
	}
	w := NewWikiWeb(seed)
	t.Logf("%s: %d pages, fan %d, %d entries, skewed %v", w.Shape, w.Pages, w.Fan, w.Entries, w.Skewed)
	r := Run(w, Options{Patterns: patterns(t), MaxTicks: *ticks, Raise: *raise, RestartEvery: *restart, Trace: func(u string, c pattern.Candidate, d pattern.Decision) {
		t.Logf("admit=%v %-20s fund=%v held=%v grounded=%v hops=%d space=%s parent=%s url=%s", d.Admit, d.Reason, d.Funds, c.Held, c.Grounded, c.Hops, c.Space, c.Parent, u)
	}, Fetched: func(tick int, u string, c pattern.Candidate) {
		t.Logf("GET tick %d grounded=%v hops=%d %s", tick, c.Grounded, c.Hops, u)
	}})
	reach := w.Reachable()
	n := 0
	for _, u := range r.Missed {
		if reach[u] {
			n++
		}
	}
	t.Logf("%d of %d reachable pages not fetched, %d held, idle %v", n, len(reach), r.HeldReal, r.Idle)
	for _, us := range r.Top {
		for _, u := range us {
			t.Logf("top %+v", u)
		}
	}
}
