package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// maxDialAddrs bounds connect attempts per dial when a host has many
// addresses; the total deadline bounds them too, this keeps one dead host
// from eating it.
const maxDialAddrs = 4

// dialer connects to hosts through the DNS cache and the SSRF guard. The
// guard runs on the resolved address at connect time, so a name that
// resolved to a public address when admitted and to 127.0.0.1 now is refused.
type dialer struct {
	dns          *dnsCache
	allowPrivate bool
	// connect opens the TCP connection to a checked address; tests replace
	// it to observe what would be dialled.
	connect func(ctx context.Context, network, address string) (net.Conn, error)
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", address, err)
	}
	var addrs []netip.Addr
	if a, perr := netip.ParseAddr(host); perr == nil {
		// Unmapped as resolver answers are, so both dial the same address.
		addrs = []netip.Addr{a.Unmap()}
	} else if addrs, err = d.dns.resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}

	var lastErr error
	tried := 0
	for _, a := range addrs {
		if !d.allowPrivate && blockedAddr(a) {
			continue
		}
		if tried == maxDialAddrs {
			break
		}
		tried++
		conn, err := d.connect(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if tried == 0 {
		return nil, fmt.Errorf("dial %s: %w: %s resolves only to non-public addresses %v", address, ErrBlockedAddress, host, addrs)
	}
	return nil, fmt.Errorf("dial %s: %w", address, lastErr)
}

// Server returns the server a request to host (a name or an address, with or
// without a port) goes to, as the per-server politeness key: the first
// address the dialer would connect to, an IPv4 address as itself and an IPv6
// one as its /64, which one machine or customer usually holds whole.
func (c *Client) Server(ctx context.Context, host string) (string, error) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else if addrs, err = c.dialer.dns.resolve(ctx, host); err != nil {
		return "", err
	}
	for _, a := range addrs {
		if !c.dialer.allowPrivate && blockedAddr(a) {
			continue
		}
		return ServerKey(a), nil
	}
	return "", fmt.Errorf("%w: %s resolves only to non-public addresses %v", ErrBlockedAddress, host, addrs)
}

// ServerKey is the per-server politeness key of an address: IPv4 as itself,
// IPv6 as its /64.
func ServerKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}
