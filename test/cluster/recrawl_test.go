package cluster

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/warciotest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/recrawl"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/postgres"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// recrawlFlags compress the recrawl schedule as cmd/crawler's recrawlArgs do:
// with the web's one simulated hour per real second, fast pages change about
// every second and slow ones every 24 s. Fetchers (the due scan's values and
// budgets) and parsers (the next visit) take the same policy.
func recrawlFlags() []string {
	return []string{"-recrawl-min", "300ms", "-recrawl-default", "2s", "-recrawl-max", "20s"}
}

// TestClusterRecrawlChangingWeb runs a continuous cluster crawl of a web whose
// pages change: two fetchers and a parser, the fetcher owning more of the
// web's hosts killed with SIGKILL part way, so that the other one must find
// their schedule in PostgreSQL. It checks from the servers' log and the
// stores: revisits carry the copy's validators to every host that gave some,
// every 304 is a server-not-modified revisit record in S3 naming the capture
// it confirms (read by pkg/warc and by warcio.js), politeness and robots hold
// across revisits and the handover, every page is fetched, the killed
// fetcher's hosts are revisited after the kill, no stored URL lost its planned
// visit, retired pages are left alone, and the pages held are fresh for most
// of the time.
func TestClusterRecrawlChangingWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	warciotest.Find(t) // skip before crawling, not after
	cfg := synthweb.DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 6, 15
	cfg.Change = synthweb.DefaultChangeConfig()
	cfg.Change.Enabled = true
	cfg.Change.TimeScale = 3600
	w := serveWeb(t, cfg)
	c := newCluster(t)
	fetchers := map[string]*proc{}
	for _, name := range []string{"fetcher-1", "fetcher-2"} {
		// Static membership, as the Helm chart runs them: the group then
		// names each fetcher's partitions.
		fetchers[name] = c.startFetcher(name, append([]string{"-instance-id", name}, recrawlFlags()...)...)
	}
	c.startParser("parser-1", recrawlFlags()...)
	submitSeeds(t, c.api, w.Seeds())
	began := time.Now()

	// Long enough for every page to be fetched and revisited a few times.
	time.Sleep(20 * time.Second)
	adm := c.admin()
	owned := fetcherPartitions(t, adm, 2)
	hosts := webHosts(t, w)
	victim, survivor := "fetcher-1", "fetcher-2"
	if len(ownedHosts(hosts, owned[survivor])) > len(ownedHosts(hosts, owned[victim])) {
		victim, survivor = survivor, victim
	}
	lost := ownedHosts(hosts, owned[victim])
	fetchers[victim].kill()
	killed := time.Now()
	t.Logf("%s killed (SIGKILL) after %v with %d page requests; its hosts: %v", victim, killed.Sub(began).Round(time.Millisecond), countPages(w), lost)

	// The survivor takes the partitions over once the victim's session
	// expires (-session-timeout 6s), then runs on.
	deadline := time.Now().Add(45 * time.Second)
	for len(fetcherPartitions(t, adm, 1)[survivor]) < int(queue.Partitions) {
		if time.Now().After(deadline) {
			t.Fatalf("%s does not own every partition 45s after %s was killed", survivor, victim)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%s owns every partition %v after the kill", survivor, time.Since(killed).Round(time.Millisecond))
	time.Sleep(20 * time.Second)
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}

	rep := w.Audit(auditConfig())
	// A revisit is no duplicate; a re-fetch of what the killed fetcher had
	// in flight may be one (one request per host of its partitions, plus
	// results produced but not yet marked fetched).
	c.requireClean(rep, 2*len(lost))
	if v := rep.UnconditionalRevisits; v.Count > 0 {
		t.Errorf("unconditional revisits: %d: %v", v.Count, v.Examples)
	}
	ch := rep.Change
	if ch == nil {
		t.Fatal("audit has no change report")
	}
	if ch.NotModified == 0 || ch.ConditionalRevisits == 0 {
		t.Errorf("no conditional revisits (%d) or 304s (%d)", ch.ConditionalRevisits, ch.NotModified)
	}
	if ch.RequestsAfterGone > 0 {
		t.Errorf("%d requests to pages that had answered 404/410 %d times", ch.RequestsAfterGone, recrawl.DefaultRetire)
	}
	// Loose, as in the embedded test: pages that never change are fresh once
	// fetched, and a loaded machine stretches every delay (the kill costs
	// the victim's hosts a session timeout besides).
	if ch.Freshness < 0.6 {
		t.Errorf("freshness %.3f, want at least 0.6", ch.Freshness)
	}
	checkConditional(t, w.Requests())
	checkRevisitedAfter(t, w.Requests(), killed, lost)

	st, blobs := c.openStores()
	checkScheduled(t, st, hosts, owned[victim])
	checkNotModifiedRecords(t, st, blobs)
}

