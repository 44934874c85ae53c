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
}
