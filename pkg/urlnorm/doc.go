// Package urlnorm turns every URL the crawler meets (seeds, links, redirect
// targets, sitemap entries) into one canonical string before it is
// deduplicated, scoped or queued.
//
// Two spellings of one page must map to one string, or the seen-URL store
// lets the duplicate through and the host is fetched twice. Parsing follows
// the WHATWG URL Standard (what browsers do with an href), via
// github.com/nlnwa/whatwg-url; on top of it the crawler's policy:
//
//   - only http and https; userinfo and fragment dropped;
//   - scheme and host lowercase, IDN hosts in punycode, the trailing dot of
//     a fully qualified host name removed (a host with two or more, an
//     empty label, is rejected), default ports (:80, :443) removed;
//   - dot segments resolved, an empty path becomes "/";
//   - percent-encoding normalized as RFC 3986 section 6.2.2.2 describes:
//     hex digits uppercase, unreserved characters (ALPHA DIGIT - . _ ~)
//     decoded, reserved characters left in whichever form they came, other
//     characters (space, quotes, braces, non-ASCII as UTF-8) encoded;
//   - query parameters sorted by name (stable, so repeated names keep their
//     order), empty parameters and an empty "?" removed;
//   - tracking parameters and session ids removed, both from the query and as
//     ";name=value" path parameters;
//   - a length cap on the result.
//
// Normalize is idempotent: feeding its output back returns the same string,
// which the WHATWG parser and net/url both parse again to the same URL and
// host. FuzzNormalize holds the package to that on every input.
package urlnorm
