package fetch

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestUnreachable: each way of failing to reach or speak to a server is
// recorded as what happened, an answer that came is none of them, and only
// what no retry mends counts as permanent.
func TestUnreachable(t *testing.T) {
	site := newTestSite(t)
	tlsSite := newTLSTestSite(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	dns := newFakeDNS(map[string][]string{"loop.test": {"127.0.0.1"}})
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host == "flaky.test" {
			return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
		}
		return dns.resolve(ctx, host)
	}
	open := newClient(t, func(cfg *Config) { cfg.Resolver = resolve })
	guarded := newClient(t, func(cfg *Config) { cfg.Resolver, cfg.AllowPrivate = resolve, false })
	slow := newClient(t, func(cfg *Config) { cfg.HeaderTimeout = 50 * time.Millisecond })
	siteURL, _ := url.Parse(site.URL)

	tests := []struct {
		name      string
		c         *Client
		url       string
		reason    string // Reason(Classify(err))
		permanent bool
	}{
		{"refused", open, "http://" + refused + "/", ReasonConnect, false},
		{"reset before any response", open, site.URL + "/reset", ReasonConnect, false},
		{"no answer in time", slow, site.URL + "/hang", ReasonTimeout, false},
		{"untrusted certificate", open, tlsSite.URL + "/page", ReasonTLS, true},
		{"no such host", open, "http://nx.test/", ReasonDNS, true}, // class no_such_host
		{"DNS failing for now", open, "http://flaky.test/", ReasonDNS, false},
		{"blocked address", guarded, "http://loop.test:" + siteURL.Port() + "/page", ReasonAddressBlocked, true},
		{"headers over the cap", open, site.URL + "/huge-headers", "fetch_headers_too_large", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.Do(t.Context(), Request{URL: tt.url})
			if err == nil {
				t.Fatal("Do succeeded, want an error")
			}
			if got := Reason(Classify(err)); got != tt.reason {
				t.Errorf("Reason(%q) = %q, want %q (error %v)", Classify(err), got, tt.reason, err)
			}
			if !FailureReason(tt.reason) {
				t.Errorf("FailureReason(%q) = false", tt.reason)
			}
			reason, permanent := Unreachable(Classify(err))
			wantReason := tt.reason
			if wantReason == "fetch_headers_too_large" {
				wantReason = "" // the server answered
			}
			if reason != wantReason || permanent != tt.permanent {
				t.Errorf("Unreachable = %q, %v; want %q, %v (error %v)", reason, permanent, wantReason, tt.permanent, err)
			}
		})
	}
}

// No route is a connect error too; it cannot be made on loopback, so the
// error is the one a dial returns. Like a name that does not exist, it is
// the host's fault: retried, and the host backs off.
func TestClassifyUnreachable(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		err := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
		if c, r := Classify(err), Reason(Classify(err)); c != ClassUnreachable || r != ReasonConnect || FaultOf(err) != FaultHost {
			t.Errorf("%v: class %q, reason %q, fault %v; want %q, %q, the host's", err, c, r, FaultOf(err), ClassUnreachable, ReasonConnect)
		}
	}
	if err := (&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}); FaultOf(err) != FaultHost {
		t.Errorf("%v: fault %v, want the host's", err, FaultOf(err))
	}
	if Reason("") != "" || FailureReason("robots_unavailable") || FailureReason("") {
		t.Error("no class has a reason; robots_unavailable is no fetch failure")
	}
}