// admin is a Kafka admin client on the cluster's broker.
func (c *cluster) admin() *kadm.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds...))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// fetcherPartitions returns the crawl.urls partitions of each fetcher (by
// instance ID) once the group is stable with members fetchers, each assigned
// some.
func fetcherPartitions(t *testing.T, adm *kadm.Client, members int) map[string][]int32 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		groups, err := adm.DescribeGroups(ctx, queue.GroupFetchers)
		cancel()
		owned := map[string][]int32{}
		if err == nil {
			g := groups[queue.GroupFetchers]
			for _, m := range g.Members {
				a, ok := m.Assigned.AsConsumer()
				if !ok || m.InstanceID == nil {
					continue
				}
				for _, tp := range a.Topics {
					if tp.Topic == queue.TopicURLs {
						owned[*m.InstanceID] = append(owned[*m.InstanceID], tp.Partitions...)
					}
				}
			}
			ready := g.State == "Stable" && len(g.Members) == members && len(owned) == members
			for _, ps := range owned {
				ready = ready && len(ps) > 0
			}
			if ready {
				return owned
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s not stable with %d members after 30s: %v, %v", queue.GroupFetchers, members, owned, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// webHosts returns the web's hosts as the crawler keys them (host:port),
// with their crawl.urls partitions.
func webHosts(t *testing.T, w *synthweb.Web) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	for _, s := range w.Seeds() {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out[u.Host] = queue.PartitionOf(u.Host)
	}
	return out
}

// ownedHosts returns the hosts whose partition is among parts.
func ownedHosts(hosts map[string]int32, parts []int32) []string {
	var out []string
	for h, p := range hosts {
		if slices.Contains(parts, p) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// checkConditional checks from the servers' side that every host that gave
// validators was sent conditional requests.
func checkConditional(t *testing.T, log []synthweb.Request) {
	t.Helper()
	validators, conditional := map[string]bool{}, map[string]int{}
	for _, r := range log {
		if r.Validators {
			validators[r.Host] = true
		}
		if r.IfNoneMatch || r.IfModifiedSince {
			conditional[r.Host]++
		}
	}
	if len(validators) == 0 {
		t.Error("no host gave validators")
	}
	for h := range validators {
		if conditional[h] == 0 {
			t.Errorf("host %s gave validators but was sent no conditional request", h)
		}
	}
	t.Logf("conditional requests per host that gave validators: %v", conditional)
}

// checkRevisitedAfter checks that each of the killed fetcher's hosts had
// pages revisited after the kill: its new owner found their planned visits in
// the store.
func checkRevisitedAfter(t *testing.T, log []synthweb.Request, killed time.Time, hosts []string) {
	t.Helper()
	before := map[string]bool{}
	after := map[string]int{}
	for _, r := range log {
		switch {
		case r.Kind == "robots":
		case r.Start.Before(killed):
			before[r.Resource] = true
		case before[r.Resource]:
			after[r.Host]++
		}
	}
	for _, h := range hosts {
		if after[h] == 0 {
			t.Errorf("host %s of the killed fetcher: no page revisited after the kill", h)
		}
	}
	t.Logf("revisits after the kill per host: %v", after)
}

// checkScheduled checks that every stored or failed URL of the web still has
// a visit planned unless it was retired (gone Retire times in a row), in the
// killed fetcher's partitions as in the others: a rebalance and a SIGKILL lose
// no schedule.
func checkScheduled(t *testing.T, st *postgres.DB, hosts map[string]int32, victim []int32) {
	t.Helper()
	ctx := context.Background()
	retire := recrawl.DefaultPolicy().Retire
	parts := map[int32]bool{}
	for _, p := range hosts {
		parts[p] = true
	}
	for p := range parts {
		var hashes []int64
		if err := st.URLHashes(ctx, p, func(h int64) error { hashes = append(hashes, h); return nil }); err != nil {
			t.Fatal(err)
		}
		hists, err := st.URLHistories(ctx, hashes)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for i, h := range hists {
			counts[string(h.State)]++
			if h.State != store.StateStored && h.State != store.StateFailed {
				continue
			}
			switch {
			case !h.Recrawl.NextFetchAt.IsZero():
				counts["planned"]++
			case h.Recrawl.Misses >= retire:
				counts["retired"]++
			default:
				t.Errorf("partition %d: URL %d (%s) has no visit planned: %+v", p, hashes[i], h.State, h.Recrawl)
			}
		}
		killed := slices.Contains(victim, p)
		if killed && counts["planned"] == 0 {
			t.Errorf("partition %d of the killed fetcher has no visit planned: %v", p, counts)
		}
		t.Logf("partition %d (killed fetcher's: %v): %v", p, killed, counts)
	}
}

// checkNotModifiedRecords reads the WARC record of every 304 capture from S3:
// a revisit of profile server-not-modified naming the capture it confirms, as
// pkg/warc reads it and as warcio.js (an independent reader) reads it.
func checkNotModifiedRecords(t *testing.T, st *postgres.DB, blobs blob.Store) {
	t.Helper()
	ctx := context.Background()
	byID := map[int64]store.Capture{}
	var nm []store.Capture
	err := st.Captures(ctx, func(c store.Capture) error {
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
	// The 304 records and the captures they confirm, one gzip member each,
	// make a WARC file for warcio.js.
	var members []byte
	added := map[int64]bool{}
	for _, c := range nm {
		if c.WARCFile == "" {
			t.Errorf("304 of %s has no WARC record", c.URL)
			continue
		}
		rec, b, err := readRecord(ctx, blobs, c)
		if err != nil {
			t.Error(err)
			continue
		}
		members = append(members, b...)
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
		case !added[orig.ID]:
			added[orig.ID] = true
			if _, b, err := readRecord(ctx, blobs, orig); err == nil {
				members = append(members, b...)
			}
		}
	}
	t.Logf("%d 304 captures, each a server-not-modified revisit record", len(nm))

	path := filepath.Join(t.TempDir(), "not-modified.warc.gz")
	if err := os.WriteFile(path, members, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := warciotest.Check(t, path)
	if len(sum.PayloadDigestMismatches)+len(sum.BlockDigestMismatches)+len(sum.Warnings) > 0 {
		t.Errorf("warcio.js found digest mismatches or warnings: %s %s %q", sum.PayloadDigestMismatches, sum.BlockDigestMismatches, sum.Warnings)
	}
	read := map[string]string{} // record ID -> type, as warcio.js read them
	for _, m := range sum.Members {
		read[m.ID] = m.Type
	}
	for _, c := range nm {
		if typ := read[c.WARCRecordID]; typ != warc.TypeRevisit {
			t.Errorf("warcio.js read the 304 record of %s (%s) as %q", c.URL, c.WARCRecordID, typ)
		}
	}
}
