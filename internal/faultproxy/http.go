package faultproxy

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Faults is what an HTTP proxy does to the requests it is told to disturb.
// The zero value disturbs nothing.
type Faults struct {
	// Match selects the requests to disturb; nil matches none.
	Match func(*http.Request) bool
	// FailShare of the matched requests get a 500; half of them before
	// anything reaches the upstream, half after the upstream has carried the
	// request out (the client cannot tell that it succeeded).
	FailShare float64
	// Delay holds each other matched request this long before passing it on.
	Delay time.Duration
}

// Uploads matches the requests that write objects to an S3 server: PUT
// (objects, parts) and POST (multipart uploads' creation and completion).
func Uploads(r *http.Request) bool { return r.Method == http.MethodPut || r.Method == http.MethodPost }

// HTTPStats counts what an HTTP proxy did.
type HTTPStats struct {
	Requests      int64 // every request
	Matched       int64 // requests Faults.Match selected while faults were on
	FailedBefore  int64 // 500s that never reached the upstream
	FailedAfter   int64 // 500s sent after the upstream carried the request out
	Delayed       int64
	UpstreamError int64 // upstream unreachable: 502
}

// HTTP is a reverse proxy on a loopback port in front of one upstream.
type HTTP struct {
	srv   *http.Server
	ln    net.Listener
	proxy *httputil.ReverseProxy

	mu     sync.Mutex
	faults Faults
	rng    *rand.Rand

	requests, matched, failedBefore, failedAfter, delayed, upstreamErr atomic.Int64
}

// ListenHTTP starts a proxy to upstream (http://host:port) on a free
// 127.0.0.1 port, with no faults. The upstream sees the requests as the
// client sent them, Host header included, so signed requests (S3's SigV4)
// stay valid. seed makes the choice of the failing requests repeatable.
func ListenHTTP(upstream string, seed uint64) (*HTTP, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &HTTP{ln: ln, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // signed with the proxy's address
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			p.upstreamErr.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's endpoint, http://127.0.0.1:port.
func (p *HTTP) URL() string { return "http://" + p.ln.Addr().String() }

// Set replaces the faults; Faults{} heals.
func (p *HTTP) Set(f Faults) {
	p.mu.Lock()
	p.faults = f
	p.mu.Unlock()
}

// Stats returns the counts so far.
func (p *HTTP) Stats() HTTPStats {
	return HTTPStats{Requests: p.requests.Load(), Matched: p.matched.Load(), FailedBefore: p.failedBefore.Load(),
		FailedAfter: p.failedAfter.Load(), Delayed: p.delayed.Load(), UpstreamError: p.upstreamErr.Load()}
}

// Close stops the proxy; requests in flight are cut.
func (p *HTTP) Close() error { return p.srv.Close() }

// verdict is what happens to one request.
type verdict int

const (
	forward verdict = iota
	failBefore
	failAfter
	delay
)

func (p *HTTP) decide(r *http.Request) (verdict, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.faults
	if f.Match == nil || !f.Match(r) {
		return forward, 0
	}
	p.matched.Add(1)
	if x := p.rng.Float64(); x < f.FailShare {
		if x < f.FailShare/2 {
			return failBefore, 0
		}
		return failAfter, 0
	}
	if f.Delay > 0 {
		return delay, f.Delay
	}
	return forward, 0
}

func (p *HTTP) serve(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	v, d := p.decide(r)
	switch v {
	case failBefore:
		p.failedBefore.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // the server read it, then failed
		internalError(w)
		return
	case failAfter:
		p.failedAfter.Add(1)
		p.proxy.ServeHTTP(discard{}, r)
		internalError(w)
		return
	case delay:
		p.delayed.Add(1)
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	p.proxy.ServeHTTP(w, r)
}

// internalError answers as S3 does when it fails a request.
func internalError(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+
		`<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>`)
}

// discard is a ResponseWriter that drops the upstream's answer.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
