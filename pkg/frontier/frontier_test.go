package frontier

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manual clock; Next only blocks when nothing is due, which the tests avoid.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTest(delay time.Duration) (*Frontier, *fakeClock) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	return New(Config{DefaultDelay: delay, Now: clk.Now}), clk
}

func nextNow(t *testing.T, f *Frontier) *Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	l, err := f.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return l
}

func noneDue(t *testing.T, f *Frontier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if l, err := f.Next(ctx); err == nil {
		t.Fatalf("Next returned host %s, want nothing due", l.Host)
	}
}

func TestOneLeasePerHost(t *testing.T) {
	f, _ := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l := nextNow(t, f)
	if l.Host != "a" {
		t.Fatalf("host %q", l.Host)
	}
	// While the lease is held, host a must not be handed out again even though it has work.
	noneDue(t, f)
	if _, ok := l.Take(); !ok {
		t.Fatal("Take: empty")
	}
	l.Done(Outcome{Requested: true})
	noneDue(t, f) // delay not yet passed
}

func TestDelayFromCompletion(t *testing.T) {
	f, clk := newTest(500 * time.Millisecond)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l := nextNow(t, f)
	l.Take()
	clk.Add(2 * time.Second) // a slow-ish response; the delay counts from completion
	l.Done(Outcome{Requested: true, Duration: 2 * time.Second})
	clk.Add(499 * time.Millisecond)
	noneDue(t, f)
	clk.Add(time.Millisecond)
	nextNow(t, f)
}

func TestNoRequestKeepsSchedule(t *testing.T) {
	f, _ := newTest(time.Hour)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l := nextNow(t, f)
	l.Take()
	l.Done(Outcome{}) // e.g. the URL was disallowed by robots.txt: no request, no delay
	nextNow(t, f)
}

func TestSlowHostDoesNotBlockOthers(t *testing.T) {
	f, _ := newTest(time.Hour)
	f.Push(Item{URL: "http://slow/1", Host: "slow"})
	f.Push(Item{URL: "http://slow/2", Host: "slow"})
	f.Push(Item{URL: "http://fast/1", Host: "fast"})
	a := nextNow(t, f)
	b := nextNow(t, f)
	if a.Host == b.Host {
		t.Fatalf("same host leased twice: %s", a.Host)
	}
}

