package synthweb

import (
	"testing"
	"time"
)

func TestRepeats(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	req := func(kind, target string, status, start int) Request {
		return Request{Host: "h:1", Kind: kind, Target: target, Status: status, Start: at(start), End: at(start + 5)}
	}
	log := []Request{
		req("page", "/b", 200, 300), // out of order: the log is by completion
		req("robots", "/robots.txt", 200, 0),
		req("robots", "/robots.txt", 200, 400),
		req("page", "/a", 503, 100),
		req("page", "/a", 200, 200),  // a retry, not a repeat
		req("page", "/a", 200, 500),  // a repeat
		req("page", "/a?", 200, 600), // the same resource spelled otherwise
		req(kindMisdirected, "/a", 421, 700),
	}
	got := Repeats(log)
	if len(got) != 2 {
		t.Fatalf("%d repeats, want 2: %+v", len(got), got)
	}
	for i, want := range []int{500, 600} {
		if !got[i].First.Start.Equal(at(200)) || !got[i].Again.Start.Equal(at(want)) {
			t.Errorf("repeat %d: first at %v, again at %v; want the 200 at +200ms, again at +%dms",
				i, got[i].First.Start.Sub(t0), got[i].Again.Start.Sub(t0), want)
		}
	}
}
