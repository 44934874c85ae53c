package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

var (
	// ErrBlockedAddress means the SSRF guard refused every address the host
	// resolved to. Retrying will not help until its DNS changes.
	ErrBlockedAddress = errors.New("address blocked")
	// ErrInvalidURL means the request URL is not an absolute http(s) URL.
	ErrInvalidURL = errors.New("invalid request URL")

	// errResolve marks resolver failures whatever error type the resolver
	// returned, so a Config.Resolver override classifies as "dns" too.
	errResolve = errors.New("resolve host")
)

// Error classes returned by Classify.
const (
	ClassTimeout          = "timeout"
	ClassDNS              = "dns"
	ClassNoSuchHost       = "no_such_host" // DNS answered that the name does not exist (NXDOMAIN)
	ClassRefused          = "refused"
	ClassReset            = "reset"
	ClassUnreachable      = "unreachable" // no route to the host or its network
	ClassTLS              = "tls"
	ClassBlockedAddress   = "blocked_address"
	ClassHeadersTooLarge  = "headers_too_large"
	ClassInvalidURL       = "invalid_url"
	ClassCanceled         = "canceled"
	ClassOther            = "other"
	headerLimitErrorTitle = "server response headers exceeded"
)

// ErrorClasses lists every value Classify can return except "", so metrics
// can be initialised with all their label values.
func ErrorClasses() []string {
	return []string{ClassTimeout, ClassDNS, ClassNoSuchHost, ClassRefused, ClassReset, ClassUnreachable, ClassTLS,
		ClassBlockedAddress, ClassHeadersTooLarge, ClassInvalidURL, ClassCanceled, ClassOther}
}

// Classify reduces an error from Do or Get to one of a bounded set of
// classes for metrics, capture records and back-off decisions. It returns
// "" for a nil error.
func Classify(err error) string {
	if err == nil {
		return ""
	}
	// Order matters: a blocked or unresolvable host is reported as such
	// even if the context ended while we were trying other addresses.
	var (
		dnsErr     *net.DNSError
		netErr     net.Error
		verifyErr  *tls.CertificateVerificationError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, ErrInvalidURL):
		return ClassInvalidURL
	case errors.Is(err, ErrBlockedAddress):
		return ClassBlockedAddress
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return ClassNoSuchHost
	case errors.Is(err, errResolve), errors.As(err, &dnsErr):
		return ClassDNS
	case errors.Is(err, context.Canceled):
		return ClassCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.As(err, &verifyErr), errors.As(err, &recordErr), errors.As(err, &alertErr),
		errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalidErr):
		return ClassTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ClassUnreachable
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassReset
	case strings.Contains(err.Error(), headerLimitErrorTitle):
		// net/http reports the header limit only as text.
		return ClassHeadersTooLarge
	case strings.HasPrefix(lastMessage(err), "tls: "):
		// Handshake failures such as a version mismatch are untyped.
		return ClassTLS
	}
	return ClassOther
}

// Reasons recorded on a URL whose server could not be reached or spoken to,
// and on a host whose robots.txt could not be fetched for that reason: what
// happened, in the operator's words.
const (
	ReasonTimeout        = "timeout"
	ReasonDNS            = "dns_error"
	ReasonConnect        = "connect_error"   // refused, reset, or no route
	ReasonTLS            = "tls_error"       // untrusted or wrong certificate, failed handshake
	ReasonAddressBlocked = "address_blocked" // the SSRF guard refused every address; AllowPrivate lifts it
)

// Reason maps an error class of Classify to the reason recorded on a URL
// whose fetch failed with it; it is the one place that does. A failure to
// reach or speak to the server has a Reason constant; the other classes keep
// the names failures had before those, "fetch_" + class
// (fetch_headers_too_large, fetch_invalid_url, fetch_canceled, fetch_other).
func Reason(class string) string {
	switch class {
	case "":
		return ""
	case ClassTimeout:
		return ReasonTimeout
	case ClassDNS, ClassNoSuchHost:
		return ReasonDNS
	case ClassRefused, ClassReset, ClassUnreachable:
		return ReasonConnect
	case ClassTLS:
		return ReasonTLS
	case ClassBlockedAddress:
		return ReasonAddressBlocked
	}
	return "fetch_" + class
}

// FailureReason reports whether r is a reason Reason returns (for some
// class): a URL with it failed to be fetched, none excluded it.
func FailureReason(r string) bool {
	return unreached(r) || strings.HasPrefix(r, "fetch_")
}

// unreached reports whether r is one of the Reason constants.
func unreached(r string) bool {
	switch r {
	case ReasonTimeout, ReasonDNS, ReasonConnect, ReasonTLS, ReasonAddressBlocked:
		return true
	}
	return false
}

// Unreachable returns the reason for an error of class when the server was
// not reached or not spoken to (a Reason constant), and "" for any other
// class, such as one of an answer that came. permanent says that retrying
// cannot help until something outside the crawl changes: the name does not
// exist, the TLS handshake fails (a certificate not trusted or not for the
// host, a protocol the server does not speak: its configuration, while
// trouble on the connection during a handshake is a reset or a timeout), or
// the guard refuses the address. It takes the class, not the error, because
// a robots.txt answer reaches its host's owner as a record (queue.RobotsAnswer)
// that carries only the class.
func Unreachable(class string) (reason string, permanent bool) {
	r := Reason(class)
	if !unreached(r) {
		return "", false
	}
	switch class {
	case ClassNoSuchHost, ClassTLS, ClassBlockedAddress:
		return r, true
	}
	return r, false
}

// lastMessage returns the message of the innermost error in a chain of
// single wraps.
func lastMessage(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}
