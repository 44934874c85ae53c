package synthweb

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request as a server received it.
type Request struct {
	Host         string        // host key "127.0.X.Y:PORT", or "NAME:PORT" with Config.Addresses (misdirected: the Host header)
	Addr         string        // IP address of the server the request arrived on ("127.0.X.Y")
	Target       string        // path?query exactly as received (r.RequestURI)
	Resource     string        // Host + CanonicalTarget(Target)
	Kind         string        // "robots", "sitemap", "page", "file", "trap", "redirect", "error", "notfound", "misdirected"; app sub-resources: KindBundle, KindAPI, ...
	Trap         string        // trap the request went into (see Report.TrapRequests), else ""
	TrapInstance string        // with Trap: host key + "#" + the trap's name (one instance per trap and host)
	Start, End   time.Time     // End = when the handler finished writing
	Status       int           // status code sent; 0 when the handler gave up without answering
	UserAgent    string        // User-Agent header
	RetryAfter   time.Duration // Retry-After sent with a 429/503, else 0

	// Revalidation, for the changing web's audit.
	IfNoneMatch     bool // the request carried If-None-Match
	IfModifiedSince bool // the request carried If-Modified-Since
	Validators      bool // the answer carried an ETag or a Last-Modified
}

// Web is a running synthetic web. Its methods are safe for concurrent use.
type Web struct {
	cfg      Config
	hosts    []*host
	deadSeed string
	deadAddr string            // where nothing listens
	deadName string            // with Config.Addresses: the dead seed's host name
	names    map[string]string // with Config.Addresses: host name -> address as in HostsFile
	servers  []*http.Server
	serving  sync.WaitGroup
	done     chan struct{} // closed by Close; wakes slow handlers
	closed   sync.Once
	clock    func() time.Time
	epoch    time.Time // when serving began: the origin of the changing pages' histories
	closedAt time.Time // when Close was called: the end of the crawl for the audit

	// Handlers hold handling for reading while they run, so that Close can
	// wait for them and the log is complete once it returns; stopped (set
	// under the write lock) turns away handlers that start after that.
	handling sync.RWMutex
	stopped  bool

	mustFetch    []string
	mustNotFetch map[string]bool

	widget *host // with Config.Apps: the third-party host of the app pages' scripts, or nil

	sent429 atomic.Bool // /err/429.html answered its one 429

	logMu sync.Mutex
	log   []Request
}

// Start binds the loopback addresses (one per host, or Config.Addresses),
// renders the pages and starts serving. Close releases everything.
func Start(cfg Config) (*Web, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start synthweb: %w", err)
	}
	named := cfg.Addresses > 0
	nAddrs := cfg.Hosts
	if named {
		nAddrs = cfg.Addresses
	}
	lns, err := listenAddrs(nAddrs)
	if err != nil {
		return nil, fmt.Errorf("start synthweb: %w", err)
	}
	w := &Web{cfg: cfg, clock: cfg.clock, done: make(chan struct{}), mustNotFetch: map[string]bool{}, names: map[string]string{}}
	for i := range cfg.Hosts {
		ip, port, _ := net.SplitHostPort(lns[i%nAddrs].Addr().String())
		h := &host{web: w, idx: i, addr: ip}
		h.key = net.JoinHostPort(ip, port)
		if named {
			h.name = hostName(i)
			h.key = net.JoinHostPort(h.name, port)
			w.names[h.name] = ip
		}
		h.base = "http://" + h.key
		w.hosts = append(w.hosts, h)
	}
	_, port, _ := net.SplitHostPort(lns[0].Addr().String())
	// Nobody binds the address after the last one in use: a seed there
	// must fail to connect, and the crawler must record that and move on.
	// With names, the seed names it, so the crawler resolves it first.
	w.deadAddr = hostAddr(nAddrs)
	w.deadSeed = "http://" + net.JoinHostPort(w.deadAddr, port) + "/"
	if named {
		w.deadName = hostName(cfg.Hosts)
		w.deadSeed = "http://" + net.JoinHostPort(w.deadName, port) + "/"
		if cfg.Features { // it is a seed only then
			w.names[w.deadName] = w.deadAddr
		}
	}
	if err := w.build(); err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, fmt.Errorf("start synthweb: %w", err)
	}
	// Pages change from now on: building a large web takes a while.
	w.epoch = w.clock()
	quiet := log.New(io.Discard, "", 0)
	for k, ln := range lns {
		var handler http.Handler = w.hosts[k]
		if named {
			ip, port, _ := net.SplitHostPort(ln.Addr().String())
			vh := &vhosts{web: w, addr: ip, port: port, byName: map[string]*host{}}
			for i := k; i < len(w.hosts); i += nAddrs {
				vh.byName[w.hosts[i].name] = w.hosts[i]
			}
			handler = vh
		}
		srv := &http.Server{
			Addr:              ln.Addr().String(),
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          quiet,
		}
		w.servers = append(w.servers, srv)
		w.serving.Add(1)
		go func() {
			defer w.serving.Done()
			_ = srv.Serve(ln) // returns ErrServerClosed after Close
		}()
	}
	return w, nil
}

