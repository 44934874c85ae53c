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
// builder: the crawler needs attributes of a handful of elements, not a DOM.
// The tokenizer keeps no tree in memory and allocates far fewer objects. URLs
// are resolved as the WHATWG URL parser resolves them, so that links mean
// what they mean in a browser; the common forms of reference (plain paths,
// dot segments, simple queries, canonical absolute URLs) take a fast path
// held to the parser's answer, since the parser was most of the time spent
// on a link-heavy page (see BenchmarkParse and BenchmarkTreeBuilder). That
// parser is quadratic on some odd input (long userinfo, thousands of path
// segments), so references beyond generous bounds count as invalid without
// being parsed, and links beyond Options.MaxLinks are counted without being
// resolved.
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
//   - On a page in a legacy encoding the non-ASCII characters of a link's
//     query are percent-encoded in that encoding (characters it lacks as
//     "%26%23NNN%3B"), as browsers send them; path, host and fragment are
//     UTF-8 whatever the page.
//   - Charset sniffing looks at the whole body for valid UTF-8, not only at
//     the first 1024 bytes, so an ASCII head does not turn a UTF-8 page into
//     windows-1252.
//   - An HTML element such as <p> or <div> inside <svg> or <math> ends the
//     foreign content, as in the tree builder, so an unclosed <svg> hides
//     neither the rest of the text nor the title.
//   - "nocache" in robots directives is treated as "noarchive" (Bing's alias).
//   - A token longer than 1 MiB (a run of text, a script, a comment, a tag
//     with its attributes) counts as far as its first MiB, and a tag that
//     long not at all; parsing goes on after its end. The tokenizer would
//     otherwise hold it whole, in a buffer it doubles as it fills.
package parse
