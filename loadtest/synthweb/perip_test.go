package synthweb

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// Named hosts of the hand-made world, served on loopback addresses by the
// Host header as with Config.Addresses.
const (
	nameA  = "h0001.synth.test:8000"
	nameB  = "h0002.synth.test:8000"
	nameC  = "h0003.synth.test:8000"
	addr1  = "127.0.1.1"
	addr2  = "127.0.1.2"
	ip6a   = "2001:db8::1"
	ip6b   = "2001:db8::2:3" // in ip6a's /64
	ip6c   = "2001:db8:0:1::1"
	net6ab = "2001:db8::/64"
	net6c  = "2001:db8:0:1::/64"
)

// on sets the server address a request arrived on.
func on(r Request, addr string) Request { r.Addr = addr; return r }

func misdirected(r Request) Request {
	r.Kind, r.Status = kindMisdirected, 421
	return r
}

// ipCounts returns the per-IP violation counts (and misdirected) of a
// report by category name.
func ipCounts(r Report) map[string]int {
	out := counts(r)
	maps.DeleteFunc(out, func(name string, _ int) bool {
		return name != "ip-concurrency" && name != "ip-interval" && name != "misdirected"
	})
	return out
}

func TestAuditPerIP(t *testing.T) {
	limits := func(c *AuditConfig) { c.IPConcurrency, c.IPDelay = 2, 10*time.Millisecond }
	tests := []struct {
		name     string
		cfg      func(*AuditConfig) // applied to the zero AuditConfig (default tolerance, 2 ms)
		log      []Request
		want     map[string]int // ip-concurrency, ip-interval, misdirected; absent means 0
		maxPerIP int
		inFlight map[string]int // most in flight per address
		interval map[string]time.Duration
	}{
		{
			name: "one at a time across hosts",
			cfg:  limits,
			log: []Request{
				on(rq(nameA, "/robots.txt", 200, 0), addr1), on(rq(nameB, "/robots.txt", 200, 10), addr1),
				on(rq(nameA, "/", 200, 20), addr1), on(rq(nameC, "/", 200, 30), addr2),
			},
			maxPerIP: 1,
			inFlight: map[string]int{addr1: 1, addr2: 1},
			interval: map[string]time.Duration{addr1: 10 * time.Millisecond, addr2: 0},
		},
		{
			name: "concurrency at the limit",
			cfg:  limits,
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 50),
				lasting(on(rq(nameB, "/", 200, 10), addr1), 50),
				// nameA's request ends at 50: in flight until 48, within tolerance.
				lasting(on(rq(nameC, "/", 200, 48), addr1), 50),
			},
			maxPerIP: 2,
		},
		{
			name: "concurrency over the limit",
			cfg:  limits,
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 50),
				lasting(on(rq(nameB, "/", 200, 10), addr1), 50),
				lasting(on(rq(nameC, "/", 200, 47), addr1), 50),
			},
			want:     map[string]int{"ip-concurrency": 1},
			maxPerIP: 3,
		},
		{
			name: "robots.txt requests count",
			cfg:  limits,
			log: []Request{
				lasting(on(rq(nameA, "/robots.txt", 200, 0), addr1), 50),
				lasting(on(rq(nameB, "/robots.txt", 200, 10), addr1), 50),
				lasting(on(rq(nameC, "/robots.txt", 200, 20), addr1), 50),
			},
			want:     map[string]int{"ip-concurrency": 1},
			maxPerIP: 3,
		},
		{
			name: "same start",
			cfg:  func(c *AuditConfig) { c.IPConcurrency = 1 },
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 5),
				lasting(on(rq(nameB, "/", 200, 0), addr1), 5),
			},
			want:     map[string]int{"ip-concurrency": 1},
			maxPerIP: 2,
		},
		{
			name: "addresses do not add up",
			cfg:  func(c *AuditConfig) { c.IPConcurrency = 1 },
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 50),
				lasting(on(rq(nameC, "/", 200, 10), addr2), 50),
			},
			maxPerIP: 1,
			inFlight: map[string]int{addr1: 1, addr2: 1},
		},
		{
			name: "interval at the delay less tolerance",
			cfg:  limits,
			log: []Request{
				on(rq(nameA, "/", 200, 0), addr1), on(rq(nameB, "/", 200, 8), addr1), on(rq(nameA, "/p/1.html", 200, 16), addr1),
			},
			maxPerIP: 1,
			interval: map[string]time.Duration{addr1: 8 * time.Millisecond},
		},
		{
			name: "interval too short",
			cfg:  limits,
			log: []Request{
				on(rq(nameA, "/", 200, 0), addr1), on(rq(nameB, "/", 200, 7), addr1), on(rq(nameA, "/p/1.html", 200, 17), addr1),
			},
			want:     map[string]int{"ip-interval": 1},
			maxPerIP: 1,
			interval: map[string]time.Duration{addr1: 7 * time.Millisecond},
		},
		{
			name: "zero tolerance",
			cfg:  func(c *AuditConfig) { limits(c); c.Tolerance = -1 },
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 10),
				on(rq(nameB, "/", 200, 10), addr1), // 10 ms after the previous start: fine
				on(rq(nameA, "/p/1.html", 200, 19), addr1),
			},
			want:     map[string]int{"ip-interval": 1},
			maxPerIP: 1,
		},
		{
			name: "not checked",
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 50),
				lasting(on(rq(nameB, "/", 200, 1), addr1), 50),
				lasting(on(rq(nameC, "/", 200, 2), addr1), 50),
			},
			maxPerIP: 3,
			interval: map[string]time.Duration{addr1: time.Millisecond},
		},
		{
			name: "a request that gave up was in flight",
			cfg:  limits,
			log: []Request{
				lasting(on(rq(nameA, "/slow.html", 0, 0), addr1), 800),
				lasting(on(rq(nameB, "/", 200, 100), addr1), 50),
				lasting(on(rq(nameC, "/", 200, 200), addr1), 50),
			},
			maxPerIP: 2,
		},
		{
			name: "an IPv6 /64 is one server",
			cfg:  limits,
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), ip6a), 50),
				lasting(on(rq(nameB, "/", 200, 10), ip6b), 50),
				lasting(on(rq(nameC, "/", 200, 20), ip6c), 50),
				lasting(on(rq(nameC, "/p/1.html", 200, 30), "::ffff:"+addr1), 50),
			},
			maxPerIP: 2,
			inFlight: map[string]int{net6ab: 2, net6c: 1, addr1: 1},
		},
		{
			name: "a log without Addr counts by an IP host key",
			cfg:  limits,
			log: []Request{
				lasting(rq(hostOpen, "/", 200, 0), 50), lasting(rq(hostOpen, "/p/1.html", 200, 10), 50),
				lasting(rq(hostAgent, "/", 200, 0), 50),
				lasting(rq(nameA, "/", 200, 0), 50), // no address known: not counted
			},
			maxPerIP: 2,
			inFlight: map[string]int{addr1: 2, addr2: 1},
		},
		{
			name: "misdirected requests count per IP",
			cfg:  limits,
			log: []Request{
				lasting(on(rq(nameA, "/", 200, 0), addr1), 50),
				lasting(on(misdirected(rq("nosuch.synth.test:8000", "/", 0, 10)), addr1), 50),
				lasting(on(rq(nameB, "/", 200, 20), addr1), 50),
			},
			want:     map[string]int{"ip-concurrency": 1, "misdirected": 1},
			maxPerIP: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg AuditConfig
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			rep := audit(tt.log, testWorld(nil, nil), cfg)
			want := tt.want
			if want == nil {
				want = map[string]int{}
			}
			if got := ipCounts(rep); !maps.Equal(got, want) {
				t.Errorf("violations %v, want %v\n%s", got, want, rep)
			}
			if rep.MaxPerIP != tt.maxPerIP {
				t.Errorf("MaxPerIP %d, want %d", rep.MaxPerIP, tt.maxPerIP)
			}
			for ip, n := range tt.inFlight {
				if got := rep.PerIP[ip].MaxInFlight; got != n {
					t.Errorf("%s: at most %d in flight, want %d (per IP %v)", ip, got, n, rep.PerIP)
				}
			}
			if tt.inFlight != nil && rep.Addresses != len(tt.inFlight) {
				t.Errorf("%d addresses, want %d", rep.Addresses, len(tt.inFlight))
			}
			for ip, d := range tt.interval {
				if got := rep.PerIP[ip].MinInterval; got != d {
					t.Errorf("%s: starts at least %v apart, want %v", ip, got, d)
				}
			}
			rev := slices.Clone(tt.log)
			slices.Reverse(rev)
			if again := audit(rev, testWorld(nil, nil), cfg); !maps.Equal(ipCounts(again), ipCounts(rep)) || again.MaxPerIP != rep.MaxPerIP {
				t.Errorf("reversed log gives %v and %d, in order %v and %d", ipCounts(again), again.MaxPerIP, ipCounts(rep), rep.MaxPerIP)
			}
		})
	}
}

