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
// write, and every request is appended to an in-memory log, with the address
// it arrived on (Request.Addr).
//
// # Host names (Config.Addresses)
//
// Politeness per IP address can only be tested when many hosts share one.
// With Addresses N > 0, host i is named h0001.synth.test for i = 0,
// h0002.synth.test for i = 1 and so on (under .test, reserved for testing,
// so nothing real is ever contacted), and its URLs and host key use the
// name: "h0001.synth.test:PORT". Only N addresses are bound, 127.0.1.1
// onwards, on one port as above; host i is served on address i mod N, so
// 200 hosts on one address is Hosts 200, Addresses 1. Each address's server
// picks the host by the Host header (case and one trailing dot aside; a
// port, when given, must be the server's). A Host header that names no
// host of the address is answered 421 Misdirected Request and logged with
// Kind "misdirected". No DNS is involved: [Web.HostsFile] gives the names
// in /etc/hosts format ("127.0.1.1 h0001.synth.test", one a line, "#"
// comments), for a crawler's -hosts-file, and [Web.DialContext] resolves
// them for Go clients in tests. With Features the dead seed is a name too,
// on the address after the last one bound. Everything else, robots
// variants, sitemaps, redirects, traps, the changing web and cross links,
// is the same as with one address per host. The plan uses IPv4 loopback
// because all of 127.0.0.0/8 reaches lo without set-up, while IPv6 has
// ::1 only; nothing else assumes IPv4, and the audit counts an IPv6 /64 as
// one server, as the crawler does.
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
// simple one (User-agent: * / Disallow: /cgi-bin/). Pages are about PageBytes
// long, or, with PageBytesMax above it, each draws its size from
// [PageBytes, PageBytesMax]. With CrawlDelayShare, that share of the plain
// hosts with a robots.txt (which ones, and their delays, drawn by Seed) add
// a Crawl-delay from [CrawlDelayMin, CrawlDelayMax] to it; the audit
// reports the gaps under a Crawl-delay apart (Report.CrawlDelayGaps).
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
// # Trap instances (Config.Traps)
//
// A generic trap defence cannot be tested on a handful of traps with fixed
// names: it must meet many instances of each kind, spelled differently on
// every site. With Traps, every host but one whose robots.txt answers 5xx
// (where nothing may be fetched) gets 1-3 trap instances of different
// classes, linked from "/" and from one ordinary page. Which classes a host
// gets depends only on Seed and the host's index; over 50 hosts each of
// the seven classes has about 14 instances. Each instance draws its path
// prefix, parameter names, date layout or id format from per-class choices
// (for example prefixes events, calendar, archive, diary, schedule,
// happenings; date keys date, day, d, when; page keys page, p, pg,
// offset), so no single URL rule fits every instance of a class:
//
//   - path_calendar: /events/2024/06/ links the previous and next month
//     and the next year.
//   - query_calendar: /agenda?date=2024-06-15 links the previous and next
//     day and the next week.
//   - pagination: /list?page=N links N+1, N+2 and N-1, with no last page
//     (or offset=K in steps of 10, 20 or 25).
//   - facets: /shop?color=red&size=m&sort=price, three or four filters
//     with small vocabularies in any order; each page links the pages
//     that change one filter: hundreds to thousands of combinations.
//   - soft404: every path under a prefix (/wiki/anything/...) answers
//     200 and links relatively ("a/", "b/"), so paths grow without end.
//   - session_path: /s/<id>/p/K.html or /p/K.html;sessid=<id>, and
//   - session_query: /p/K.html?sessid=<id>, with parameter names the
//     crawler does not strip (not utm_*, sid, sessionid, jsessionid, ...).
//     Any id of the host's format shows ordinary page K's text, and every
//     link carries a fresh id.
//
// The pages of one instance share a title and some 450 words of prose;
// only a short label line (a month or weekday name, "Page N", a product
// count, a path segment), the links and the <title> differ. The prose is
// drawn so that all pages of the instance are within the crawler's SimHash
// near-duplicate distance (3 bits) of each other, while different instances
// and ordinary pages are far apart. Trap pages are made on request and are
// never in MustFetch.
//
// The legitimate counterpart: every seventh host (which ones depends on
// Seed) has a hub of 8-15 index pages (/topics/A.html, /index/1.html,
// /directory/page-1.html or /a-z/A/) built from one heavy template, so they
// are near-duplicates of each other, chained by "Next" links from the one
// "/" links to. Each lists 3-5 pages of ordinary, distinct text that no
// other page links. All are MustFetch: a crawler that cuts chains of
// near-duplicates too eagerly loses coverage.
//
// # Changing pages (Config.Change)
//
// A recrawl scheduler must be judged on a web that changes. With Change,
// the home page and the ordinary pages of every host but one whose
// robots.txt answers 5xx change over time; everything else stays as it is.
// Time is compressed: the intervals of ChangeConfig are simulated time, of
// which TimeScale seconds (default 600) pass per real second, so a fast
// page (1 h) changes every 6 s on average and a slow one (24 h) every
// 144 s. Timestamps on the wire (Last-Modified, <lastmod>) are real time,
// so that a crawler can compare them with its own clock.
//
//   - Change classes: a seeded order of all changing pages gives the first
//     FastShare (0.2) the fast class, the next SlowShare (0.3) the slow one
//     and the rest (half of them) never change. A page changes as a
//     Poisson process at its class's rate, drawn from its own seeded
//     stream as far as the clock has gone (one offset per version held),
//     so two webs of one seed have the same history. Version 0 is the
//     page's text in a web that does not change and went live before the
//     web started; every later version has new prose (SimHash some 30 bits
//     from the others), the same links and the same place in the graph.
//   - Noise: NoiseShare (0.3) of the pages carry an ad line ("Sponsored by
//     X") that differs from one answer to the next. It is not a change:
//     the lines of a version are chosen so that all its answers are within
//     the crawler's SimHash distance of each other, and the audit knows only
//     the version.
//   - Validators per host: ETagHosts (0.5) send a strong ETag derived from
//     the version and a Last-Modified, LastModHosts (0.25) only a
//     Last-Modified, the rest neither and always answer 200. If-None-Match
//     (weak comparison, "*" included) decides alone when present (RFC 9110
//     §13.2.2); otherwise If-Modified-Since is answered 304 when the live
//     version went live at or before the date. Last-Modified is the
//     instant the version went live rounded up to the second, or the
//     current second while that is still to come, so a client echoing it
//     gets 304 exactly when the page has not changed, even when it changed
//     twice within one second; a date in the future is ignored.
//   - Sitemaps: on SitemapHosts (0.5) of the hosts with a robots.txt,
//     robots.txt names /sitemap-pages.xml, made at every request, which
//     lists the host's changing pages with <lastmod> the instant their
//     live version went live, to the nanosecond (RFC 3339).
//   - Deletions: DeleteShare (0.05) of the ordinary pages are deleted at an
//     instant drawn uniformly within DeleteWithin (6 h simulated) and from
//     then answer 404 or 410 (in turn, so both occur) and leave the
//     sitemap. "/" links the page each deleted page used to lead to, so
//     that no page is lost with it.
//
// # Application hosts (Config.Apps)
//
// A rendering tier must be judged on sites whose links only exist once
// scripts have run. With Apps N the last N hosts are application hosts
// (the first ones keep their special cases, indexes and graphs; ordinary
// pages never link into an application host, so an HTML-only crawler
// reaches nothing there but the seeded home page). Each has one shape,
// dealt from a seeded order of the seven so that any seven consecutive
// application hosts have all of them ([Web.AppHosts] names them).
//
// Every document ("/", /p/N.html for N < PagesPerHost, and a shape's
// special pages) is a shell: <div id="app">, a <noscript> note "Please
// enable JavaScript", a logo <img>, a <video preload="auto">, and the
// bundle [AppBundlePath] (the same URL on every page, with Cache-Control
// and an ETag), plus, when an ordinary host with a plain robots.txt
// exists, two scripts of that third-party host ([Web.ThirdPartyHost]):
// [WidgetPath], which adds a line of text, and [TrackerPath], which its
// robots.txt disallows. No <a> at all: pkg/parse finds no link in a
// shell. The bundle inserts /static/app.css (whose @font-face asks for
// /static/font.woff2) and a banner image, then builds into #app an <h1>,
// some 400 bytes of prose and a list of anchors with real hrefs, from
// JSON {"title", "text", "links": [{"href", "text"}]} taken from:
//
//   - inline: a <script type="application/json" id="app-data"> block.
//   - fetch: fetch([AppAPIPath] + "?id=" + data-page), where data-page
//     is "home" for "/" and N for /p/N.html.
//   - router: the route table in the bundle; every path answers the
//     same shell (unknown paths with 404), the bundle renders the route
//     of location.pathname, and a click on a same-origin link is
//     intercepted with history.pushState.
//   - blocked_api: as fetch, but robots.txt disallows /api/; the inline
//     block holds a few links (a chain through the first half of the
//     pages), rendered first, so the page yields what it can. Pages
//     that only the API's answers link to are hidden: not in MustFetch,
//     and the API answers are in MustNotFetch.
//   - hung: as inline, and "/" also links [AppHangPage] (a setInterval
//     that changes the DOM every 20 ms, for ever) and [AppHangFetchPage]
//     (fetches [AppHangAPIPath], which answers only after Config.AppHang,
//     default 60 s, or gives up when the client leaves or the web closes).
//   - runaway: as inline, and "/" also links [AppRunawayPage], which once
//     built allocates 8 arrays of 2^17 references every task, without
//     end, until the browser's memory limit stops it.
//   - mixed: as inline on "/" and /p/N.html, plus a server-rendered part,
//     [AppGuidePrefix]N.html (3 x PagesPerHost pages): the same shell
//     markers, but #app already holds the title, the prose and the <a>
//     links the bundle would build, so rendering finds nothing more. It
//     tests verdicts per part of a host ([Web.ServerRenderedPath]).
//
// With Config.AppChains the pages are built as real sites build them, so
// that a render waits for requests made one after another, a politeness
// delay apart: the <head> has a stylesheet [AppSiteStylePath] (present on
// hosts of even index, 404 on the others: one error page for all), the
// bundle comes at the end of <body>, not deferred, and only loads the code,
// [AppMainPath], as a second script; fetch and blocked_api ask
// [AppIndexPath] + "?id=" + data-page first, whose answer {"next": URL}
// names the data's URL. On blocked_api both are disallowed (MustNotFetch).
//
// Each page's links go to the next page and Fanout-1 random ones on the
// host. Sub-resources are logged with their own Kind ([KindBundle],
// [KindStyle], [KindAPI], [KindHang], [KindScript], [KindImage],
// [KindFont], [KindMedia]); documents are "page". A plain Chromium asks
// for all of them; a renderer should ask for none of the images, fonts
// and media.
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
//     "session", "redirect_chain" for /chain/7 and beyond, "redirect_loop",
//     and the classes of Config.Traps), entries included, and are not
//     violations by themselves. Request.TrapInstance names the instance:
//     the host key, "#" and the trap's name, since a host has at most one
//     of each (the session trap of any host is one instance). Per instance
//     the report gives TrapInstances (instances requested at all),
//     TrapRequestsPerInstanceMean and Max over those, the counts in
//     TrapInstanceRequests, and TrapShare, the trap requests' share of all
//     requests, robots.txt included: what a trap defence should keep low.
//   - Per IP: every request counts against its server address
//     (Request.Addr, or the host key when that is an IP in a log without
//     Addr; an IPv6 /64 is one server), robots.txt and misdirected requests
//     included. A request is in flight from Start to End less the
//     tolerance. Report.PerIP gives per address the most requests in
//     flight at once and the shortest time between two Starts, and
//     Report.MaxPerIP the most at once on any address. With
//     AuditConfig.IPConcurrency, a request that starts with that many
//     already in flight to its address is an IPConcurrency violation; with
//     AuditConfig.IPDelay, one that starts less than IPDelay minus the
//     tolerance after the previous Start at its address is an IPInterval
//     violation.
//   - Misdirected: with Config.Addresses, a request whose Host header named
//     no host of its address. It is in no host's checks.
//   - Changing web: a request after a final answer is a revisit, not a
//     duplicate, unless it started before that answer ended; retries are
//     counted per visit, from the last final answer or the request that
//     used the previous visit's retries up. Report.Change gives freshness:
//     over the window from the first request to Close (or the log's last
//     End if the web is still open), the time-averaged share of existing
//     changing pages whose copy is the live version, overall and per
//     class. The copy is the version a 200 answer served (the version live
//     at its Start), held from its End; a 304 leaves it as it was; a page
//     never fetched is stale; a deleted page leaves the share when it is
//     deleted. It also counts requests for changing pages, revisits,
//     conditional revisits, 304s, and requests for any resource that had
//     answered 404 or 410 three times (a crawler should retire it; not a
//     violation). UnconditionalRevisits: a changing page revisited
//     without If-None-Match and If-Modified-Since although its latest 200
//     answer sent an ETag or a Last-Modified and no final answer but a 304
//     came since (a page gone or moved has no validators to send).
//   - Application hosts: every request, sub-resources included, is in
//     the host checks above (politeness, robots, duplicates), so a
//     bundle fetched twice or an API call robots.txt disallows is a
//     violation there. Report.Apps adds per host and shape (Shapes,
//     Hosts): Coverage over the pages reachable from "/" without breaking
//     robots and OrdinaryCoverage over the rest of MustFetch; requests of
//     the API (APIDisallowed: of those, ones robots.txt disallows), of the
//     hung endpoint and of hidden pages; Bundles, the requests of each
//     bundle, stylesheet and third-party script URL (a renderer caches
//     them for the crawl: one each), with RepeatedBundles; app pages
//     requested more than once (RepeatedDocuments); and every image, font
//     and media request as a Media violation, which fails OK.
//
// Comparisons with an End allow AuditConfig.Tolerance (default
// [DefaultTolerance], 2 ms): Start and End are read inside the handlers, so
// with two connections the next request can be stamped a little before the
// previous one's End although the crawler waited for the answer. A
// robots.txt request must still have started before the request it allows.
package synthweb
