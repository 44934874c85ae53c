// Package warc writes and reads WARC/1.1 files (ISO 28500:2017), the crawler's
// archival format for everything it fetches.
//
// The parser tier hands each HTTP exchange to a SegmentWriter, which stores it as
// a request record and a response record (or, when the payload is unchanged since
// an earlier capture, a revisit record that points at the original). A 304 Not
// Modified answer to a conditional GET is stored as its request record and a
// revisit record of the other profile, server-not-modified, pointing at the
// capture the server confirmed; Record.Profile tells the two kinds apart. Each record
// is its own gzip member, so a Location (file, offset, length) names a byte range
// that can be decompressed and parsed on its own: the metadata store keeps that
// Location per capture, and ReadAt turns it back into a Record.
//
// Segments are rolled at a configured size. Every segment starts with a warcinfo
// record, is never appended to once closed, and is handed to SegmentConfig.OnClose
// after it is fsynced (cluster mode uploads it to object storage there). Because
// records are independent gzip members written with one write call each, a crash
// in the middle of a write damages at most the last record; everything before it
// stays readable, and the Reader reports the damage as ErrTruncated.
//
// The Reader accepts .warc.gz (one or many records per member) and plain .warc,
// and is meant to be safe on untrusted input: malformed data yields an error
// wrapping ErrMalformed, ErrTruncated, ErrCorrupt or ErrTooLarge, never a panic.
// A record that ends its gzip member, as every record this package writes
// does, is handed out only after the member's CRC-32 and length have been
// verified, so damage is reported instead of returned. (Earlier records of a
// multi-record member are returned as they are parsed; their member is
// verified when it ends.)
package warc
