package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/submit"
)

// env is a real SQLite store and a real (embedded) Kafka broker behind the API.
type env struct {
	*testenv.Env
	s   *Server
	srv *httptest.Server
}

// newEnv serves the API over real backends; every exchange is checked against
// api/openapi.yaml (see conform).
func newEnv(t *testing.T, cfg Config, opts ...Option) *env {
	t.Helper()
	return newEnvOn(t, testenv.New(t), nil, cfg, opts...)
}

// newEnvOn serves the API over the backends of e.
func newEnvOn(t *testing.T, e *testenv.Env, live Live, cfg Config, opts ...Option) *env {
	t.Helper()
	s := New(cfg, submit.New(e.DB, e.Kafka), e.DB, live, prometheus.NewRegistry(), e.Log, opts...)
	t.Cleanup(s.Close)
	s.SetReady(true)
	srv := httptest.NewServer(conform(t, s))
	t.Cleanup(srv.Close)
	return &env{Env: e, s: s, srv: srv}
}

func (e *env) do(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// consumeSeeds reads what the API produced to crawl.urls.
func (e *env) consumeSeeds(t *testing.T, want int) []queue.URL {
	t.Helper()
	var out []queue.URL
	for _, r := range e.Consume(t, queue.TopicURLs, want, 10*time.Second) {
		u, err := queue.DecodeURL(r.Value)
		if err != nil {
			t.Errorf("undecodable seed record: %v", err)
			continue
		}
		if r.Partition != queue.PartitionOf(string(r.Key)) {
			t.Errorf("seed %s on partition %d, its host %s belongs on %d", u.URL, r.Partition, r.Key, queue.PartitionOf(string(r.Key)))
		}
		out = append(out, u)
	}
	if len(out) != want {
		t.Fatalf("got %d of %d seeds from crawl.urls", len(out), want)
	}
	return out
}

func TestPostURLsMixedBatch(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"crawl_id":"c1","urls":[
		{"url":"http://Example.COM:80/a/../b?utm_source=x&z=1&a=2#frag"},
		{"url":"ftp://example.com/file"},
		{"url":"not a url"},
		{"url":"http://example.com/b?a=2&z=1"},
		{"url":"https://other.example/","priority":90,"depth":1},
		{"url":"http://x.example/","priority":500}
	]}`
	code, out := e.do(t, "POST", "/api/v1/frontier/urls", "", body)
	if code != http.StatusAccepted {
		t.Fatalf("status %d: %v", code, out)
	}
	if out["accepted"] != 2.0 || out["rejected"] != 3.0 || out["duplicate"] != 1.0 {
		t.Errorf("counts = %v/%v/%v, want 2 accepted, 3 rejected, 1 duplicate", out["accepted"], out["rejected"], out["duplicate"])
	}
	results := out["results"].([]any)
	want := []string{"accepted", "rejected", "rejected", "duplicate", "accepted", "rejected"}
	for i, r := range results {
		m := r.(map[string]any)
		if m["status"] != want[i] {
			t.Errorf("result %d = %v, want %s", i, m, want[i])
		}
		if m["status"] == "rejected" && m["reason"] == "" {
			t.Errorf("result %d rejected without a reason", i)
		}
	}
	if n := results[0].(map[string]any)["normalized"]; n != "http://example.com/b?a=2&z=1" {
		t.Errorf("normalized = %v", n)
	}
	seeds := e.consumeSeeds(t, 2)
	for _, s := range seeds {
		if !s.Seed || s.CrawlID != "c1" {
			t.Errorf("seed record %+v: want Seed and crawl id c1", s)
		}
	}
}

func TestPostURLsDuplicateOfStored(t *testing.T) {
	e := newEnv(t, Config{})
	n := "http://known.example/"
	if _, err := e.DB.AdmitURLs(context.Background(), []store.URL{{Hash: store.HashURL(n), URL: n, Host: "known.example", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	code, out := e.do(t, "POST", "/api/v1/frontier/urls", "", `{"urls":[{"url":"http://KNOWN.example"}]}`)
	if code != http.StatusAccepted || out["duplicate"] != 1.0 {
		t.Errorf("status %d, %v: want the stored URL reported duplicate", code, out)
	}
}

func TestPostURLsBadRequests(t *testing.T) {
	e := newEnv(t, Config{MaxSeeds: 2, MaxBodyBytes: 300})
	cases := []struct {
		name, body string
		code       int
	}{
		{"not json", `{"urls":`, 400},
		{"unknown field", `{"urls":[{"url":"http://a/"}],"extra":1}`, 400},
		{"empty", `{"urls":[]}`, 400},
		{"too many", `{"urls":[{"url":"http://a/"},{"url":"http://b/"},{"url":"http://c/"}]}`, 413},
		{"too big", `{"urls":[{"url":"http://a/` + strings.Repeat("x", 400) + `"}]}`, 413},
		{"trailing", `{"urls":[{"url":"http://a/"}]} {}`, 400},
		{"wrong type", `{"urls":"http://a/"}`, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := e.do(t, "POST", "/api/v1/frontier/urls", "", c.body)
			if code != c.code {
				t.Errorf("status %d, want %d (%v)", code, c.code, out)
			}
			if out["error"] == nil || out["code"] != float64(code) {
				t.Errorf("error body %v lacks error/code", out)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"s3cret", "other"}})
	for _, tok := range []string{"", "wrong", "s3cre"} {
		if code, _ := e.do(t, "GET", "/api/v1/stats", tok, ""); code != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", tok, code)
		}
	}
	for _, tok := range []string{"s3cret", "other"} {
		if code, out := e.do(t, "GET", "/api/v1/stats", tok, ""); code != http.StatusOK {
			t.Errorf("token %q: status %d (%v), want 200", tok, code, out)
		}
	}
	// Health stays open for probes.
	if code, _ := e.do(t, "GET", "/-/healthy", "", ""); code != http.StatusOK {
		t.Errorf("/-/healthy status %d", code)
	}
}

func TestLookups(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	n := "http://look.example/page"
	if _, err := e.DB.AdmitURLs(ctx, []store.URL{{Hash: store.HashURL(n), Partition: queue.PartitionOf("look.example"), URL: n, Host: "look.example", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	code, out := e.do(t, "GET", "/api/v1/urls?url="+"HTTP://look.example/page%23", "", "")
	if code != http.StatusOK {
		t.Fatalf("url look-up: %d %v", code, out)
	}
	if out["state"] != "queued" || out["normalized"] != n || out["fetched_at"] != nil {
		t.Errorf("state %v, normalized %v, fetched_at %v: want queued, %s, null", out["state"], out["normalized"], out["fetched_at"], n)
	}
	if out["render"] != nil {
		t.Errorf("render decision of a page never considered: %v, want null", out["render"])
	}
	// A page the render tier rendered shows the decision and what rendering found.
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if err := e.DB.Render().RecordRenders(ctx, []store.RenderDecision{{URLHash: store.HashURL(n), Host: "look.example", Section: "/", URL: n, At: at,
		Decision: store.RenderRendered, Reason: "signals: app_root#app", Compared: true, Gained: true, LinksHTML: 1, LinksRendered: 7,
		Detail: `{"bound_ms":17000,"waited_ms":1300,"subresources":[{"url":"http://look.example/app.js","type":"Script","status":200,"wait_ms":1200},` +
			`{"url":"http://look.example/api/","type":"Fetch","error":"sub-resource refused: excluded robots","wait_ms":100}],"script_errors":["Uncaught Error: no data"]}`}}); err != nil {
		t.Fatal(err)
	}
	_, out = e.do(t, "GET", "/api/v1/urls?url="+n, "", "")
	r, _ := out["render"].(map[string]any)
	if r["decision"] != "rendered" || r["reason"] != "signals: app_root#app" || r["section"] != "/" || r["links_rendered"] != 7.0 || r["at"] != "2026-11-26T12:00:00Z" {
		t.Errorf("render decision %v", out["render"])
	}
	// What it waited for, and what the page threw.
	d, _ := r["detail"].(map[string]any)
	subs, _ := d["subresources"].([]any)
	errs, _ := d["script_errors"].([]any)
	if d["waited_ms"] != 1300.0 || d["bound_ms"] != 17000.0 || len(subs) != 2 || len(errs) != 1 || errs[0] != "Uncaught Error: no data" {
		t.Errorf("render detail %v", r["detail"])
	} else if s1, _ := subs[1].(map[string]any); s1["error"] != "sub-resource refused: excluded robots" || s1["status"] != nil {
		t.Errorf("refused sub-resource %v", s1)
	}
	if code, _ := e.do(t, "GET", "/api/v1/urls?url=http://nowhere.example/", "", ""); code != 404 {
		t.Errorf("unknown url: %d, want 404", code)
	}
	if code, _ := e.do(t, "GET", "/api/v1/urls", "", ""); code != 400 {
		t.Errorf("missing url param: %d, want 400", code)
	}
	if code, out := e.do(t, "GET", "/api/v1/hosts/look.example", "", ""); code != 200 || out["known"] != true {
		t.Errorf("host look-up: %d %v", code, out)
	}
	if code, _ := e.do(t, "GET", "/api/v1/hosts/none.example", "", ""); code != 404 {
		t.Errorf("unknown host: %d, want 404", code)
	}
	code, out = e.do(t, "GET", "/api/v1/stats", "", "")
	if code != 200 || out["mode"] != "store" || out["urls"].(map[string]any)["queued"] != 1.0 {
		t.Errorf("stats: %d %v", code, out)
	}
	// The host's throughput over the last hour counts the page once fetched.
	fetched := time.Now().UTC().Truncate(time.Millisecond)
	if err := e.DB.UpdateURLs(ctx, []store.URLUpdate{{Hash: store.HashURL(n), State: store.StateFetched, Status: 200, Attempts: 1, FetchedAt: fetched}}); err != nil {
		t.Fatal(err)
	}
	_, out = e.do(t, "GET", "/api/v1/hosts/look.example", "", "")
	if rf, _ := out["recent_fetches"].([]any); len(rf) != 1 || rf[0].(map[string]any)["duration_seconds"] != nil {
		t.Errorf("recent fetches before the page is parsed: %v, want one with duration_seconds null", out["recent_fetches"])
	}
	thr, _ := out["throughput"].(map[string]any)
	hist, _ := thr["history"].([]any)
	if thr["last_hour"] != 1.0 || len(hist) < 60 || len(hist) > 62 {
		t.Errorf("host throughput: last_hour %v, %d points; want 1 and one point a minute", thr["last_hour"], len(hist))
	}
	var sum float64
	for _, p := range hist {
		sum += p.(map[string]any)["pages_per_second"].(float64) * 60
	}
	if sum < 0.99 || sum > 1.01 {
		t.Errorf("host throughput history sums to %.3f pages, want 1", sum)
	}
	// Once its capture is stored, the fetch has the capture's duration.
	if err := e.DB.AddCaptures(ctx, []store.Capture{{FetchID: "f1", URLHash: store.HashURL(n), URL: n, FetchedAt: fetched,
		Duration: 1234 * time.Millisecond, Status: 200}}); err != nil {
		t.Fatal(err)
	}
	_, out = e.do(t, "GET", "/api/v1/hosts/look.example", "", "")
	if rf, _ := out["recent_fetches"].([]any); len(rf) != 1 || rf[0].(map[string]any)["duration_seconds"] != 1.234 {
		t.Errorf("recent fetches: %v, want one with duration_seconds 1.234", out["recent_fetches"])
	}
	_, out = e.do(t, "GET", "/api/v1/urls?url="+n, "", "")
	if cs, _ := out["captures"].([]any); len(cs) != 1 || cs[0].(map[string]any)["duration_seconds"] != 1.234 {
		t.Errorf("url look-up captures: %v, want one with duration_seconds 1.234", out["captures"])
	}
	// The status breakdown counts the capture by its class, and no empty class.
	_, out = e.do(t, "GET", "/api/v1/stats", "", "")
	if st, _ := out["storage"].(map[string]any); fmt.Sprint(st["captures_by_status"]) != "map[2xx:1]" {
		t.Errorf("stats: captures by status %v, want 2xx 1", st["captures_by_status"])
	}
	if code, _ := e.do(t, "GET", "/nope", "", ""); code != 404 {
		t.Errorf("unknown route: %d", code)
	}
}

func TestHostLookupDecodesRobots(t *testing.T) {
	e := newEnv(t, Config{})
	now := time.Now()
	entry := robots.Evaluate(robots.Policy{Agent: "testbot"}, 200, []byte("User-agent: *\nDisallow: /x\nSitemap: http://r.example/sm.xml\n"), nil, now, nil)
	b, err := entry.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DB.SaveHosts(context.Background(), []store.Host{{Host: "r.example", Partition: queue.PartitionOf("r.example"), Robots: b, Delay: time.Second, NextAllowed: now, UpdatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	code, out := e.do(t, "GET", "/api/v1/hosts/r.example", "", "")
	if code != http.StatusOK {
		t.Fatalf("status %d: %v", code, out)
	}
	rs, ok := out["robots"].(map[string]any)
	if !ok || rs["kind"] != "rules" || rs["status"] != 200.0 {
		t.Errorf("robots = %v, want kind rules, status 200", out["robots"])
	}
	if sm, _ := rs["sitemaps"].([]any); len(sm) != 1 {
		t.Errorf("sitemaps = %v", rs["sitemaps"])
	}
	if rules, _ := rs["rules"].([]any); len(rules) != 1 || rules[0].(map[string]any)["line"] != "Disallow: /x" {
		t.Errorf("rules = %v, want the one line of the * group", rs["rules"])
	}
	d := out["delay"].(map[string]any)
	if d["seconds"] != 1.0 || d["source"] != "default" || d["robots_crawl_delay_seconds"] != nil {
		t.Errorf("delay = %v, want 1 s from the default, no Crawl-delay", d)
	}
}

// TestDocumentReasonLookup: a PDF the parser could not read says why in
// its capture, with the reason's description; a page read whole says
// nothing.
func TestDocumentReasonLookup(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	locked, page := "http://docs.example/locked.pdf", "http://docs.example/"
	if err := e.DB.AddCaptures(ctx, []store.Capture{
		{FetchID: "d1", URLHash: store.HashURL(locked), URL: locked, FetchedAt: time.Now(), Status: 200, ContentType: "application/pdf", DocReason: parse.ReasonPDFEncrypted},
		{FetchID: "d2", URLHash: store.HashURL(page), URL: page, FetchedAt: time.Now(), Status: 200, ContentType: "text/html"},
	}); err != nil {
		t.Fatal(err)
	}
	_, out := e.do(t, "GET", "/api/v1/urls?url="+locked, "", "")
	cs, _ := out["captures"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["document_reason"] != parse.ReasonPDFEncrypted ||
		!strings.Contains(fmt.Sprint(cs[0].(map[string]any)["document_reason_description"]), "password") {
		t.Errorf("captures %v, want one with document_reason %s and its description", out["captures"], parse.ReasonPDFEncrypted)
	}
	_, out = e.do(t, "GET", "/api/v1/urls?url="+page, "", "")
	if cs, _ := out["captures"].([]any); len(cs) != 1 || cs[0].(map[string]any)["document_reason"] != nil {
		t.Errorf("captures %v, want one without document_reason", out["captures"])
	}
}

// TestRedirectLookup: a redirect's URL and capture say where it went, and
// its target is its one out-link, in the look-up and in the crawl log.
func TestRedirectLookup(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	from, to := "http://moved.example/old", "https://moved.example/new"
	if _, err := e.DB.AdmitURLs(ctx, []store.URL{{Hash: store.HashURL(from), Partition: queue.PartitionOf("moved.example"), URL: from, Host: "moved.example",
		Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.AddCaptures(ctx, []store.Capture{{FetchID: "r1", URLHash: store.HashURL(from), URL: from, FetchedAt: time.Now(), Status: 301,
		Location: to, Links: 1, OutLinks: []int64{store.HashURL(to)}}}); err != nil {
		t.Fatal(err)
	}
	_, out := e.do(t, "GET", "/api/v1/urls?url="+from, "", "")
	if out["location"] != to {
		t.Errorf("location %v, want %s", out["location"], to)
	}
	if cs, _ := out["captures"].([]any); len(cs) != 1 || cs[0].(map[string]any)["location"] != to || cs[0].(map[string]any)["links"] != 1.0 {
		t.Errorf("captures %v, want one with location %s and 1 link", out["captures"], to)
	}
	l, _ := out["links"].(map[string]any)
	if os, _ := l["out"].([]any); l["out_count"] != 1.0 || len(os) != 1 || os[0].(map[string]any)["hash"] != hashString(store.HashURL(to)) {
		t.Errorf("links %v, want the target as the one out-link", l)
	}
	_, out = e.do(t, "GET", "/api/v1/captures?limit=10", "", "")
	if cs, _ := out["captures"].([]any); len(cs) != 1 || cs[0].(map[string]any)["location"] != to {
		t.Errorf("crawl log %v, want the redirect with its location", out["captures"])
	}
}
