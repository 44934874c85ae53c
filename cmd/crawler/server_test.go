package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

// TestServerPoliteness crawls 200 host names served on one loopback address
// (a hosts file maps the names, as shared hosting would). With the per-server
// limits the crawl finishes with full coverage and the server never sees more
// than -ip-concurrency requests in flight nor two starts closer than
// -ip-delay; with them off, the same crawl sends many more at once, which is
// what the audit is there to catch.
func TestServerPoliteness(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	// Answers take 60 ms, so requests overlap unless held apart; the audit
	// sees a request in flight from its start to its end less the 15 ms
	// tolerance, and two starts too close when under 20 - 15 ms apart.
	const ipDelay = 20 * time.Millisecond
	for _, limited := range []bool{true, false} {
		name := "limited"
		if !limited {
			name = "unlimited"
		}
		t.Run(name, func(t *testing.T) {
			cfg := synthweb.DefaultConfig()
			cfg.Hosts, cfg.PagesPerHost, cfg.Addresses, cfg.Latency = 200, 1, 1, 60*time.Millisecond
			w, seeds := startWeb(t, cfg)
			hosts := filepath.Join(t.TempDir(), "hosts")
			if err := w.WriteHostsFile(hosts); err != nil {
				t.Fatal(err)
			}
			conc := "2"
			if !limited {
				conc = "0"
			}
			start := time.Now()
			runCrawler(t, crawlArgs(filepath.Join(t.TempDir(), "data"), seeds, "-hosts-file", hosts,
				"-ip-concurrency", conc, "-ip-delay", ipDelay.String()))
			ac := auditConfig()
			ac.IPConcurrency, ac.IPDelay = 2, ipDelay
			rep := w.Audit(ac)
			t.Logf("%s crawl took %v; audit:\n%s", name, time.Since(start).Round(time.Millisecond), rep.String())
			if rep.Coverage != 1 {
				t.Errorf("coverage %.3f, want 1", rep.Coverage)
			}
			for _, c := range []struct {
				name string
				v    synthweb.Violations
			}{{"overlaps", rep.Overlaps}, {"politeness", rep.Politeness}, {"robots", rep.Robots}, {"misdirected", rep.Misdirected}} {
				if c.v.Count > 0 {
					t.Errorf("%s: %d violations: %v", c.name, c.v.Count, c.v.Examples)
				}
			}
			switch {
			case limited && (rep.IPConcurrency.Count > 0 || rep.IPInterval.Count > 0):
				t.Errorf("per-server limits broken: %d over concurrency (%v), %d too close (%v)",
					rep.IPConcurrency.Count, rep.IPConcurrency.Examples, rep.IPInterval.Count, rep.IPInterval.Examples)
			case limited && rep.MaxPerIP != 2:
				t.Errorf("at most %d requests in flight to the server; the limit of 2 should be reached", rep.MaxPerIP)
			case !limited && (rep.MaxPerIP <= 2 || rep.IPInterval.Count == 0):
				t.Errorf("without per-server limits at most %d requests were in flight to the server and %d starts too close: the test web does not load it",
					rep.MaxPerIP, rep.IPInterval.Count)
			}
		})
	}
}
