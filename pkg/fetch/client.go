package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/crawlcluster/crawler/internal/bufpool"
)

const (
	// defaultAccept prefers the documents the parser can use without
	// refusing anything else.
	defaultAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	// maxIdleConnsPerHost: the frontier keeps one request in flight per
	// host, so one spare connection is plenty.
	maxIdleConnsPerHost = 2
	idleConnTimeout     = 90 * time.Second
)

// Client fetches URLs under the limits of its Config. It is safe for
// concurrent use; one Client should serve the whole process so connections
// and DNS answers are shared.
type Client struct {
	cfg       Config
	transport *http.Transport
	dialer    *dialer
}

// Request is one GET to perform.
type Request struct {
	URL          string // absolute, already normalized
	ETag         string // sent as If-None-Match; dropped if not a valid header value
	LastModified string // sent as If-Modified-Since; dropped if not a valid header value
	Accept       string // optional; defaults to preferring HTML
	// Sent, when set, is called with the time the request was written to
	// the connection (again if the transport writes it again): when the
	// server can first see it, which a politeness gate spaces from.
	Sent func(at time.Time)
}

// Response is a received HTTP response, whatever its status.
type Response struct {
	URL    string
	Status int
	Header http.Header
	// Body is Content-Encoding decoded (gzip, br, zstd, deflate) and capped.
	// For an unencoded body it shares memory with the tail of RawResponse.
	Body        []byte
	Truncated   bool
	TruncReason string // TruncMaxBodyBytes, TruncMaxDecodedBytes, TruncDecodeError or ""
	// Location is the absolute redirect target of a 3xx response with a
	// usable Location header, else "". It is not followed.
	Location string
	RemoteIP string
	// Protocol is the HTTP version of the exchange as a WARC-Protocol
	// identifier (the IIPC extension, which takes the ALPN names): "h2",
	// "http/1.1" or "http/1.0"; "" for a version with no identifier.
	Protocol string
	// TLSVersion ("tls/1.3", from the same registry) and CipherSuite (its
	// IANA name, "TLS_AES_128_GCM_SHA256") describe the connection of an
	// https fetch, for WARC-Protocol and WARC-Cipher-Suite; "" over plain
	// http.
	TLSVersion  string
	CipherSuite string
	// RawRequest is the request as HTTP/1.1 bytes (request line and
	// headers), for the WARC request record.
	RawRequest []byte
	// RawResponse is the status line, headers and body as received (still
	// content-encoded, de-chunked, Content-Length set to the stored length),
	// for the WARC response record.
	RawResponse []byte
	FetchedAt   time.Time     // when the request started
	Duration    time.Duration // until the body was read
	TTFB        time.Duration // until the headers arrived
	// Where the time from the request's start to its last byte written
	// went: resolving the name and connecting (both zero on a reused
	// connection), and the rest (a pooled connection, writing the request).
	DNS, Dial, Send time.Duration
}

// New builds a Client from cfg after validating it.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("new fetch client: %w", err)
	}
	netDialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	lookup := cfg.Resolver
	if cfg.HostsFile != "" {
		hosts, err := LoadHosts(cfg.HostsFile)
		if err != nil {
			return nil, fmt.Errorf("new fetch client: %w: %w", ErrInvalidConfig, err)
		}
		if lookup == nil {
			lookup = systemLookup
		}
		lookup = hosts.resolver(lookup)
	}
	roots := cfg.RootCAs // nil: the system's
	if cfg.CAFile != "" {
		var err error
		if roots, err = LoadCAFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("new fetch client: %w: %w", ErrInvalidConfig, err)
		}
	}
	d := &dialer{
		dns:          newDNSCache(lookup, cfg.DNSCacheTTL, cfg.ConnectTimeout),
		allowPrivate: cfg.AllowPrivate,
		connect:      netDialer.DialContext,
	}
	t := &http.Transport{
		// No proxy: a proxy would make the connection the guard checks
		// point at the proxy, not at the host.
		Proxy:       nil,
		DialContext: d.DialContext,
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			RootCAs:    roots,
		},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		ResponseHeaderTimeout:  cfg.HeaderTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		// We send Accept-Encoding ourselves and decode under our caps;
		// transparent decoding would bypass MaxDecodedBytes.
		DisableCompression:  true,
		MaxIdleConns:        idleBudget(cfg.MaxIdleConns, openFilesLimit()),
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
	}
	return &Client{cfg: cfg, transport: t, dialer: d}, nil
}

