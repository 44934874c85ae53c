package admit

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Scope limits which hosts discovered links may lead to.
type Scope int

const (
	// ScopeAll follows links to any host.
	ScopeAll Scope = iota
	// ScopeHost follows links only to seed hosts. A host is compared as the
	// politeness key (urlnorm.Authority), so a non-default port is a
	// different host.
	ScopeHost
	// ScopeDomain follows links within the registrable domains of the seeds
	// (www.example.co.uk and shop.example.co.uk share example.co.uk). An IP
	// address is its own domain; ports are ignored.
	ScopeDomain
)

// ErrScope is returned by ParseScope for an unknown scope name.
var ErrScope = errors.New("unknown scope")

// ParseScope parses "all", "host" or "domain".
func ParseScope(s string) (Scope, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all":
		return ScopeAll, nil
	case "host":
		return ScopeHost, nil
	case "domain":
		return ScopeDomain, nil
	}
	return ScopeAll, fmt.Errorf("parse scope %q (want all, host or domain): %w", s, ErrScope)
}

// String returns the name ParseScope accepts.
func (s Scope) String() string {
	switch s {
	case ScopeAll:
		return "all"
	case ScopeHost:
		return "host"
	case ScopeDomain:
		return "domain"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// Set implements flag.Value.
func (s *Scope) Set(v string) error {
	p, err := ParseScope(v)
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// hostname strips the port from an authority ("example.com:8080",
// "[::1]:80") and lowercases it.
func hostname(authority string) string {
	authority = strings.ToLower(authority)
	if strings.HasPrefix(authority, "[") {
		if i := strings.IndexByte(authority, ']'); i >= 0 {
			return authority[:i+1]
		}
		return authority
	}
	if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		return authority[:i]
	}
	return authority
}

// registrableDomain returns the scope key of ScopeDomain for an authority.
// Hosts the public suffix list cannot split (an IP address, "localhost", a
// bare public suffix) are their own domain.
func registrableDomain(authority string) string {
	host := hostname(authority)
	if strings.HasPrefix(host, "[") || isIPv4(host) {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// isIPv4 reports whether host is all digits and dots. A normalized URL has
// IPv4 hosts only in dotted-decimal form, and WHATWG parsing turns any host
// whose last label is a number into an IPv4 address or rejects it, so this
// is enough; net.ParseIP would allocate an error for every other host.
func isIPv4(host string) bool {
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
