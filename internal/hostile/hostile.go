// Package hostile serves the broken answers of hostile or buggy servers, for
// tests of how the crawler records and schedules them: raw bytes written on
// the hijacked connection, then the connection closed.
package hostile

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Answers maps a case name to the raw bytes a server sends for it.
var Answers = map[string]string{
	// A status line that is not one.
	"invalid-status": "HTTP/1.1 OK-ish\r\nContent-Length: 2\r\n\r\nhi",
	// A chunk size that is not hexadecimal.
	"broken-chunking": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n",
	// A header block over any client's limit (net/http's default is 1 MiB;
	// the crawler's is smaller).
	"huge-headers": "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("b", 2<<20) + "\r\nContent-Length: 2\r\n\r\nhi",
	// A header line without a colon.
	"malformed-header": "HTTP/1.1 200 OK\r\nthis is no header\r\nContent-Length: 2\r\n\r\nhi",
	// A body that stops short of its Content-Length.
	"cut-body": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n<html>only part",
}

// Write sends the raw answer of case name on w's hijacked connection and
// closes it. It reports false for an unknown case, having written nothing.
func Write(w http.ResponseWriter, name string) bool {
	raw, ok := Answers[name]
	if !ok {
		return false
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(fmt.Sprintf("hostile: hijack: %v", err))
	}
	defer conn.Close()
	_, _ = buf.WriteString(raw)
	_ = buf.Flush()
	return true
}

// ServeOn starts h on a loopback address of its own (ip, e.g. 127.0.3.7),
// so that each host of a test is its own server for the per-server limits,
// as hosts are on the web. It skips the test if the address cannot be
// bound.
func ServeOn(t testing.TB, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
