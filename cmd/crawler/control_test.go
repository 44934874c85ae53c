package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/store"
)

// controlGrace is how long after the fetcher has taken an action (seen on
// /metrics or the API, see applied) the crawl may still act as before: a
// request it had leased already starts. The windows start from there, not
// from the call: the fetcher polls the control version about once a second,
// and on a loaded machine its poll comes later than that.
const controlGrace = 1500 * time.Millisecond

// applied polls cond until the crawl has taken an operator's action and
// returns when it saw it. 30 s is far beyond a poll a second: not seeing it
// by then is a failure of the controls.
func applied(t *testing.T, what string, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("the crawl did not take %s in 30 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// metric reads the unlabelled sample name from the crawler's /metrics; -1
// when it is not there.
func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("/metrics: %q", line)
			}
			return f
		}
	}
	return -1
}

// hostsPaused returns a condition: the crawler's frontier has n hosts paused.
func hostsPaused(t *testing.T, base string, n float64) func() bool {
	return func() bool { return metric(t, base, "crawler_frontier_hosts_paused") == n }
}

// operator calls the API of a running crawler as an operator would.
type operator struct {
	base, token string
}

func (o operator) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, o.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if resp.StatusCode >= 300 {
		t.Logf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

func (o operator) must(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	code, out := o.call(t, method, path, body)
	if code >= 300 {
		t.Fatalf("%s %s: %d %v", method, path, code, out)
	}
	return out
}

// TestControlRunningCrawl steers an embedded crawl of the synthetic web
// through the API and judges each action from the web's request log: a
// paused host gets no request until it is resumed and is then crawled to
// the end; an exclusion pattern takes its host's queued URLs out (recorded
// excluded with reason operator_pattern) and none of them is requested
// after it; a delay override spaces the host's requests by it; a paused
// crawl sends nothing. The audit log names each action and who did it.
func TestControlRunningCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	cfg := synthweb.DefaultConfig()
	// 250 ms between requests to a host: 30 pages take 8 s or more, long
	// enough to act on each host while it has pages queued.
	cfg.Hosts, cfg.PagesPerHost = 4, 30
	w, seeds := startWeb(t, cfg)
	const token = "control-test-token"
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeLoopbackAddr(t)
	data := filepath.Join(t.TempDir(), "data")
	args := crawlArgs(data, seeds, "-listen", addr, "-api-tokens-file", tokens, "-default-delay", "250ms")
	args = without(args, "-exit-when-idle")
	p := startCrawler(t, args)
	op := operator{base: "http://" + addr, token: token}
	waitAPI(t, p, op.base)

	hosts := w.Hosts()
	paused, trimmed, slowed := hosts[0], hosts[1], hosts[2]
	pages := func(host string) int {
		n := 0
		for _, r := range w.Requests() {
			if r.Host == host && r.Kind == "page" {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for pages(paused) < 3 || pages(trimmed) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the crawl did not start in 30 s; log:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}

	called := time.Now()
	op.must(t, "POST", "/api/v1/hosts/"+paused+"/pause", "")
	odd := `^http://` + regexp.QuoteMeta(trimmed) + `/p/\d*[13579]\.html$`
	body, _ := json.Marshal(map[string]string{"pattern": odd, "syntax": "regexp", "host": trimmed})
	excl := op.must(t, "POST", "/api/v1/exclusions", string(body))
	const slowDelay = 800 * time.Millisecond
	op.must(t, "PATCH", "/api/v1/hosts/"+slowed, fmt.Sprintf(`{"delay_seconds": %g}`, slowDelay.Seconds()))
	if code, out := op.call(t, "PATCH", "/api/v1/hosts/"+slowed, `{"delay_seconds": -1}`); code != http.StatusBadRequest {
		t.Errorf("a negative delay: %d %v, want 400", code, out)
	}
	// Each window starts when the fetcher has the action.
	pausedAt := applied(t, "the host's pause", hostsPaused(t, op.base, 1))
	excludedAt := applied(t, "the exclusion pattern", func() bool {
		_, ok := p.find(`msg="exclusion pattern applied to queued URLs"`)
		return ok
	})
	slowedAt := applied(t, "the delay override", func() bool {
		d, _ := op.must(t, "GET", "/api/v1/hosts/"+slowed, "")["delay"].(map[string]any)
		return d["seconds"] == slowDelay.Seconds()
	})
	t.Logf("the fetcher had the host's pause, the exclusion and the delay %v, %v and %v after the first call",
		pausedAt.Sub(called).Round(time.Millisecond), excludedAt.Sub(called).Round(time.Millisecond), slowedAt.Sub(called).Round(time.Millisecond))
	time.Sleep(3 * time.Second)

	crawlPauseCalled := time.Now()
	op.must(t, "POST", "/api/v1/control/pause", "")
	crawlPausedAt := applied(t, "the crawl's pause", func() bool { return metric(t, op.base, "crawler_fetcher_paused") == 1 })
	t.Logf("the fetcher had the crawl's pause %v after the call", crawlPausedAt.Sub(crawlPauseCalled).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	// A resume's window ends when it is sent: a fetcher may see it before
	// the call returns.
	crawlResumedAt := time.Now()
	op.must(t, "POST", "/api/v1/control/resume", "")
	time.Sleep(time.Second)
	resumedAt := time.Now()
	op.must(t, "POST", "/api/v1/hosts/"+paused+"/resume", "")

	waitIdle(t, w, 3*time.Minute, op)
	reqs := w.Requests()

	// The paused host: nothing while paused, then crawled to the end.
	var during, after int
	for _, r := range reqs {
		if r.Host != paused {
			continue
		}
		switch {
		case r.Start.After(pausedAt.Add(controlGrace)) && r.Start.Before(resumedAt):
			during++
			t.Errorf("request to paused host %s at +%v after the pause: %s", paused, r.Start.Sub(pausedAt).Round(time.Millisecond), r.Target)
		case r.Start.After(resumedAt):
			after++
		}
	}
	t.Logf("paused host %s: paused %v, %d requests while paused, %d after the resume", paused, resumedAt.Sub(pausedAt).Round(time.Millisecond), during, after)
	if after == 0 {
		t.Errorf("host %s got no request after its resume: it had nothing queued, so the pause proved nothing", paused)
	}

	// The whole crawl paused: no request at all.
	for _, r := range reqs {
		if r.Start.After(crawlPausedAt.Add(controlGrace)) && r.Start.Before(crawlResumedAt) {
			t.Errorf("request while the crawl was paused, at +%v: %s%s", r.Start.Sub(crawlPausedAt).Round(time.Millisecond), r.Host, r.Target)
		}
	}

	// The excluded pattern: nothing requested after it; the queued ones are
	// recorded excluded, the ones found later refused.
	re := regexp.MustCompile(odd)
	fetched := map[string]bool{}
	for _, r := range reqs {
		if r.Status == http.StatusOK {
			fetched[r.Resource] = true
		}
		if r.Host == trimmed && re.MatchString("http://"+r.Host+r.Target) && r.Start.After(excludedAt.Add(controlGrace)) {
			t.Errorf("excluded URL requested at +%v after the exclusion: %s", r.Start.Sub(excludedAt).Round(time.Millisecond), r.Target)
		}
	}
	list := op.must(t, "GET", "/api/v1/exclusions", "")
	var patternCount float64
	if ex, _ := list["exclusions"].([]any); len(ex) == 1 {
		patternCount, _ = ex[0].(map[string]any)["excluded"].(float64)
	} else {
		t.Errorf("exclusions %v: want the one added", list)
	}

	// Every page of the other hosts was crawled: the controls lost nothing.
	// (The trimmed host's pages linked only from excluded ones are not
	// found.)
	for _, m := range w.MustFetch() {
		if !fetched[m] && !strings.HasPrefix(m, trimmed+"/") {
			t.Errorf("not fetched: %s", m)
		}
	}

	// The slowed host: its page requests after the override are spaced by it.
	var starts []synthweb.Request
	for _, r := range reqs {
		if r.Host == slowed && r.Start.After(slowedAt.Add(controlGrace)) {
			starts = append(starts, r)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Start.Before(starts[j].Start) })
	gaps := 0
	for i := 1; i < len(starts); i++ {
		gap := starts[i].Start.Sub(starts[i-1].End)
		if starts[i-1].End.Before(crawlPauseCalled) && starts[i].Start.After(crawlResumedAt) {
			continue // the crawl's pause lengthened this one
		}
		gaps++
		if gap < slowDelay-15*time.Millisecond {
			t.Errorf("requests to %s %v apart after the %v delay override: %s then %s", slowed, gap.Round(time.Millisecond), slowDelay, starts[i-1].Target, starts[i].Target)
		}
	}
	t.Logf("slowed host %s: %d gaps after the override", slowed, gaps)
	if gaps < 3 {
		t.Errorf("only %d gaps to judge the delay override by", gaps)
	}

	// The audit log, newest first.
	audit := op.must(t, "GET", "/api/v1/audit?limit=50", "")
	var got []string
	for _, e := range audit["entries"].([]any) {
		m := e.(map[string]any)
		if !strings.HasPrefix(fmt.Sprint(m["actor"]), "token:") {
			t.Errorf("audit entry without the token's name: %v", m)
		}
		got = append(got, fmt.Sprintf("%v %v %v", m["action"], m["target"], m["status"]))
	}
	want := []string{
		"host.resume " + paused + " 200", "crawl.resume  200", "crawl.pause  200",
		"host.update " + slowed + " 400", "host.update " + slowed + " 200",
		fmt.Sprintf("exclusion.add exclusion/%v 201", excl["id"]), "host.pause " + paused + " 200",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	rep := w.Audit(auditConfig())
	for _, c := range []struct {
		name string
		v    synthweb.Violations
	}{{"overlaps", rep.Overlaps}, {"politeness", rep.Politeness}, {"robots", rep.Robots}, {"duplicates", rep.Duplicates}} {
		if c.v.Count > 0 {
			t.Errorf("%s: %d violations: %v", c.name, c.v.Count, c.v.Examples)
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := p.wait(t, time.Minute); err != nil {
		t.Errorf("crawler exited with %v after SIGTERM", err)
	}

	// What the pattern excluded, from the store: queued URLs moved to
	// excluded, and URLs found later refused, each with its reason.
	db := openData(t, data)
	queuedOut, refused := 0, 0
	for _, m := range w.MustFetch() {
		u := "http://" + m
		if !re.MatchString(u) || fetched[m] {
			continue
		}
		info, err := db.URLInfo(context.Background(), u)
		switch {
		case err != nil:
			t.Errorf("%s: %v", u, err)
		case info.URL != nil && info.URL.State == store.StateExcluded && info.URL.Reason == control.ReasonPattern:
			queuedOut++
		case info.URL == nil && info.Exclusion != nil && info.Exclusion.Reason == control.ReasonPattern:
			refused++
		default:
			t.Errorf("%s is neither fetched nor excluded by the pattern: %+v %+v", u, info.URL, info.Exclusion)
		}
	}
	t.Logf("pattern on %s: %d queued URLs excluded, %d refused at admission; the pattern counts %v", trimmed, queuedOut, refused, patternCount)
	if queuedOut == 0 {
		t.Errorf("the pattern found no queued URL to exclude: the test did not exercise the queue")
	}
	if patternCount < float64(queuedOut+refused) {
		t.Errorf("the pattern counts %v exclusions, want at least %d", patternCount, queuedOut+refused)
	}
}
