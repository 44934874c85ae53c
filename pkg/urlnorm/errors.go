package urlnorm

import "errors"

// reasonError is a sentinel that carries the stable code the crawler writes
// to its exclusion log, so the log does not depend on error message wording.
type reasonError struct {
	code string
	msg  string
}

func (e *reasonError) Error() string { return e.msg }

// Sentinel errors returned (wrapped) by Normalize and Resolve. Callers branch
// with errors.Is and log with Reason.
var (
	ErrInvalid  error = &reasonError{code: "invalid_url", msg: "invalid URL"}
	ErrScheme   error = &reasonError{code: "unsupported_scheme", msg: "unsupported scheme"}
	ErrTooLong  error = &reasonError{code: "url_too_long", msg: "URL too long"}
	ErrNoHost   error = &reasonError{code: "no_host", msg: "URL has no host"}
	errSentinel       = []error{ErrInvalid, ErrScheme, ErrTooLong, ErrNoHost}
)

// Reason returns the stable reason code of an error from this package:
// "invalid_url", "unsupported_scheme", "url_too_long" or "no_host"; "" for
// nil. Any other error maps to "invalid_url" so that every rejected URL gets
// a code in the exclusion log.
func Reason(err error) string {
	if err == nil {
		return ""
	}
	for _, s := range errSentinel {
		if errors.Is(err, s) {
			return s.(*reasonError).code
		}
	}
	return "invalid_url"
}
