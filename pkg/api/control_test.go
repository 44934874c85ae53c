package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The queue export's NDJSON is text to the document's checks.
func init() {
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
}

// Every control action lands in the store with its audit entry, refusals
// included, and every answer conforms to the document (conform).
func TestControlActions(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"s3cret"}})
	ctx := context.Background()
	cs := e.DB.Control()
	const tok = "s3cret"

	if code, _ := e.do(t, "POST", "/api/v1/control/pause", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("pause without a token: %d", code)
	}
	code, out := e.do(t, "POST", "/api/v1/control/pause", tok, "")
	if code != http.StatusOK || out["changed"] != true {
		t.Fatalf("pause: %d %v", code, out)
	}
	if c, _ := cs.Controls(ctx); !c.Paused {
		t.Fatal("store not paused")
	}
	if code, out := e.do(t, "GET", "/api/v1/stats", tok, ""); code != http.StatusOK || out["paused"] != true {
		t.Fatalf("stats while paused: %d paused=%v", code, out["paused"])
	}
	if code, out := e.do(t, "POST", "/api/v1/control/pause", tok, ""); code != http.StatusOK || out["changed"] != false {
		t.Fatalf("second pause: %d %v", code, out)
	}
	if code, _ := e.do(t, "POST", "/api/v1/control/resume", tok, ""); code != http.StatusOK {
		t.Fatalf("resume: %d", code)
	}

	// A host whose robots.txt sets Crawl-delay 2.
	entry := robots.Evaluate(robots.Policy{Agent: "testbot"}, 200, []byte("User-agent: *\nCrawl-delay: 2\n"), nil, time.Now(), nil)
	b, _ := entry.MarshalBinary()
	if err := e.DB.SaveHosts(ctx, []store.Host{{Host: "r.example", Partition: queue.PartitionOf("r.example"), Robots: b}}); err != nil {
		t.Fatal(err)
	}
	if code, out := e.do(t, "POST", "/api/v1/hosts/R.Example/pause", tok, ""); code != http.StatusOK || out["paused"] != true || out["host"] != "r.example" {
		t.Fatalf("host pause: %d %v", code, out)
	}
	code, out = e.do(t, "PATCH", "/api/v1/hosts/r.example", tok, `{"delay_seconds": 0.5}`)
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(out["error"]), "Crawl-delay of 2 s") {
		t.Fatalf("delay below Crawl-delay: %d %v", code, out)
	}
	code, out = e.do(t, "PATCH", "/api/v1/hosts/r.example", tok, `{"delay_seconds": 3.5, "page_budget": 10}`)
	if code != http.StatusOK || out["delay_seconds"] != 3.5 || out["page_budget"] != 10.0 || out["paused"] != true {
		t.Fatalf("patch: %d %v", code, out)
	}
	code, out = e.do(t, "PATCH", "/api/v1/hosts/r.example", tok, `{"page_budget": null}`)
	if code != http.StatusOK || out["page_budget"] != nil || out["delay_seconds"] != 3.5 {
		t.Fatalf("clearing the budget: %d %v", code, out)
	}
	code, out = e.do(t, "PATCH", "/api/v1/hosts/r.example", tok, `{"render": "always"}`)
	if code != http.StatusOK || out["render"] != "always" || out["delay_seconds"] != 3.5 {
		t.Fatalf("render mode: %d %v", code, out)
	}
	if c, _ := cs.Controls(ctx); len(c.Hosts) != 1 || c.Hosts[0].Render != store.RenderAlways {
		t.Fatalf("stored render mode %+v", c.Hosts)
	}
	code, out = e.do(t, "PATCH", "/api/v1/hosts/r.example", tok, `{"render": "auto"}`)
	if code != http.StatusOK || out["render"] != nil {
		t.Fatalf("render mode back to the evidence: %d %v", code, out)
	}
	for _, body := range []string{`{}`, `{"delay_seconds": -1}`, `{"page_budget": 1.5}`, `{"speed": 3}`, `[1]`, `nope`, `{"render": "sometimes"}`, `{"render": 1}`} {
		if code, out := e.do(t, "PATCH", "/api/v1/hosts/r.example", tok, body); code != http.StatusBadRequest {
			t.Errorf("PATCH %s: %d %v, want 400", body, code, out)
		}
	}
	c, _ := cs.Controls(ctx)
	if len(c.Hosts) != 1 || c.Hosts[0].Delay != 3500*time.Millisecond || c.Hosts[0].PageBudget != store.NoOverride || !c.Hosts[0].Paused {
		t.Fatalf("stored host controls %+v", c.Hosts)
	}
	code, out = e.do(t, "GET", "/api/v1/control", tok, "")
	if code != http.StatusOK || out["paused"] != false || out["paused_hosts"] != 1.0 {
		t.Fatalf("GET control: %d %v", code, out)
	}
	code, out = e.do(t, "GET", "/api/v1/stats", tok, "")
	if hosts, _ := out["hosts"].(map[string]any); code != http.StatusOK || out["paused"] != false || hosts["paused"] != 1.0 {
		t.Fatalf("stats: %d paused=%v hosts=%v", code, out["paused"], out["hosts"])
	}

	code, out = e.do(t, "POST", "/api/v1/exclusions", tok, `{"pattern": "*/calendar/*"}`)
	if code != http.StatusCreated || out["syntax"] != "glob" || out["created_by"] != "token:"+tokenHash(tok) {
		t.Fatalf("add exclusion: %d %v", code, out)
	}
	id := out["id"].(float64)
	if code, out := e.do(t, "POST", "/api/v1/exclusions", tok, `{"pattern": "a(", "syntax": "regexp"}`); code != http.StatusBadRequest {
		t.Fatalf("bad regexp: %d %v", code, out)
	}
	if code, out := e.do(t, "POST", "/api/v1/exclusions", tok, `{"pattern": "sid=", "syntax": "regexp", "host": "A.example:80"}`); code != http.StatusCreated || out["host"] != "a.example" {
		t.Fatalf("scoped exclusion: %d %v", code, out)
	}
	code, out = e.do(t, "GET", "/api/v1/exclusions", tok, "")
	if list, _ := out["exclusions"].([]any); code != http.StatusOK || len(list) != 2 {
		t.Fatalf("list: %d %v", code, out)
	}
	if code, _ := e.do(t, "DELETE", fmt.Sprintf("/api/v1/exclusions/%d", int(id)), tok, ""); code != http.StatusOK {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := e.do(t, "DELETE", fmt.Sprintf("/api/v1/exclusions/%d", int(id)), tok, ""); code != http.StatusNotFound {
		t.Fatalf("delete again: %d", code)
	}

	code, out = e.do(t, "GET", "/api/v1/audit?limit=3", tok, "")
	entries, _ := out["entries"].([]any)
	if code != http.StatusOK || len(entries) != 3 || out["next_before"] == nil {
		t.Fatalf("audit page: %d %v", code, out)
	}
	first := entries[0].(map[string]any)
	if first["action"] != "exclusion.delete" || first["status"] != 404.0 || !strings.HasPrefix(fmt.Sprint(first["result"]), "refused") {
		t.Errorf("newest entry %v, want the refused delete", first)
	}
	all, _ := cs.AuditLog(ctx, 0, 1000)
	var actions []string
	for _, a := range all {
		actions = append(actions, fmt.Sprintf("%s:%d", a.Action, a.Status))
		if a.Actor != "token:"+tokenHash(tok) {
			t.Errorf("entry %d actor %q", a.ID, a.Actor)
		}
	}
	// Newest first: 3 pauses/resumes, host pause, refused delay, patch,
	// budget clear, 6 refused patches, 3 adds (one refused), delete, refused delete.
	want := "exclusion.delete:404 exclusion.delete:200 exclusion.add:201 exclusion.add:400 exclusion.add:201 " +
		strings.Repeat("host.update:400 ", 8) + "host.update:200 host.update:200 host.update:200 host.update:200 host.update:409 host.pause:200 " +
		"crawl.resume:200 crawl.pause:200 crawl.pause:200"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("audit log\n got %s\nwant %s", got, want)
	}
	var params map[string]any
	for _, a := range all {
		if a.Action == "host.update" && a.Status == 409 {
			if err := json.Unmarshal([]byte(a.Params), &params); err != nil || params["delay_seconds"] != 0.5 || a.Target != "r.example" {
				t.Errorf("refused delay entry: %+v", a)
			}
		}
	}
}

