package fetch

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// requestHeader is one header the client sends, in wire order.
type requestHeader struct{ name, value string }

// rawRequest renders the request as net/http's HTTP/1.1 writer puts it on
// the wire: request line, Host, User-Agent, then the other headers sorted by
// name. Over HTTP/2 the same fields travel as HPACK frames; WARC records them
// in this HTTP/1.1 form.
func rawRequest(u *url.URL, headers []requestHeader) []byte {
	n := len("GET  HTTP/1.1\r\nHost: \r\n\r\n") + len(u.Host) + len(u.RequestURI())
	for _, h := range headers {
		n += len(h.name) + len(h.value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, "GET "...)
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	b = append(b, "\r\n"...)
	for _, h := range headers {
		b = append(b, h.name...)
		b = append(b, ": "...)
		b = append(b, h.value...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// responseHead renders the status line and headers of resp for a WARC
// response record whose payload is a body of bodyLen bytes as received.
// The body is stored de-chunked, so Transfer-Encoding is dropped and
// Content-Length states the stored length. net/http has already
// canonicalised header names, so the original casing is not recoverable.
//
// An HTTP/2 response is rendered as HTTP/1.1, the form WARC readers parse,
// with an empty reason phrase ("HTTP/1.1 200 "): HTTP/2 carries none, and
// the "OK" net/http puts in resp.Status is made up. That is the IIPC WARC
// extension for HTTP/2, and what Common Crawl's and StormCrawler's h2
// records hold; the record's WARC-Protocol field says h2.
func responseHead(resp *http.Response, bodyLen int) []byte {
	proto := "HTTP/1.1"
	if resp.ProtoMajor == 1 && resp.ProtoMinor == 0 {
		proto = "HTTP/1.0"
	}
	code := strconv.Itoa(resp.StatusCode)
	reason := ""
	if resp.ProtoMajor < 2 {
		reason = strings.TrimSpace(strings.TrimPrefix(resp.Status, code))
		if reason == "" {
			reason = http.StatusText(resp.StatusCode)
		}
	}

	names := make([]string, 0, len(resp.Header))
	n := len(proto) + len(code) + len(reason) + 40
	for name, vs := range resp.Header {
		switch http.CanonicalHeaderKey(name) {
		case "Transfer-Encoding", "Content-Length":
			continue
		}
		names = append(names, name)
		for _, v := range vs {
			n += len(name) + len(v) + 4
		}
	}
	slices.Sort(names)

	b := make([]byte, 0, n)
	b = append(b, proto...)
	b = append(b, ' ')
	b = append(b, code...)
	b = append(b, ' ')
	b = append(b, reason...)
	b = append(b, "\r\n"...)
	for _, name := range names {
		for _, v := range resp.Header[name] {
			b = append(b, name...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(bodyLen), 10)
	return append(b, "\r\n\r\n"...)
}

// protocolID names the HTTP version of resp as the WARC-Protocol field does;
// "" for a version the registry has no name for.
func protocolID(resp *http.Response) string {
	switch {
	case resp.ProtoMajor == 2 && resp.TLS != nil:
		return "h2"
	case resp.ProtoMajor == 2:
		return "h2c"
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 1:
		return "http/1.1"
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 0:
		return "http/1.0"
	}
	return ""
}

// tlsVersionID names a TLS version as the WARC-Protocol field does ("tls/1.3",
// where tls.VersionName says "TLS 1.3"); "" for one it has no name for.
func tlsVersionID(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "tls/1.3"
	case tls.VersionTLS12:
		return "tls/1.2"
	case tls.VersionTLS11:
		return "tls/1.1"
	case tls.VersionTLS10:
		return "tls/1.0"
	}
	return ""
}
