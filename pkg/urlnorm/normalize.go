package urlnorm

import (
	"fmt"
	"strings"

	wurlerrors "github.com/nlnwa/whatwg-url/errors"
	wurl "github.com/nlnwa/whatwg-url/url"
)

// Normalizer applies one Policy. It holds no mutable state and is safe for
// concurrent use.
type Normalizer struct {
	parser wurl.Parser
	filter paramFilter
	maxLen int
}

// New returns a Normalizer for p. A zero Policy normalizes without removing
// any parameter; use DefaultPolicy for the crawler's usual lists.
func New(p Policy) *Normalizer {
	maxLen := p.MaxLength
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	return &Normalizer{
		parser: wurl.NewParser(),
		filter: newParamFilter(p),
		maxLen: maxLen,
	}
}

// Normalize returns the canonical form of the absolute URL raw, or an error
// wrapping one of the package's sentinel errors.
func (n *Normalizer) Normalize(raw string) (string, error) {
	if n.canonicalASCII(raw) {
		return raw, nil
	}
	return n.normalize(raw)
}

// normalize is Normalize without the fast path.
func (n *Normalizer) normalize(raw string) (string, error) {
	if err := n.checkInputLength(raw); err != nil {
		return "", fmt.Errorf("normalize %q: %w", clip(raw), err)
	}
	u, err := n.parser.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("normalize %q: %w", clip(raw), parseError(raw, err))
	}
	out, err := n.canonical(u)
	if err != nil {
		return "", fmt.Errorf("normalize %q: %w", clip(raw), err)
	}
	return out, nil
}

// Resolve resolves ref (as found in an href) against the absolute base URL,
// then normalizes.
func (n *Normalizer) Resolve(base, ref string) (string, error) {
	if err := n.checkInputLength(base); err != nil {
		return "", fmt.Errorf("resolve %q: base %q: %w", clip(ref), clip(base), err)
	}
	if err := n.checkInputLength(ref); err != nil {
		return "", fmt.Errorf("resolve %q: %w", clip(ref), err)
	}
	b, err := n.parser.Parse(base)
	if err != nil {
		return "", fmt.Errorf("resolve %q: base %q: %w", clip(ref), clip(base), parseError(base, err))
	}
	if !httpScheme(b.Scheme()) {
		// A relative link on a non-HTTP page cannot be fetched either, and a
		// base without a host would give the link none.
		return "", fmt.Errorf("resolve %q: base %q: %w", clip(ref), clip(base), ErrScheme)
	}
	u, err := b.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", clip(ref), parseError(ref, err))
	}
	out, err := n.canonical(u)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", clip(ref), err)
	}
	return out, nil
}

// checkInputLength bounds the parser's work. Input several times the cap
// cannot plausibly normalize below it (only dot segments and stripped
// parameters shrink a URL), so it is rejected before parsing.
func (n *Normalizer) checkInputLength(s string) error {
	if len(s) > 4*n.maxLen+1024 {
		return fmt.Errorf("%d bytes before normalization: %w", len(s), ErrTooLong)
	}
	return nil
}

// canonical builds the normalized string from a parsed URL. The parser has
// already lowercased the scheme and host, converted IDNs to punycode,
// canonicalized IP addresses, removed default ports and dot segments and
// encoded non-ASCII as UTF-8.
func (n *Normalizer) canonical(u *wurl.Url) (string, error) {
	scheme := u.Scheme()
	if !httpScheme(scheme) {
		return "", fmt.Errorf("scheme %q: %w", clip(scheme), ErrScheme)
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "0" {
		return "", fmt.Errorf("port 0: %w", ErrInvalid)
	}
	path := normalizePath(u.Pathname(), n.filter)
	query := normalizeQuery(u.Query(), n.filter)

	var b strings.Builder
	b.Grow(len(scheme) + 3 + len(host) + 6 + len(path) + 1 + len(query))
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(path)
	if query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	if b.Len() > n.maxLen {
		return "", fmt.Errorf("%d bytes after normalization, limit %d: %w", b.Len(), n.maxLen, ErrTooLong)
	}
	return b.String(), nil
}

// canonicalHost drops the trailing dot of a fully qualified name and rejects
// host names DNS cannot resolve: the WHATWG parser admits characters such as
// '{' or '!' that no registered name contains and that net/url refuses.
//
// One trailing dot is the DNS root (RFC 3986 section 3.2.2: "example.com."
// is the fully qualified spelling of "example.com"), so it is dropped. Two or
// more leave an empty label, as "a..b" has inside, and are rejected like it.
// WHATWG accepts such a host as a domain, but no DNS name has an empty label
// and resolvers refuse one, so keeping it would only queue a host that cannot
// be fetched. Trimming the dots instead would change what the host is:
// WHATWG's ends-in-a-number check skips one trailing empty label only, so the
// parser reads "1.2.3.4.." and "foo.09.." as domain names; trimmed, the first
// becomes an IP address and the second ("foo.09", whose last label looks
// numeric) no longer parses. Dropping a single dot changes nothing: a name
// whose last label looks numeric is read as IPv4 with the dot already
// ("1.2.3.4." is 1.2.3.4, "foo.09." fails to parse). A host of dots only
// ("http://..") has no name at all: ErrNoHost.
func canonicalHost(host string) (string, error) {
	if strings.HasPrefix(host, "[") {
		return host, nil // IPv6, canonicalized by the parser
	}
	if strings.Trim(host, ".") == "" {
		return "", ErrNoHost
	}
	name := strings.TrimSuffix(host, ".")
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			label++
		case c == '.':
			if label == 0 {
				return "", fmt.Errorf("host %q: empty label: %w", clip(host), ErrInvalid)
			}
			label = 0
		default:
			return "", fmt.Errorf("host %q: character %q: %w", clip(host), c, ErrInvalid)
		}
	}
	if label == 0 {
		return "", fmt.Errorf("host %q: empty label: more than one trailing dot: %w", clip(host), ErrInvalid)
	}
	return name, nil
}

func httpScheme(s string) bool { return s == "http" || s == "https" }

// parseError classifies a WHATWG parse failure. A string that begins with a
// scheme other than http(s) is reported as such even when the rest does not
// parse, so "ftp://[bad" is logged as unsupported_scheme, not invalid_url.
func parseError(raw string, err error) error {
	if s := schemeOf(raw); s != "" && !httpScheme(s) {
		return fmt.Errorf("scheme %q: %w", clip(s), ErrScheme)
	}
	kind := wurlerrors.Type(err)
	if kind == wurlerrors.HostMissing {
		return ErrNoHost
	}
	if kind == "" {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// The parser's own message repeats the whole input; its type is enough.
	return fmt.Errorf("%w: %s", ErrInvalid, kind)
}

// schemeOf returns the lowercased scheme that raw starts with, or "".
func schemeOf(raw string) string {
	raw = strings.TrimLeft(raw, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(raw[:i])
		default:
			return ""
		}
	}
	return ""
}

// clip shortens s for error messages, which end up in logs.
func clip(s string) string {
	const maxClip = 120
	if len(s) <= maxClip {
		return s
	}
	return s[:maxClip] + "..."
}
