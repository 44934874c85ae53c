package fetch

import "errors"

// ErrBody marks a failure while the body was read: the server had answered
// with a status line and headers, and the answer then broke off or turned
// out malformed.
var ErrBody = errors.New("read body")

// Fault says whose failure a failed fetch is, which decides whether it is
// tried again and whether its host waits longer.
type Fault int

const (
	// FaultHost: the host is unreachable, refusing, resetting connections
	// or too slow. The URL is tried again and the host backs off: what it
	// does to one request it does to the next.
	FaultHost Fault = iota
	// FaultURL: one answer broke off mid-body. The URL is tried again, but
	// its host answered and does not back off.
	FaultURL
	// FaultPermanent: the answer is malformed (status line, headers,
	// chunking, encoding) or over a limit, or the URL cannot be requested.
	// The same request would fail the same way: it is not tried again, and
	// it says nothing about the host's other URLs.
	FaultPermanent
)

// FaultOf places a fetch error (from Do or Get) as its host's, its URL's, or
// permanent.
func FaultOf(err error) Fault {
	switch Classify(err) {
	case ClassTimeout, ClassDNS, ClassNoSuchHost, ClassRefused, ClassUnreachable, ClassTLS, ClassCanceled:
		return FaultHost
	case ClassReset:
		if errors.Is(err, ErrBody) {
			return FaultURL
		}
		return FaultHost
	}
	// What net/http reports without a network error is the server's answer
	// breaking the protocol ("malformed HTTP response", "malformed chunked
	// encoding", header limits) or a decoder refusing the body; a blocked
	// address or an invalid URL stays so until the crawl's input changes.
	return FaultPermanent
}
