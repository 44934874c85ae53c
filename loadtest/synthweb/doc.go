// Package synthweb serves a synthetic, multi-host web on loopback and audits a
// crawler from the servers' side: what they actually received.
//
// The crawler's end-to-end tests, the README demo and the load benchmarks crawl
// this web and then judge the crawler only from the request log, never from the
// crawler's own account of what it did. That is what makes the invariants in
// DESIGN.md (politeness, robots, once per cycle, no URL lost) checkable.
//
// # Hosts
//
// Every host is its own http.Server on its own loopback address 127.0.X.Y,
// starting at 127.0.1.1 (never 127.0.0.1; Linux routes all of 127/8 to lo). All
// hosts share one port when it can be bound everywhere, so the host key
// "127.0.X.Y:PORT" is what urlnorm.Authority returns for links to it. Ordinary
// pages are rendered into memory by [Start], so serving is a map look-up and one
// write, and every request is appended to an in-memory log.
//
// # Resources
//
// A crawler should fetch a page once however links spell it, so the server maps
// every spelling of a request target to one canonical resource id: Host plus the
// path with unreserved percent-escapes decoded, other escapes upper-cased, dot
// segments removed (a trailing slash is kept), and the query without utm_*,
// fbclid, gclid, sid, sessionid and jsessionid parameters, remaining parameters
// sorted. See [CanonicalTarget].
//
// # Plain pages
//
// Every host serves "/" and /p/N.html for N < PagesPerHost. Page N links to
// N+1 (so everything is reachable from "/"), to random pages of its host and,
// with CrossLinks, to a page of another host. Texts are generated from a
// built-in vocabulary with a page-specific word distribution, so no two plain
// pages are near-duplicates. Host 0 has no robots.txt (404); the others have a
// simple one (User-agent: * / Disallow: /cgi-bin/).
//
// # Special cases (Config.Features, needs at least 6 hosts)
//
//   - Host 0 (no robots.txt): spelling variants of /p/3.html, /old/N.html (301
//     to /p/N.html), a redirect chain /chain/1 .. /chain/8 -> /p/0.html, a
//     redirect loop /loop/a <-> /loop/b, /away (302 to host 1), near-duplicates
//     /near/a.html and /near/b.html, byte-identical /copy/1.html and
//     /copy/2.html, /files/report.pdf, /canonical.html (rel=canonical to another
//     spelling of itself), /meta/noindex.html, /meta/nofollow.html (its only link
//     goes to /meta/behind-nofollow.html), a rel="nofollow" link to
//     /nf/target.html and a link with a 3 KiB query to /x/huge-query.
//   - Host 1: robots.txt "User-agent: *" with Disallow: /private/ and Allow:
//     /private/open.html, and Sitemap: /sitemap_index.xml, which lists the
//     gzip-compressed /sitemap-1.xml.gz (application/gzip, no
//     Content-Encoding) naming /orphan/1..3.html, which no page links to. The
//     traps: /calendar?month=YYYY-MM (links to the months before and after),
//     /trap/a/ (links to "a/"), /deep/1/ (links to "2/", and so on) and links
//     carrying a fresh ?sid=.
//   - Host 2: a robots group for Config.Agent (Disallow: /no-agent/) and a "*"
//     group (Disallow: /no-star/); the crawler must obey only its own group.
//     Error pages /err/404.html, /err/500.html (always 500), /err/429.html (the
//     first request answers 429 with Retry-After: 1, later ones 200) and
//     /slow.html (answers after 800 ms, or gives up when the client leaves
//     or the web closes).
//   - Host 3: Crawl-delay: 0.25; /bomb.html (Content-Encoding: gzip, decodes to
//     64 MiB); /sitemap.xml (not named in robots.txt) listing /orphan/1..2.html.
//   - Host 4: /robots.txt answers 301 to /robots-real.txt, which says
//     Crawl-delay: 30 (clamped by the crawler's MaxDelay) and Disallow: /blocked/.
//   - Host 5: robots.txt answers 500; only robots.txt requests may reach it.
//   - Seeds also holds one URL on a loopback address where nothing listens.
//
// # Audit
//
// [Web.Audit] judges the log against [AuditConfig], the crawler's settings.
// Requests are taken in order of arrival (Start); a request the server gave
// up on (client gone, or Close) has Status 0 and is no answer.
//
//   - Politeness: per host, Start(next) - End(previous) must be at least the
//     effective delay, where previous is, among the requests that started
//     before next, the one that ended last. The effective delay is the
//     robots Crawl-delay of the crawler's group clamped to [MinDelay,
//     MaxDelay] from the first robots.txt answer 200 on (the crawler cannot
//     know it before), else DefaultDelay. robots.txt requests count.
//     Start(next) < End(previous) is an overlap.
//   - Robots: every non-robots request must start after a robots.txt answer
//     (redirect targets such as host 4's /robots-real.txt count), the latest
//     such answer must not be 5xx, and its path must be allowed for the
//     crawler's group (RFC 9309 longest match, Allow wins ties).
//   - Retry-After: after a 429 or 503 with Retry-After, the host's next request
//     must start no sooner than End + Retry-After.
//   - Duplicates: a resource requested again when an earlier request of it
//     got a final response (anything but 5xx, 429 and no answer), even one
//     still in flight, or more than MaxRetries+1 times in all.
//     robots.txt is exempt (re-fetching it is legitimate); Report.RobotsFetches
//     counts it.
//   - Missing and Forbidden: [Web.MustFetch] and [Web.MustNotFetch] are known by
//     construction. A MustFetch resource is fetched when it got a final
//     response or was requested MaxRetries+1 times (retries exhausted, as for
//     /err/500.html); Report.Coverage is the fetched share. Requesting a
//     MustNotFetch resource is forbidden.
//   - Traps are counted in Report.TrapRequests ("calendar", "repeat", "depth",
//     "session", "redirect_chain" for /chain/7 and beyond, "redirect_loop"),
//     entries included, and are not violations by themselves.
//
// Comparisons with an End allow AuditConfig.Tolerance (default
// [DefaultTolerance], 2 ms): Start and End are read inside the handlers, so
// with two connections the next request can be stamped a little before the
// previous one's End although the crawler waited for the answer. A
// robots.txt request must still have started before the request it allows.
package synthweb
