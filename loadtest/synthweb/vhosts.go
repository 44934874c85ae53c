package synthweb

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// vhosts serves the hosts of one loopback address by the Host header, with
// Config.Addresses.
type vhosts struct {
	web    *Web
	addr   string           // the listener's IP
	port   string           // the listener's port
	byName map[string]*host // host name -> host, for the hosts on addr only
}

// kindMisdirected is Request.Kind of a misdirected request.
const kindMisdirected = "misdirected"

// misdirectedAnswer is the answer to a Host header that names no host of
// the address: RFC 9110 §15.5.20, "the request was directed at a server
// that is unable or unwilling to produce an authoritative response".
var misdirectedAnswer = newResource(http.StatusMisdirectedRequest, kindMisdirected, ctHTML,
	[]byte("<!DOCTYPE html>\n<html lang=\"en\"><title>Misdirected</title><p>No such host on this address.</p></html>\n"))

func (v *vhosts) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if h := v.lookup(r.Host); h != nil {
		h.ServeHTTP(rw, r)
		return
	}
	w := v.web
	start := w.clock()
	w.handling.RLock()
	defer w.handling.RUnlock()
	if w.stopped {
		return
	}
	key := strings.ToLower(r.Host)
	target, _ := CanonicalTarget(r.RequestURI)
	rec := newRecord(r, key, v.addr, key+target, start)
	w.send(rw, misdirectedAnswer, &rec)
	rec.Status, rec.Kind = misdirectedAnswer.status, misdirectedAnswer.kind
	w.record(rec)
}

// lookup returns the host a Host header names on this address, or nil.
// The name is matched without regard to case or a trailing dot; a port,
// when given, must be the listener's.
func (v *vhosts) lookup(hostport string) *host {
	name, port, err := net.SplitHostPort(hostport)
	if err != nil {
		name, port = hostport, ""
	}
	h := v.byName[strings.TrimSuffix(strings.ToLower(name), ".")]
	if h == nil || port != "" && port != v.port {
		return nil
	}
	return h
}

// HostsFile returns the name of every host, and of the dead seed with
// Features, in /etc/hosts format, one "ADDRESS NAME" line each, host 0
// first, after a "#" comment line:
//
//	# synthweb: 200 host names on 1 loopback address
//	127.0.1.1 h0001.synth.test
//	127.0.1.1 h0002.synth.test
//
// A crawler given this file (its -hosts-file) resolves every host of the
// web without DNS. Without Config.Addresses there are no names and the
// file is a comment only.
func (w *Web) HostsFile() string {
	var b strings.Builder
	if w.cfg.Addresses == 0 {
		b.WriteString("# synthweb: every host is addressed by its IP; no names to resolve\n")
		return b.String()
	}
	fmt.Fprintf(&b, "# synthweb: %d host names on %d loopback %s\n",
		len(w.hosts), w.cfg.Addresses, plural(w.cfg.Addresses, "address", "addresses"))
	for _, h := range w.hosts {
		b.WriteString(h.addr + " " + h.name + "\n")
	}
	if w.cfg.Features {
		b.WriteString("# the dead seed: nothing listens there\n")
		b.WriteString(w.deadAddr + " " + w.deadName + "\n")
	}
	return b.String()
}

// WriteHostsFile writes HostsFile to path.
func (w *Web) WriteHostsFile(path string) error {
	if err := os.WriteFile(path, []byte(w.HostsFile()), 0o644); err != nil {
		return fmt.Errorf("write hosts file %s: %w", path, err)
	}
	return nil
}

// DialContext dials addr ("host:port") as HostsFile resolves it: a name of
// the web goes to its loopback address, any other name under NameDomain
// fails without a DNS query, and everything else is dialled as given. Set
// it as an http.Transport's DialContext to fetch from a web with
// Config.Addresses in a Go test.
func (w *Web) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if name, port, err := net.SplitHostPort(addr); err == nil {
		name = strings.TrimSuffix(strings.ToLower(name), ".")
		if ip, ok := w.names[name]; ok {
			addr = net.JoinHostPort(ip, port)
		} else if strings.HasSuffix(name, "."+NameDomain) || name == NameDomain {
			return nil, fmt.Errorf("dial %s: %w", addr, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true})
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
