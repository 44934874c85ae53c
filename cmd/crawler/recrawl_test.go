package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// recrawlArgs run a continuous crawl of the changing web on a compressed
// clock: one simulated hour per real second, so fast pages change about
// every second and slow ones every 24 s.
func recrawlArgs(data, seeds string, d time.Duration) []string {
	return crawlArgs(data, seeds, "-max-duration", d.String(), "-idle-horizon", "1h",
		"-recrawl-min", "300ms", "-recrawl-default", "2s", "-recrawl-max", "20s")
}

// TestRecrawlChangingWeb runs a continuous crawl of a web whose pages change,
// killed with SIGKILL half way and resumed, and checks from the servers' log
// and the data folder: revisits carry the copy's validators to every host that
// gave some, every 304 is a server-not-modified revisit record that an
// independent reader (warcio.js) reads, politeness and robots hold across
// revisits, the kill loses no schedule, and the pages held are fresh for most
// of the time.
func TestRecrawlChangingWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	cfg.Hosts = 6
	cfg.PagesPerHost = 15
	cfg.Change = synthweb.DefaultChangeConfig()
	cfg.Change.Enabled = true
	cfg.Change.TimeScale = 3600
	w, seeds := startWeb(t, cfg)
	data := filepath.Join(t.TempDir(), "data")

	// First run: killed with SIGKILL after 20 s of continuous crawling.
	cmd := exec.Command(crawlerBinary(t), recrawlArgs(data, seeds, 2*time.Minute)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	before := len(w.Requests())
	checkScheduled(t, data)

	// Second run on the same folder picks up the schedule where it was.
	runCrawler(t, recrawlArgs(data, seeds, 20*time.Second))
	after := w.Requests()[before:]
	var revisits int
	seen := map[string]bool{}
	for _, r := range w.Requests()[:before] {
		seen[r.Resource] = true
	}
	for _, r := range after {
		if seen[r.Resource] {
			revisits++
		}
	}
	if revisits == 0 {
		t.Error("the resumed crawl revisited nothing")
	}

	rep := w.Audit(auditConfig())
	t.Logf("audit:\n%s", rep.String())
	for _, c := range []struct {
		name string
		v    synthweb.Violations
	}{{"overlaps", rep.Overlaps}, {"politeness", rep.Politeness}, {"robots", rep.Robots}, {"forbidden", rep.Forbidden},
		{"unconditional revisits", rep.UnconditionalRevisits}} {
		if c.v.Count > 0 {
			t.Errorf("%s: %d violations: %v", c.name, c.v.Count, c.v.Examples)
		}
	}
	ch := rep.Change
	if ch == nil {
		t.Fatal("audit has no change report")
	}
	if ch.NotModified == 0 || ch.ConditionalRevisits == 0 {
		t.Errorf("no conditional revisits (%d) or 304s (%d)", ch.ConditionalRevisits, ch.NotModified)
	}
	if ch.RequestsAfterGone > 0 {
		t.Errorf("%d requests to pages that had answered 404/410 %d times", ch.RequestsAfterGone, 3)
	}
	// Pages that never change are fresh once fetched; the changing ones
	// as often as their rate allows. The bound is loose: a loaded machine
	// stretches every delay.
	if ch.Freshness < 0.6 {
		t.Errorf("freshness %.3f, want at least 0.6", ch.Freshness)
	}
	checkNotModifiedRecords(t, data)
}

// openData opens the crawl's store; the test closes it.
func openData(t *testing.T, data string) *sqlite.DB {
	t.Helper()
	db := openStore(t, data)
	t.Cleanup(func() { db.Close() })
	return db
}

