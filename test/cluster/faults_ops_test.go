package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/queue"
)

// Operational faults (issue 14): the shared cache emptied and restarted under
// a crawl, a fetcher paused past its session (a zombie), and a rolling restart
// of every tier. Each is judged as the other cluster tests are: from the web's
// log (coverage, politeness, robots, duplicates) and the stores.

// TestFaultRedisFlushAndRestart: Redis, where the fetchers share robots.txt
// entries, next-allowed times and per-server slots, is emptied (FLUSHALL) mid
// crawl and a fetcher is stopped right after, so its hosts move while the
// cache knows nothing; later Redis goes down, a fetcher is stopped and another
// joins while it is unreachable, and it comes back empty on the same port. The
// new owners must learn each host's delay and last request from PostgreSQL
// (the old owner saves them before it lets go), the fetchers must carry on
// through the outage and use the cache again once it is back.
func TestFaultRedisFlushAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	const hosts, pages = 10, 30
	w := startWeb(t, hosts, pages, true)
	rd := redistest.StartPrivate(t)
	c := newCluster(t)
	c.cache = rd.URL
	metrics := map[string]string{}
	fetcher := func(name string) *proc {
		addr := freeAddr(t)
		metrics[name] = "http://" + addr + "/metrics"
		return c.startFetcher(name, "-listen", addr, "-user-agent", userAgentOf(name))
	}
	f1 := fetcher("fetcher-1")
	f2 := fetcher("fetcher-2")
	c.startParser("parser-1")
	submitSeeds(t, c.api, w.Seeds())
	total := hosts * pages

	waitPages(t, w, total/4, time.Minute)
	shared := len(rd.Keys("robots:*")) + len(rd.Keys("next:*"))
	if shared == 0 {
		t.Errorf("no robots:* or next:* keys in Redis after %d pages: the fetchers do not share through it", countPages(w))
	}
	rd.FlushAll()
	f1.stop(t)
	t.Logf("Redis flushed (%d robots and next-allowed keys) and fetcher-1 stopped (SIGTERM) at %d pages", shared, countPages(w))
	fetcher("fetcher-3")

	waitPages(t, w, total/2, time.Minute)
	rd.Stop()
	down := time.Now()
	t.Logf("Redis stopped at %d pages", countPages(w))
	time.Sleep(time.Second)
	f2.stop(t)
	f4 := fetcher("fetcher-4")
	t.Logf("fetcher-2 stopped (SIGTERM) and fetcher-4 started while Redis is down, at %d pages", countPages(w))
	time.Sleep(2 * time.Second)
	// A fetcher may join during the outage: it says the cache is away
	// and serves its partitions as the others do. Under load it may take
	// a while to get as far as opening the cache.
	joined := false
	for deadline := time.Now().Add(30 * time.Second); !joined && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		select {
		case <-f4.done:
			t.Fatalf("fetcher-4, started while Redis is down, exited: %v", f4.err)
		default:
		}
		b, _ := os.ReadFile(f4.log)
		joined = strings.Contains(string(b), "shared cache unreachable")
	}
	if !joined {
		t.Errorf("fetcher-4 did not say the shared cache was unreachable within 30 s")
	}
	// What an operator sees during the outage: the survivors count every
	// failed cache call and keep fetching. Under load fetcher-3 may still be
	// in the rebalance fetcher-4's join began, calling nothing: wait for a
	// count, as long as the outage may last.
	m := metrics["fetcher-3"]
	errs := scrapeCounter(t, m, "crawler_fetcher_cache_errors_total", "")
	for deadline := time.Now().Add(30 * time.Second); errs == 0 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		errs = scrapeCounter(t, m, "crawler_fetcher_cache_errors_total", "")
	}
	ops := scrapeCounter(t, m, "crawler_cache_errors_total", "")
	local := scrapeCounter(t, m, "crawler_frontier_server_waits_total", `where="shared_error"`)
	fenced := scrapeCounter(t, m, "crawler_fetcher_fenced", "")
	t.Logf("fetcher-3 during the outage: crawler_fetcher_cache_errors_total %.0f, crawler_cache_errors_total %.0f, crawler_frontier_server_waits_total{where=\"shared_error\"} %.0f, fenced %.0f", errs, ops, local, fenced)
	if errs == 0 {
		t.Errorf("fetcher-3 counted no failed cache call while Redis was down")
	}
	rd.Start()
	t.Logf("Redis back (empty) on the same port after %v, at %d pages", time.Since(down).Round(time.Millisecond), countPages(w))

	waitIdle(t, c.api, 2*time.Minute)
	// Fetches after the restart were shared again: the clients reconnected.
	if n := len(rd.Keys("next:*")); n == 0 {
		t.Errorf("no next-allowed time in Redis after its restart: the fetchers did not reconnect")
	} else {
		t.Logf("%d next-allowed times in Redis after its restart", n)
	}
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
	n, closest := handoverGaps(w.Requests())
	t.Logf("%d hosts changed hands; the closest handover: %v from one fetcher's last request to the next's first", n, closest.Round(time.Millisecond))
	// Both handovers were SIGTERM stops, which finish what is in flight and
	// save it before letting go: no fetch is repeated.
	c.requireClean(w.Audit(auditConfig()), 0)
	c.checkStored(w)
}

