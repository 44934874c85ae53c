// Package fetch is the crawler's single HTTP client. Pages, robots.txt files
// and sitemaps all go through one Client so that every byte the web sends
// passes the same limits and the same safety checks.
//
// Politeness (one request in flight per host, crawl delays) belongs to the
// frontier; this package assumes it is asked at a polite rate and owns what
// the frontier cannot see:
//
//   - Bounded resources. The raw body is read up to Config.MaxBodyBytes and
//     decoded (gzip, br, zstd, deflate) up to Config.MaxDecodedBytes, so a
//     huge page or a compression bomb yields a truncated capture, never an
//     exhausted heap. Response headers are capped at 64 KiB, and every
//     exchange runs under connect, header and total deadlines.
//   - SSRF safety. Names are resolved by the client's own cached resolver and
//     the resolved address is checked at dial time, so a host whose DNS
//     answer changes between admission and fetch (DNS rebinding) still cannot
//     reach loopback, private, link-local or cloud metadata addresses.
//   - Faithful records. Redirects are never followed: the crawler re-admits
//     the target as a new URL so it passes the same dedup, trap and
//     politeness gates. Each Response carries the request and response as
//     HTTP/1.1 bytes, ready for WARC request and response records.
//
// Errors are reduced by Classify to a small, bounded set of classes that can
// label metrics and drive host back-off.
package fetch
