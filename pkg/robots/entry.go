package robots

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxTTL caps how long a fetched robots.txt is trusted: RFC 9309 section 2.4
// says a cached copy SHOULD NOT be used for more than 24 hours.
const MaxTTL = 24 * time.Hour

// DefaultRetryFailure is the first retry delay after an unreachable
// robots.txt when Policy.RetryFailure is zero.
const DefaultRetryFailure = time.Minute

// maxErrorLen keeps a cached Entry small whatever error text a transport
// produces.
const maxErrorLen = 1024

// ErrInvalidPolicy is wrapped by Policy.Validate.
var ErrInvalidPolicy = errors.New("invalid robots policy")

// ErrInvalidEntry is wrapped by Entry.UnmarshalBinary when the bytes are not
// an entry this package wrote; the caller should refetch robots.txt.
var ErrInvalidEntry = errors.New("invalid robots entry")

// Policy is the crawler's side of robots handling.
type Policy struct {
	Agent        string        // product token to match groups with, or a User-Agent string that starts with it (see ProductToken)
	MinDelay     time.Duration // crawl-delay clamp
	MaxDelay     time.Duration // 0 means no upper clamp
	TTL          time.Duration // cache lifetime of a successful entry, capped at MaxTTL; 0 means MaxTTL
	RetryFailure time.Duration // first retry after 5xx/429/unreachable, doubled per consecutive failure up to TTL; 0 means DefaultRetryFailure
}

// Validate reports settings Evaluate and Delay cannot honour.
func (p Policy) Validate() error {
	switch {
	case p.MinDelay < 0 || p.MaxDelay < 0 || p.TTL < 0 || p.RetryFailure < 0:
		return fmt.Errorf("%w: negative duration", ErrInvalidPolicy)
	case p.MaxDelay != 0 && p.MaxDelay < p.MinDelay:
		return fmt.Errorf("%w: max delay %v below min delay %v", ErrInvalidPolicy, p.MaxDelay, p.MinDelay)
	case ProductToken(p.Agent) == "":
		return fmt.Errorf("%w: agent %q has no product token", ErrInvalidPolicy, p.Agent)
	case strings.EqualFold(ProductToken(p.Agent), "Mozilla"):
		// A browser-compatible User-Agent string reduces to "Mozilla", so
		// the crawler would obey groups meant for nobody and skip its own.
		return fmt.Errorf("%w: agent %q gives product token Mozilla; set the crawler's own token (FooBot in \"Mozilla/5.0 (compatible; FooBot/1.2)\")", ErrInvalidPolicy, p.Agent)
	}
	return nil
}

func (p Policy) ttl() time.Duration {
	if p.TTL <= 0 || p.TTL > MaxTTL {
		return MaxTTL
	}
	return p.TTL
}

