package sitemap

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// InScope reports whether loc may be listed by a sitemap at sitemapURL
// (sitemaps.org scope rule: same scheme+host+port, and path under the
// sitemap's directory, unless the sitemap was referenced from that host's
// robots.txt, which grants the whole host). The crawler uses it to reject
// cross-host sitemap entries.
//
// For cross-submission (a robots.txt on host A naming a sitemap stored on
// host B), call it with the robots.txt URL of A as sitemapURL and fromRobots
// true: entries are then in scope when they are on A.
//
// Host names compare case-insensitively and in their ASCII (punycode) form,
// default ports compare equal to absent ones, and dot segments are resolved
// first, so "/dir/../x" does not pass as "under /dir/".
func InScope(sitemapURL, loc string, fromRobots bool) bool {
	s, ok := parseScoped(sitemapURL)
	if !ok {
		return false
	}
	l, ok := parseScoped(loc)
	if !ok {
		return false
	}
	if s.scheme != l.scheme || s.host != l.host || s.port != l.port {
		return false
	}
	if fromRobots {
		return true
	}
	dir := s.path[:strings.LastIndexByte(s.path, '/')+1]
	return strings.HasPrefix(l.path, dir)
}

type scopedURL struct {
	scheme, host, port, path string
}

func parseScoped(raw string) (scopedURL, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Opaque != "" || u.Host == "" {
		return scopedURL{}, false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return scopedURL{}, false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return scopedURL{}, false
	}
	if ascii, err := idna.Lookup.ToASCII(host); err == nil {
		host = ascii
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	// Resolving the URL against itself removes dot segments.
	path := u.ResolveReference(u).Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return scopedURL{scheme: scheme, host: host, port: port, path: path}, true
}
