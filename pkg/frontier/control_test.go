package frontier

import (
	"strings"
	"testing"
	"time"
)

func TestPausedHostIsNotLeased(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://b/1", Host: "b"})
	f.SetHostPaused("a", 0, true)
	l := nextNow(t, f)
	if l.Host != "b" {
		t.Fatalf("leased %s, want b (a is paused)", l.Host)
	}
	l.Take()
	l.Done(Outcome{Requested: true})
	f.Push(Item{URL: "http://a/2", Host: "a"}) // a push does not wake a paused host
	clk.Add(time.Hour)
	noneDue(t, f)
	if s := f.Stats(); s.HostsPaused != 1 || s.Queued != 2 || f.Idle() {
		t.Fatalf("stats %+v idle %t: want a paused with 2 queued, not idle", s, f.Idle())
	}
	f.SetHostPaused("a", 0, false)
	if l := nextNow(t, f); l.Host != "a" {
		t.Fatalf("leased %s after resume, want a", l.Host)
	}
}

func TestPauseWhileLeased(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l := nextNow(t, f)
	f.SetHostPaused("a", 0, true)
	l.Take()
	l.Done(Outcome{Requested: true}) // the request in flight finishes; the host stays out
	clk.Add(time.Hour)
	noneDue(t, f)
	f.SetHostPaused("a", 0, false)
	nextNow(t, f)
}

// A host waiting for its server's slot when paused is not leased when the
// server lets it go, and the server's slot goes to another host.
func TestPauseWhileBlockedOnServer(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	f := New(Config{DefaultDelay: time.Second, ServerConcurrency: 1, Now: clk.Now})
	for _, h := range []string{"a", "b", "c"} {
		f.Push(Item{URL: "http://" + h + "/1", Host: h})
	}
	var held *Lease
	for range 3 {
		l := nextNow(t, f)
		if !l.Bind("10.0.0.1") {
			l.Done(Outcome{})
			continue
		}
		held = l
	}
	if held == nil {
		t.Fatal("no lease got the slot")
	}
	for _, h := range []string{"a", "b", "c"} {
		if h != held.Host {
			f.SetHostPaused(h, 0, true)
			break
		}
	}
	held.Take()
	held.Done(Outcome{Requested: true})
	clk.Add(time.Hour)
	l := nextNow(t, f)
	if s := f.Stats(); s.HostsPaused != 1 {
		t.Fatalf("paused hosts %d", s.HostsPaused)
	}
	if !l.Bind("10.0.0.1") {
		t.Fatalf("host %s found no free slot: the paused host kept it", l.Host)
	}
}

func TestRemoveMatching(t *testing.T) {
	f, _ := newTest(time.Second)
	for _, u := range []string{"http://a/x/1", "http://a/y/1", "http://a/x/2", "http://b/x/1"} {
		f.Push(Item{URL: u, Host: u[7:8], Level: len(u) % 3})
	}
	isX := func(it Item) bool { return strings.Contains(it.URL, "/x/") }
	if got := f.Remove("a", isX); len(got) != 2 {
		t.Fatalf("removed %d from a, want 2", len(got))
	}
	if got := f.Remove("", isX); len(got) != 1 || got[0].URL != "http://b/x/1" {
		t.Fatalf("removed %v from every host, want b's", got)
	}
	if s := f.Stats(); s.Queued != 1 {
		t.Fatalf("queued %d, want 1", s.Queued)
	}
	// b's queue is empty: it is no longer offered.
	l := nextNow(t, f)
	if it, ok := l.Take(); l.Host != "a" || !ok || it.URL != "http://a/y/1" {
		t.Fatalf("leased %s %v", l.Host, it)
	}
	l.Done(Outcome{})
	noneDue(t, f)
}
