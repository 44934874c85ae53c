package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/crawlcluster/crawler/internal/hostile"
)

// TestFaultOf: a server's malformed answer is permanent and its own; a
// broken-off body is the URL's; an unreachable or refusing host is the
// host's.
func TestFaultOf(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostile.Write(w, r.URL.Path[1:]) {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// A port nothing listens on: refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/"
	l.Close()

	c := newClient(t, nil)
	for _, tc := range []struct {
		url  string
		want Fault
	}{
		{srv.URL + "/invalid-status", FaultPermanent},
		{srv.URL + "/broken-chunking", FaultPermanent},
		{srv.URL + "/huge-headers", FaultPermanent},
		{srv.URL + "/malformed-header", FaultPermanent},
		{srv.URL + "/cut-body", FaultURL},
		{refused, FaultHost},
	} {
		_, err := c.Do(context.Background(), Request{URL: tc.url})
		if err == nil {
			t.Errorf("%s: no error", tc.url)
			continue
		}
		if got := FaultOf(err); got != tc.want {
			t.Errorf("%s: FaultOf(%v) = %v, want %v (class %s)", tc.url, err, got, tc.want, Classify(err))
		}
	}
}