// A mistyped host is refused rather than paused: only create=true holds a
// host the crawl does not know, and a host with a control is known after.
func TestPauseUnknownHost(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"s3cret"}})
	for _, c := range []struct {
		path string
		code int
	}{
		{"/api/v1/hosts/typo.example/pause", http.StatusNotFound},
		{"/api/v1/hosts/typo.example/pause?create=maybe", http.StatusBadRequest},
		{"/api/v1/hosts/typo.example/pause?create=true", http.StatusOK},
		{"/api/v1/hosts/typo.example/pause", http.StatusOK},   // it has a control now
		{"/api/v1/hosts/other.example/resume", http.StatusOK}, // resuming holds nothing
	} {
		if code, out := e.do(t, "POST", c.path, "s3cret", ""); code != c.code {
			t.Errorf("POST %s: %d %v, want %d", c.path, code, out, c.code)
		}
	}
	log, err := e.DB.Control().AuditLog(context.Background(), 0, 10)
	if err != nil || len(log) != 5 {
		t.Fatalf("audit log %+v, %v; want the 5 actions", log, err)
	}
	if a := log[len(log)-1]; a.Status != http.StatusNotFound || a.Target != "typo.example" {
		t.Errorf("the refused pause is audited as %+v", a)
	}
}

func tokenHash(tok string) string {
	s := New(Config{Tokens: []string{tok}}, nil, nil, nil, nil, nil)
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	return strings.TrimPrefix(s.actor(r), "token:")
}