// backoff is the wait before retrying after the given number of consecutive
// failures (at least 1): RetryFailure doubled per failure, capped at the TTL.
func (p Policy) backoff(failures int) time.Duration {
	d := p.RetryFailure
	if d <= 0 {
		d = DefaultRetryFailure
	}
	limit := p.ttl()
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Kind is what an Entry lets the crawler do.
type Kind int

// The zero Kind is invalid on purpose: a zero Entry allows nothing.
const (
	KindRules       Kind = iota + 1 // 2xx: the parsed rules apply
	KindAllowAll                    // 4xx except 429, or redirects exhausted: no rules
	KindDisallowAll                 // 5xx, 429, network error: nothing but /robots.txt
)

func (k Kind) String() string {
	switch k {
	case KindRules:
		return "rules"
	case KindAllowAll:
		return "allow-all"
	case KindDisallowAll:
		return "disallow-all"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Entry is the robots state of one host as the frontier caches it.
type Entry struct {
	Kind      Kind
	Status    int
	Error     string    // network error text, if any
	Reason    string    // set by the caller, not Evaluate: its name for the fetch error (dns_error, say); "" for none or an answer
	Permanent bool      // set by the caller: no retry mends the error until something outside the crawl changes
	FetchedAt time.Time // time of the fetch attempt this entry records
	Expires   time.Time // after this the frontier must refetch before any other request to the host
	Failures  int       // consecutive failed fetches (for backoff)

	group    *Group // rules for Policy.Agent; set only for KindRules
	sitemaps []string
}

// Evaluate turns one robots.txt fetch outcome into the Entry to cache. prev
// is the entry it replaces, or nil.
//
// A failure (fetchErr, 429, 5xx, or any status outside 200-599) following a
// KindRules entry keeps prev's rules, as RFC 9309 section 2.4 permits while
// the file is unreachable, but expires at the retry time so the frontier
// keeps trying. Without previous rules a failure disallows everything.
func Evaluate(p Policy, status int, body []byte, fetchErr error, now time.Time, prev *Entry) *Entry {
	e := &Entry{Status: status, FetchedAt: now}
	switch {
	case fetchErr == nil && status >= 200 && status <= 299:
		f := Parse(body)
		e.Kind = KindRules
		e.group = f.Group(p.Agent)
		e.sitemaps = f.sitemaps
		e.Expires = now.Add(p.ttl())
		return e
	case fetchErr == nil && status >= 300 && status <= 499 && status != 429:
		e.Kind = KindAllowAll
		e.Expires = now.Add(p.ttl())
		return e
	}
	if fetchErr != nil {
		e.Error = fetchErr.Error()
		if len(e.Error) > maxErrorLen {
			e.Error = e.Error[:maxErrorLen]
		}
	}
	e.Failures = 1
	if prev != nil {
		e.Failures = prev.Failures + 1
	}
	e.Expires = now.Add(p.backoff(e.Failures))
	if prev != nil && prev.Kind == KindRules {
		e.Kind = KindRules
		e.group = prev.group
		e.sitemaps = prev.sitemaps
		return e
	}
	e.Kind = KindDisallowAll
	return e
}

// ReasonUnavailable names a failed fetch that robots.txt answered, with 429,
// a 5xx or another status that says it is unavailable.
const ReasonUnavailable = "robots_unavailable"

// FailureReason says why the fetch the entry records failed: Reason when the
// caller named the error, else ReasonUnavailable; "" when it did not fail.
func (e *Entry) FailureReason() string {
	switch {
	case e == nil || e.Failures == 0:
		return ""
	case e.Reason != "":
		return e.Reason
	}
	return ReasonUnavailable
}

// Allowed reports whether the crawler may request pathAndQuery on the host.
// "/robots.txt" is always allowed; an unknown Kind or nil Entry allows
// nothing else, because the frontier must fetch robots.txt first.
func (e *Entry) Allowed(pathAndQuery string) bool {
	if e == nil {
		return canonicalPath(pathAndQuery) == "/robots.txt"
	}
	switch e.Kind {
	case KindRules:
		return e.group.Allowed(pathAndQuery)
	case KindAllowAll:
		return true
	}
	return canonicalPath(pathAndQuery) == "/robots.txt"
}

// Delay returns the host's Crawl-delay clamped to [p.MinDelay, p.MaxDelay]
// (no upper clamp when MaxDelay is 0). ok is false when robots.txt gave no
// valid Crawl-delay, in which case the crawler's default delay applies.
func (e *Entry) Delay(p Policy) (d time.Duration, ok bool) {
	if e == nil || e.Kind != KindRules {
		return 0, false
	}
	d, ok = e.group.CrawlDelay()
	if !ok {
		return 0, false
	}
	d = max(d, p.MinDelay)
	if p.MaxDelay > 0 {
		d = min(d, p.MaxDelay)
	}
	return d, true
}

// Sitemaps returns the sitemap URLs robots.txt listed.
func (e *Entry) Sitemaps() []string {
	if e == nil {
		return nil
	}
	return slices.Clone(e.sitemaps)
}

// Fresh reports whether the entry may still be used at now.
func (e *Entry) Fresh(now time.Time) bool {
	return e != nil && now.Before(e.Expires)
}
