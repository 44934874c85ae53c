// Package simhash detects near-duplicate pages: the parser tier takes a
// 64-bit fingerprint of each page's main text and asks whether a page seen
// before has a fingerprint within Hamming distance MaxDistance (3) of it.
// This is the scheme of Manku, Jain and Das Sarma, "Detecting Near-Duplicates
// for Web Crawling" (WWW 2007), built on Charikar's SimHash.
//
// # SimHash
//
// A text is turned into a multiset of features, each hashed to 64 bits. For
// each bit position, the features vote: +1 if their hash has the bit set, -1
// if not; the fingerprint has the bit set where the sum is positive. A feature
// that occurs n times votes n times. Unlike an ordinary hash, similar texts get
// similar fingerprints: if a fraction f of the features of two texts differ,
// each bit differs with probability about arccos(1-f)/pi, so for small f the
// expected distance is about 64*sqrt(2f)/pi. Distance 3 therefore means
// roughly 1% of the features changed; two unrelated texts differ in about 32
// bits (a binomial(64, 1/2): 10 or fewer with probability 10^-8).
//
// # Features: word pairs
//
// Words are maximal runs of Unicode letters, marks and decimal digits,
// lower-cased rune by rune (unicode.ToLower); everything else separates
// words. Han, Hiragana and Katakana characters are words by themselves, since
// those scripts do not put spaces between words. A feature is a shingle of
// two consecutive words; a text of one word has that word as its only feature.
//
// Single words lose word order and let the common words of a language
// dominate: on 500-word sections of English prose (the Go specification and
// memory model), different sections came as close as 7 bits, mean 18. Pairs
// already make them look unrelated (closest 15, mean 30.4; three-word
// shingles gave mean 31.7). Each edited word changes as many features as
// there are words in a shingle, so longer shingles make small edits weigh
// more: replacing 3 words at random in 500 left the fingerprints within
// distance 3 in 80% of trials with pairs and 58% with triples (1 word: 96%
// and 90%).
//
// So a page that differs from another only by a date, a counter or a changed
// sentence is usually caught, while one edited in several places is
// not, however small the edits: near-duplicate detection with SimHash is a
// statistical filter. Its false positives are pages that really share almost
// all their text in the same order, such as pages built from one template
// with a short variable part, or an article and its printer-friendly copy; two
// unrelated texts meet within distance 3 with probability about 2*10^-15 per
// pair.
//
// The exact definition, which must not change since fingerprints are stored:
// a word hash is the 64-bit FNV-1a of the UTF-8 of the lower-cased word; a
// pair (a, b) hashes to m(h(a)*0x9e3779b97f4a7c15 + h(b)) and a lone word to
// m(h(a)), where m is the MurmurHash3 fmix64 finalizer; a bit is set when
// more than half of the features have it set, ties giving 0. A text with no
// words has fingerprint 0, which means "no fingerprint"; any other text has a
// non-zero one. Fingerprints do not depend on the process or platform.
// Changes to the Unicode tables between Go releases can only affect texts that
// use newly assigned or reclassified characters.
//
// # Bands
//
// An Index must not compare a query with every fingerprint. Cut into
// Bands = 4 bands of 16 bits, two fingerprints within distance 3 differ in at
// most 3 bands, so they are equal in at least one (pigeonhole). The index
// files each fingerprint under its 4 band keys (Band, BandKeys) and examines
// only the fingerprints filed under one of the query's keys. For random
// fingerprints a bucket holds N/65536 of N fingerprints on average, so a
// query looks at about 4*N/65536 candidates: 60 at a million, 600 at ten
// million. Real fingerprints are not uniform, so buckets for common kinds of
// page (empty templates, error pages) can be fuller.
//
// A SQL table keyed on (band, key) uses the same layout (see Band): select
// the rows matching any of the query's four (band, key) pairs, then keep the
// candidates whose Distance is at most MaxDistance.
package simhash
