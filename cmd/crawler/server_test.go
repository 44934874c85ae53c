package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

// TestServerPoliteness crawls 40 host names served on one loopback address
// (a hosts file maps the names, as shared hosting would). With the per-server
// limits the crawl finishes with full coverage and the server never sees more
// than -ip-concurrency requests in flight nor two starts closer than
// -ip-delay; with them off, the same crawl sends many more at once, which is
// what the audit is there to catch.
func TestServerPoliteness(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	// Answers take 400 ms, so two requests overlap unless held apart, and
	// the 250 ms delay, not the two slots, spaces the starts. Two starts are
	// compared by the server's stamps, read when each handler runs: on a
	// loaded machine one can come late by far more than the audit's 15 ms
	// (seen: two starts 12 ms apart on the server that the crawler had
	// started 250 ms apart by its own clock), which no check of a start
	// against a start can absorb. So that check's tolerance is measured:
	// the longest a request took from the crawler's start (its WARC-Date)
	// to the server's stamp in the same run. It is measured over every
	// request the check judges, robots.txt included. Measured over the
	// captures alone (robots.txt has none), the run's latest stamp could
	// fall on a robots.txt: stamped 161 ms late, one made two starts 92 ms
	// apart on the server that the crawler had started 252 ms apart. The
	// lag is the server's: requests it stamped 150 ms late had been
	// written to their socket within 0.2 ms of the crawler's start.
	const ipDelay = 250 * time.Millisecond
	for _, limited := range []bool{true, false} {
		name := "limited"
		if !limited {
			name = "unlimited"
		}
		t.Run(name, func(t *testing.T) {
			cfg := synthweb.DefaultConfig()
			cfg.Hosts, cfg.PagesPerHost, cfg.Addresses, cfg.Latency = 40, 1, 1, 400*time.Millisecond
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
			data := filepath.Join(t.TempDir(), "data")
			runCrawler(t, crawlArgs(data, seeds, "-hosts-file", hosts,
				"-ip-concurrency", conc, "-ip-delay", ipDelay.String()))
			ac := auditConfig()
			ac.IPConcurrency = 2
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
			ac.IPDelay = ipDelay
			if limited {
				late := testenv.ArchiveStampLateness(t, w, filepath.Join(data, "warc"))
				t.Logf("server stamps up to %v after the crawler started the request", late.Round(time.Millisecond))
				ac.Tolerance = max(ac.Tolerance, late)
			}
			interval := w.Audit(ac).IPInterval
			switch {
			case limited && (rep.IPConcurrency.Count > 0 || interval.Count > 0):
				t.Errorf("per-server limits broken: %d over concurrency (%v), %d starts under %v apart (%v)",
					rep.IPConcurrency.Count, rep.IPConcurrency.Examples, interval.Count, ipDelay-ac.Tolerance, interval.Examples)
			case limited && rep.MaxPerIP != 2:
				t.Errorf("at most %d requests in flight to the server; the limit of 2 should be reached", rep.MaxPerIP)
			case !limited && (rep.MaxPerIP <= 2 || interval.Count == 0):
				t.Errorf("without per-server limits at most %d requests were in flight to the server and %d starts too close: the test web does not load it",
					rep.MaxPerIP, interval.Count)
			}
		})
	}
}