// idleBudget bounds the idle pool to half the open files the process may
// have, so that idle connections never starve the store, the broker or new
// connections of descriptors. A limit unknown (0) leaves n as it is.
func idleBudget(n int, openFiles uint64) int {
	if openFiles == 0 {
		return n
	}
	return int(min(uint64(n), max(openFiles/2, 1)))
}

// Close releases idle connections. The Client stays usable.
func (c *Client) Close() {
	c.transport.CloseIdleConnections()
}

// Do performs one GET. Redirects are never followed (the crawler re-admits
// the target as a new URL). A non-nil error means no usable HTTP response;
// Classify gives its class. HTTP error statuses are not errors, and neither
// is a body cut short by a cap or an undecodable encoding: those are
// recorded in Truncated and TruncReason.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w: %w", req.URL, ErrInvalidURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("fetch %s: %w: need an absolute http(s) URL", req.URL, ErrInvalidURL)
	}

	ctx, cancel := context.WithTimeout(ctx, c.cfg.TotalTimeout)
	defer cancel()

	headers := c.requestHeaders(req)
	var remote atomic.Pointer[string]
	// Nanoseconds after start; the dialer resolves the name itself before
	// it connects, so a new connection's DNS is start to ConnectStart.
	var connectStart, connectDone, wrote atomic.Int64
	var start time.Time
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
				s := ap.Addr().Unmap().WithZone("").String()
				remote.Store(&s)
			}
		},
		ConnectStart: func(string, string) { connectStart.CompareAndSwap(0, int64(time.Since(start))) },
		ConnectDone:  func(string, string, error) { connectDone.Store(int64(time.Since(start))) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			wrote.Store(int64(time.Since(start)))
			if req.Sent != nil {
				req.Sent(time.Now())
			}
		},
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w: %w", req.URL, ErrInvalidURL, err)
	}
	for _, h := range headers {
		hreq.Header[h.name] = []string{h.value}
	}

	start = time.Now()
	// RoundTrip, unlike http.Client, never follows redirects and keeps no
	// cookies, which is what a crawler capturing each URL on its own wants.
	resp, err := c.transport.RoundTrip(hreq)
	if err != nil {
		return nil, c.fetchError(ctx, req.URL, err)
	}
	defer resp.Body.Close()
	ttfb := time.Since(start)

	// The body is spooled until its length is known, then copied once
	// into the record, after the head that states that length.
	var body spool
	defer body.release()
	exceeded, err := body.readFrom(resp.Body, c.cfg.MaxBodyBytes)
	if err != nil {
		return nil, c.fetchError(ctx, req.URL, fmt.Errorf("%w: %w", ErrBody, err))
	}
	duration := time.Since(start)

	head := responseHead(resp, body.len())
	record := newRecord(len(head) + body.len())
	copy(record, head)
	body.copyTo(record[len(head):])
	body.release() // for the decoder's spool
	raw := record[len(head):len(record):len(record)]

	out := &Response{
		URL:         req.URL,
		Status:      resp.StatusCode,
		Header:      resp.Header,
		RawRequest:  rawRequest(u, headers),
		RawResponse: record,
		FetchedAt:   start.UTC(),
		Duration:    duration,
		TTFB:        ttfb,
	}
	if cs := connectStart.Load(); cs > 0 {
		out.DNS = time.Duration(cs)
		out.Dial = max(time.Duration(connectDone.Load()-cs), 0)
	}
	out.Send = max(time.Duration(wrote.Load())-out.DNS-out.Dial, 0)
	if r := remote.Load(); r != nil {
		out.RemoteIP = *r
	}
	out.Protocol = protocolID(resp)
	if resp.TLS != nil {
		out.TLSVersion, out.CipherSuite = tlsVersionID(resp.TLS.Version), tls.CipherSuiteName(resp.TLS.CipherSuite)
	}
	out.Body, out.TruncReason = decodeBody(raw, resp.Header.Get("Content-Encoding"), c.cfg.MaxDecodedBytes)
	if exceeded {
		// The wire cap is the root cause; a decode error on the cut-off
		// stream would only be its symptom.
		out.TruncReason = TruncMaxBodyBytes
	}
	out.Truncated = out.TruncReason != ""
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		out.Location = resolveLocation(u, resp.Header.Get("Location"))
	}
	return out, nil
}

