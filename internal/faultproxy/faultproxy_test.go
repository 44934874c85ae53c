package faultproxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echo is an upstream that sends every line back.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, msg string, wait time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

func TestTCPModes(t *testing.T) {
	p, err := ListenTCP(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if got, err := roundTrip(open, "a", 5*time.Second); err != nil || got != "a" {
		t.Fatalf("pass: %q, %v", got, err)
	}

	p.Set(Blackhole)
	if got, err := roundTrip(open, "b", 300*time.Millisecond); err == nil {
		t.Fatalf("blackhole: an open connection got %q", got)
	}
	fresh, err := net.Dial("tcp", p.Addr()) // accepted, then nothing
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if got, err := roundTrip(fresh, "c", 300*time.Millisecond); err == nil {
		t.Fatalf("blackhole: a new connection got %q", got)
	}
	// Healed: what was held goes through.
	p.Set(Pass)
	r := bufio.NewReader(fresh)
	_ = fresh.SetDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "c\n" {
		t.Fatalf("after the blackhole, the new connection got %q, %v", line, err)
	}

	p.Set(Refuse)
	_ = open.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(open); err == nil {
		t.Error("refuse: an open connection was not reset")
	}
	c, err := net.Dial("tcp", p.Addr())
	if err == nil {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if n, rerr := c.Read(make([]byte, 1)); rerr == nil {
			t.Errorf("refuse: a new connection read %d bytes", n)
		}
		c.Close()
	}
	p.Set(Pass)
	c, err = net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "d", 5*time.Second); err != nil || got != "d" {
		t.Fatalf("pass again: %q, %v", got, err)
	}
}

func TestHTTPFaults(t *testing.T) {
	var reached atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, r.Host)
	}))
	defer up.Close()
	p, err := ListenHTTP(up.URL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	put := func() (int, string, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, p.URL()+"/b/k", strings.NewReader("body"))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), time.Since(start)
	}
	if code, host, _ := put(); code != 200 || host != strings.TrimPrefix(p.URL(), "http://") {
		t.Fatalf("no faults: %d, upstream saw host %q", code, host)
	}

	p.Set(Faults{Match: Uploads, FailShare: 1})
	for range 20 {
		if code, _, _ := put(); code != 500 {
			t.Fatalf("fail share 1: status %d", code)
		}
	}
	st := p.Stats()
	if st.FailedBefore == 0 || st.FailedAfter == 0 || st.FailedBefore+st.FailedAfter != 20 {
		t.Errorf("20 failures split %d before, %d after", st.FailedBefore, st.FailedAfter)
	}
	if got := reached.Load(); got != 1+st.FailedAfter {
		t.Errorf("upstream reached %d times, want %d", got, 1+st.FailedAfter)
	}

	p.Set(Faults{Match: Uploads, Delay: 200 * time.Millisecond})
	if code, _, took := put(); code != 200 || took < 200*time.Millisecond {
		t.Errorf("delayed: %d after %v", code, took)
	}
	if resp, err := http.Get(p.URL() + "/b/k"); err != nil || resp.StatusCode != 200 {
		t.Errorf("a GET is not an upload: %v", err)
	} else {
		resp.Body.Close()
	}
	if st := p.Stats(); st.Delayed != 1 || st.Matched != 21 {
		t.Errorf("stats %+v, want 1 delayed of 21 matched", st)
	}
}
