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
	ClassRefused          = "refused"
	ClassReset            = "reset"
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
	return []string{ClassTimeout, ClassDNS, ClassRefused, ClassReset, ClassTLS,
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