func TestReportPerIP(t *testing.T) {
	log := []Request{
		lasting(on(rq(nameA, "/robots.txt", 200, 0), addr1), 30),
		lasting(on(rq(nameB, "/robots.txt", 200, 5), addr1), 30),
		lasting(on(rq(nameA, "/", 200, 40), addr1), 1),
		on(rq(nameC, "/robots.txt", 200, 0), addr2),
		on(misdirected(rq("h0009.synth.test:8000", "/", 0, 100)), addr2),
	}
	rep := audit(log, testWorld(nil, nil), AuditConfig{IPConcurrency: 1, IPDelay: 20 * time.Millisecond})
	if rep.Requests != 5 || rep.Hosts != 3 || rep.Addresses != 2 || rep.PerIP[addr1].Hosts != 2 || rep.PerIP[addr2].Requests != 2 {
		t.Errorf("requests %d, hosts %d, addresses %d, per IP %+v", rep.Requests, rep.Hosts, rep.Addresses, rep.PerIP)
	}
	s := rep.String()
	for _, want := range []string{
		"per IP:      2 addresses; at most 2 requests in flight at once (127.0.1.1), starts at least 5ms apart (127.0.1.1)\n",
		"misdirected: 1\n    - h0009.synth.test:8000 / requested at +100ms from 127.0.1.2, which serves no such host\n",
		"ip-concurrency: 1\n    - 127.0.1.1: h0002.synth.test:8000 /robots.txt started at +5ms with 2 requests in flight to the address; limit 1\n",
		"ip-interval: 1\n    - 127.0.1.1: h0002.synth.test:8000 /robots.txt started at +5ms, 5ms after h0001.synth.test:8000 /robots.txt started; delay 20ms\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}

	// Checks that were off show only what they measured.
	rep = audit(log[:4], testWorld(nil, nil), AuditConfig{})
	s = rep.String()
	for _, absent := range []string{"misdirected", "ip-concurrency", "ip-interval"} {
		if strings.Contains(s, absent) {
			t.Errorf("String() shows %s:\n%s", absent, s)
		}
	}
	if !strings.Contains(s, "at most 2 requests in flight at once") {
		t.Errorf("String() lacks the per-IP line:\n%s", s)
	}
}

func TestAuditConfigValidatePerIP(t *testing.T) {
	for _, bad := range []AuditConfig{{IPConcurrency: -1}, {IPDelay: -time.Millisecond}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v passed Validate", bad)
		}
	}
	if err := (AuditConfig{IPConcurrency: 4, IPDelay: time.Second}).Validate(); err != nil {
		t.Errorf("valid per-IP limits: %v", err)
	}
}
