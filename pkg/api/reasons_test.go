package api

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
)

// TestFailureReasons: a URL given up because its host's name did not resolve
// shows the reason and what it means in the URL look-up, the host's robots.txt
// entry says the same, and the stats count it as a failure (a network error),
// not as blocked by robots.txt, with its description.
func TestFailureReasons(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	now := time.Now()
	entry := robots.Evaluate(robots.Policy{Agent: "testbot"}, 0, nil, errors.New("no such host"), now, nil)
	entry.Reason, entry.Permanent = fetch.Unreachable(fetch.ClassNoSuchHost)
	b, err := entry.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	host, u, v, d := "nx.example", "http://nx.example/", "http://up.example/", "http://up.example/private/"
	if err := e.DB.SaveHosts(ctx, []store.Host{{Host: host, Partition: queue.PartitionOf(host), Robots: b, UpdatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	rows := []store.URL{
		{Hash: store.HashURL(u), Partition: queue.PartitionOf(host), URL: u, Host: host, Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: now},
		{Hash: store.HashURL(v), Partition: queue.PartitionOf("up.example"), URL: v, Host: "up.example", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: now},
		{Hash: store.HashURL(d), Partition: queue.PartitionOf("up.example"), URL: d, Host: "up.example", Kind: store.KindPage, State: store.StateQueued, DiscoveredAt: now},
	}
	if _, err := e.DB.AdmitURLs(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.UpdateURLs(ctx, []store.URLUpdate{
		{Hash: rows[0].Hash, State: store.StateFailed, Reason: fetch.ReasonDNS, FetchedAt: now},
		{Hash: rows[1].Hash, State: store.StateFailed, Reason: robots.ReasonUnavailable, Status: 503, FetchedAt: now},
		{Hash: rows[2].Hash, State: store.StateExcluded, Reason: "robots", FetchedAt: now}, // a rule disallows it
	}); err != nil {
		t.Fatal(err)
	}

	_, out := e.do(t, "GET", "/api/v1/urls?url="+u, "", "")
	if out["state"] != "failed" || out["reason"] != "dns_error" || !strings.Contains(str(out["reason_description"]), "did not resolve") {
		t.Errorf("url look-up: state %v, reason %v (%v); want failed, dns_error, described", out["state"], out["reason"], out["reason_description"])
	}
	_, out = e.do(t, "GET", "/api/v1/hosts/"+host, "", "")
	if rs, _ := out["robots"].(map[string]any); rs["reason"] != "dns_error" || rs["reason_description"] == nil || rs["error"] != "no such host" {
		t.Errorf("host's robots.txt: %v; want reason dns_error, described, with the error", out["robots"])
	}
	_, out = e.do(t, "GET", "/api/v1/stats", "", "")
	urls, _ := out["urls"].(map[string]any)
	failed, _ := urls["failed_by_reason"].(map[string]any)
	byReason, _ := urls["excluded"].(map[string]any)["by_reason"].(map[string]any)
	descs, _ := urls["reason_descriptions"].(map[string]any)
	if failed["dns_error"] != 1.0 || byReason["dns_error"] != nil || urls["blocked_by_robots"] != 2.0 {
		t.Errorf("stats: failed by reason %v, excluded by reason %v, blocked by robots %v; want dns_error a failure and robots_unavailable blocked",
			failed, byReason, urls["blocked_by_robots"])
	}
	if descs["dns_error"] == nil || descs["robots_unavailable"] == nil {
		t.Errorf("reason descriptions %v, want both reasons counted described", descs)
	}
	if errs, _ := out["errors"].(map[string]any); errs["network"] != 1.0 || errs["robots"] != 1.0 {
		t.Errorf("errors %v, want the DNS failure a network error, the 503 a robots one, the disallowed URL none", errs)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Every reason a fetch can fail with has a description, and the one of
// address_blocked names the flag that allows it.
func TestReasonDescriptions(t *testing.T) {
	for _, class := range fetch.ErrorClasses() {
		if r := fetch.Reason(class); !strings.HasPrefix(r, "fetch_") && describe(r) == "" {
			t.Errorf("reason %s (class %s) has no description", r, class)
		}
	}
	if d := describe(fetch.ReasonAddressBlocked); !strings.Contains(d, "-allow-private-networks") {
		t.Errorf("address_blocked: %q does not name the flag that allows it", d)
	}
}
