package embedded

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/frontier"
)

// A crawl's last minutes often belong to a few hosts whose delay holds them
// to a request every few seconds: the progress line then shows 0.5 pages/s and
// nothing else, which looks like a stall. The pacing line names those hosts.
const (
	// pacingHostsMax is how few hosts with URLs left make the end theirs.
	pacingHostsMax = 5
	// pacingDelayMin is the wait between two requests to a host that makes
	// it worth naming: below it the crawl ends soon whatever it does.
	pacingDelayMin = time.Second
)

// pacedHost is a host with URLs left and what spaces its requests.
type pacedHost struct {
	host   string
	wait   time.Duration // between two of its requests
	why    string        // "Crawl-delay", "backoff" or "default delay"
	queued int
}

func (p pacedHost) String() string {
	return fmt.Sprintf("%s (%s %s, %d queued)", p.host, p.why, p.wait, p.queued)
}

// pacing returns the hosts that pace the end of the crawl, slowest first: the
// hosts with URLs queued, when they are at most pacingHostsMax and one of them
// waits pacingDelayMin or more between requests; nil otherwise. A delay above
// defaultDelay is the host's own: its robots.txt Crawl-delay (or an operator's
// override, which the frontier does not tell apart).
func pacing(hosts []frontier.HostState, defaultDelay time.Duration) []pacedHost {
	var paced []pacedHost
	slow := false
	for _, h := range hosts {
		if h.Queued == 0 {
			continue
		}
		if len(paced) == pacingHostsMax {
			return nil
		}
		p := pacedHost{host: h.Host, wait: h.Delay, why: "default delay", queued: h.Queued}
		switch {
		case h.Backoff > h.Delay:
			p.wait, p.why = h.Backoff, "backoff"
		case h.Delay > defaultDelay:
			p.why = "Crawl-delay"
		}
		slow = slow || p.wait >= pacingDelayMin
		paced = append(paced, p)
	}
	if !slow {
		return nil
	}
	slices.SortFunc(paced, func(a, b pacedHost) int {
		return cmp.Or(cmp.Compare(b.wait, a.wait), cmp.Compare(a.host, b.host))
	})
	return paced
}

// logPacing logs the hosts pacing the crawl, if any, beside the progress line.
func logPacing(log *slog.Logger, paced []pacedHost) {
	if len(paced) == 0 {
		return
	}
	names := make([]string, len(paced))
	for i, p := range paced {
		names[i] = p.String()
	}
	log.Info("waiting on hosts paced by their delay", "count", len(paced), "hosts", strings.Join(names, "; "))
}
