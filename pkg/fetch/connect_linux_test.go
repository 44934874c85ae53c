//go:build linux

package fetch

import (
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// fullBacklogListener returns a loopback address whose TCP handshakes never
// complete: the socket listens with a backlog of 0 and is never accepted
// from, and once its accept queue holds one connection Linux drops further
// SYNs, so a connect waits until its own timeout. This is the only way to
// make a connect time out on loopback without leaving the machine.
func fullBacklogListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatalf("listen: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 8 {
		conn, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return addr // the queue is full
		}
		t.Cleanup(func() { _ = conn.Close() })
	}
	t.Skip("accept queue never filled; cannot provoke a connect timeout on loopback")
	return ""
}

func TestDoConnectTimeout(t *testing.T) {
	addr := fullBacklogListener(t)
	c := newClient(t, func(cfg *Config) {
		cfg.ConnectTimeout = 200 * time.Millisecond
		cfg.TotalTimeout = 5 * time.Second
	})
	start := time.Now()
	_, err := c.Do(t.Context(), Request{URL: "http://" + addr + "/"})
	elapsed := time.Since(start)
	if Classify(err) != ClassTimeout {
		t.Errorf("Classify(%v) = %q, want %q", err, Classify(err), ClassTimeout)
	}
	// Well short of the total timeout: the connect timeout ended it.
	if elapsed < 150*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("Do took %v, want about the 200ms connect timeout", elapsed)
	}
}
