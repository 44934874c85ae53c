package synthweb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// webClient is rawClient resolving the web's host names as its hosts file
// does.
func webClient(w *Web) *http.Client {
	c := rawClient()
	c.Transport.(*http.Transport).DialContext = w.DialContext
	return c
}

// parseHostsFile reads /etc/hosts lines into name -> address.
func parseHostsFile(tb testing.TB, text string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 || net.ParseIP(f[0]) == nil {
			tb.Fatalf("hosts file line %q is not ADDRESS NAME...", sc.Text())
		}
		for _, name := range f[1:] {
			if _, dup := out[name]; dup {
				tb.Errorf("hosts file names %s twice", name)
			}
			out[name] = f[0]
		}
	}
	return out
}

var absoluteURLRE = regexp.MustCompile(`https?://[^/"<\s]+`)

// TestNamedHosts serves 50 names on 2 addresses, with every feature, and
// checks that each name is served its own site by the Host header.
func TestNamedHosts(t *testing.T) {
	cfg := trapsConfig()
	cfg.PagesPerHost = 4
	cfg.Addresses = 2
	cfg.Change = DefaultChangeConfig()
	cfg.Change.Enabled = true
	w := startWeb(t, cfg)

	names := parseHostsFile(t, w.HostsFile())
	if len(names) != cfg.Hosts+1 {
		t.Errorf("hosts file maps %d names, want %d hosts and the dead seed:\n%s", len(names), cfg.Hosts, w.HostsFile())
	}
	keys := map[string]bool{}
	for i, key := range w.Hosts() {
		keys[key] = true
		name, _, err := net.SplitHostPort(key)
		if err != nil || name != fmt.Sprintf("h%04d.synth.test", i+1) {
			t.Errorf("host %d is %q", i, key)
		}
		if names[name] != hostAddr(i%2) {
			t.Errorf("hosts file maps %s to %q, want %s", name, names[name], hostAddr(i%2))
		}
	}

	c := webClient(w)
	homes := map[string]int{}
	for i, h := range w.hosts {
		fetch := func(target string, status int) answer {
			t.Helper()
			got := get(t, c, h.base+target)
			if got.status != status {
				t.Errorf("%s%s: %d, want %d", h.key, target, got.status, status)
			}
			canonical, _ := CanonicalTarget(target)
			if r := logEntry(t, w, h.key, target); r.Addr != hostAddr(i%2) || r.Resource != h.key+canonical || r.Status != status {
				t.Errorf("%s%s logged on %s as %s, %d", h.key, target, r.Addr, r.Resource, r.Status)
			}
			for _, u := range absoluteURLRE.FindAllString(got.body, -1) {
				hostport := strings.TrimPrefix(u, "http://")
				name, _, _ := net.SplitHostPort(hostport)
				if strings.Contains(hostport, NameDomain) && !keys[hostport] || net.ParseIP(name) != nil {
					t.Errorf("%s%s links %s, not a host of the web", h.key, target, u)
				}
			}
			return got
		}

		robots := fetch(robotsPath, h.robots.status)
		if want := string(h.static[robotsPath].body); robots.body != want {
			t.Errorf("%s robots.txt is %q, want its own %q", h.key, robots.body, want)
		}
		if h.role == roleRobots5xx {
			continue
		}
		if home := fetch("/", 200); homes[home.body] != 0 {
			t.Errorf("%s serves the home page of host %d", h.key, homes[home.body]-1)
		} else {
			homes[home.body] = i + 1
		}
		fetch("/p/1.html", 200)
		for _, sm := range h.robots.sitemaps {
			target, ok := strings.CutPrefix(sm, h.base)
			if !ok {
				t.Errorf("%s names sitemap %s on another host", h.key, sm)
				continue
			}
			fetch(target, 200)
		}
		if len(h.traps) > 0 {
			tr := h.traps[0]
			fetch(tr.space.entry(), 200)
			if r := logEntry(t, w, h.key, tr.space.entry()); r.TrapInstance != h.key+"#"+tr.class {
				t.Errorf("%s trap entry %s logged as instance %q", h.key, tr.space.entry(), r.TrapInstance)
			}
		}
	}
	if len(homes) < cfg.Hosts-1 {
		t.Errorf("%d distinct home pages, want %d", len(homes), cfg.Hosts-1)
	}

	// The redirect of host 0 leads to host 1 by name.
	if got := get(t, c, w.hosts[0].base+"/away"); got.header.Get("Location") != w.hosts[1].base+"/p/0.html" {
		t.Errorf("/away redirects to %q", got.header.Get("Location"))
	}
	// The dead seed resolves to an address where nothing listens.
	dead := w.Seeds()[len(w.Seeds())-1]
	if !strings.HasPrefix(dead, "http://h0051.synth.test:") {
		t.Errorf("dead seed %s", dead)
	}
	if _, err := c.Get(dead); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("GET dead seed: %v, want connection refused", err)
	}

	rep := w.Audit(AuditConfig{IPConcurrency: 1})
	if rep.Addresses != 2 || rep.MaxPerIP != 1 || rep.PerIP[hostAddr(0)].Hosts != 25 || rep.IPConcurrency.Count != 0 || rep.Misdirected.Count != 0 {
		t.Errorf("one request at a time: %d addresses, at most %d in flight, per IP %v\n%s", rep.Addresses, rep.MaxPerIP, rep.PerIP, rep)
	}
}

