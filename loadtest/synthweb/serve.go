package synthweb

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Trap names, as in Request.Trap and Report.TrapRequests.
const (
	trapCalendar      = "calendar"       // /calendar?month=YYYY-MM, linking the months around it
	trapRepeat        = "repeat"         // /trap/a/, /trap/a/a/, ...
	trapDepth         = "depth"          // /deep/1/, /deep/1/2/, ...
	trapSession       = "session"        // any request carrying sid, sessionid or jsessionid
	trapRedirectChain = "redirect_chain" // /chain/7 and /chain/8, past 5 hops from /chain/1
	trapRedirectLoop  = "redirect_loop"  // /loop/a <-> /loop/b
)

const (
	robotsPath = "/robots.txt"

	// slowDelay is how long /slow.html makes the crawler wait.
	slowDelay = 800 * time.Millisecond

	// retryAfter is what the one 429 of /err/429.html asks for.
	retryAfter = time.Second
)

var (
	notFound = newResource(http.StatusNotFound, "notfound", ctHTML,
		[]byte("<!DOCTYPE html>\n<html lang=\"en\"><title>Not found</title><p>No such page.</p></html>\n"))

	tooManyRequests = func() *resource {
		r := newResource(http.StatusTooManyRequests, "error", ctHTML,
			[]byte("<!DOCTYPE html>\n<html lang=\"en\"><title>Slow down</title><p>Too many requests.</p></html>\n"))
		r.header["Retry-After"] = []string{strconv.Itoa(int(retryAfter / time.Second))}
		return r
	}()
)

// ServeHTTP answers one request and appends it to the log. Pre-rendered
// resources, robots.txt included, cost a map look-up and one write; only
// the traps and the error pages of the special hosts are built per request.
func (h *host) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := h.web
	start := w.clock()
	w.handling.RLock()
	defer w.handling.RUnlock()
	if w.stopped {
		return // Close has returned; the connection is gone too
	}

	target, session := CanonicalTarget(r.RequestURI)
	rec := newRecord(r, h.key, h.addr, h.key+target, start)
	res := h.static[target]
	if res != nil && res.live != nil {
		res = res.live(r, start)
	}
	if res == nil {
		res = h.dynamic(r.Context(), target, &rec)
	}
	if res != nil && w.cfg.Latency > 0 && !w.wait(r.Context(), w.cfg.Latency) {
		res = nil
	}
	if res == nil {
		// The handler gave up (client gone or Close): nothing was sent.
		rec.End = w.clock()
		w.record(rec)
		return
	}
	rec.Validators = res.header["Etag"] != nil || res.header["Last-Modified"] != nil
	w.send(rw, res, &rec)
	rec.Status, rec.Kind, rec.Trap = res.status, res.kind, res.trap
	if rec.Trap == "" && session {
		rec.Trap = trapSession
	}
	if rec.Trap != "" {
		rec.TrapInstance = trapInstanceID(h.key, rec.Trap)
	}
	w.record(rec)
}

// wait sleeps d unless the client goes away or the web closes first.
func (w *Web) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-w.done:
	}
	return false
}

// newRecord starts the log entry of r, which arrived at start on the
// server at addr for the host with the given key.
func newRecord(r *http.Request, key, addr, resource string, start time.Time) Request {
	return Request{
		Host:            key,
		Addr:            addr,
		Target:          r.RequestURI,
		Resource:        resource,
		Start:           start,
		UserAgent:       r.UserAgent(),
		IfNoneMatch:     r.Header["If-None-Match"] != nil,
		IfModifiedSince: r.Header["If-Modified-Since"] != nil,
	}
}

// send writes res and sets rec.End.
func (w *Web) send(rw http.ResponseWriter, res *resource, rec *Request) {
	hdr := rw.Header()
	for k, v := range res.header {
		hdr[k] = v // shared, never modified: net/http only reads header values
	}
	rw.WriteHeader(res.status)
	// A failed write means the client went away; the log still records what
	// the server answered.
	//
	// End is read before the last byte is handed to net/http, which keeps it
	// buffered until the handler returns. A crawler that waits for the whole
	// answer therefore starts its next request after End even when this
	// goroutine is descheduled between the writes, whatever the body's size.
	// (Read after the last write, End could come after the crawler's clock
	// had started its delay: a body too big for net/http's buffers leaves
	// during Write, seen as a 14 ms "violation" of a polite crawler under
	// -race on a loaded machine.)
	body := res.body
	if n := len(body); n > 1 {
		_, _ = rw.Write(body[:n-1])
		body = body[n-1:]
	}
	rec.End = w.clock()
	_, _ = rw.Write(body)
}