// NameDomain is the domain under which the hosts are named with
// Config.Addresses. It is under .test, reserved by RFC 2606 and RFC 6761
// for testing, so no real server can ever be contacted by mistake.
const NameDomain = "synth.test"

// hostName is the DNS name of host i with Config.Addresses: host 0 is
// h0001.synth.test, as host 0's address is 127.0.1.1.
func hostName(i int) string {
	return fmt.Sprintf("h%04d.%s", i+1, NameDomain)
}

// hostAddr is loopback address i: 127.0.1.1, 127.0.1.2, ..., 127.0.1.250,
// 127.0.2.1, ... Host i is on address i, or on address i mod
// Config.Addresses. The plan is IPv4 because Linux routes all of 127/8
// to lo without any set-up, while IPv6 has the one loopback address ::1;
// nothing else assumes IPv4 (addresses are joined with net.JoinHostPort,
// the hosts file and Request.Addr take any IP, and the audit counts an
// IPv6 /64 as one server, as the crawler does).
func hostAddr(i int) string {
	return "127.0." + strconv.Itoa(1+i/250) + "." + strconv.Itoa(1+i%250)
}

// listenAddrs binds n addresses on one shared port if it can, else one
// port each.
func listenAddrs(n int) ([]net.Listener, error) {
	closeAll := func(lns []net.Listener) {
		for _, ln := range lns {
			ln.Close()
		}
	}
	for range 10 {
		first, err := net.Listen("tcp", net.JoinHostPort(hostAddr(0), "0"))
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", hostAddr(0), err)
		}
		_, port, _ := net.SplitHostPort(first.Addr().String())
		lns := []net.Listener{first}
		for i := 1; i < n; i++ {
			ln, err := net.Listen("tcp", net.JoinHostPort(hostAddr(i), port))
			if err != nil {
				break
			}
			lns = append(lns, ln)
		}
		if len(lns) == n {
			return lns, nil
		}
		closeAll(lns)
	}
	var lns []net.Listener
	for i := range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(hostAddr(i), "0"))
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("listen on %s: %w", hostAddr(i), err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// Close stops every server, aborting requests in flight, and returns once
// every handler has returned, so the request log is complete and stays
// readable.
func (w *Web) Close() error {
	var errs []error
	w.closed.Do(func() {
		closedAt := w.clock()
		// Connections go first: a slow handler woken by done then has no
		// connection left to send an empty answer on.
		for _, s := range w.servers {
			if err := s.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs = append(errs, fmt.Errorf("close %s: %w", s.Addr, err))
			}
		}
		close(w.done)
		w.serving.Wait()
		w.handling.Lock()
		w.stopped = true
		w.closedAt = closedAt
		w.handling.Unlock()
	})
	return errors.Join(errs...)
}

// Hosts returns the host keys ("127.0.X.Y:PORT", or "NAME:PORT" with
// Config.Addresses), host 0 first.
func (w *Web) Hosts() []string {
	out := make([]string, len(w.hosts))
	for i, h := range w.hosts {
		out[i] = h.key
	}
	return out
}

// Seeds returns every host's home page URL and, with Features, one URL on a
// loopback address where nothing listens (by a name the hosts file maps to
// it, with Config.Addresses).
func (w *Web) Seeds() []string {
	out := make([]string, 0, len(w.hosts)+1)
	for _, h := range w.hosts {
		out = append(out, h.base+"/")
	}
	if w.cfg.Features {
		out = append(out, w.deadSeed)
	}
	return out
}

// Requests returns a copy of the request log in order of completion.
func (w *Web) Requests() []Request {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	return slices.Clone(w.log)
}

// MustFetch returns the resource ids a correct crawler fetches, sorted.
func (w *Web) MustFetch() []string { return slices.Clone(w.mustFetch) }

// MustNotFetch returns the resource ids a correct crawler never requests
// (nofollow-only targets, robots-disallowed pages, over-long URLs), sorted.
func (w *Web) MustNotFetch() []string {
	out := make([]string, 0, len(w.mustNotFetch))
	for r := range w.mustNotFetch {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func (w *Web) record(r Request) {
	w.logMu.Lock()
	w.log = append(w.log, r)
	w.logMu.Unlock()
}
