package fetch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
)

// Hosts is a static name-to-address table in /etc/hosts format, consulted
// before DNS (-hosts-file): an operator pins names (a staging site, a split
// horizon), and tests serve many names on a few loopback addresses.
type Hosts map[string][]netip.Addr

// ParseHosts reads /etc/hosts format: an address, then one or more names;
// '#' starts a comment. Names are matched without case and without a
// trailing dot. A line whose first field is not an IP address is an error,
// with its line number, rather than a name silently resolved by DNS.
func ParseHosts(r io.Reader) (Hosts, error) {
	h := Hosts{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			return nil, fmt.Errorf("hosts line %d: %q is not an IP address", n, f[0])
		}
		if a.Zone() != "" {
			return nil, fmt.Errorf("hosts line %d: zoned address %q", n, f[0])
		}
		if len(f) == 1 {
			return nil, fmt.Errorf("hosts line %d: address %s names no host", n, f[0])
		}
		for _, name := range f[1:] {
			key := hostKey(name)
			if key == "" || strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") || strings.Contains(key, "..") {
				return nil, fmt.Errorf("hosts line %d: %q is not a host name (empty label)", n, name)
			}
			h[key] = append(h[key], a.Unmap())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hosts: %w", err)
	}
	return h, nil
}

// LoadHosts reads a hosts file.
func LoadHosts(path string) (Hosts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := ParseHosts(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

func hostKey(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// resolver answers from the table and passes other names to next.
func (h Hosts) resolver(next func(context.Context, string) ([]netip.Addr, error)) func(context.Context, string) ([]netip.Addr, error) {
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		if a, ok := h[hostKey(host)]; ok {
			return a, nil
		}
		return next(ctx, host)
	}
}
