package frontier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A host that becomes due wakes one parked Next, not all of them: the rest stay
// parked until there is a host for each.
func TestOneHostWakesOneWaiter(t *testing.T) {
	f := New(Config{})
	defer f.Close()
	const parked = 8
	got := make(chan *Lease, parked)
	for range parked {
		go func() {
			if l, err := f.Next(context.Background()); err == nil {
				got <- l
			}
		}()
	}
	waitParked(t, f, parked)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	l := <-got
	if l.Host != "a" {
		t.Fatalf("leased %q, want a", l.Host)
	}
	waitParked(t, f, parked-1)
	f.mu.Lock()
	woken := f.woken
	f.mu.Unlock()
	if woken != 1 {
		t.Fatalf("one due host woke %d parked Nexts, want 1", woken)
	}
	for i := range parked - 1 {
		f.Push(Item{URL: fmt.Sprintf("http://h%d/1", i), Host: fmt.Sprintf("h%d", i)})
	}
	for range parked - 1 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("a pushed host did not reach a parked Next")
		}
	}
}

// A host waiting out its delay is handed to a parked Next when the delay ends,
// with no other event to wake it.
func TestTimerWakesParkedNext(t *testing.T) {
	f := New(Config{DefaultDelay: 30 * time.Millisecond})
	defer f.Close()
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l, err := f.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.Take()
	l.Done(Outcome{Requested: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if l, err = f.Next(ctx); err != nil || l.Host != "a" {
		t.Fatalf("Next after the delay: %v, %v", l, err)
	}
}

// Nexts that give up (their context ends) while hosts become due never swallow a
// wake-up: every item is handed out while impatient callers come and go.
func TestNoWakeUpLostToCancelledNext(t *testing.T) {
	f := New(Config{DefaultDelay: time.Millisecond})
	defer f.Close()
	const hosts, perHost = 20, 10
	var taken atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	worker := func(patience func() time.Duration) {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), patience())
			l, err := f.Next(ctx)
			cancel()
			if err != nil {
				continue
			}
			if _, ok := l.Take(); ok {
				taken.Add(1)
			}
			l.Done(Outcome{Requested: true})
		}
	}
	for range 12 { // impatient: give up within 0-500 µs
		wg.Add(1)
		go worker(func() time.Duration { return time.Duration(rand.IntN(500)) * time.Microsecond })
	}
	wg.Add(1) // one patient worker, so progress never depends on luck
	go worker(func() time.Duration { return time.Second })
	for i := range perHost {
		for h := range hosts {
			f.Push(Item{URL: fmt.Sprintf("http://h%d/%d", h, i), Host: fmt.Sprintf("h%d", h)})
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for taken.Load() < hosts*perHost && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	f.Close()
	wg.Wait()
	if n := taken.Load(); n != hosts*perHost {
		t.Fatalf("%d of %d items handed out in 10s", n, hosts*perHost)
	}
}

// waitParked waits until n Next calls are parked.
func waitParked(t *testing.T, f *Frontier, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		got := len(f.waiters)
		f.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Next calls parked, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}
