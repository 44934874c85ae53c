// Package trapweb generates random test webs with crawler traps, to test a
// crawler's trap defence for generality: property tests over many seeds, not
// hand-written shapes.
//
// Given a Config (a seed and sizes) Generate draws a web of hosts
// h000.<Domain>, h001.<Domain>, ... Each host has real pages; some hosts have
// trap spaces and some have page variants. Every name, URL grammar,
// separator, value alphabet, content mode and link structure is drawn at
// random, so a crawler tuned to one shape of trap fails here, and so must a
// test that names one: tests of this package and of crawlers using it must
// state properties (a walk never runs out, near-duplicates are within 3
// bits, every real page is fetched) and never a URL shape, a parameter name
// or a trap kind. Class and Instance, from Get or Classify, are the truth to
// judge a crawl against.
//
// The web works two ways. Web.Get answers any URL in memory, with no network
// and no clock, deterministically: the same Config and URL always give the
// same Page, whatever was asked before, so a simulated crawl of many seeds
// runs in seconds. Web.Handler serves the same web over HTTP by Host header
// for real end-to-end crawls on loopback.
//
// # Real pages
//
// A host has "/" and Config.Pages-1 more pages under 1-4 sections: a random
// directory of depth 1-3 with an index page and articles named by a scheme
// drawn per section (slugs of words, numbers, word-number, dates like
// /2019/04/slug, number-slug; extension .html, .php, none, a trailing slash
// and so on; a third of the sections by number address their articles by a
// query parameter of a drawn name on the index's path instead, /blog/?p=123,
// their numbers apart by steps of random size, and have no variants). "/" links to every section index; an index links to the first
// articles of its section; every article links to the next one in its
// section (so everything is reachable from "/"), to 3-8 random real pages of
// its host and, with probability 0.3, to a real page of another host. About
// 40% of hosts list every real page in /sitemap.xml. About 30% have a real
// listing: a finite paginated index (its pages come on top of Config.Pages)
// whose pages link about 10 articles each and the last of which links no next
// page; it is real, not a trap, though its URLs may look like one. Texts are
// drawn from a vocabulary of a few thousand made-up pronounceable words with
// a page-specific Zipf distribution, 300-1500 words a page, so two real pages
// are always far apart in SimHash.
//
// Every host serves /robots.txt: "User-agent: *" with a Disallow of a random
// path nobody links, and a Sitemap line on hosts with a sitemap. Sitemaps of
// more than 10,000 entries are split into /sitemap-N.xml files named by a
// sitemap index at /sitemap.xml. robots.txt and sitemap files are Class Meta.
//
// # Trap spaces
//
// A share Config.TrapHosts of hosts get 1-3 trap space instances, each drawn
// independently:
//
//   - A URL grammar: a path template of literals (random words, separators
//     among "/", "-", "_", ".") and value slots, and/or query keys that
//     matter; or several query keys whose combinations matter (faceted
//     navigation: links add, remove and change one key=value); or a prefix
//     followed by any number of value segments; or a catch-all prefix under
//     which any path answers 200. Values come from a random alphabet: digits,
//     dates in a random layout, lowercase letters of random length, base62,
//     hex, vocabulary words joined by a separator, alphanumerics. Optionally
//     parameters the server ignores (same page) and a session-like token
//     added to every link of the space, drawn anew on every page.
//   - A content mode: identical (every page byte-identical: the space then
//     grows through relative links, so it is a prefix or catch-all grammar),
//     near (one text with 1-3 words changed: SimHash within 2 bits of any
//     other page of the space), distinct (search-result-like pages, each its
//     own text), mixed (own title, heading and link texts, shared body).
//   - Link structures: each page links 1-20 new URLs of the space (the next
//     value in counting order first, then random values, refinements...);
//     the space is linked from one real page or from many (a random share),
//     with one entry URL or one per linking page; a few of its URLs may be
//     listed in the host's sitemap. Trap pages also link a few real pages.
//     One space in five that is not identical and has no leaves carries a
//     return address: a parameter of a drawn name whose value is the
//     escaped path and query of the page that links the URL (a login or
//     share link's), which the server ignores; its own pages' links carry
//     theirs, so the addresses nest.
//   - Leaves: one space in four whose pages are not identical also has
//     each page (a hub) link 3-30 leaves after its own links, URLs of a
//     second shape made from the hub's URL: its path (trailing "/" moved
//     past the value) with a separator, maybe a word, and a value, maybe
//     an extension; or its URL with one more query parameter (always so in
//     a prefix or catch-all space, whose own URLs take any segment). A
//     space whose URLs share a first path segment keeps its leaves under
//     it (a path of that one segment gets "/" and the value, not a
//     separator); one whose first segment holds a value may have them
//     beside its pages ("/a-1" and "/a-1.x.htm"). The values are the same
//     3-30 for every hub, in counting order, so each hub has its own leaves
//     and there is no end of them. A leaf links its hub, its previous and
//     next leaf (the first and the last wrap around) and the space's real
//     pages: nothing new. It is a page of the space's Instance, with the
//     space's content mode: its own text (distinct), its own title over
//     the shared body (mixed), or a near copy of the text every hub shows
//     (near: a near space's links within itself then carry no words, so
//     hubs and leaves are within the 2 bits of one another above). A
//     calendar whose months are made up from each other and each list
//     their days is such a space. Whether a space has leaves, and their
//     shape, are drawn from the space's own seed, not the host's: a space
//     without leaves is what it was before spaces had them.
//
// Every space is infinite or combinatorially huge (more than 10,000 URLs):
// the first link of a page goes to the next value, the next combination or a
// deeper path, so following first links never comes back.
//
// # Variants
//
// A share Config.VariantHosts of hosts have one variant family: every article
// (or a random half of them) links a variant of itself made by a drawn rule:
// a query parameter with a fixed value or an id varying per link, a path
// prefix or suffix segment, a filename suffix. A variant's body is its
// article's byte for byte, or with 1-3 words changed (within 1 bit of the
// article's SimHash). Its relative links resolve from the variant's URL, as
// they would on a real site.
//
// # Listing views
//
// A share Config.ListViews of real listings can also be had in other
// orders and layouts: 1-2 query parameters with drawn names and 2-4 drawn
// values each (words, or for a third of the parameters numbers: the sizes
// a page is shown in), the first value the listing's own (never written in a
// link). Every page of the listing and of each view links its own page
// number (or the first page, drawn per listing) in each other value of each
// parameter, and a view paginates within itself. An order lists the
// articles in an order of its own, so its pages are distinct from every
// page of the listing and lead to no page it does not; a layout shows the
// listing's page with 1-3 words changed. A listing's views are one Trap
// instance, the only finite one (Instance.Finite): values times pages.
//
// # The big host
//
// Config.Big adds a host (Web.BigHost) with Big distinct articles under one
// URL pattern, all in its sitemap, reachable through a paginated listing of
// 20 a page (next/prev, first/last, a window of page numbers) and a hub page
// linking up to 5,000 of them. It has no traps: a crawler must not take one
// big pattern for one.
//
// # URLs
//
// URLs in Get, Classify, RealPages, Seeds and Links are normalized as a
// crawler normalizes (pkg/urlnorm): scheme http, host lower case, default
// port dropped, fragment dropped, unreserved escapes decoded, dot segments
// removed, query parameters sorted by name. Get and Classify accept any
// spelling. Same-host links are written in HTML as root-relative or relative
// references ("/a/b", "b", "../x", "?q=1", with parameters in any order and
// sometimes a fragment); Links holds what they resolve to from the page's
// URL. Cross-host links, sitemaps and robots.txt use absolute URLs: with
// Config.Port set, every absolute URL carries the port, so a crawler
// reaching Handler at http://<host>:<Port>/ finds every link.
//
// # Cost
//
// Generate draws only real page paths and the parameters of traps and
// variants: Generate(Config{Hosts: 500, Pages: 100}) takes tens of
// milliseconds. Pages are rendered when asked for, from generators seeded by
// a hash of the URL, never from call order; a Web is safe for concurrent use.
package trapweb
