// Package robots decides, per host, what the crawler may fetch and how fast,
// following the Robots Exclusion Protocol (RFC 9309) and Google's documented
// reading of it where the RFC is silent.
//
// The package does no I/O of its own. The fetcher tier's frontier schedules
// the robots.txt request as a host's first polite request, runs it through
// [Fetch] with its own HTTP client (which bounds the body and sets the
// deadline), and hands the outcome to [Evaluate]. The resulting [Entry] is
// what the frontier caches (in memory, Redis or SQL via MarshalBinary) and
// consults before every request to the host:
//
//   - [Entry.Allowed] gates each URL (robots exclusion, DESIGN invariant 2's
//     "excluded by a rule" reason);
//   - [Entry.Delay] feeds the per-host politeness delay (invariant 1);
//   - [Entry.Fresh] tells the frontier when the robots.txt must be fetched
//     again before any other request to the host;
//   - [Entry.Sitemaps] seeds the sitemap reader.
//
// Status policy (RFC 9309 section 2.3.1): 2xx means the parsed rules apply;
// 4xx other than 429 means "unavailable", so everything is allowed; 429, 5xx
// and network errors mean "unreachable", so everything is disallowed until a
// retry succeeds, with exponential backoff. Rules from an earlier successful
// fetch are kept through such failures (section 2.4 allows using a cached copy
// while the file is unreachable). Successful entries live at most 24 hours.
//
// Matching normalises both the rule and the URL path before comparing octets:
// percent-escapes of unreserved characters are decoded ("%41" is "A"), other
// escapes get upper-case hex ("%2f" is "%2F", still distinct from "/"), and
// octets outside printable ASCII are percent-encoded (so a raw UTF-8 path
// matches its encoded spelling). Literal "*" and "$" in a URL compare equal
// to the "%2A" and "%24" a rule must use to match them (section 2.2.3).
package robots