// handoverGaps counts the times a host's requests passed from one fetcher
// (User-Agent) to another, and the shortest time between the end of the
// last request of one and the start of the first of the next.
func handoverGaps(log []synthweb.Request) (int, time.Duration) {
	last := map[string]synthweb.Request{}
	n, closest := 0, time.Duration(-1)
	for _, r := range sortedByStart(log) {
		if p, ok := last[r.Host]; ok && p.UserAgent != r.UserAgent {
			n++
			if gap := r.Start.Sub(p.End); closest < 0 || gap < closest {
				closest = gap
			}
		}
		last[r.Host] = r
	}
	return n, closest
}

// TestFaultZombieFetcher: a fetcher is paused (SIGSTOP) past its session
// timeout, so the group gives its partitions to the other fetcher, then
// resumed (SIGCONT). Its heartbeats stopped answering at the pause, so it is
// fenced when it wakes; it must send no request before the group assigns it
// partitions again, and the web must see no overlap or short gap on any host.
// Fetches are repeated only for what the zombie had fetched and not yet made
// durable at the pause.
func TestFaultZombieFetcher(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	const hosts, pages = 10, 30
	w := startWeb(t, hosts, pages, false)
	c := newCluster(t)
	fetchers := map[string]*proc{}
	for _, name := range []string{"fetcher-1", "fetcher-2"} {
		// Each fetcher signs its requests, so the web's log says who sent
		// each one; the robots.txt product token stays the same.
		fetchers[name] = c.startFetcher(name, "-instance-id", name, "-user-agent", userAgentOf(name))
	}
	c.startParser("parser-1")
	submitSeeds(t, c.api, w.Seeds())
	total := hosts * pages

	waitPages(t, w, total/5, time.Minute)
	owned := fetcherPartitions(t, c.admin(), 2)
	all := webHosts(t, w)
	victim, survivor := "fetcher-1", "fetcher-2"
	if len(ownedHosts(all, owned[survivor])) > len(ownedHosts(all, owned[victim])) {
		victim, survivor = survivor, victim
	}
	victimHosts := ownedHosts(all, owned[victim])
	fetchers[victim].signal(syscall.SIGSTOP)
	paused := time.Now()
	// What the zombie had fetched and not stored is its in-flight window;
	// the survivor loads its partitions only after the session expires.
	st, _ := c.openStores()
	stored := storedResources(t, st)
	t.Logf("%s paused (SIGSTOP) at %d pages, %d stored; it owned %v", victim, countPages(w), len(stored), victimHosts)

	// The session expires after 6 s; wait until the survivor has fetched
	// from the zombie's hosts, so that both could be on one host.
	deadline := time.Now().Add(30 * time.Second)
	for !fetchedSince(w, userAgentOf(survivor), victimHosts, paused) {
		if time.Now().After(deadline) {
			fetchers[victim].signal(syscall.SIGCONT)
			t.Fatalf("%s fetched none of %s's hosts within 30 s of the pause", survivor, victim)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	// Stopped, the zombie sends nothing: a request of its that reaches the
	// web after this was sent awake (one sent before the pause may reach it
	// late under load, but not seconds late).
	resumed := time.Now()
	fetchers[victim].signal(syscall.SIGCONT)
	t.Logf("%s resumed (SIGCONT) %v after the pause, at %d pages", victim, resumed.Sub(paused).Round(time.Millisecond), countPages(w))

	waitIdle(t, c.api, 2*time.Minute)
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
	log := w.Requests()
	reassigned := logTimeAfter(t, fetchers[victim].log, "partitions assigned", resumed)
	checkFenced(t, log, userAgentOf(victim), resumed, reassigned)
	// Fetches are repeated only for what the zombie had requested and not
	// stored at the pause.
	allowed := faultWindow{At: paused, Sent: resumed, UserAgent: userAgentOf(victim), Stored: stored}.repeats(t, log)
	c.requireClean(w.Audit(auditConfig()), allowed)
	c.checkStored(w)
}

// TestFaultRollingRestart: every process of the cluster is stopped with
// SIGTERM and started again, one at a time, each back in its group before the
// next goes (the frontier, each fetcher, the parser), while the crawl runs. A
// clean stop finishes or hands back what is in flight, so no fetch is
// repeated, nothing is lost, and the crawl finishes.
func TestFaultRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl; skipped with -short")
	}
	const hosts, pages = 10, 30
	w := startWeb(t, hosts, pages, true)
	c := newCluster(t)
	// Static membership, as the Helm chart runs the fetchers.
	fetchers := map[string]*proc{}
	for _, name := range []string{"fetcher-1", "fetcher-2"} {
		fetchers[name] = c.startFetcher(name, "-instance-id", name)
	}
	parser := c.startParser("parser-1")
	submitSeeds(t, c.api, w.Seeds())
	adm := c.admin()

	// One process at a time, each back at work before the next goes, spread
	// over the first half of the crawl.
	step := 0
	next := func() {
		step++
		waitPages(t, w, step*hosts*pages/8, time.Minute)
	}
	next()
	began := time.Now()
	addr := strings.TrimPrefix(c.api, "http://")
	c.frontier.stop(t)
	c.frontier = start(t, "frontier-b", "-broker", c.broker, "-db", c.db, "-listen", addr)
	waitHTTP(t, c.api+"/-/ready", 60*time.Second)
	t.Logf("frontier restarted at %d pages, ready after %v", countPages(w), time.Since(began).Round(time.Millisecond))

	for _, name := range []string{"fetcher-1", "fetcher-2"} {
		next()
		before := waitStable(t, adm, queue.GroupFetchers, 2)
		at := time.Now()
		fetchers[name].stop(t)
		fetchers[name] = c.startFetcher(name+"b", "-instance-id", name)
		waitRejoined(t, adm, queue.GroupFetchers, before, 2)
		back := time.Since(at)
		assigned := logTimeAfter(t, fetchers[name].log, "partitions assigned", at).Sub(at)
		t.Logf("%s restarted at %d pages, back in the group after %v, its partitions assigned after %v", name, countPages(w), back.Round(time.Millisecond), assigned.Round(time.Millisecond))
	}

	next()
	before := waitStable(t, adm, queue.GroupParsers, 1)
	at := time.Now()
	parser.stop(t)
	c.startParser("parser-1b")
	waitRejoined(t, adm, queue.GroupParsers, before, 1)
	ended := time.Now()
	t.Logf("parser restarted at %d pages, back in the group after %v; the rolling restart took %v",
		countPages(w), ended.Sub(at).Round(time.Millisecond), ended.Sub(began).Round(time.Millisecond))

	waitIdle(t, c.api, 2*time.Minute)
	for _, p := range append(append(c.fetchers, c.parsers...), c.frontier) {
		p.stop(t)
	}
	after := 0
	for _, r := range w.Requests() {
		if r.Kind == "page" && r.Start.After(ended) {
			after++
		}
	}
	if after == 0 {
		t.Errorf("no page fetched after the rolling restart: the crawl was over before it ended")
	}
	t.Logf("%d pages fetched after the rolling restart", after)
	c.requireClean(w.Audit(auditConfig()), 0)
	c.checkStored(w)
}

