package warc

import "errors"

// Sentinel errors that callers branch on. Errors returned by this package wrap
// them together with the operation and the file or record concerned.
var (
	// ErrMalformed means the input is not valid WARC syntax (bad version line,
	// header line, Content-Length, or record trailer).
	ErrMalformed = errors.New("malformed WARC record")
	// ErrTruncated means the input ended in the middle of a record or gzip
	// member, as a crash during a write leaves it.
	ErrTruncated = errors.New("truncated WARC record")
	// ErrCorrupt means the compressed data is damaged (bad gzip header,
	// deflate stream or checksum).
	ErrCorrupt = errors.New("corrupt WARC gzip member")
	// ErrTooLarge means a record header or block exceeds the reader's limits.
	ErrTooLarge = errors.New("WARC record too large")
	// ErrInvalidRecord means a record or capture cannot be written as given
	// (missing WARC-Type or target URI, a header value containing CR, LF or
	// another control character, invalid UTF-8, or white space at either end,
	// which readers would trim).
	ErrInvalidRecord = errors.New("invalid WARC record")
	// ErrClosed means the SegmentWriter has been closed.
	ErrClosed = errors.New("WARC segment writer closed")
	// ErrOnClose wraps an error returned by SegmentConfig.OnClose. When a write
	// returns it, the write itself succeeded and the returned Location is valid;
	// only the hook for the segment that was rolled failed.
	ErrOnClose = errors.New("WARC segment OnClose hook failed")
)
