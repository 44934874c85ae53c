package cache_test

import (
	"context"
	"errors"
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

// TestRedisUnreachable checks that Open, on a server that never answers and
// on one that drops every connection, says so within its deadline, without
// the password, and still gives a cache: its calls fail while the server is
// away and succeed once it answers, scripts included (none was loaded at
// Open), so a process can start during an outage.
func TestRedisUnreachable(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(redistest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	for _, mode := range []string{"hang", "down"} {
		t.Run(mode, func(t *testing.T) {
			p := newProxy(t, u.Host)
			p.setMode(mode)
			start := time.Now()
			c, err := cache.Open(ctx, "redis://"+p.addr()+u.Path, cache.WithTimeout(timeout))
			if !errors.Is(err, cache.ErrUnreachable) || c == nil {
				t.Fatalf("Open = %v, %v; want a cache and ErrUnreachable", c, err)
			}
			defer c.Close()
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Open took %v", d)
			}
			key := "unreachable:" + mode
			if err := c.SetMaxTime(ctx, key, time.Now(), time.Hour); err == nil {
				t.Error("SetMaxTime succeeded while the server is away")
			}
			p.setMode("up")
			for deadline := time.Now().Add(5 * time.Second); ; {
				err := c.SetMaxTime(ctx, key, time.Now(), time.Hour)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("SetMaxTime still fails 5 s after the server answers: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if ok, _, err := c.AcquireSlot(ctx, cache.Slot{Key: key + ":slot", Owner: "test", Limit: 1, Hold: time.Minute}, "a"); !ok || err != nil {
				t.Errorf("AcquireSlot once the server answers = %v, %v", ok, err)
			}
		})
	}
	// The error names the address, never the password.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	c, err := cache.Open(ctx, "redis://:pa55word@"+closed+"/0", cache.WithTimeout(timeout))
	if !errors.Is(err, cache.ErrUnreachable) {
		t.Fatalf("Open on a closed port: %v", err)
	}
	c.Close()
	if strings.Contains(err.Error(), "pa55word") || !strings.Contains(err.Error(), closed) {
		t.Errorf("error %q: want the address and no password", err)
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
