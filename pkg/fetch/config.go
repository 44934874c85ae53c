package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by Config.Validate to zero fields.
const (
	DefaultConnectTimeout  = 10 * time.Second
	DefaultHeaderTimeout   = 15 * time.Second
	DefaultTotalTimeout    = 60 * time.Second
	DefaultMaxBodyBytes    = 10 << 20
	DefaultMaxDecodedBytes = 20 << 20
	DefaultDNSCacheTTL     = 5 * time.Minute
	// DefaultMaxIdleConns keeps a connection to each of several thousand
	// hosts in rotation: hosts visited in turn through a smaller pool each
	// find theirs evicted (the worst case of an LRU pool); at 2,000 hosts
	// opening one per request cost 36 µs of CPU per page, at 6,000 a pool
	// as large as the hosts took 0.86x the CPU per page of one of 4,096.
	// Not more: make bench-large's web, which listens once per host on
	// the same machine, runs out of open files beside 10,000 kept ones.
	DefaultMaxIdleConns = 8192

	// negativeDNSTTL keeps a failing name from being looked up again on every
	// URL of a dead host.
	negativeDNSTTL = 30 * time.Second
	// maxResponseHeaderBytes bounds what a server can make us buffer before
	// the body limits apply.
	maxResponseHeaderBytes = 64 << 10
)

// Config configures a Client. The zero value is invalid only for UserAgent;
// Validate fills every other zero field with its default.
type Config struct {
	// UserAgent is sent with every request. It must name a contact URL so
	// site operators can reach whoever runs the crawl.
	UserAgent string
	// ConnectTimeout bounds DNS resolution, the TCP connect and the TLS
	// handshake, each.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for response headers once the request
	// is written.
	HeaderTimeout time.Duration
	// TotalTimeout bounds the whole exchange, body included.
	TotalTimeout time.Duration
	// MaxBodyBytes caps the raw bytes read from the wire; more is truncated.
	MaxBodyBytes int64
	// MaxDecodedBytes caps the body after Content-Encoding decoding, which is
	// what defuses compression bombs.
	MaxDecodedBytes int64
	// AllowPrivate permits loopback, private, link-local, CGNAT and metadata
	// addresses. Only for tests and intranet crawls.
	AllowPrivate bool
	// DNSCacheTTL is how long a successful lookup is reused. Failed lookups
	// are reused for 30s.
	DNSCacheTTL time.Duration
	// Resolver replaces the system resolver (tests, custom DNS). It may
	// return IPv4-mapped IPv6 addresses; they are checked as IPv4.
	Resolver func(ctx context.Context, host string) ([]netip.Addr, error)
	// RootCAs replaces the system's certificate authorities (tests); nil
	// trusts the system's. CAFile, when set, adds to the system's instead.
	RootCAs *x509.CertPool
	// MaxIdleConns bounds idle keep-alive connections across all hosts.
	MaxIdleConns int
	// HostsFile names a file in /etc/hosts format whose names resolve to
	// its addresses before DNS is asked (ParseHosts).
	HostsFile string
	// CAFile names a PEM file of CA certificates trusted besides the
	// system's roots (LoadCAFile).
	CAFile string
}

// ErrInvalidConfig is wrapped by every error Validate returns.
var ErrInvalidConfig = errors.New("invalid fetch config")

