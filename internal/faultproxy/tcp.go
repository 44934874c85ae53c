package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Mode is what a TCP proxy does with its connections.
type Mode int

const (
	// Pass forwards bytes both ways.
	Pass Mode = iota
	// Refuse resets every open connection and each new one at once, as a
	// host whose server is down answers (connection refused or reset).
	Refuse
	// Blackhole moves no byte either way, on open connections and new ones,
	// which are accepted and then hang: a network partition, where packets
	// are dropped and nothing tells the client. Back in Pass, the connections
	// carry on with what was held, as TCP does when the partition heals.
	Blackhole
)

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Refuse:
		return "refuse"
	case Blackhole:
		return "blackhole"
	}
	return "unknown"
}

// TCP is a proxy on a loopback port in front of one upstream address.
type TCP struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	mode   Mode
	change chan struct{} // closed and replaced at every mode change
	conns  map[*link]bool
	closed bool
	wg     sync.WaitGroup
}

// link is one proxied connection.
type link struct{ client, server net.Conn }

// reset closes both ends with an RST rather than a FIN, as a server that
// went away does.
func (l *link) reset() {
	for _, c := range []net.Conn{l.client, l.server} {
		if c == nil {
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}

// ListenTCP starts a proxy to upstream on a free 127.0.0.1 port, in Pass mode.
func ListenTCP(upstream string) (*TCP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &TCP{ln: ln, upstream: upstream, change: make(chan struct{}), conns: map[*link]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, 127.0.0.1:port.
func (p *TCP) Addr() string { return p.ln.Addr().String() }

// Mode returns the current mode.
func (p *TCP) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Set switches to mode m: Refuse resets the open connections now; leaving
// Blackhole lets the held ones move again (or resets them, for Refuse).
func (p *TCP) Set(m Mode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.mode == m {
		return
	}
	p.mode = m
	close(p.change)
	p.change = make(chan struct{})
	if m == Refuse {
		for l := range p.conns {
			l.reset()
			delete(p.conns, l)
		}
	}
}

// Close stops the proxy and resets every connection.
func (p *TCP) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.change)
	for l := range p.conns {
		l.reset()
		delete(p.conns, l)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *TCP) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// gate waits while the proxy is in Blackhole mode and reports whether bytes
// may move: false once the connection must go (Refuse, Close).
func (p *TCP) gate() bool {
	for {
		p.mu.Lock()
		mode, change, closed := p.mode, p.change, p.closed
		p.mu.Unlock()
		switch {
		case closed || mode == Refuse:
			return false
		case mode == Pass:
			return true
		}
		<-change
	}
}

func (p *TCP) serve(client net.Conn) {
	defer p.wg.Done()
	l := &link{client: client}
	if !p.gate() {
		l.reset()
		return
	}
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		l.reset() // upstream down: the client sees a reset
		return
	}
	l.server = server
	p.mu.Lock()
	if p.closed || p.mode == Refuse {
		p.mu.Unlock()
		l.reset()
		return
	}
	p.conns[l] = true
	p.mu.Unlock()

	// Each direction ends on its source's EOF, passed on as a half close,
	// or on an error or a reset, which ends the connection.
	done := make(chan bool, 2) // true: ended by EOF
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			// What was read, even the EOF, waits out a Blackhole.
			if !p.gate() {
				done <- false
				return
			}
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					done <- false
					return
				}
			}
			if errors.Is(err, io.EOF) {
				_ = dst.(*net.TCPConn).CloseWrite()
				done <- true
				return
			}
			if err != nil {
				done <- false
				return
			}
		}
	}
	go pipe(server, client)
	go pipe(client, server)
	if clean := <-done; !clean {
		l.reset()
	}
	<-done
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
	_ = client.Close()
	_ = server.Close()
}
