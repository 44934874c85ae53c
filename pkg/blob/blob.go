package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// Store holds immutable objects (closed WARC segments) by key.
type Store interface {
	// Put stores the closed local file at path under key. It is atomic (a
	// reader sees the old object, or none, until the whole new one is there)
	// and idempotent (putting the same file again is harmless). The file at
	// path is left in place.
	Put(ctx context.Context, key, path string) error
	// ReadRange returns the n bytes at offset off of the object under key: a
	// WARC record by the (offset, length) the metadata store keeps. It fails
	// with ErrNotFound if there is no such object and with ErrOutOfRange if
	// the object ends before off+n.
	ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	// Exists reports whether an object is stored under key.
	Exists(ctx context.Context, key string) (bool, error)
	// List returns the objects whose keys start with prefix, by key: what
	// an export (crawler export -wacz) packages.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Close releases the store's resources.
	Close() error
}

// Object is one stored object, as List gives it.
type Object struct {
	Key  string
	Size int64
}

var (
	// ErrNotFound means no object is stored under the key.
	ErrNotFound = errors.New("blob not found")
	// ErrOutOfRange means a read reaches past the end of the object: the
	// location it came from does not match the object.
	ErrOutOfRange = errors.New("range past end of blob")
	// ErrInvalidKey means a key is not a relative slash-separated path of
	// plain names (see ValidateKey).
	ErrInvalidKey = errors.New("invalid blob key")
)

// MaxKeyLen is the longest key accepted, the S3 limit less room for a prefix.
const MaxKeyLen = 768

// ValidateKey checks that key can name an object in every backend: a relative
// path of 1 to MaxKeyLen bytes of UTF-8 whose slash-separated names are not
// empty, do not start with "." (the file backend's temporary files do) and
// contain no backslash or control character.
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLen || !utf8.ValidString(key) {
		return fmt.Errorf("%w %q: empty, longer than %d bytes or not UTF-8", ErrInvalidKey, key, MaxKeyLen)
	}
	for _, name := range strings.Split(key, "/") {
		if name == "" || name[0] == '.' {
			return fmt.Errorf("%w %q: empty name or name starting with '.'", ErrInvalidKey, key)
		}
		for _, r := range name {
			if r < 0x20 || r == 0x7f || r == '\\' {
				return fmt.Errorf("%w %q: control character or backslash", ErrInvalidKey, key)
			}
		}
	}
	return nil
}

// Option configures Open.
type Option func(*options)

type options struct {
	reg         prometheus.Registerer
	timeout     time.Duration
	minRate     int64
	maxAttempts int
	partSize    int64
	concurrency int
}

// WithRegisterer registers the store's metrics with reg. Stores opened with the
// same registerer share the collectors.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) { o.reg = reg }
}

// WithTimeout sets the base deadline of each call (default 30 s); a call that
// moves bytes gets WithMinRate's share on top.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithMinRate sets the slowest transfer, in bytes per second, that a call's
// deadline allows for (default 1 MiB/s).
func WithMinRate(bytesPerSecond int64) Option {
	return func(o *options) { o.minRate = bytesPerSecond }
}

// WithMaxAttempts sets how often one S3 request is tried before its error is
// returned (default 3, 1 disables retries).
func WithMaxAttempts(n int) Option {
	return func(o *options) { o.maxAttempts = n }
}

// WithPartSize sets the S3 multipart part size (default 16 MiB, at least the
// S3 minimum of 5 MiB). Files up to this size are sent with one PutObject.
func WithPartSize(n int64) Option {
	return func(o *options) { o.partSize = n }
}

// WithConcurrency sets how many parts of one multipart upload are sent at
// once (default 4). Memory use does not grow with it: parts are read from the
// file as they are sent.
func WithConcurrency(n int) Option {
	return func(o *options) { o.concurrency = n }
}

const minPartSize = 5 << 20

func (o *options) validate() error {
	switch {
	case o.timeout <= 0:
		return fmt.Errorf("timeout %v is not positive", o.timeout)
	case o.minRate <= 0:
		return fmt.Errorf("minimum rate %d B/s is not positive", o.minRate)
	case o.maxAttempts < 1:
		return fmt.Errorf("max attempts %d is below 1", o.maxAttempts)
	case o.partSize < minPartSize:
		return fmt.Errorf("part size %d is below the S3 minimum of %d", o.partSize, minPartSize)
	case o.concurrency < 1:
		return fmt.Errorf("concurrency %d is below 1", o.concurrency)
	}
	return nil
}

// deadline is how long a call moving n bytes may take.
func (o *options) deadline(n int64) time.Duration {
	return o.timeout + time.Duration(float64(n)/float64(o.minRate)*float64(time.Second))
}

// Open opens the store named by rawURL (file:///dir or s3://bucket/prefix?...,
// see the package documentation). The S3 backend checks that the bucket is
// reachable, so a wrong endpoint, bucket or credential fails here rather than
// at the first upload.
func Open(ctx context.Context, rawURL string, opts ...Option) (Store, error) {
	o := options{timeout: 30 * time.Second, minRate: 1 << 20, maxAttempts: 3, partSize: 16 << 20, concurrency: 4}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("open blob store %s: %w", Redact(rawURL), err)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("open blob store %s: not a URL", Redact(rawURL))
	}
	var (
		b    backend
		kind string
	)
	switch u.Scheme {
	case "file":
		kind = "file"
		b, err = openFile(u, &o)
	case "s3":
		kind = "s3"
		b, err = openS3(ctx, u, &o)
	default:
		err = fmt.Errorf("unknown scheme %q (want file or s3)", u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("open blob store %s: %w", Redact(rawURL), err)
	}
	m, err := newMetrics(o.reg)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("open blob store %s: %w", Redact(rawURL), err)
	}
	return &instrumented{next: b, backend: kind, url: Redact(rawURL), m: m}, nil
}

// Redact returns rawURL with the value of secret_key and any password in the
// user information replaced by "xxxxx", for logs and errors.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	_, hasPassword := u.User.Password()
	q := u.Query()
	if !hasPassword && !q.Has("secret_key") {
		return rawURL
	}
	if q.Has("secret_key") {
		q.Set("secret_key", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func checkRange(off, n int64) error {
	if off < 0 || n <= 0 || off > 1<<62-n {
		return fmt.Errorf("invalid range offset %d length %d", off, n)
	}
	return nil
}
