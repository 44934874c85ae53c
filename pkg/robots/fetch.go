package robots

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// MaxRedirects is how many consecutive redirects Fetch follows; RFC 9309
// section 2.3.1.2 asks for at least five.
const MaxRedirects = 5

// Getter performs one GET of url without following redirects. location is the
// Location header of a redirect, absolute or relative. The body should be
// capped by the Getter (MaxSize+1 bytes is enough) and the request bounded by
// ctx. err is for transport failures only; an HTTP error status is not an
// error.
type Getter func(ctx context.Context, url string) (status int, location string, body []byte, err error)

// Fetch gets robotsURL, following up to MaxRedirects redirects (301, 302,
// 303, 307, 308), even across hosts, resolving a relative Location against the
// URL that returned it. The rules found apply to the original host.
//
// After more than MaxRedirects hops the file is treated as unavailable and
// Fetch returns status 404 (RFC 9309 allows assuming "unavailable"). A
// redirect Fetch cannot follow (no Location, a non-http(s) target, or one
// that resolves to no valid URL) is returned as is; Evaluate reads a final
// 3xx as unavailable too. An error
// means the host was unreachable, or ctx ended: in that case the caller is
// shutting down and should not record the outcome.
//
// Fetch makes every hop at once, in place: a crawler that must wait for each
// hop's host's turn (its politeness) drives the chain itself with Next.
func Fetch(ctx context.Context, get Getter, robotsURL string) (status int, body []byte, err error) {
	cur := robotsURL
	for hop := 0; ; hop++ {
		if err := ctx.Err(); err != nil {
			return 0, nil, fmt.Errorf("fetch robots.txt %s: %w", robotsURL, err)
		}
		status, location, body, err := get(ctx, cur)
		if err != nil {
			return status, nil, fmt.Errorf("fetch robots.txt %s: %w", cur, err)
		}
		next, end, follow := Next(cur, hop, status, location)
		if !follow {
			if end != status {
				body = nil
			}
			return end, body, nil
		}
		cur = next
	}
}

// Next says where a robots.txt redirect chain goes after url answered
// status (with Location location), hop redirects after the robots.txt
// itself (0 for the robots.txt). follow is true when next is to be
// requested; otherwise the chain ends and end is the status to evaluate:
// status itself, or 404 (unavailable) when a redirect would exceed
// MaxRedirects.
func Next(url string, hop, status int, location string) (next string, end int, follow bool) {
	if !isFollowedRedirect(status) {
		return "", status, false
	}
	if hop >= MaxRedirects {
		return "", http.StatusNotFound, false
	}
	next, ok := resolveRedirect(url, location)
	if !ok {
		return "", status, false
	}
	return next, 0, true
}

func isFollowedRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// resolveRedirect keeps redirects on http(s): a robots.txt must never lead
// the crawler to file:, ftp: or other schemes its Getter might honour.
func resolveRedirect(base, location string) (string, bool) {
	if strings.TrimSpace(location) == "" {
		return "", false
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", false
	}
	l, err := url.Parse(strings.TrimSpace(location))
	if err != nil {
		return "", false
	}
	u := b.ResolveReference(l)
	if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" {
		return "", false
	}
	// ResolveReference can build a URL that does not parse again ("//0::0"
	// gives host "0::0"): the Getter would fail on it as if the host were
	// unreachable, turning an unfollowable redirect into disallow-all.
	next := u.String()
	if _, err := url.Parse(next); err != nil {
		return "", false
	}
	return next, true
}
