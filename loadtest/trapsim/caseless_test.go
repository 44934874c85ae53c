package trapsim

import (
	"testing"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
)

// TestCaselessHosts crawls generated webs where a fifth of the hosts answer
// every spelling of a path in upper and lower case with its page and spell
// some of their links so (trapweb's caseless hosts): "lower the case of the
// path", learned from a spelling whose lower case the host's pages linked,
// holds the rest. Every real page is fetched as on the other webs (at most
// two in a thousand not). Without the rule (2026-12-07) the spellings took
// 91.6 requests a host on average over the ten webs, and seven of them left
// 6 to 11 real pages held (their spellings' copies made their spaces look
// like spaces of copies); with it, 9.5 and none. The bound here is 40.
func TestCaselessHosts(t *testing.T) {
	seeds := 10
	if testing.Short() || raceEnabled {
		seeds = 2
	}
	var n, requests int
	for seed := int64(1); seed <= int64(seeds); seed++ {
		w := trapweb.Generate(trapweb.Config{Seed: seed, Hosts: 50, Pages: 40, CaselessHosts: 0.2})
		r := Run(w, Options{Patterns: patterns(t), MaxTicks: *ticks, Raise: *raise})
		j := judge(w, r)
		if j.missed*500 > r.RealTotal || !r.Idle {
			t.Errorf("seed %d: %d of %d real pages not fetched (%d held), e.g. %s; idle %v", seed, j.missed, r.RealTotal, j.heldReal, sample(r), r.Idle)
		}
		for _, in := range w.Instances() {
			if in.Kind == "caseless" {
				n++
				requests += r.PerInstance[in.ID]
			}
		}
	}
	if n == 0 {
		t.Fatal("no caseless host drawn")
	}
	mean := float64(requests) / float64(n)
	t.Logf("%d caseless hosts over %d webs: %d requests to their spellings, %.1f a host", n, seeds, requests, mean)
	if mean > 40 {
		t.Errorf("%.1f requests to a caseless host's spellings on average, want <= 40", mean)
	}
}
