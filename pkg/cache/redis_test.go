package cache_test

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/redistest"
	"github.com/crawlcluster/crawler/pkg/cache"
)

// TestRedisOutage runs a cache through a proxy that first holds every byte
// (a hung server or a partitioned network), then drops every connection (a
// crashed server), then recovers: calls fail within their deadline while
// Redis is away and work again when it is back.
func TestRedisOutage(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr()
	const timeout = 300 * time.Millisecond
	c := open(t, u.String(), cache.WithTimeout(timeout))
	if err := c.Set(ctx, "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}

	bounded := func(what string, call func() error) {
		t.Helper()
		start := time.Now()
		err := call()
		if err == nil {
			t.Errorf("%s succeeded during the outage", what)
		}
		if d := time.Since(start); d > 3*timeout {
			t.Errorf("%s took %v; want about the %v deadline", what, d, timeout)
		}
	}
	for _, mode := range []string{"hang", "down"} {
		p.setMode(mode)
		bounded(mode+": Get", func() error { _, _, err := c.Get(ctx, "k"); return err })
		bounded(mode+": Set", func() error { return c.Set(ctx, "k", []byte("v"), time.Hour) })
		bounded(mode+": SetMaxTime", func() error { return c.SetMaxTime(ctx, "t", time.Now(), time.Hour) })
		bounded(mode+": GetTime", func() error { _, _, err := c.GetTime(ctx, "t"); return err })
		p.setMode("up")
		deadline := time.Now().Add(5 * time.Second)
		for {
			v, ok, err := c.Get(ctx, "k")
			if err == nil && ok && string(v) == "v" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %s: Get = %q, %v, %v; still failing after 5s", mode, v, ok, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestRedisUnreachable checks that Open fails, within its deadline, on a
// server that never answers and on a port where nothing listens.
func TestRedisUnreachable(t *testing.T) {
	silent := newProxy(t, "")
	silent.setMode("hang")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for name, addr := range map[string]string{"silent": silent.addr(), "closed": closed} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			c, err := cache.Open(context.Background(), "redis://:pa55word@"+addr+"/0", cache.WithTimeout(300*time.Millisecond))
			if err == nil {
				c.Close()
				t.Fatal("Open succeeded")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Open took %v", d)
			}
			if strings.Contains(err.Error(), "pa55word") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

// proxy forwards TCP connections to upstream. In mode "hang" it holds every
// byte and never answers; in "down" it closes every connection; in "up" it
// forwards.
type proxy struct {
	l        net.Listener
	upstream string

	mu    sync.Mutex
	mode  string
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func newProxy(t testing.TB, upstream string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, upstream: upstream, mode: "up", conns: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		l.Close()
		p.setMode("down")
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) setMode(m string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = m
	if m == "down" {
		for c := range p.conns {
			c.Close()
		}
	}
}

func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == "down" {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *proxy) accept() {
	for {
		down, err := p.l.Accept()
		if err != nil {
			return
		}
		if !p.track(down) {
			continue
		}
		var up net.Conn
		if p.upstream != "" {
			if up, err = net.Dial("tcp", p.upstream); err != nil || !p.track(up) {
				down.Close()
				continue
			}
		}
		p.wg.Go(func() { p.pipe(down, up) })
		if up != nil {
			p.wg.Go(func() { p.pipe(up, down) })
		}
	}
}

// pipe copies src to dst, holding data while the mode is "hang".
func (p *proxy) pipe(src, dst net.Conn) {
	defer src.Close()
	if dst != nil {
		defer dst.Close()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for {
			p.mu.Lock()
			m := p.mode
			p.mu.Unlock()
			if m != "hang" {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 && dst != nil {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or closed: the deferred Closes pass it on
		}
	}
}