// TestAuditNames: the audit log names the actor by its token's name when
// the token file gave one, by a hash of the token otherwise.
func TestAuditNames(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"s3cret", "other"}, TokenNames: map[string]string{"s3cret": "ops team"}})
	for _, tok := range []string{"s3cret", "other"} {
		if code, out := e.do(t, "POST", "/api/v1/hosts/a.example/pause?create=true", tok, ""); code != http.StatusOK {
			t.Fatalf("pause: %d %v", code, out)
		}
	}
	log, err := e.DB.Control().AuditLog(context.Background(), 0, 10)
	if err != nil || len(log) != 2 {
		t.Fatalf("audit log %+v, %v", log, err)
	}
	if log[1].Actor != "ops team" || log[0].Actor != "token:"+tokenHash("other") {
		t.Errorf("actors %q, %q; want \"ops team\" and a hash of the unnamed token", log[1].Actor, log[0].Actor)
	}
}

func TestHostQueueExport(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	host := "q.example"
	p := queue.PartitionOf(host)
	var urls []store.URL
	for i := range 3 {
		u := fmt.Sprintf("https://%s/p%d", host, i)
		urls = append(urls, store.URL{Hash: store.HashURL(u), Partition: p, URL: u, Host: host, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: time.Now()})
	}
	// Another host of the same partition is not exported.
	other := "https://other.example/x"
	urls = append(urls, store.URL{Hash: store.HashURL(other), Partition: p, URL: other, Host: "other.example", Kind: store.KindPage, State: store.StateQueued})
	if _, err := e.DB.AdmitURLs(ctx, urls); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.UpdateURLs(ctx, []store.URLUpdate{{Hash: urls[2].Hash, State: store.StateExcluded, Reason: control.ReasonPattern}}); err != nil {
		t.Fatal(err)
	}
	get := func(q string) (int, string, string) {
		resp, err := http.Get(e.srv.URL + "/api/v1/hosts/" + host + "/queue" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ct, body := get("")
	lines := strings.Fields(body)
	if code != 200 || !strings.HasPrefix(ct, "text/plain") || len(lines) != 2 || !strings.Contains(body, urls[0].URL+"\n") || !strings.Contains(body, urls[1].URL+"\n") {
		t.Fatalf("text export: %d %s %q", code, ct, body)
	}
	code, ct, body = get("?format=ndjson")
	dec := json.NewDecoder(strings.NewReader(body))
	n := 0
	for dec.More() {
		var q queuedURL
		if err := dec.Decode(&q); err != nil || q.Kind != "page" || !strings.HasPrefix(q.URL, "https://q.example/") {
			t.Fatalf("ndjson line %d: %+v %v", n, q, err)
		}
		n++
	}
	if code != 200 || ct != "application/x-ndjson" || n != 2 {
		t.Fatalf("ndjson export: %d %s %d lines", code, ct, n)
	}
	if code, _, _ := get("?format=csv"); code != http.StatusBadRequest {
		t.Fatalf("format csv: %d", code)
	}
}

func TestNormalizeHost(t *testing.T) {
	for raw, want := range map[string]string{
		"Example.ORG":      "example.org",
		"example.org:80":   "example.org",
		"example.org:443":  "example.org",
		"example.org:8080": "example.org:8080",
		"127.0.0.1:9000":   "127.0.0.1:9000",
		"bücher.example":   "xn--bcher-kva.example",
	} {
		if got, err := normalizeHost(raw); err != nil || got != want {
			t.Errorf("normalizeHost(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "a/b", "user@example.org", "a?b"} {
		if got, err := normalizeHost(raw); err == nil {
			t.Errorf("normalizeHost(%q) = %q, want an error", raw, got)
		}
	}
}
