package warc

import (
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/fetch"
)

// fetchedCaptures fetches a page over HTTP/2 with TLS and one over plain
// HTTP/1.1 from loopback servers with the crawler's own client, and returns
// them as the parser hands captures to the writer: the records the
// independent readers check are then the client's real output, not a copy
// of it made by hand.
func fetchedCaptures(t *testing.T) (h2, plain Capture) {
	t.Helper()
	page := htmlPage(4 << 10)
	var (
		mu     sync.Mutex
		protos []int // the HTTP major version of each request, as the servers saw it
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.ProtoMajor)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		_, _ = w.Write(page)
	})
	tlsSrv := httptest.NewUnstartedServer(handler)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	plainSrv := httptest.NewServer(handler)
	t.Cleanup(plainSrv.Close)

	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	c, err := fetch.New(fetch.Config{
		UserAgent: "warc-test/1.0 (+http://example.test/bot)", AllowPrivate: true, RootCAs: roots,
		ConnectTimeout: 10 * time.Second, TotalTimeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	get := func(url string) Capture {
		t.Helper()
		resp, err := c.Do(t.Context(), fetch.Request{URL: url})
		if err != nil {
			t.Fatalf("fetch %s: %v", url, err)
		}
		return Capture{
			TargetURI: resp.URL, Date: resp.FetchedAt, IP: resp.RemoteIP,
			RawRequest: resp.RawRequest, RawResponse: resp.RawResponse,
			Protocol: resp.Protocol, TLSVersion: resp.TLSVersion, CipherSuite: resp.CipherSuite,
		}
	}
	h2, plain = get(tlsSrv.URL+"/h2"), get(plainSrv.URL+"/plain")
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(protos, []int{2, 1}) {
		t.Fatalf("servers saw HTTP/%v, want HTTP/2 then HTTP/1", protos)
	}
	return h2, plain
}

// TestWriteCaptureProtocol checks the WARC-Protocol and WARC-Cipher-Suite
// fields of every record of an exchange, for a capture fetched over HTTP/2
// with TLS, one over plain HTTP/1.1, and one without connection details
// (a fetch result queued before they were recorded).
func TestWriteCaptureProtocol(t *testing.T) {
	h2, plain := fetchedCaptures(t)
	if h2.Protocol != "h2" || h2.TLSVersion != "tls/1.3" || h2.CipherSuite == "" {
		t.Fatalf("h2 capture: protocol %q, TLS %q, cipher suite %q; want h2, tls/1.3 and a suite", h2.Protocol, h2.TLSVersion, h2.CipherSuite)
	}
	if plain.Protocol != "http/1.1" || plain.TLSVersion != "" || plain.CipherSuite != "" {
		t.Fatalf("plain capture: protocol %q, TLS %q, cipher suite %q; want http/1.1 only", plain.Protocol, plain.TLSVersion, plain.CipherSuite)
	}
	unknown := plain
	unknown.Protocol = ""
	for _, tt := range []struct {
		name          string
		c             Capture
		wantProtocols []string
	}{
		{"h2 over TLS", h2, []string{"h2", "tls/1.3"}},
		{"plain HTTP/1.1", plain, []string{"http/1.1"}},
		{"unknown", unknown, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w := newWriter(t, SegmentConfig{Dir: dir})
			orig, err := w.WriteCapture(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			rev := tt.c
			rev.Date = rev.Date.Add(time.Hour)
			if _, err := w.WriteRevisit(rev, orig, tt.c.TargetURI, tt.c.Date); err != nil {
				t.Fatal(err)
			}
			nm := rev
			nm.RawResponse = notModifiedResponse(`"v1"`)
			if _, err := w.WriteNotModified(nm, orig, tt.c.TargetURI, tt.c.Date); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs := readPath(t, segments(t, dir)[0]).recs
			// warcinfo, request, response, revisit, request, revisit
			if got := types(recs); len(got) != 6 {
				t.Fatalf("records %v", got)
			}
			if got := recs[0].Header.Values(FieldProtocol); got != nil {
				t.Errorf("warcinfo has WARC-Protocol %q; the extension forbids it there", got)
			}
			for _, rec := range recs[1:] {
				if got := rec.Header.Values(FieldProtocol); !slices.Equal(got, tt.wantProtocols) {
					t.Errorf("%s record: WARC-Protocol %q, want %q", rec.Type(), got, tt.wantProtocols)
				}
				checkFields(t, rec, map[string]string{FieldCipherSuite: tt.c.CipherSuite, FieldIPAddress: tt.c.IP})
			}
		})
	}
}

// TestCaptureRefusesBadProtocol: a WARC-Protocol or WARC-Cipher-Suite value
// must be one name, or readers would take it for a list or something else.
func TestCaptureRefusesBadProtocol(t *testing.T) {
	for name, c := range map[string]Capture{
		"list":              {Protocol: "h2, tls/1.3"},
		"field injection":   {Protocol: "h2\r\nWARC-Type: resource"},
		"padded":            {TLSVersion: " tls/1.3"},
		"cipher suite text": {CipherSuite: "TLS AES"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w := newWriter(t, SegmentConfig{Dir: dir})
			c.TargetURI, c.RawResponse = "https://example.com/", rawResponse("", nil)
			if _, err := w.WriteCapture(c); !errors.Is(err, ErrInvalidRecord) {
				t.Errorf("WriteCapture: %v, want ErrInvalidRecord", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
				t.Errorf("refused capture left %v", files)
			}
		})
	}
}