func TestPriorityAmongReadyHosts(t *testing.T) {
	f, _ := newTest(0)
	f.Push(Item{URL: "http://low/1", Host: "low", Level: 3})
	f.Push(Item{URL: "http://high/1", Host: "high", Level: 0})
	f.Push(Item{URL: "http://mid/1", Host: "mid", Level: 1})
	var got []string
	for range 3 {
		got = append(got, nextNow(t, f).Host)
	}
	want := []string{"high", "mid", "low"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestLevelsWithinHost(t *testing.T) {
	f, _ := newTest(0)
	f.Push(Item{URL: "u3", Host: "a", Level: 3})
	f.Push(Item{URL: "u0", Host: "a", Level: 0})
	f.Push(Item{URL: "u1", Host: "a", Level: 1})
	l := nextNow(t, f)
	for _, want := range []string{"u0", "u1", "u3"} {
		it, _ := l.Take()
		if it.URL != want {
			t.Fatalf("took %s, want %s", it.URL, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		name string
		o    Outcome
		want time.Duration // minimum wait before the next request
	}{
		{"ok", Outcome{Requested: true, Status: 200}, 100 * time.Millisecond},
		{"429 retry-after", Outcome{Requested: true, Status: 429, RetryAfter: 7 * time.Second}, 7 * time.Second},
		{"503", Outcome{Requested: true, Status: 503}, time.Second},
		{"network error", Outcome{Requested: true, Failed: true}, time.Second},
		{"slow", Outcome{Requested: true, Status: 200, Duration: 3 * time.Second}, 6 * time.Second},
		{"until", Outcome{Requested: true, Status: 500, Until: time.Unix(1_700_000_000, 0).Add(time.Minute)}, time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, clk := newTest(100 * time.Millisecond)
			f.Push(Item{URL: "1", Host: "a"})
			f.Push(Item{URL: "2", Host: "a"})
			l := nextNow(t, f)
			l.Take()
			l.Done(tc.o)
			clk.Add(tc.want - time.Millisecond)
			noneDue(t, f)
			clk.Add(time.Millisecond)
			nextNow(t, f)
		})
	}
}

func TestRemovePartitionWaitsForLease(t *testing.T) {
	f, _ := newTest(time.Second)
	f.Push(Item{URL: "1", Host: "a", Partition: 7})
	f.Push(Item{URL: "2", Host: "a", Partition: 7})
	f.Push(Item{URL: "1", Host: "b", Partition: 8})
	l := nextNow(t, f)
	if l.Host != "a" {
		l.Done(Outcome{})
		l = nextNow(t, f)
	}
	l.Take()
	done := make(chan []HostState)
	go func() {
		st, err := f.RemovePartition(context.Background(), 7)
		if err != nil {
			t.Error(err)
		}
		done <- st
	}()
	select {
	case <-done:
		t.Fatal("RemovePartition returned while a request to the host was in flight")
	case <-time.After(30 * time.Millisecond):
	}
	l.Done(Outcome{Requested: true})
	st := <-done
	if len(st) != 1 || st[0].Host != "a" || st[0].NextAllowed.IsZero() || st[0].Queued != 1 {
		t.Fatalf("states %+v", st)
	}
	if s := f.Stats(); s.Queued != 0 && s.Hosts != 1 {
		t.Fatalf("stats after remove %+v", s)
	}
}

func TestSetNextAllowedFromPreviousOwner(t *testing.T) {
	f, clk := newTest(0)
	f.SetNextAllowed("a", 0, clk.Now().Add(time.Second))
	f.Push(Item{URL: "1", Host: "a"})
	noneDue(t, f)
	clk.Add(time.Second)
	nextNow(t, f)
}

func TestNextWakesOnPush(t *testing.T) {
	f := New(Config{})
	got := make(chan string, 1)
	go func() {
		l, err := f.Next(context.Background())
		if err == nil {
			got <- l.Host
		}
	}()
	time.Sleep(10 * time.Millisecond)
	f.Push(Item{URL: "1", Host: "a"})
	select {
	case h := <-got:
		if h != "a" {
			t.Fatal(h)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not wake on Push")
	}
	f.Close()
}

// Host reports a host's queue per level, for the API's host look-up.
func TestHostByLevel(t *testing.T) {
	f := New(Config{Levels: 3})
	for i, lvl := range []int{0, 2, 2, 1, 2, 9} { // 9 is clamped to the last level
		f.Push(Item{URL: fmt.Sprint(i), Host: "a", Level: lvl})
	}
	st, ok := f.Host("a")
	if !ok || st.Queued != 6 || len(st.ByLevel) != 3 || st.ByLevel[0] != 1 || st.ByLevel[1] != 1 || st.ByLevel[2] != 4 {
		t.Fatalf("Host(a) = %+v, %v; want 6 queued as [1 1 4]", st, ok)
	}
	if hs := f.Hosts(); len(hs) != 1 || hs[0].ByLevel != nil {
		t.Errorf("Hosts() counts levels too: %+v", hs)
	}
}

// TestWakeEndsAWaitNotPoliteness: a host the fetcher told to wait (its
// robots.txt redirect is on its way) goes as soon as it is woken, but never
// before its delay since its last request.
func TestWakeEndsAWaitNotPoliteness(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	l := nextNow(t, f)
	l.Done(Outcome{Requested: true, Until: clk.Now().Add(time.Minute)})
	clk.Add(500 * time.Millisecond)
	f.Wake("a")
	noneDue(t, f) // woken within its delay: still waits for it
	clk.Add(600 * time.Millisecond)
	if l := nextNow(t, f); l.Host != "a" {
		t.Fatalf("host %q, want a once woken and its delay over", l.Host)
	}
}

// TestUnholdEndsOnlyAHold: Unhold lets a host the fetcher held for its own
// reasons go at once (its delay is over), and leaves a wait for the host's
// sake alone.
func TestUnholdEndsOnlyAHold(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://b/1", Host: "b"})
	la, lb := nextNow(t, f), nextNow(t, f)
	la.Done(Outcome{Until: clk.Now().Add(time.Minute), Hold: true})
	lb.Done(Outcome{Until: clk.Now().Add(time.Minute)})
	f.Unhold("a")
	f.Unhold("b")
	if l := nextNow(t, f); l.Host != "a" {
		t.Fatalf("host %q, want a, its hold ended", l.Host)
	}
	noneDue(t, f) // b still waits for its minute
}

// TestRobotsItemsFirstAndUnblocked: a robots.txt hop another host waits on
// is queued first and ends the host's own wait, but not its delay.
func TestRobotsItemsFirstAndUnblocked(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	l := nextNow(t, f)
	if _, ok := l.TakeRobots(); ok {
		t.Fatal("TakeRobots took a page")
	}
	l.Done(Outcome{Requested: true, Until: clk.Now().Add(time.Hour)})
	f.Push(Item{URL: "http://a/r.txt", Host: "a", Level: 3, Kind: KindRobots})
	noneDue(t, f)
	clk.Add(time.Second)
	l = nextNow(t, f)
	it, ok := l.TakeRobots()
	if !ok || it.URL != "http://a/r.txt" {
		t.Fatalf("TakeRobots = %v, %v; want the hop first", it, ok)
	}
	if it, ok := l.Take(); !ok || it.URL != "http://a/1" {
		t.Fatalf("Take = %v, %v; want the page after the hop", it, ok)
	}
}

// TestDelayLearntLateCountsFromLastRequest: a Crawl-delay learnt after the
// host's last request was scheduled (its robots.txt came at the end of a
// redirect chain) still counts from the end of that request.
func TestDelayLearntLateCountsFromLastRequest(t *testing.T) {
	f, clk := newTest(100 * time.Millisecond)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l := nextNow(t, f)
	l.Take()
	l.Done(Outcome{Requested: true})
	f.SetHostDelay("a", 0, time.Second)
	clk.Add(200 * time.Millisecond)
	noneDue(t, f) // the old delay is over, the new one is not
	clk.Add(800 * time.Millisecond)
	if l := nextNow(t, f); l.Host != "a" {
		t.Fatalf("host %q, want a once its new delay is over", l.Host)
	}
}

// TestDelayLearntDuringTurnWithoutRequest: a Crawl-delay learnt while the
// host is leased for a turn that makes no request (it waits on its
// robots.txt redirect chain, whose last hop it fetched itself) counts from
// its last request all the same. A cluster crawl's host went 45 ms after
// its /robots-real.txt instead of the 400 ms it asked for: the lease's Done
// kept the old delay.
func TestDelayLearntDuringTurnWithoutRequest(t *testing.T) {
	f, clk := newTest(40 * time.Millisecond)
	f.Push(Item{URL: "http://a/robots-real.txt", Host: "a", Kind: KindRobots})
	f.Push(Item{URL: "http://a/1", Host: "a"})
	l := nextNow(t, f)
	l.Take()
	l.Done(Outcome{Requested: true}) // the hop, fetched in a's turn
	clk.Add(40 * time.Millisecond)
	l = nextNow(t, f) // a's turn: still waiting on the answer
	f.SetHostDelay("a", 0, 400*time.Millisecond)
	l.Done(Outcome{Until: clk.Now().Add(10 * time.Second)})
	f.Wake("a") // the answer came
	clk.Add(5 * time.Millisecond)
	noneDue(t, f) // the old delay is over, the new one is not
	clk.Add(355 * time.Millisecond)
	if l := nextNow(t, f); l.Host != "a" {
		t.Fatalf("host %q, want a once its new delay is over", l.Host)
	}
}

// TestCrawlDelayFromResponseEnd: a Crawl-delay learnt from the robots.txt
// answer while its lease is out (as the fetcher's recordRobots does) counts
// from that answer's end (Outcome.At, the response's end plus the margin),
// not from when the lease came back: the host is offered not a moment
// before, and at that very moment, with Lease.Ready naming it.
func TestCrawlDelayFromResponseEnd(t *testing.T) {
	const crawlDelay = 730 * time.Millisecond
	f, clk := newTest(100 * time.Millisecond)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	l := nextNow(t, f) // its robots.txt
	clk.Add(40 * time.Millisecond)
	end := clk.Now() // the answer's end
	f.SetHostDelay("a", 0, crawlDelay)
	clk.Add(15 * time.Millisecond) // the worker's work after the answer
	l.Done(Outcome{Requested: true, At: end})

	clk.Add(crawlDelay - 15*time.Millisecond - time.Nanosecond)
	noneDue(t, f)
	clk.Add(time.Nanosecond)
	l = nextNow(t, f)
	if want := end.Add(crawlDelay); l.Host != "a" || !l.Ready.Equal(want) || !l.Taken.Equal(want) {
		t.Fatalf("leased %s ready %v, taken %v after the answer's end, want a at %v for both",
			l.Host, l.Ready.Sub(end), l.Taken.Sub(end), crawlDelay)
	}
}

// TestSubresourcesFirst: a sub-resource a page being rendered waits on goes
// ahead of the host's queued pages, whatever their level, after robots.txt
// hops and earlier sub-resources; it keeps the host's delay.
func TestSubresourcesFirst(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	f.Push(Item{URL: "http://a/2", Host: "a"})
	l := nextNow(t, f)
	l.Take()
	l.Done(Outcome{Requested: true})
	f.Push(Item{URL: "http://a/app.js", Host: "a", Level: 2, Kind: KindSubresource})
	f.Push(Item{URL: "http://a/r.txt", Host: "a", Kind: KindRobots})
	f.Push(Item{URL: "http://a/data.json", Host: "a", Kind: KindSubresource})
	f.Push(Item{URL: "http://a/3", Host: "a"})
	noneDue(t, f) // its delay holds
	clk.Add(time.Second)
	l = nextNow(t, f)
	var got []string
	for {
		it, ok := l.Take()
		if !ok {
			break
		}
		got = append(got, it.URL)
	}
	want := []string{"http://a/r.txt", "http://a/app.js", "http://a/data.json", "http://a/2", "http://a/3"}
	if !slices.Equal(got, want) {
		t.Fatalf("taken in order %v, want %v", got, want)
	}
}

// TestRequisitesAfterPages: a host's requisites wait until none of its
// pages is queued, whatever the order they came in, and a host with only
// requisites is served after hosts with pages.
func TestRequisitesAfterPages(t *testing.T) {
	f := New(Config{Levels: 4})
	defer f.Close()
	f.Push(Item{URL: "http://a/1", Host: "a", Level: 3})
	f.Push(Item{URL: "http://a/s.css", Host: "a", Kind: KindRequisite})
	f.Push(Item{URL: "http://a/2", Host: "a", Level: 3})
	f.Push(Item{URL: "http://a/i.png", Host: "a", Kind: KindRequisite})
	f.Push(Item{URL: "http://a/3", Host: "a", Level: 1})
	f.Push(Item{URL: "http://b/logo.png", Host: "b", Kind: KindRequisite})
	f.Push(Item{URL: "http://c/1", Host: "c", Level: 3})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var hosts []string
	var got []string
	for range 3 {
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, l.Host)
		for {
			it, ok := l.Take()
			if !ok {
				break
			}
			got = append(got, it.URL)
		}
		l.Done(Outcome{})
	}
	if want := []string{"http://a/3", "http://a/1", "http://a/2", "http://a/s.css", "http://a/i.png"}; !slices.Equal(got[:5], want) {
		t.Errorf("host a served %q, want %q", got[:5], want)
	}
	if hosts[2] != "b" {
		t.Errorf("hosts served in order %q: the host with only requisites should be last", hosts)
	}
	if removed := f.Remove("", func(Item) bool { return true }); len(removed) != 0 {
		t.Errorf("%d items left", len(removed))
	}
}

// TestPromoteRequisite: a requisite a browser tab asks for moves ahead of
// the host's pages, behind the sub-resources already waiting, and stays a
// requisite; an unknown URL is not promoted.
func TestPromoteRequisite(t *testing.T) {
	f := New(Config{Levels: 4})
	defer f.Close()
	f.Push(Item{URL: "http://a/1", Host: "a", Level: 0})
	f.Push(Item{URL: "http://a/s.css", Host: "a", Kind: KindRequisite})
	f.Push(Item{URL: "http://a/app.js", Host: "a", Kind: KindSubresource})
	f.Push(Item{URL: "http://b/1", Host: "b", Level: 2})
	f.Push(Item{URL: "http://b/only.css", Host: "b", Kind: KindRequisite})
	if f.Promote("a", "http://a/other.css") || f.Promote("c", "http://c/x.css") {
		t.Fatal("promoted a URL that is not queued")
	}
	if !f.Promote("a", "http://a/s.css") || !f.Promote("b", "http://b/only.css") {
		t.Fatal("Promote missed a queued requisite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := map[string][]Item{}
	for range 2 {
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for {
			it, ok := l.Take()
			if !ok {
				break
			}
			got[l.Host] = append(got[l.Host], it)
		}
		l.Done(Outcome{})
	}
	var a []string
	for _, it := range got["a"] {
		a = append(a, it.URL)
	}
	if want := []string{"http://a/app.js", "http://a/s.css", "http://a/1"}; !slices.Equal(a, want) {
		t.Errorf("host a served %q, want %q", a, want)
	}
	if it := got["a"][1]; it.Kind != KindRequisite {
		t.Errorf("the promoted item is of kind %v, want a requisite still", it.Kind)
	}
	if b := got["b"]; len(b) != 2 || b[0].URL != "http://b/only.css" {
		t.Errorf("host b served %v: the promoted requisite first", b)
	}
}

// Lease.Ready is when the host could first have gone with work queued: its
// politeness time, or when its work came if that was later; a wait of the
// fetcher's own (Outcome.Hold) does not move it, one for the host does.
func TestLeaseReady(t *testing.T) {
	f, clk := newTest(time.Second)
	t0 := clk.Now()
	f.Push(Item{URL: "http://a/1", Host: "a"})
	clk.Add(30 * time.Millisecond)
	l := nextNow(t, f)
	if !l.Ready.Equal(t0) {
		t.Fatalf("first lease ready at %v, want when its work came (%v)", l.Ready.Sub(t0), time.Duration(0))
	}
	l.Take()
	f.Push(Item{URL: "http://a/2", Host: "a"})
	done := clk.Now()
	l.Done(Outcome{Requested: true, At: done})
	allowed := done.Add(time.Second)

	// Due, but the fetcher holds it 20 ms and takes it again 50 ms late.
	clk.Add(time.Second + 50*time.Millisecond)
	l = nextNow(t, f)
	if !l.Ready.Equal(allowed) {
		t.Fatalf("ready %v after the request, want %v", l.Ready.Sub(done), time.Second)
	}
	l.Done(Outcome{Until: clk.Now().Add(20 * time.Millisecond), Hold: true})
	clk.Add(20 * time.Millisecond)
	l = nextNow(t, f)
	if !l.Ready.Equal(allowed) {
		t.Fatalf("after a hold: ready %v after the request, want %v", l.Ready.Sub(done), time.Second)
	}

	// A wait for the host (robots.txt unavailable, say) is politeness.
	until := clk.Now().Add(5 * time.Second)
	l.Done(Outcome{Until: until})
	clk.Add(5 * time.Second)
	l = nextNow(t, f)
	if !l.Ready.Equal(until) {
		t.Fatalf("after a wait for the host: ready %v, want %v", l.Ready, until)
	}
	l.Take()
	l.Done(Outcome{Requested: true, At: clk.Now()})

	// A host that ran dry is ready when new work comes, after its delay.
	clk.Add(3 * time.Second)
	f.Push(Item{URL: "http://a/3", Host: "a"})
	pushed := clk.Now()
	if l = nextNow(t, f); !l.Ready.Equal(pushed) {
		t.Fatalf("ready %v, want when the URL came (%v)", l.Ready, pushed)
	}
}

// A lease says how the time from its host's previous request went: Idle,
// after the delay with nothing queued; Held, in the fetcher's own holds
// (ended by Unhold or by their Until); Taken, when Next handed it out.
func TestLeaseGapStages(t *testing.T) {
	f, clk := newTest(time.Second)
	f.Push(Item{URL: "http://a/1", Host: "a"})
	l := nextNow(t, f)
	if l.Idle != 0 || l.Held != 0 {
		t.Fatalf("a new host's first lease: idle %v, held %v, want 0", l.Idle, l.Held)
	}
	l.Take()
	done := clk.Now()
	l.Done(Outcome{Requested: true, At: done})

	// Its delay ends at +1 s; its next URL comes at +1.3 s.
	clk.Add(1300 * time.Millisecond)
	f.Push(Item{URL: "http://a/2", Host: "a"})
	clk.Add(10 * time.Millisecond)
	l = nextNow(t, f)
	if l.Idle != 300*time.Millisecond {
		t.Fatalf("idle %v, want 300ms (the URL came 300 ms after the delay)", l.Idle)
	}
	if got := l.Taken.Sub(l.Ready); got != 10*time.Millisecond {
		t.Fatalf("taken %v after ready, want 10ms", got)
	}
	// Held twice: 5 ms to an Unhold, then 20 ms to its Until.
	l.Done(Outcome{Until: clk.Now().Add(20 * time.Millisecond), Hold: true})
	clk.Add(5 * time.Millisecond)
	f.Unhold("a")
	l = nextNow(t, f)
	l.Done(Outcome{Until: clk.Now().Add(20 * time.Millisecond), Hold: true})
	clk.Add(30 * time.Millisecond)
	l = nextNow(t, f)
	if l.Held != 25*time.Millisecond {
		t.Fatalf("held %v, want 25ms", l.Held)
	}
	if l.Idle != 300*time.Millisecond {
		t.Fatalf("idle %v after the holds, want the first lease's 300ms", l.Idle)
	}

	// A request starts the count again: work was queued throughout.
	l.Take()
	f.Push(Item{URL: "http://a/3", Host: "a"})
	l.Done(Outcome{Requested: true, At: clk.Now()})
	clk.Add(2 * time.Second)
	if l = nextNow(t, f); l.Idle != 0 || l.Held != 0 {
		t.Fatalf("after a request with work queued: idle %v, held %v, want 0", l.Idle, l.Held)
	}
}

// TestRaise: a host's trap URLs queued last, then a real page behind them
// that pages of other sections link again: raised, it goes first.
func TestRaise(t *testing.T) {
	f, _ := newTest(0)
	for i := range 3 {
		f.Push(Item{URL: fmt.Sprintf("http://a/search?q=%d", i), Hash: int64(10 + i), Host: "a", Level: 3})
	}
	f.Push(Item{URL: "http://a/docs/page", Hash: 99, Host: "a", Level: 3})
	f.Push(Item{URL: "http://a/top", Hash: 7, Host: "a", Level: 0})
	if n := f.Raise("a", []int64{99, 7, 12345}); n != 1 {
		t.Fatalf("Raise moved %d, want 1 (level 0 and unknown hashes stay)", n)
	}
	if n := f.Raise("nohost", []int64{99}); n != 0 {
		t.Fatalf("Raise on an unknown host moved %d", n)
	}
	st, _ := f.Host("a")
	if !slices.Equal(st.ByLevel, []int{1, 0, 1, 3}) {
		t.Fatalf("by level %v, want [1 0 1 3]", st.ByLevel)
	}
	// One level a call: twice more, and it is at the top, after what was there.
	f.Raise("a", []int64{99})
	f.Raise("a", []int64{99})
	l := nextNow(t, f)
	var got []string
	for _, it := range l.Drain() {
		got = append(got, it.URL)
		if it.URL == "http://a/docs/page" && it.Level != 0 {
			t.Errorf("raised item keeps level %d, want 0 (a retry goes back there)", it.Level)
		}
	}
	l.Done(Outcome{})
	want := []string{"http://a/top", "http://a/docs/page", "http://a/search?q=0", "http://a/search?q=1", "http://a/search?q=2"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q", got, want)
	}
}
