package fetcher

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/fetch"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// TestFailureReasonsOfHostileHosts: a seed whose host cannot be reached is
// recorded with what happened, on the URL and on the host's robots.txt
// entry, never as robots_unavailable; one host per case, on loopback. A
// failure no retry can mend (a name that does not exist, an untrusted
// certificate, a blocked address) gives the seed up at the first robots.txt
// fetch: -robots-max-failures is 5 and the retry an hour away there, so only
// that can have ended it. A refused port is retried as before.
func TestFailureReasonsOfHostileHosts(t *testing.T) {
	var guarded, answered atomic.Int64 // requests that reached the servers behind the TLS and guard cases; the others'
	count := func(n *atomic.Int64, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); h.ServeHTTP(w, r) })
	}
	page := count(&guarded, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("<html>hi</html>"))
	}))
	plain := httptest.NewServer(page)
	t.Cleanup(plain.Close)
	untrusted := httptest.NewUnstartedServer(page)
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // its handshakes fail on purpose
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	flaky := httptest.NewServer(count(&answered, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0) // an RST, not a FIN
				conn.Close()
			}
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
	})))
	t.Cleanup(flaky.Close)
	redirecting := httptest.NewServer(count(&answered, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://nx.test/robots.txt", http.StatusMovedPermanently)
	})))
	t.Cleanup(redirecting.Close)
	port := func(srv *httptest.Server) string { return srv.URL[strings.LastIndexByte(srv.URL, ':'):] }
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host == "inside.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	final := func(c *Config) { c.RobotsMaxFails, c.RobotsRetry = 5, time.Hour }

	tests := []struct {
		name     string
		url      string
		cfg      func(*Config)
		reason   string
		robots   string // the host's robots.txt entry's FailureReason
		failures int    // robots.txt fetches that failed, at least
	}{
		{"untrusted certificate", untrusted.URL + "/page", final, fetch.ReasonTLS, fetch.ReasonTLS, 1},
		{"unresolvable name", "http://nx.test/page", final, fetch.ReasonDNS, fetch.ReasonDNS, 1},
		{"blocked address", "http://inside.test" + port(plain) + "/page",
			func(c *Config) { final(c); c.Fetch.AllowPrivate = false }, fetch.ReasonAddressBlocked, fetch.ReasonAddressBlocked, 1},
		{"refused port", "http://" + refused + "/page", nil, fetch.ReasonConnect, fetch.ReasonConnect, 2},
		// The hop's answer reaches the host's owner as a record: the class
		// travels, and says as much as the error.
		{"robots.txt redirected to an unresolvable name", redirecting.URL + "/page", final, fetch.ReasonDNS, fetch.ReasonDNS, 1},
		{"page reset", flaky.URL + "/reset", nil, fetch.ReasonConnect, "", 0},
		{"page without an answer", flaky.URL + "/hang", func(c *Config) { c.Fetch.HeaderTimeout = 100 * time.Millisecond }, fetch.ReasonTimeout, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := testenv.New(t)
			cfg := testConfig()
			cfg.Fetch.Resolver = resolve
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			_, stop := startFetcher(t, e, cfg)
			t.Cleanup(func() { stop() })
			host := urlnorm.Authority(tt.url)
			rec := urlRecord(t, queue.URL{URL: tt.url, Seed: true}, queue.PartitionOf(host))
			if err := e.Kafka.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var u *store.URL
			testenv.Eventually(t, 20*time.Second, "the seed given up", func() bool {
				info, err := e.DB.URLInfo(ctx, tt.url)
				u = info.URL
				return err == nil && u != nil && u.State == store.StateFailed
			})
			if u.Reason != tt.reason {
				t.Errorf("seed failed with %q, want %q", u.Reason, tt.reason)
			}
			var entry *robots.Entry
			testenv.Eventually(t, 10*time.Second, "the host's robots.txt entry saved", func() bool {
				h, err := e.DB.Host(ctx, host)
				entry = nil
				if err == nil && len(h.Robots) > 0 {
					entry = &robots.Entry{}
					if entry.UnmarshalBinary(h.Robots) != nil {
						entry = nil
					}
				}
				return entry != nil && entry.Failures >= tt.failures
			})
			if got := entry.FailureReason(); got != tt.robots {
				t.Errorf("host's robots.txt failed for %q (%s), want %q", got, entry.Error, tt.robots)
			}
			if tt.failures == 1 && entry.Failures != 1 {
				t.Errorf("robots.txt failed %d times, want the seed given up at the first", entry.Failures)
			}
			if tt.robots == "" && answered.Load() == 0 {
				t.Error("the page's server saw no request")
			}
		})
	}
	// From the servers' side: the blocked address and the untrusted server
	// never had a request.
	if n := guarded.Load(); n != 0 {
		t.Errorf("%d requests reached the blocked address or passed the untrusted certificate", n)
	}

	t.Run("refused port is retried", func(t *testing.T) {
		// A refused connection may be a server restarting: with
		// -robots-max-failures 5 its first failure gives nothing up.
		e := testenv.New(t)
		cfg := testConfig()
		final(&cfg)
		_, stop := startFetcher(t, e, cfg)
		t.Cleanup(func() { stop() })
		u := "http://" + refused + "/page"
		host := urlnorm.Authority(u)
		if err := e.Kafka.ProduceSync(context.Background(), urlRecord(t, queue.URL{URL: u, Seed: true}, queue.PartitionOf(host))).FirstErr(); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		testenv.Eventually(t, 20*time.Second, "the host's failed robots.txt entry saved", func() bool {
			h, err := e.DB.Host(ctx, host)
			var entry robots.Entry
			return err == nil && entry.UnmarshalBinary(h.Robots) == nil && entry.Failures == 1 && entry.Reason == fetch.ReasonConnect
		})
		if info, err := e.DB.URLInfo(ctx, u); err != nil || info.URL == nil || info.URL.State != store.StateQueued {
			t.Errorf("seed after one refused robots.txt fetch: %+v, %v; want it still queued", info.URL, err)
		}
	})
}
