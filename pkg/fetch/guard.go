package fetch

import "net/netip"

// blockedPrefixes are ranges a public crawler must never reach, beyond what
// the netip predicates already cover: they route to the crawler's own
// network, its cloud provider or nowhere useful.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT; also Alibaba's metadata 100.100.100.200
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated); a sit tunnel routes it to the embedded IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215): translated inside the crawler's own network
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
}

// Prefixes that embed an IPv4 address which the packet ends up at: the
// embedded address decides. NAT64 carries it in the low 32 bits, 6to4 in
// bits 16-47.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// blockedAddr reports whether a crawler without AllowPrivate must refuse to
// connect to a.
func blockedAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("").Unmap()
	switch b := a.As16(); {
	case a.Is6() && nat64Prefix.Contains(a):
		a = netip.AddrFrom4([4]byte(b[12:16]))
	case a.Is6() && sixToFour.Contains(a):
		a = netip.AddrFrom4([4]byte(b[2:6]))
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