// checkScheduled checks, after a SIGKILL, that every stored or failed URL has
// its next visit planned or was retired for good reason, and that queued ones
// (revisits claimed when the process died) are still queued.
func checkScheduled(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	db := openData(t, data)
	pol := recrawl.DefaultPolicy()
	var stored, planned int
	for p := range int32(256) {
		due, err := db.DueURLs(ctx, p, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		planned += len(due)
	}
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored = int(st.URLs[store.StateStored] + st.URLs[store.StateFailed])
	sch, err := db.Schedule(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Retired URLs (gone pol.Retire times) are the only stored ones without
	// a visit planned.
	retired := stored - planned
	t.Logf("after SIGKILL: %d stored or failed URLs, %d with a visit planned, %d queued, schedule %+v", stored, planned, st.URLs[store.StateQueued], sch)
	if stored == 0 || planned == 0 {
		t.Fatalf("nothing stored (%d) or planned (%d) after 20 s", stored, planned)
	}
	// At most the deleted pages (5% of the web) may have been retired.
	if retired > stored/10+pol.Retire {
		t.Errorf("%d of %d stored URLs have no visit planned", retired, stored)
	}
}

// checkNotModifiedRecords reads the WARC record of every 304 capture: a
// revisit of profile server-not-modified naming the capture it confirms, as
// pkg/warc reads it and as warcio.js (an independent reader) finds it.
func checkNotModifiedRecords(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	db := openData(t, data)
	byID := map[int64]store.Capture{}
	var nm []store.Capture
	err := db.Captures(ctx, func(c store.Capture) error {
		byID[c.ID] = c
		if c.Change == string(recrawl.NotModified) {
			nm = append(nm, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(nm) == 0 {
		t.Fatal("no 304 capture stored")
	}
	files := map[string]bool{}
	for _, c := range nm {
		if c.WARCFile == "" {
			t.Errorf("304 of %s has no WARC record", c.URL)
			continue
		}
		files[c.WARCFile] = true
		rec, err := warc.ReadAt(filepath.Join(data, "warc", c.WARCFile), c.WARCOffset, c.WARCLength)
		if err != nil {
			t.Errorf("read the 304 record of %s: %v", c.URL, err)
			continue
		}
		orig, ok := byID[c.RevisitOf]
		switch {
		case rec.Type() != warc.TypeRevisit || rec.Profile() != warc.ProfileServerNotModified:
			t.Errorf("304 of %s: record type %q profile %q", c.URL, rec.Type(), rec.Profile())
		case !ok:
			t.Errorf("304 of %s refers to capture %d, not stored", c.URL, c.RevisitOf)
		case rec.Header.Get(warc.FieldRefersToTargetURI) != orig.URL || rec.Header.Get(warc.FieldRefersToDate) != warc.FormatDate(orig.FetchedAt) ||
			rec.Header.Get(warc.FieldRefersTo) != orig.WARCRecordID:
			t.Errorf("304 of %s: refers to %q at %q (%s), want %q at %q (%s)", c.URL, rec.Header.Get(warc.FieldRefersToTargetURI),
				rec.Header.Get(warc.FieldRefersToDate), rec.Header.Get(warc.FieldRefersTo), orig.URL, warc.FormatDate(orig.FetchedAt), orig.WARCRecordID)
		}
	}
	t.Logf("%d 304 captures, each a server-not-modified revisit record", len(nm))

	node, script := warcioTool(t)
	members := map[string]string{} // record ID -> type, as warcio.js read them
	for f := range files {
		out, err := exec.Command(node, script, filepath.Join(data, "warc", f)).Output()
		if err != nil {
			t.Fatalf("warcio.js on %s: %v", f, err)
		}
		var sum struct {
			Members []struct {
				Type, ID string
			} `json:"members"`
			PayloadDigestMismatches []json.RawMessage `json:"payloadDigestMismatches"`
			BlockDigestMismatches   []json.RawMessage `json:"blockDigestMismatches"`
		}
		if err := json.Unmarshal(out, &sum); err != nil {
			t.Fatalf("warcio.js output: %v", err)
		}
		if len(sum.PayloadDigestMismatches)+len(sum.BlockDigestMismatches) > 0 {
			t.Errorf("warcio.js found digest mismatches in %s: %s %s", f, sum.PayloadDigestMismatches, sum.BlockDigestMismatches)
		}
		for _, m := range sum.Members {
			members[m.ID] = m.Type
		}
	}
	for _, c := range nm {
		if typ := members[c.WARCRecordID]; typ != warc.TypeRevisit {
			t.Errorf("warcio.js read the 304 record of %s (%s) as %q", c.URL, c.WARCRecordID, typ)
		}
	}
}

// warcioTool finds node and the warcio.js checker (tools/warcio-check); it
// skips without them unless CRAWLER_REQUIRE_WARCIO=1.
func warcioTool(t *testing.T) (node, script string) {
	t.Helper()
	script, _ = filepath.Abs(filepath.Join("..", "..", "tools", "warcio-check", "check.mjs"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "warcio", "package.json"))
	}
	if err != nil {
		if os.Getenv("CRAWLER_REQUIRE_WARCIO") == "1" {
			t.Fatalf("CRAWLER_REQUIRE_WARCIO=1 but warcio.js is unavailable: %v", err)
		}
		t.Skipf("warcio.js unavailable: %v", err)
	}
	return node, script
}