// userAgentOf is the User-Agent of one fetcher: the robots.txt product token
// of every fetcher, and the fetcher's name in the comment.
func userAgentOf(name string) string {
	return agent + "/1.0 (" + name + "; +http://example.test/bot)"
}

// fetchedSince reports whether ua requested a page of any of hosts after t.
func fetchedSince(w *synthweb.Web, ua string, hosts []string, t time.Time) bool {
	for _, r := range w.Requests() {
		if r.UserAgent == ua && r.Start.After(t) && r.Kind == "page" && slices.Contains(hosts, r.Host) {
			return true
		}
	}
	return false
}

// checkFenced fails the test if ua sent a request between its wake-up and
// the group's new assignment to it: a fetcher whose membership lapsed must
// not fetch on partitions it may have lost.
func checkFenced(t *testing.T, log []synthweb.Request, ua string, resumed, reassigned time.Time) {
	t.Helper()
	var zombie []string
	for _, r := range log {
		if r.UserAgent == ua && r.Start.After(resumed) && r.Start.Before(reassigned) {
			zombie = append(zombie, fmt.Sprintf("%s%s at +%v after the resume", r.Host, r.Target, r.Start.Sub(resumed).Round(time.Millisecond)))
		}
	}
	t.Logf("zombie reassigned %v after the resume", reassigned.Sub(resumed).Round(time.Millisecond))
	if len(zombie) > 0 {
		t.Errorf("the paused fetcher sent %d requests after it woke and before it was assigned partitions again: %v", len(zombie), zombie[:min(len(zombie), 10)])
	}
}

