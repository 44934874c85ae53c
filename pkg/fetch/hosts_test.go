package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	h, err := ParseHosts(strings.NewReader("# pinned\n127.0.2.1 a.test B.Test.  # two names\n\n::1 a.test\n::ffff:10.0.0.1 c.test\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a.test": {"127.0.2.1", "::1"}, "b.test": {"127.0.2.1"}, "c.test": {"10.0.0.1"}}
	if len(h) != len(want) {
		t.Errorf("names %v, want %v", h, want)
	}
	for name, addrs := range want {
		if got := h[name]; len(got) != len(addrs) || got[0].String() != addrs[0] || got[len(got)-1].String() != addrs[len(addrs)-1] {
			t.Errorf("%s -> %v, want %v", name, got, addrs)
		}
	}
	for _, bad := range []string{"a.test 127.0.0.1\n", "127.0.0.1\n", "fe80::1%eth0 x.test\n", "300.1.1.1 x.test\n", "0.0.0.0 ..\n", "1.2.3.4 a..b\n", "1.2.3.4 .a\n"} {
		if _, err := ParseHosts(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseHosts(%q): %v, want an error naming line 1", bad, err)
		}
	}
}

// TestHostsFile: names in -hosts-file resolve to its addresses (served here
// on loopback), others go to the resolver, and a bad file is a config error.
func TestHostsFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Host)) }))
	defer srv.Close()
	_, port, _ := strings.Cut(srv.Listener.Addr().String(), ":")
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("127.0.0.1 site.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dns := newFakeDNS(map[string][]string{"other.test": {"127.0.0.1"}})
	c := newClient(t, func(cfg *Config) { cfg.HostsFile, cfg.Resolver = path, dns.resolve })
	resp, err := c.Do(context.Background(), Request{URL: "http://site.test:" + port + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "site.test:"+port {
		t.Errorf("served %q", resp.Body)
	}
	if dns.calls["site.test"] != 0 {
		t.Error("a name in the hosts file was asked of the resolver")
	}
	if _, err := c.Do(context.Background(), Request{URL: "http://other.test:" + port + "/"}); err != nil || dns.calls["other.test"] != 1 {
		t.Errorf("other name: %v, resolver calls %d", err, dns.calls["other.test"])
	}

	if err := os.WriteFile(path, []byte("site.test 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{UserAgent: testUA, HostsFile: path}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad hosts file: %v, want ErrInvalidConfig", err)
	}
}

func TestServer(t *testing.T) {
	dns := newFakeDNS(map[string][]string{
		"v4.test": {"127.0.2.1"}, "v6.test": {"2001:db8:1:2:aaaa::1"}, "mixed.test": {"10.0.0.1", "8.8.8.8"},
	})
	open := newClient(t, func(cfg *Config) { cfg.Resolver = dns.resolve })
	guarded := newClient(t, func(cfg *Config) { cfg.Resolver, cfg.AllowPrivate = dns.resolve, false })
	for _, tt := range []struct {
		c          *Client
		host, want string
	}{
		{open, "v4.test:8080", "127.0.2.1"},
		{open, "v6.test", "2001:db8:1:2::/64"},
		{open, "[2001:db8:1:2:ffff::9]:443", "2001:db8:1:2::/64"},
		{open, "[::ffff:127.0.0.1]:80", "127.0.0.1"},
		{open, "mixed.test", "10.0.0.1"},
		{guarded, "mixed.test", "8.8.8.8"}, // the guard skips 10.0.0.1, as the dialer does
	} {
		got, err := tt.c.Server(context.Background(), tt.host)
		if err != nil || got != tt.want {
			t.Errorf("Server(%q) = %q, %v; want %q", tt.host, got, err, tt.want)
		}
	}
	if _, err := guarded.Server(context.Background(), "v4.test"); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("private-only name with the guard on: %v", err)
	}
	if k := ServerKey(netip.MustParseAddr("2001:db8::1")); k != ServerKey(netip.MustParseAddr("2001:db8::ffff:1")) {
		t.Error("two addresses of one /64 are two servers")
	}
}

func FuzzParseHosts(f *testing.F) {
	f.Add("127.0.0.1 a.test b.test # c\n::1 a.test\n")
	f.Add("\n\n#\n 1.2.3.4\tx\n")
	f.Add("0.0.0.0 ..\n")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHosts(strings.NewReader(s))
		if err != nil {
			return
		}
		for name, addrs := range h {
			if name == "" || name != strings.ToLower(name) || strings.HasSuffix(name, ".") || strings.HasPrefix(name, ".") || len(addrs) == 0 {
				t.Fatalf("entry %q -> %v", name, addrs)
			}
			for _, a := range addrs {
				if !a.IsValid() || a.Is4In6() || a.Zone() != "" {
					t.Fatalf("address %v of %q", a, name)
				}
			}
		}
	})
}