// RegisterFlags registers the configuration on fs, each flag name prefixed
// with prefix (for example "fetch."). Resolver and RootCAs have no flag.
func (c *Config) RegisterFlags(fs *flag.FlagSet, prefix string) {
	fs.StringVar(&c.UserAgent, prefix+"user-agent", c.UserAgent, "User-Agent header; must contain a contact URL")
	fs.DurationVar(&c.ConnectTimeout, prefix+"connect-timeout", DefaultConnectTimeout, "timeout for DNS, TCP connect and TLS handshake")
	fs.DurationVar(&c.HeaderTimeout, prefix+"header-timeout", DefaultHeaderTimeout, "timeout waiting for response headers")
	fs.DurationVar(&c.TotalTimeout, prefix+"total-timeout", DefaultTotalTimeout, "timeout for a whole fetch including the body")
	fs.Int64Var(&c.MaxBodyBytes, prefix+"max-body-bytes", DefaultMaxBodyBytes, "raw body bytes read per response; more is truncated")
	fs.Int64Var(&c.MaxDecodedBytes, prefix+"max-decoded-bytes", DefaultMaxDecodedBytes, "body bytes kept after content decoding; more is truncated")
	fs.BoolVar(&c.AllowPrivate, prefix+"allow-private-networks", false, "allow fetching loopback, private, link-local and metadata addresses (tests, intranet crawls)")
	fs.DurationVar(&c.DNSCacheTTL, prefix+"dns-cache-ttl", DefaultDNSCacheTTL, "how long resolved addresses are reused")
	fs.IntVar(&c.MaxIdleConns, prefix+"max-idle-conns", DefaultMaxIdleConns, "idle keep-alive connections kept across all hosts (at most half the open-files limit); below the hosts in rotation, each request opens a connection")
	fs.StringVar(&c.HostsFile, prefix+"hosts-file", "", "file in /etc/hosts format whose names resolve to its addresses before DNS (pinning a site, tests); the SSRF guard still applies")
	fs.StringVar(&c.CAFile, prefix+"ca-file", "", "PEM file of CA certificates to trust besides the system's (an intranet's private CA); SSL_CERT_FILE and SSL_CERT_DIR replace the system's instead")
}

// Validate fills zero fields with their defaults and reports the first
// invalid field.
func (c *Config) Validate() error {
	ua := strings.TrimSpace(c.UserAgent)
	switch {
	case ua == "":
		return fmt.Errorf("%w: user agent is required", ErrInvalidConfig)
	case strings.ContainsAny(c.UserAgent, "\r\n\x00"):
		return fmt.Errorf("%w: user agent contains control characters", ErrInvalidConfig)
	case !hasContactURL(ua):
		return fmt.Errorf("%w: user agent %q must contain a contact URL (http:// or https:// with a host)", ErrInvalidConfig, c.UserAgent)
	}
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"connect timeout", &c.ConnectTimeout, DefaultConnectTimeout},
		{"header timeout", &c.HeaderTimeout, DefaultHeaderTimeout},
		{"total timeout", &c.TotalTimeout, DefaultTotalTimeout},
		{"DNS cache TTL", &c.DNSCacheTTL, DefaultDNSCacheTTL},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return fmt.Errorf("%w: %s %v is negative", ErrInvalidConfig, d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	sizes := []struct {
		name string
		v    *int64
		def  int64
	}{
		{"max body bytes", &c.MaxBodyBytes, DefaultMaxBodyBytes},
		{"max decoded bytes", &c.MaxDecodedBytes, DefaultMaxDecodedBytes},
	}
	for _, s := range sizes {
		if *s.v < 0 {
			return fmt.Errorf("%w: %s %d is negative", ErrInvalidConfig, s.name, *s.v)
		}
		if *s.v == 0 {
			*s.v = s.def
		}
	}
	if c.MaxIdleConns < 0 {
		return fmt.Errorf("%w: max idle conns %d is negative", ErrInvalidConfig, c.MaxIdleConns)
	}
	if c.MaxIdleConns == 0 {
		c.MaxIdleConns = DefaultMaxIdleConns
	}
	if c.CAFile != "" {
		// Read now, so a wrong path stops the process at start-up rather
		// than failing every https fetch of the crawl.
		if _, err := LoadCAFile(c.CAFile); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}

// hasContactURL reports whether ua names an absolute http(s) URL with a
// host, as in "crawlcluster/1.0 (+https://example.org/bot)". A bare mention
// of "http" ("httpbot/1.0") gives an operator nowhere to go.
func hasContactURL(ua string) bool {
	tokens := strings.FieldsFunc(ua, func(r rune) bool {
		switch r {
		case ' ', '\t', '(', ')', ';', ',', '<', '>', '"':
			return true
		}
		return false
	})
	for _, tok := range tokens {
		u, err := url.Parse(strings.TrimLeft(tok, "+"))
		if err != nil {
			continue
		}
		if (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
			return true
		}
	}
	return false
}