// maxPooledRecord bounds the records taken from bufpool: a pooled buffer is
// rounded up to a power of two, which a caller that does not Release pays for
// in full, and the few responses past it are not worth recycling.
const maxPooledRecord = 256 << 10

func newRecord(n int) []byte {
	if n > maxPooledRecord {
		return make([]byte, n)
	}
	return bufpool.Get(n)
}

// Release gives the memory of RawResponse (and of Body, which may share it)
// back for the fetches that follow. A caller that has copied what it needs
// of them (the fetcher, into its crawl.pages record) calls it; after it,
// neither may be used. Without it the GC takes them, as it takes the rest.
func (r *Response) Release() {
	raw := r.RawResponse
	r.RawResponse, r.Body = nil, nil
	bufpool.Put(raw)
}

// Get adapts the client to robots.txt and sitemap fetching: one GET,
// returning the status, the resolved redirect target and the decoded body.
func (c *Client) Get(ctx context.Context, url string) (status int, location string, body []byte, err error) {
	resp, err := c.Do(ctx, Request{URL: url})
	if err != nil {
		return 0, "", nil, err
	}
	return resp.Status, resp.Location, resp.Body, nil
}

// requestHeaders lists what Do sends after Host, in net/http's wire order
// (User-Agent first, the rest sorted), so RawRequest matches the wire.
func (c *Client) requestHeaders(req Request) []requestHeader {
	accept := req.Accept
	if accept == "" || !httpguts.ValidHeaderFieldValue(accept) {
		accept = defaultAccept
	}
	h := make([]requestHeader, 0, 6)
	h = append(h,
		requestHeader{"User-Agent", c.cfg.UserAgent},
		requestHeader{"Accept", accept},
		requestHeader{"Accept-Encoding", acceptEncoding})
	// Validators come from earlier responses, i.e. from the web; a bad one
	// costs the conditional GET, not the fetch.
	if req.LastModified != "" && httpguts.ValidHeaderFieldValue(req.LastModified) {
		h = append(h, requestHeader{"If-Modified-Since", req.LastModified})
	}
	if req.ETag != "" && httpguts.ValidHeaderFieldValue(req.ETag) {
		h = append(h, requestHeader{"If-None-Match", req.ETag})
	}
	return h
}

// fetchError wraps a transport failure. When our deadline or the caller's
// cancellation ended the exchange, the context's error is wrapped as well,
// because net/http does not always surface it.
func (c *Client) fetchError(ctx context.Context, rawURL string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		switch Classify(err) {
		case ClassBlockedAddress, ClassDNS, ClassNoSuchHost:
		default:
			return fmt.Errorf("fetch %s: %w: %w", rawURL, cerr, err)
		}
	}
	return fmt.Errorf("fetch %s: %w", rawURL, err)
}

// resolveLocation makes a Location header absolute against the request URL;
// "" if it is missing or unparsable, or not http(s).
func resolveLocation(base *url.URL, loc string) string {
	if loc == "" {
		return ""
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return ""
	}
	abs := base.ResolveReference(ref)
	if abs.Scheme != "http" && abs.Scheme != "https" {
		return ""
	}
	return abs.String()
}