// TestMisdirected asks each address for names it does not serve.
func TestMisdirected(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Addresses = 4, 2, 2
	w := startWeb(t, cfg)
	port := w.Hosts()[0][strings.LastIndexByte(w.Hosts()[0], ':')+1:]
	c := rawClient()
	tests := []struct {
		addr   int // address index
		host   string
		status int
	}{
		{0, "h0001.synth.test:" + port, 200},
		{0, "H0003.Synth.Test.:" + port, 200}, // case and a trailing dot do not matter
		{0, "h0003.synth.test", 200},          // nor a missing port
		{0, "h0002.synth.test:" + port, 421},  // on the other address
		{1, "h0002.synth.test:" + port, 200},
		{1, "h0001.synth.test:" + port, 421},
		{0, "h0001.synth.test:1", 421}, // another port
		{0, "nosuch.synth.test:" + port, 421},
		{0, hostAddr(0) + ":" + port, 421}, // names only
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.addr, tt.host), func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(hostAddr(tt.addr), port)+"/p/1.html", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host
			n := len(w.Requests())
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			wantKind := "page"
			if tt.status == 421 {
				wantKind = kindMisdirected
			}
			r := lastLogged(t, w, n)
			if r.Addr != hostAddr(tt.addr) || r.Status != tt.status || r.Kind != wantKind {
				t.Errorf("logged on %q as %d %s, want %s, %d %s", r.Addr, r.Status, r.Kind, hostAddr(tt.addr), tt.status, wantKind)
			}
		})
	}
	rep := w.Audit(AuditConfig{})
	if rep.Misdirected.Count != 5 || rep.PerIP[hostAddr(0)].Requests != 7 || rep.PerIP[hostAddr(1)].Requests != 2 {
		t.Errorf("misdirected %d, per IP %v\n%s", rep.Misdirected.Count, rep.PerIP, rep)
	}
	for _, r := range w.Requests() {
		if r.Kind == kindMisdirected && (r.Status != 421 || r.Addr == "" || r.Resource != r.Host+"/p/1.html") {
			t.Errorf("misdirected request logged as %+v", r)
		}
	}
}