func sortedByStart(log []synthweb.Request) []synthweb.Request {
	out := slices.Clone(log)
	slices.SortStableFunc(out, func(a, b synthweb.Request) int { return a.Start.Compare(b.Start) })
	return out
}

// logTimeAfter returns the time of the first JSON log line of path with
// message msg after t; the end of the test if there is none.
func logTimeAfter(t *testing.T, path, msg string, after time.Time) time.Time {
	t.Helper()
	if at, ok := logTime(t, path, msg, after); ok {
		return at
	}
	return time.Now()
}

// logTime returns the time of the first JSON log line of path with message
// msg after t, if there is one.
func logTime(t *testing.T, path, msg string, after time.Time) (time.Time, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg && line.Time.After(after) {
			return line.Time, true
		}
	}
	return time.Time{}, false
}

// groupMembers returns the member IDs of a stable group, each with the
// number of partitions assigned to it; nil while the group rebalances.
func groupMembers(t *testing.T, adm *kadm.Client, group string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	groups, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return nil
	}
	g := groups[group]
	if g.State != "Stable" {
		return nil
	}
	out := map[string]int{}
	for _, m := range g.Members {
		n := 0
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range a.Topics {
				n += len(tp.Partitions)
			}
		}
		out[m.MemberID] = n
	}
	return out
}

// waitStable waits until group is stable with n members, each assigned
// partitions, and returns them.
func waitStable(t *testing.T, adm *kadm.Client, group string, n int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := groupMembers(t, adm, group)
		ok := len(m) == n
		for _, parts := range m {
			ok = ok && parts > 0
		}
		if ok {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s not stable with %d assigned members after 30s: %v", group, n, m)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitRejoined waits until group is stable with n members, each assigned
// partitions, one of which was not a member before: a restarted process is
// back at work (with static membership the group keeps a stopped member's
// place, under its instance ID, and gives it to the restarted one).
func waitRejoined(t *testing.T, adm *kadm.Client, group string, before map[string]int, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := groupMembers(t, adm, group)
		ok := len(now) == n
		fresh := false
		for id, parts := range now {
			ok = ok && parts > 0
			if _, old := before[id]; !old {
				fresh = true
			}
		}
		if ok && fresh {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: no new member among %d assigned ones after 30s: %v (before %v)", group, n, now, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scrapeCounter sums the samples of one metric on a /metrics page whose
// line contains match.
func scrapeCounter(t *testing.T, url, name, match string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Errorf("scrape %s: %v", url, err)
		return 0
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest != "" && rest[0] != ' ' && rest[0] != '{' || !strings.Contains(rest, match) {
			continue // a longer name, or another series
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
