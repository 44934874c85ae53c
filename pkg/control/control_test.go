package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		syntax, pattern, host string
		url, urlHost          string
		want                  bool
	}{
		{SyntaxGlob, "https://a.example/cal/*", "", "https://a.example/cal/2026/01", "a.example", true},
		{SyntaxGlob, "https://a.example/cal/*", "", "https://a.example/calendar", "a.example", false},
		{SyntaxGlob, "*/cal/*", "", "https://b.example/x/cal/y", "b.example", true},
		{SyntaxGlob, "*?page=?", "", "https://a.example/list?page=3", "a.example", true},
		{SyntaxGlob, "*?page=?", "", "https://a.example/list?page=30", "a.example", false},
		{SyntaxGlob, "https://a.example/a.b", "", "https://a.example/aXb", "a.example", false}, // '.' is literal
		{SyntaxGlob, "*/cal/*", "a.example", "https://b.example/cal/1", "b.example", false},    // scoped
		{SyntaxRegexp, `[?&]sid=`, "", "https://a.example/p?x=1&sid=9", "a.example", true},
		{SyntaxRegexp, `^https://a\.example/$`, "", "https://a.example/", "a.example", true},
		{SyntaxRegexp, `^https://a\.example/$`, "", "https://a.example/x", "a.example", false},
		{SyntaxRegexp, `/trap/`, "a.example:8080", "https://a.example:8080/trap/1", "a.example:8080", true},
		// The required-literal prefilter must not turn a match away.
		{SyntaxRegexp, `/(ab){2}/`, "", "https://a.example/abab/", "a.example", true},
		{SyntaxRegexp, `(?i)SESSIONID=`, "", "https://a.example/?sessionid=1", "a.example", true},
		{SyntaxRegexp, `cal|/archive/`, "", "https://a.example/archive/x", "a.example", true},
		{SyntaxRegexp, `/x(yz)?/w`, "", "https://a.example/x/w", "a.example", true},
		{SyntaxRegexp, `/p/\d+[13579]\.html$`, "", "https://a.example/p/21.html", "a.example", true},
		{SyntaxRegexp, `/p/\d+[13579]\.html$`, "", "https://a.example/p/22.html", "a.example", false},
	}
	for _, tt := range tests {
		t.Run(tt.syntax+" "+tt.pattern+" "+tt.url, func(t *testing.T) {
			p, err := Compile(store.ExclusionPattern{Pattern: tt.pattern, Syntax: tt.syntax, Host: tt.host})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Match(tt.url, tt.urlHost); got != tt.want {
				t.Errorf("Match = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestCompileRejects(t *testing.T) {
	for _, p := range []store.ExclusionPattern{
		{Pattern: "", Syntax: SyntaxGlob},
		{Pattern: "a(", Syntax: SyntaxRegexp},
		{Pattern: "x", Syntax: "sql"},
		{Pattern: strings.Repeat("a", MaxPatternLen+1), Syntax: SyntaxGlob},
	} {
		if _, err := Compile(p); !errors.Is(err, ErrInvalidPattern) {
			t.Errorf("Compile(%q, %q) = %v, want ErrInvalidPattern", p.Pattern, p.Syntax, err)
		}
	}
}

func FuzzCompile(f *testing.F) {
	f.Add("https://a.example/*", "glob", "https://a.example/x")
	f.Add(`[?&]sid=\d+`, "regexp", "https://a.example/?sid=1")
	f.Add("*?*[", "glob", "https://a.example/[")
	f.Add(`(abc){2}x|y`, "regexp", "abcabcx")
	f.Add(`(?i)Sid=(x)+abc`, "regexp", "SID=xxabc")
	f.Fuzz(func(t *testing.T, pattern, syntax, url string) {
		p, err := Compile(store.ExclusionPattern{Pattern: pattern, Syntax: syntax})
		if err != nil {
			if !errors.Is(err, ErrInvalidPattern) {
				t.Fatalf("error %v does not wrap ErrInvalidPattern", err)
			}
			return
		}
		// The literal that spares the search is in every URL the pattern matches.
		if p.re.MatchString(url) && !strings.Contains(url, p.lit) {
			t.Fatalf("%q matches %q, which lacks its required literal %q", pattern, url, p.lit)
		}
		p.Match(url, "")
		// A glob without wildcards matches exactly itself.
		if syntax == SyntaxGlob && !strings.ContainsAny(pattern, "*?") {
			if !p.Match(pattern, "") {
				t.Fatalf("glob %q does not match itself", pattern)
			}
			if p.Match(pattern+"x", "") {
				t.Fatalf("glob %q matches more than itself", pattern)
			}
		}
	})
}

func TestDelay(t *testing.T) {
	none := store.HostControl{Delay: store.NoOverride}
	over := func(d time.Duration) store.HostControl { return store.HostControl{Delay: d} }
	tests := []struct {
		name        string
		hc          store.HostControl
		base, crawl time.Duration
		hasCrawl    bool
		floor       time.Duration
		want        time.Duration
	}{
		{"no override", none, time.Second, 0, false, 0, time.Second},
		{"override below default", over(100 * time.Millisecond), time.Second, 0, false, 0, 100 * time.Millisecond},
		{"override above", over(5 * time.Second), time.Second, 2 * time.Second, true, 0, 5 * time.Second},
		{"clamped to crawl-delay", over(time.Second), 2 * time.Second, 2 * time.Second, true, 0, 2 * time.Second},
		{"clamped to floor", over(0), time.Second, 0, false, 50 * time.Millisecond, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Delay(tt.hc, tt.base, tt.crawl, tt.hasCrawl, tt.floor); got != tt.want {
				t.Errorf("Delay = %v, want %v", got, tt.want)
			}
		})
	}
}

type fakeSource struct {
	c     store.Controls
	reads int
}

func (f *fakeSource) ControlVersion(context.Context) (int64, error) { return f.c.Version, nil }
func (f *fakeSource) Controls(context.Context) (store.Controls, error) {
	f.reads++
	return f.c, nil
}

func TestWatcherPoll(t *testing.T) {
	ctx := context.Background()
	src := &fakeSource{c: store.Controls{Version: 0}}
	w := NewWatcher(src)
	if _, _, changed, err := w.Poll(ctx); err != nil || !changed {
		t.Fatalf("first poll: changed %t, err %v; want a load", changed, err)
	}
	if _, _, changed, _ := w.Poll(ctx); changed || src.reads != 1 {
		t.Fatalf("same version: changed %t after %d reads, want no read", changed, src.reads)
	}
	src.c = store.Controls{Version: 3, Paused: true,
		Hosts:    []store.HostControl{{Host: "a.example", Paused: true, Delay: -1, PageBudget: -1}, {Host: "b.example", Delay: time.Second, PageBudget: 5}},
		Patterns: []store.ExclusionPattern{{ID: 1, Pattern: "*/x/*", Syntax: SyntaxGlob}, {ID: 2, Pattern: "(", Syntax: SyntaxRegexp}}}
	old, cur, changed, err := w.Poll(ctx)
	if !changed || err == nil {
		t.Fatalf("changed %t err %v; want a change and the bad pattern reported", changed, err)
	}
	if old.Paused || !cur.Paused || cur.PausedHosts() != 1 || len(cur.Patterns()) != 1 {
		t.Fatalf("state: paused %t->%t, paused hosts %d, patterns %d", old.Paused, cur.Paused, cur.PausedHosts(), len(cur.Patterns()))
	}
	if p, ok := cur.Excluded("https://c.example/x/1", "c.example"); !ok || p.ID != 1 {
		t.Fatalf("Excluded = %v, %t", p, ok)
	}
	if b, ok := Budget(mustHost(t, cur, "b.example")); !ok || b != 5 {
		t.Fatalf("budget %d %t", b, ok)
	}
	if _, ok := Budget(mustHost(t, cur, "a.example")); ok {
		t.Fatal("a.example has no budget override")
	}
}

func mustHost(t *testing.T, s *Set, h string) store.HostControl {
	t.Helper()
	hc, ok := s.Host(h)
	if !ok {
		t.Fatalf("no control for %s", h)
	}
	return hc
}

// BenchmarkExcluded is admission's cost per URL with ten patterns in force
// and none matching (every pattern is tried).
func BenchmarkExcluded(b *testing.B) {
	var ps []store.ExclusionPattern
	for i := range 5 {
		ps = append(ps, store.ExclusionPattern{ID: int64(2*i + 1), Syntax: SyntaxGlob, Pattern: fmt.Sprintf("https://h%d.example/cal/*", i)},
			store.ExclusionPattern{ID: int64(2*i + 2), Syntax: SyntaxRegexp, Pattern: fmt.Sprintf(`[?&]sid%d=`, i)})
	}
	set, err := NewSet(store.Controls{Patterns: ps})
	if err != nil {
		b.Fatal(err)
	}
	url := "https://shop.example/catalogue/shoes/running/page-12.html?sort=price&colour=blue"
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := set.Excluded(url, "shop.example"); ok {
			b.Fatal("matched")
		}
	}
}
