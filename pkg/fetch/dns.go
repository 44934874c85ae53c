package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// maxDNSEntries bounds the cache whatever number of hosts the crawl meets.
const maxDNSEntries = 1 << 16

// dnsCache resolves host names with a TTL cache and joins concurrent lookups
// of one name, so a burst of URLs on a new host costs one query.
type dnsCache struct {
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	ttl     time.Duration
	negTTL  time.Duration
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	entries map[string]*dnsEntry
}

type dnsEntry struct {
	ready   chan struct{} // closed once addrs, err and expires are set
	addrs   []netip.Addr
	err     error
	expires time.Time
}

func newDNSCache(lookup func(context.Context, string) ([]netip.Addr, error), ttl, timeout time.Duration) *dnsCache {
	if lookup == nil {
		lookup = systemLookup
	}
	return &dnsCache{
		lookup:  lookup,
		ttl:     ttl,
		negTTL:  negativeDNSTTL,
		timeout: timeout,
		now:     time.Now,
		entries: make(map[string]*dnsEntry),
	}
}

func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// resolve returns the addresses of host, from the cache when fresh.
func (c *dnsCache) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	c.mu.Lock()
	e, ok := c.entries[host]
	if ok {
		select {
		case <-e.ready:
			if c.now().Before(e.expires) {
				c.mu.Unlock()
				return e.addrs, e.err
			}
			ok = false
		default: // a lookup is in flight; join it
		}
	}
	if !ok {
		e = &dnsEntry{ready: make(chan struct{})}
		c.evictLocked()
		c.entries[host] = e
		// The lookup outlives the caller that started it so that other
		// waiters are not failed by one caller's cancellation; its own
		// timeout bounds it.
		go c.run(context.WithoutCancel(ctx), host, e)
	}
	c.mu.Unlock()

	select {
	case <-e.ready:
		return e.addrs, e.err
	case <-ctx.Done():
		// Not marked errResolve: the caller gave up, DNS did not fail.
		return nil, fmt.Errorf("resolve host %s: %w", host, context.Cause(ctx))
	}
}

func (c *dnsCache) run(ctx context.Context, host string, e *dnsEntry) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	addrs, err := c.lookup(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	ttl := c.ttl
	if err != nil {
		addrs, ttl = nil, c.negTTL
		err = fmt.Errorf("%w %s: %w", errResolve, host, err)
	}
	// Copy while unmapping: the slice belongs to the resolver, which may
	// hand the same one to every caller.
	unmapped := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		unmapped[i] = a.Unmap()
	}
	addrs = unmapped
	c.mu.Lock()
	e.addrs, e.err, e.expires = addrs, err, c.now().Add(ttl)
	close(e.ready)
	c.mu.Unlock()
}

// evictLocked makes room for one entry: expired entries go first, then
// arbitrary finished ones down to 7/8 of the bound so eviction is amortised.
func (c *dnsCache) evictLocked() {
	if len(c.entries) < maxDNSEntries {
		return
	}
	now := c.now()
	for h, e := range c.entries {
		select {
		case <-e.ready:
			if !now.Before(e.expires) {
				delete(c.entries, h)
			}
		default:
		}
	}
	for h, e := range c.entries {
		if len(c.entries) < maxDNSEntries*7/8 {
			return
		}
		select {
		case <-e.ready:
			delete(c.entries, h)
		default:
		}
	}
}
