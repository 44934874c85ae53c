package trapweb

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Handler serves the web by Host header (port ignored, case and a trailing
// dot too) and request URI: the Status, Location, Content-Type and Body of
// Get for "http://<host>[:Port]<request URI>". A Host naming no host of the
// web is answered 421 Misdirected Request.
func (w *Web) Handler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		name := r.Host
		if h, _, err := net.SplitHostPort(name); err == nil {
			name = h
		}
		name = strings.TrimSuffix(strings.ToLower(name), ".")
		h := w.byName[name]
		if h == nil {
			http.Error(rw, "misdirected request: no such host", http.StatusMisdirectedRequest)
			return
		}
		p := w.Get("http://" + h.auth + r.URL.RequestURI())
		hd := rw.Header()
		hd.Set("Content-Type", p.ContentType)
		hd.Set("Content-Length", strconv.Itoa(len(p.Body)))
		if p.Location != "" {
			hd.Set("Location", p.Location)
		}
		rw.WriteHeader(p.Status)
		if r.Method != http.MethodHead {
			_, _ = rw.Write(p.Body)
		}
	})
}