// lastLogged waits for the log to hold more than n requests and returns
// the last: the handler logs a request after the client has the answer.
func lastLogged(tb testing.TB, w *Web, n int) Request {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if log := w.Requests(); len(log) > n {
			return log[len(log)-1]
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no request logged after the first %d", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAddressesZero checks that without Config.Addresses hosts are their
// addresses, as they always were, and that Request.Addr is set alike.
func TestAddressesZero(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost = 3, 2
	w := startWeb(t, cfg)
	for i, key := range w.Hosts() {
		addr, port, err := net.SplitHostPort(key)
		if err != nil || addr != hostAddr(i) || port == "" {
			t.Errorf("host %d is %q, want %s:PORT", i, key, hostAddr(i))
		}
		if w.Seeds()[i] != "http://"+key+"/" {
			t.Errorf("seed %d is %s", i, w.Seeds()[i])
		}
		get(t, rawClient(), "http://"+key+"/")
		if r := logEntry(t, w, key, "/"); r.Addr != hostAddr(i) {
			t.Errorf("%s logged on %q", key, r.Addr)
		}
	}
	if names := parseHostsFile(t, w.HostsFile()); len(names) != 0 {
		t.Errorf("hosts file of a web without names maps %v", names)
	}
	if rep := w.Audit(AuditConfig{}); rep.Addresses != 3 || rep.MaxPerIP != 1 {
		t.Errorf("%d addresses, at most %d in flight", rep.Addresses, rep.MaxPerIP)
	}
}

func TestWriteHostsFile(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Hosts, cfg.PagesPerHost, cfg.Addresses = 200, 1, 1
	w := startWeb(t, cfg)
	path := filepath.Join(t.TempDir(), "hosts")
	if err := w.WriteHostsFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != w.HostsFile() {
		t.Fatalf("read back %q (err %v), want HostsFile", b, err)
	}
	if !strings.HasPrefix(string(b), "# synthweb: 200 host names on 1 loopback address\n127.0.1.1 h0001.synth.test\n127.0.1.1 h0002.synth.test\n") {
		t.Errorf("hosts file starts %q", string(b)[:120])
	}
	names := parseHostsFile(t, string(b))
	if len(names) != 200 || names["h0200.synth.test"] != "127.0.1.1" {
		t.Errorf("%d names, h0200 on %q", len(names), names["h0200.synth.test"])
	}
	if err := w.WriteHostsFile(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Error("WriteHostsFile into a missing directory succeeded")
	}

	// DialContext resolves the names and refuses others under NameDomain.
	if got := get(t, webClient(w), "http://"+w.Hosts()[199]+"/robots.txt"); got.status != 200 {
		t.Errorf("robots.txt of host 199: %d", got.status)
	}
	var dnsErr *net.DNSError
	if _, err := w.DialContext(context.Background(), "tcp", "h0201.synth.test:80"); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("dial a name the web does not have: %v", err)
	}
}

func TestAddressesConfig(t *testing.T) {
	for _, n := range []int{-1, 7} {
		cfg := DefaultConfig()
		cfg.Addresses = n
		if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("Addresses %d with %d hosts: %v, want ErrConfig", n, cfg.Hosts, err)
		}
	}
}

// TestPoliteCrawlerPassesNamed crawls the Features web of changing pages
// under host names on two addresses: every special case works as it does
// on one address per host.
func TestPoliteCrawlerPassesNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls for several seconds")
	}
	cfg := featuresConfig()
	cfg.Addresses = 2
	cfg.Change = DefaultChangeConfig()
	cfg.Change.Enabled = true
	w := startWeb(t, cfg)
	acfg := AuditConfig{
		DefaultDelay:  30 * time.Millisecond,
		MinDelay:      10 * time.Millisecond,
		MaxDelay:      150 * time.Millisecond,
		MaxRetries:    1,
		IPConcurrency: 1,
	}
	c := newPoliteCrawler(t, w, acfg)
	c.client.Transport.(*http.Transport).DialContext = w.DialContext
	c.crawl(w.Seeds())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep := w.Audit(acfg)
	if !rep.OK() || rep.Coverage != 1 || rep.Addresses != 2 || rep.Hosts != 6 {
		t.Errorf("a polite crawler fails the audit of the named web:\n%s", rep)
	}
	for _, trap := range []string{"calendar", "repeat", "depth", "redirect_loop"} {
		if rep.TrapRequests[trap] == 0 {
			t.Errorf("the depth-limited crawler never entered the %s trap", trap)
		}
	}
}
