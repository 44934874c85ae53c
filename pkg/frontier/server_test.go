package frontier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func newServerTest(conc int, delay time.Duration) (*Frontier, *fakeClock) {
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	return New(Config{DefaultDelay: 0, ServerConcurrency: conc, ServerDelay: delay, Now: clk.Now}), clk
}

// TestBindHoldsServerLimits: hosts on one server share its slots. A lease
// on a host not yet bound is refused a slot by Bind while the server is full,
// and a bound host is not leased at all until a slot frees; the delay between
// two starts holds.
func TestBindHoldsServerLimits(t *testing.T) {
	f, clk := newServerTest(2, 100*time.Millisecond)
	for _, h := range []string{"a", "b", "c"} {
		f.Push(Item{URL: "http://" + h + "/1", Host: h})
		f.Push(Item{URL: "http://" + h + "/2", Host: h})
	}
	l1 := nextNow(t, f)
	if !l1.Bind("10.0.0.1") {
		t.Fatal("first lease refused")
	}
	l2 := nextNow(t, f)
	if l2.Bind("10.0.0.1") {
		t.Fatal("second start within the server delay allowed")
	}
	l2.Done(Outcome{})
	clk.Add(100 * time.Millisecond)
	l2 = nextNow(t, f)
	if !l2.Bind("10.0.0.1") {
		t.Fatalf("%s refused after the server delay", l2.Host)
	}
	clk.Add(time.Second)
	noneDue(t, f) // the third host is bound now too, and the server is full
	f.Push(Item{URL: "http://d/1", Host: "d"})
	l4 := nextNow(t, f) // a host not bound yet is leased, and refused on Bind
	if l4.Host != "d" || l4.Bind("10.0.0.1") {
		t.Fatalf("lease of %s: a third request in flight to a server of concurrency 2", l4.Host)
	}
	l4.Done(Outcome{})
	noneDue(t, f)
	l1.Take()
	l1.Done(Outcome{Requested: true})
	l := nextNow(t, f) // a slot is free: the host that waited longest gets it
	if l.Host == "d" || l.Host == l1.Host {
		t.Errorf("after a slot freed, %s was leased; the third host waited first", l.Host)
	}
	if !l.Bind("10.0.0.1") {
		t.Error("a lease handed out with a slot lost it on Bind")
	}
	if got := f.Servers(); len(got) != 1 || got[0].Hosts != 4 || got[0].InFlight != 2 || got[0].Blocked != 1 {
		t.Errorf("servers %+v", got)
	}
}

// TestServerLimitsUnderLoad runs workers over many hosts on a few servers,
// in real time, and checks from the leases themselves that no server ever had
// more than its concurrency in flight, and that every URL was served. (The
// delay between two starts is checked on the fake clock above: measured here,
// a worker descheduled between its slot and its clock reading under -race
// makes two starts look closer than they were granted.)
func TestServerLimitsUnderLoad(t *testing.T) {
	const (
		conc    = 2
		delay   = 3 * time.Millisecond
		hosts   = 60
		perHost = 4
		workers = 16
	)
	f := New(Config{DefaultDelay: time.Millisecond, ServerConcurrency: conc, ServerDelay: delay})
	server := func(h string) string { return fmt.Sprintf("10.0.0.%d", len(h)%3) }
	for i := range hosts {
		h := fmt.Sprintf("h%0*d", 1+i%3, i) // three servers by name length
		for j := range perHost {
			f.Push(Item{URL: fmt.Sprintf("http://%s/%d", h, j), Host: h, Level: j % 4})
		}
	}
	var mu sync.Mutex
	inFlight := map[string]int{}
	served, maxIn := 0, 0
	var violations []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				s := server(l.Host)
				if !l.Bind(s) {
					l.Done(Outcome{})
					continue
				}
				_, ok := l.Take()
				mu.Lock()
				inFlight[s]++
				maxIn = max(maxIn, inFlight[s])
				if inFlight[s] > conc {
					violations = append(violations, fmt.Sprintf("%d in flight to %s", inFlight[s], s))
				}
				mu.Unlock()
				time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
				mu.Lock()
				inFlight[s]--
				if ok {
					served++
				}
				done := served == hosts*perHost
				mu.Unlock()
				l.Done(Outcome{Requested: true})
				if done {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	if served != hosts*perHost {
		t.Errorf("served %d of %d URLs before the deadline (a host starved?)", served, hosts*perHost)
	}
	if len(violations) > 0 {
		t.Errorf("%d violations, e.g. %v", len(violations), violations[:min(5, len(violations))])
	}
	if maxIn != conc {
		t.Errorf("at most %d in flight to a server; the test wants the limit reached (%d)", maxIn, conc)
	}
}

// TestRemovePartitionOfBlockedHosts: hosts queued on their server leave with
// their partition, and the server's other hosts are still served.
func TestRemovePartitionOfBlockedHosts(t *testing.T) {
	f, clk := newServerTest(1, 0)
	f.Push(Item{URL: "http://a/1", Host: "a", Partition: 1})
	f.Push(Item{URL: "http://b/1", Host: "b", Partition: 2})
	f.Push(Item{URL: "http://c/1", Host: "c", Partition: 1})
	var leases []*Lease
	for range 3 {
		l := nextNow(t, f)
		if l.Bind("s") {
			leases = append(leases, l)
			continue
		}
		l.Done(Outcome{})
	}
	if len(leases) != 1 {
		t.Fatalf("%d leases with a slot on a server of concurrency 1", len(leases))
	}
	noneDue(t, f)
	held := leases[0]
	go func() {
		time.Sleep(20 * time.Millisecond)
		held.Take()
		held.Done(Outcome{Requested: true})
	}()
	// Remove the partition of whichever hosts are waiting, keep the other.
	keep := int32(1)
	if held.Partition == 1 {
		keep = 2
	}
	if _, err := f.RemovePartition(context.Background(), 3-keep); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second)
	if held.Partition == keep {
		noneDue(t, f)
		return
	}
	l := nextNow(t, f)
	if l.Partition != keep || !l.Bind("s") {
		t.Errorf("after the removal: lease of %s (partition %d), want a host of partition %d with a slot", l.Host, l.Partition, keep)
	}
}
