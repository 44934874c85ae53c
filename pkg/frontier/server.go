package frontier

import (
	"container/heap"
	"time"
)

// Politeness per server. Many host names may share one machine (shared
// hosting, a blog platform's subdomains, a CDN edge): 500 names at one
// request per second each is 500 requests per second to one server whatever
// each name's robots.txt allows. Beside its own schedule, a host whose
// server address is known (Lease.Bind) is held to its server's: at most
// Config.ServerConcurrency leases in flight to the server and
// Config.ServerDelay between two of them starting.
//
// Hosts that find their server busy queue on it, first come first served,
// and are released one per free slot, so a server with hundreds of names
// costs one heap operation per request, not one per name.

// server is the shared schedule of the hosts on one address (or IPv6 /64).
type server struct {
	key       string
	inFlight  int       // leases holding a slot
	pending   int       // hosts released from blocked and not yet leased
	nextStart time.Time // no slot is taken before this
	blocked   []*host   // waiting for a slot, oldest first
	hosts     int       // hosts bound to the server
}

func (f *Frontier) serverLimited() bool { return f.cfg.ServerConcurrency > 0 }

// serverLocked returns the server of key, creating it.
func (f *Frontier) serverLocked(key string) *server {
	s := f.servers[key]
	if s == nil {
		s = &server{key: key}
		f.servers[key] = s
	}
	return s
}

// bindLocked moves h to the server of key.
func (f *Frontier) bindLocked(h *host, key string) {
	if h.srv != nil && h.srv.key == key {
		return
	}
	f.unbindLocked(h)
	h.srv = f.serverLocked(key)
	h.srv.hosts++
}

// unbindLocked detaches h from its server (the host is removed, or moved to
// another address).
func (f *Frontier) unbindLocked(h *host) {
	s := h.srv
	if s == nil {
		return
	}
	if h.blocked {
		for i, b := range s.blocked {
			if b == h {
				s.blocked = append(s.blocked[:i], s.blocked[i+1:]...)
				break
			}
		}
		h.blocked = false
	}
	if h.released {
		h.released = false
		s.pending--
		f.releaseLocked(s)
	}
	s.hosts--
	h.srv = nil
	f.dropServerLocked(s)
}

func (f *Frontier) dropServerLocked(s *server) {
	if s.hosts <= 0 && s.inFlight <= 0 && f.servers[s.key] == s {
		delete(f.servers, s.key)
	}
}

// takeSlotLocked gives a lease to h's server a slot if it has one free now.
func (f *Frontier) takeSlotLocked(s *server, now time.Time) bool {
	if s.inFlight >= f.cfg.ServerConcurrency || now.Before(s.nextStart) {
		return false
	}
	s.inFlight++
	s.nextStart = now.Add(f.cfg.ServerDelay)
	return true
}

// freeSlotLocked returns a slot and lets the next blocked host go.
func (f *Frontier) freeSlotLocked(s *server) {
	s.inFlight--
	f.releaseLocked(s)
	f.dropServerLocked(s)
}

// blockLocked queues h, out of both heaps, until its server has a slot.
func (f *Frontier) blockLocked(h *host) {
	h.blocked = true
	h.srv.blocked = append(h.srv.blocked, h)
	f.releaseLocked(h.srv)
}

// releaseLocked moves blocked hosts of s back to the waiting heap while the
// slots in use and promised leave one free, each due when the server may
// take its next request.
func (f *Frontier) releaseLocked(s *server) {
	released := false
	for s.inFlight+s.pending < f.cfg.ServerConcurrency && len(s.blocked) > 0 {
		h := s.blocked[0]
		s.blocked[0] = nil
		s.blocked = s.blocked[1:]
		h.blocked = false
		if h.count == 0 || f.hosts[h.key] != h {
			continue
		}
		h.released = true
		s.pending++
		h.polite = later(h.polite, s.nextStart)
		h.nextAllowed = later(h.nextAllowed, s.nextStart)
		heap.Push(&f.waiting, h)
		released = true
	}
	if len(s.blocked) == 0 {
		s.blocked = nil // let the backing array go
	}
	if released {
		f.wakeLocked()
	}
}

// serverTurnLocked decides whether ready host h may be leased now as far as
// its server is concerned: it takes a slot for the lease (slot true), or
// queues the host on its server (ok false).
func (f *Frontier) serverTurnLocked(h *host, now time.Time) (slot, ok bool) {
	s := h.srv
	if h.released {
		h.released = false
		s.pending--
	}
	if s == nil || !f.serverLimited() {
		return false, true
	}
	if f.takeSlotLocked(s, now) {
		return true, true
	}
	f.blockLocked(h)
	return false, false
}

// Bind tells the frontier the server (address key) the lease's host is on,
// and reports whether the request may go now: false when the server has no
// free slot, in which case the caller returns the lease unused (Done with a
// zero Outcome) and the host waits for its server. A lease already holding
// a slot on that server keeps it.
func (l *Lease) Bind(server string) bool {
	f := l.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.serverLimited() || l.returned {
		return true
	}
	f.bindLocked(l.h, server)
	s := l.h.srv
	if l.srv == s {
		return true
	}
	if l.srv != nil {
		f.freeSlotLocked(l.srv)
		l.srv = nil
	}
	if !f.takeSlotLocked(s, f.cfg.Now()) {
		return false
	}
	l.srv = s
	return true
}

// Server returns the server the lease's host is bound to, "" if none.
func (l *Lease) Server() string {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	if l.h.srv == nil {
		return ""
	}
	return l.h.srv.key
}

// ServerStats is the schedule of one server, for the stats API.
type ServerStats struct {
	Server   string
	Hosts    int // host names bound to it
	InFlight int
	Blocked  int // hosts waiting for a slot
}

// Servers returns the servers with more than one host or a host waiting.
func (f *Frontier) Servers() []ServerStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ServerStats
	for _, s := range f.servers {
		if s.hosts > 1 || len(s.blocked) > 0 {
			out = append(out, ServerStats{Server: s.key, Hosts: s.hosts, InFlight: s.inFlight, Blocked: len(s.blocked)})
		}
	}
	return out
}
