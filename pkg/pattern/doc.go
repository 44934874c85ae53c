// Package pattern bounds crawler traps by what their pages turn out to be.
//
// A trap is a URL space a site generates without end: a calendar with a "next
// month" link, pagination past the last page, faceted search, a catch-all that
// answers 200 for any path, session ids. Their URLs differ; their pages do
// not. Rules on URL shapes alone (a calendar window, a depth cap) miss the
// shapes nobody wrote a rule for, so the fetcher's admission also learns from
// content, fed back by the parser:
//
//   - URL patterns. Of folds a URL into a pattern (numbers, dates and
//     identifiers become placeholders; query keys are kept, values dropped).
//     Each pattern of a host starts with a small budget of admissions. Every
//     page of the pattern that comes back distinct earns it Growth more; every
//     page that comes back a duplicate (exact or near) of another takes one
//     away. A pattern of 5,000 distinct articles keeps growing; a calendar
//     whose months are near-identical stops after a few.
//   - Duplicate chains. A link found on a duplicate page carries how many
//     duplicate pages in a row led to it (its hops). Links with hops are
//     admitted against a second budget, kept per section of the site the
//     duplicate page is in ("/events", "/shop") and fed by what such links led
//     to: a section whose duplicate pages link to real pages (a template-heavy
//     index) earns more; one whose duplicates only lead to more duplicates (a
//     catch-all, facets) is cut after a link or two. Past MaxDupHops a chain is
//     cut unless its section has proven that its duplicates lead to real pages.
//
// Nothing is dropped on the first sight of a pattern (its first link is always
// admitted), and a URL held back is parked: it is released, in the order it
// came, when its pattern or section earns budget, and recorded with its
// reason meanwhile. Admitted URLs with duplicate ancestry, or in a pattern
// that has used its first budget, are served later within their host (a
// level shift), so a page cap or a time limit is spent on real pages first.
//
// Everything here is pure bookkeeping without I/O or locks: the fetcher that
// owns a host is its only writer (DESIGN.md, "Ownership and state").
package pattern
