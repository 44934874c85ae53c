// Package sitemap turns fetched sitemaps (sitemaps.org protocol 0.9) into URL
// candidates for the crawler.
//
// Sitemaps reach the crawler through robots.txt Sitemap: lines and the
// conventional /sitemap.xml. The fetcher hands Parse the body exactly as it
// arrived, which for .xml.gz files is often still gzip-compressed because
// servers label them application/x-gzip without a Content-Encoding. Parse
// streams that body: it never holds the whole document, it decompresses with
// a cap on decoded bytes (the gzip-bomb defence that keeps memory bounded by
// configuration, DESIGN invariant 5), and it reports each entry through a
// callback in document order.
//
// Entries of a <urlset> or a plain-text sitemap are page URLs: the crawler
// feeds them to crawl.urls like any discovered link, so they pass the same
// normalization, scope, trap and dedup gates. Entries of a <sitemapindex> are
// further sitemaps to fetch. InScope applies the protocol's rule that a
// sitemap may only list URLs under its own location, so one host cannot use
// its sitemap to inject work for another.
//
// The parser is lenient where real sitemaps commonly are sloppy (missing
// xmlns, unescaped '&' in URLs, unknown extension elements, a byte-order
// mark, ISO-8859-1 declarations, W3C dates with the zone left off) and strict
// where leniency would be unsafe: entity declarations are never expanded and
// external entities never fetched, and locations that are not absolute
// http(s) URLs are counted as skipped rather than delivered.
package sitemap
