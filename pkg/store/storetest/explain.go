package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/pkg/store"
)

// ExplainMissing logs what a crawl's store knows of the pages an audit found
// missing ("HOST:PORT/PATH never requested"): never found, held and why, or
// admitted and in which state. It tells a URL the crawl never saw from one
// it saw and lost, which is what a failed coverage check needs first.
func ExplainMissing(t testing.TB, r store.Reader, missing []string) {
	t.Helper()
	hosts := map[string]bool{}
	for _, m := range missing {
		id, _, _ := strings.Cut(m, " ")
		u := "http://" + id
		host, _, _ := strings.Cut(id, "/")
		hosts[host] = true
		info, err := r.URLInfo(context.Background(), u)
		switch {
		case err != nil:
			t.Logf("missing %s: %v", u, err)
		case info.URL != nil:
			t.Logf("missing %s: state %s, reason %q, attempts %d, partition %d, discovered %v, found on %s",
				u, info.URL.State, info.URL.Reason, info.URL.Attempts, info.URL.Partition, info.URL.DiscoveredAt, info.URL.Parent)
		case info.Exclusion != nil:
			t.Logf("missing %s: held (%s), found on %s at %v", u, info.Exclusion.Reason, info.Exclusion.Parent, info.Exclusion.At)
		default:
			t.Logf("missing %s: unknown to the store", u)
		}
	}
	// The budgets that held them: the admission state saved with the host.
	for host := range hosts {
		h, err := r.Host(context.Background(), host)
		if err != nil {
			t.Logf("host %s: %v", host, err)
			continue
		}
		// Host does not read the admission state; the partition's rows do.
		if hr, ok := r.(interface {
			Hosts(context.Context, int32) ([]store.Host, error)
		}); ok && len(h.Admission) == 0 {
			rows, err := hr.Hosts(context.Background(), h.Partition)
			if err != nil {
				t.Logf("host %s: partition %d: %v", host, h.Partition, err)
			}
			for _, x := range rows {
				if x.Host == host {
					h.Admission = x.Admission
				}
			}
		}
		const most = 4000
		st := string(h.Admission)
		if len(st) > most {
			st = st[:most] + "..."
		}
		t.Logf("host %s: admission state %s", host, st)
	}
	explainRenders(t, r, hosts)
}

// explainRenders logs the render decision of every stored page of the hosts,
// when the store keeps them: a page only a render finds is missing when the
// render of the page linking it found nothing, and its decision says why
// (timed out, what it waited for, what the script raised).
func explainRenders(t testing.TB, r store.Reader, hosts map[string]bool) {
	t.Helper()
	rs, ok := r.(interface {
		Captures(context.Context, func(store.Capture) error) error
		Render() store.RenderStore
	})
	if !ok {
		return
	}
	ctx := context.Background()
	const most = 40 // a large host's pages, mostly never rendered, are not all worth a line
	logged := 0
	err := rs.Captures(ctx, func(c store.Capture) error {
		rest, ok := strings.CutPrefix(c.URL, "http://")
		if !ok {
			return nil
		}
		host, _, _ := strings.Cut(rest, "/")
		if !hosts[host] || logged >= most {
			return nil
		}
		d, err := rs.Render().RenderDecisionOf(ctx, c.URLHash)
		if err != nil {
			return nil // never considered for rendering (no script), or not found
		}
		logged++
		t.Logf("page %s (status %d): render %s, %q, compared %v gained %v, links %d -> %d, text %d -> %d, detail %s",
			c.URL, c.Status, d.Decision, d.Reason, d.Compared, d.Gained, d.LinksHTML, d.LinksRendered, d.TextHTML, d.TextRendered, d.Detail)
		return nil
	})
	if err != nil {
		t.Logf("render decisions: %v", err)
	}
}
