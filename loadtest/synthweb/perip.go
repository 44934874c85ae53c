package synthweb

import (
	"container/heap"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// serverOf is the server address a request counts against: its Addr or,
// in a log without one, its host key's address when that is an IP. An
// IPv6 address counts as its /64, which is one server to the crawler. ""
// means unknown.
func serverOf(r Request) string {
	addr := r.Addr
	if addr == "" {
		addr = r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			addr = h
		}
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return ""
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// servers checks per-IP concurrency and intervals and fills Report.PerIP,
// over all requests in order of Start.
func (a *auditor) servers(reqs []Request) {
	byIP := map[string][]*Request{}
	for i := range reqs {
		if ip := serverOf(reqs[i]); ip != "" {
			byIP[ip] = append(byIP[ip], &reqs[i])
		}
	}
	a.rep.Addresses = len(byIP)
	a.rep.PerIP = make(map[string]IPLoad, len(byIP))
	for _, ip := range slices.Sorted(maps.Keys(byIP)) {
		load := a.server(ip, byIP[ip])
		a.rep.PerIP[ip] = load
		a.rep.MaxPerIP = max(a.rep.MaxPerIP, load.MaxInFlight)
	}
}

// server audits the requests to one address, in order of Start. A request
// is in flight from its Start until its End less the tolerance, as in the
// per-host overlap rule: the next request may be stamped a little before
// the previous one's End. It is in flight at its own Start however short
// it was, so the most in flight at once is the most at any Start.
func (a *auditor) server(ip string, reqs []*Request) IPLoad {
	load := IPLoad{Requests: len(reqs)}
	hosts := map[string]bool{}
	var ends endHeap // of the requests in flight
	for i, r := range reqs {
		if r.Kind != kindMisdirected {
			hosts[r.Host] = true
		}
		for len(ends) > 0 && !ends[0].After(r.Start) {
			heap.Pop(&ends)
		}
		heap.Push(&ends, r.End.Add(-a.tol))
		n := len(ends)
		load.MaxInFlight = max(load.MaxInFlight, n)
		if limit := a.cfg.IPConcurrency; limit > 0 && n > limit {
			a.rep.IPConcurrency.add(a.max, "%s: %s %s started at %s with %d requests in flight to the address; limit %d",
				ip, r.Host, short(r.Target), a.at(r.Start), n, limit)
		}
		if i == 0 {
			continue
		}
		prev := reqs[i-1]
		gap := r.Start.Sub(prev.Start)
		if i == 1 || gap < load.MinInterval {
			load.MinInterval = gap
		}
		if d := a.cfg.IPDelay; d > 0 && gap < d-a.tol {
			a.rep.IPInterval.add(a.max, "%s: %s %s started at %s, %v after %s %s started; delay %v",
				ip, r.Host, short(r.Target), a.at(r.Start), round(gap), prev.Host, short(prev.Target), d)
		}
	}
	load.Hosts = len(hosts)
	return load
}

// endHeap is a min-heap of instants.
type endHeap []time.Time

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(time.Time)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ipString writes the per-IP summary line of Report.String.
func (r Report) ipString(b *strings.Builder) {
	if r.Addresses == 0 {
		return
	}
	var busiest, closest string
	for _, ip := range slices.Sorted(maps.Keys(r.PerIP)) {
		l := r.PerIP[ip]
		if busiest == "" || l.MaxInFlight > r.PerIP[busiest].MaxInFlight {
			busiest = ip
		}
		if l.Requests > 1 && (closest == "" || l.MinInterval < r.PerIP[closest].MinInterval) {
			closest = ip
		}
	}
	fmt.Fprintf(b, "  per IP:      %d %s; at most %d requests in flight at once (%s)",
		r.Addresses, plural(r.Addresses, "address", "addresses"), r.MaxPerIP, busiest)
	if closest != "" {
		fmt.Fprintf(b, ", starts at least %v apart (%s)", round(r.PerIP[closest].MinInterval), closest)
	}
	b.WriteByte('\n')
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
