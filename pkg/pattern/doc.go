// Package pattern decides, per host, which new URLs the fetcher admits, by
// what the crawl has observed of their URL space: who points into it and
// what it yields, not what its pages look like.
//
// A trap is a URL space a site generates without end: a calendar with a "next
// month" link, pagination past the last page, faceted navigation, search
// results, a catch-all that answers 200 for any path, session ids, the print
// and share views of every page. Their pages may be identical or all
// different; what they have in common is that their URLs are found only on
// their own pages, each made up by the one page that links it. A site's real
// pages are linked from other parts of the site, from other hosts and
// sitemaps, and link each other.
//
//   - Spaces and families (fold.go). A URL's space is its pattern on its
//     host (numbers, identifiers, one-letter tokens and path positions of
//     more than a dozen names generalized; query keys kept); its family is
//     its section, the first path segment.
//   - Grounded or generated (found.go). Host.Describe tells a URL found from
//     another host, a sitemap, a seed or another family's grounded page
//     (evidence) from one its own family's pages generated, or found down
//     such a chain or on a duplicate page (charged to the family that began
//     the chain).
//   - Budgets (budget.go). Host.Admit admits grounded URLs, and generated
//     ones while their family has been charged less than it earned: a first
//     budget, more per URL of it found from outside, for what its generated
//     pages led to (bounded by the host's other real pages) and a share of
//     the host's real pages. A held URL that enough distinct pages link is
//     admitted as evidence. Spaces and families whose generated pages come
//     back duplicates are held after a few probes.
//   - Rewrites (rewrite.go). Variants of pages by one parameter, path
//     segment or suffix that keep coming back duplicates teach the host a
//     rewrite that holds the rest of their kind.
//
// Nothing is dropped: a URL held back is parked (bounded per host; the store
// keeps all of them) and released, in the order it came, when the budget
// that holds it grows. Content verdicts come back from the parser
// (Host.Observe). Everything here is pure bookkeeping without I/O or locks:
// the fetcher that owns a host is its only writer (DESIGN.md, "Ownership and
// state"), and loadtest/trapsim drives it through simulated crawls.
package pattern
