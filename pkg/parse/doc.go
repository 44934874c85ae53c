// Package parse is the first step of the parser tier: it turns a fetched,
// content-decoded body into the links the frontier will consider and the
// metadata the store keeps for a capture (title, language, canonical, text,
// robots directives).
//
// The input is untrusted, so the package is built to degrade, not fail: the
// character set is sniffed the way browsers do (BOM, Content-Type charset,
// <meta> prescan, a UTF-8 heuristic, then windows-1252), malformed markup is
// tokenized as far as it goes, and a URL that does not parse is counted and
// skipped. Every output is bounded (links, text, title, description) so that a
// hostile page cannot make a parser process grow without limit.
//
// Parsing uses the golang.org/x/net/html tokenizer rather than the tree
// builder: the crawler needs attributes of a handful of elements, not a DOM,
// and the tokenizer is several times faster and allocates far less (see
// BenchmarkParse and BenchmarkTreeBuilder). URLs are resolved with the WHATWG
// URL parser so that links mean what they mean in a browser.
//
// Decisions worth knowing:
//   - The first <base href> in the document applies to every link, also to
//     links that appear before it, as in browsers (the "must be in <head>" rule
//     of the HTML spec binds authors, not user agents).
//   - Link.NoFollow is set for rel=nofollow only. rel=ugc and rel=sponsored
//     label links for ranking, not for crawling; Rel keeps them for callers.
//   - Links inside <template> are ignored (inert markup, often with
//     placeholders); links inside <noscript> are kept, text is not.
//   - Only http and https results are returned; other schemes (javascript:,
//     mailto:, tel:, data:, ftp:, ...) are skipped without counting as invalid.
//   - "nocache" in robots directives is treated as "noarchive" (Bing's alias).
package parse