// dynamic answers what is not pre-rendered: traps, the one-off 429 and the
// slow page. It returns nil when it gave up without an answer, having set
// rec.Kind.
func (h *host) dynamic(ctx context.Context, target string, rec *Request) *resource {
	if h.app != nil {
		if res, ok := h.dynamicApp(ctx, target, rec); ok {
			return res
		}
		return notFound
	}
	switch h.role {
	case roleStar:
		if res := h.trapPage(target); res != nil {
			return res
		}
	case roleAgent:
		switch target {
		case "/err/429.html":
			if h.web.sent429.CompareAndSwap(false, true) {
				rec.RetryAfter = retryAfter
				return tooManyRequests
			}
			return h.page429ok
		case "/slow.html":
			t := time.NewTimer(slowDelay)
			defer t.Stop()
			select {
			case <-t.C:
				return h.slow
			case <-ctx.Done():
			case <-h.web.done:
			}
			rec.Kind = h.slow.kind
			return nil
		}
	}
	if res := h.instancePage(target); res != nil {
		return res
	}
	return notFound
}

// trapPage renders a page of one of host 1's endless URL spaces, or returns
// nil if target is not in one.
func (h *host) trapPage(target string) *resource {
	var (
		links []link
		trap  string
	)
	switch {
	case strings.HasPrefix(target, "/calendar?"):
		month, ok := strings.CutPrefix(target, "/calendar?month=")
		t, err := time.Parse("2006-01", month)
		if !ok || err != nil || t.Format("2006-01") != month {
			return nil
		}
		trap = trapCalendar
		links = []link{
			{href: "/calendar?month=" + t.AddDate(0, -1, 0).Format("2006-01"), text: "Previous month"},
			{href: "/calendar?month=" + t.AddDate(0, 1, 0).Format("2006-01"), text: "Next month"},
		}
	case strings.HasPrefix(target, "/trap/"):
		rest := target[len("/trap/"):]
		if rest == "" || len(rest)%2 != 0 {
			return nil
		}
		for i := 0; i < len(rest); i += 2 {
			if rest[i:i+2] != "a/" {
				return nil
			}
		}
		trap = trapRepeat
		links = []link{{href: "a/", text: "Again"}}
	case strings.HasPrefix(target, "/deep/"):
		rest, ok := strings.CutSuffix(target[len("/deep/"):], "/")
		if !ok {
			return nil
		}
		depth := 0
		for seg := range strings.SplitSeq(rest, "/") {
			depth++
			if seg != strconv.Itoa(depth) {
				return nil
			}
		}
		trap = trapDepth
		links = []link{{href: strconv.Itoa(depth+1) + "/", text: "Deeper"}}
	default:
		return nil
	}
	// One text per trap: its pages are near-duplicates of each other, as a
	// real calendar or nesting trap renders one template around its links.
	res := h.textResource("/trap:"+trap, 300, append(links, link{href: "/", text: "Home"}))
	res.kind, res.trap = "trap", trap
	return res
}

// buildRobots renders robots.txt (and, when it redirects, its target) from
// the host's policy, so that serving it is a map look-up like any page.
func (h *host) buildRobots() {
	p := h.robots
	switch p.status {
	case http.StatusOK:
		h.static[robotsPath] = newResource(http.StatusOK, "robots", ctText, []byte(p.text()))
	case http.StatusMovedPermanently:
		r := redirect(http.StatusMovedPermanently, p.realPath)
		r.kind = "robots"
		h.static[robotsPath] = r
		h.static[p.realPath] = newResource(http.StatusOK, "robots", ctText, []byte(p.text()))
	default:
		h.static[robotsPath] = newResource(p.status, "robots", ctText, []byte(http.StatusText(p.status)+"\n"))
	}
}
