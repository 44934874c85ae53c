package fetch

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/internal/testca"
)

// verifies reports whether pool trusts a server certificate ca signed.
func verifies(t *testing.T, pool *x509.CertPool, ca *testca.CA) bool {
	t.Helper()
	return trusts(pool, leafOf(t, ca))
}

func leafOf(t *testing.T, ca *testca.CA) *x509.Certificate {
	t.Helper()
	leaf, err := x509.ParseCertificate(ca.Leaf(t).Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func trusts(pool *x509.CertPool, leaf *x509.Certificate) bool {
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"})
	return err == nil
}

func TestLoadCAFile(t *testing.T) {
	ca, other := testca.New(t), testca.New(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	key := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	broken := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})

	t.Run("bundle", func(t *testing.T) {
		// A key block and text between blocks are skipped; both CAs count.
		path := write("bundle.pem", append(append(append([]byte("# intranet roots\n"), key...), ca.PEM...), other.PEM...))
		pool, err := LoadCAFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !verifies(t, pool, ca) || !verifies(t, pool, other) {
			t.Error("a CA of the file is not trusted")
		}
		if verifies(t, pool, testca.New(t)) {
			t.Error("a CA not in the file is trusted")
		}
	})
	for _, tt := range []struct {
		name, path string
		want       string // in the error
		is         error
	}{
		{"missing", filepath.Join(dir, "absent.pem"), "absent.pem", fs.ErrNotExist},
		{"empty", write("empty.pem", nil), "empty.pem: no PEM certificate", ErrNoCertificate},
		{"no certificate", write("key.pem", append([]byte("just text\n"), key...)), "key.pem: no PEM certificate", ErrNoCertificate},
		{"DER", write("ca.der", ca.Cert.Raw), "ca.der: no PEM certificate", ErrNoCertificate},
		{"broken certificate", write("broken.pem", append(append([]byte{}, ca.PEM...), broken...)), "broken.pem: certificate 2: x509:", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool, err := LoadCAFile(tt.path)
			if err == nil || pool != nil {
				t.Fatalf("LoadCAFile = %v, %v; want an error", pool, err)
			}
			if !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Errorf("error %q, want it to contain %q (and wrap %v)", err, tt.want, tt.is)
			}
			// The same file stops the configuration from validating, so a
			// process says so at start-up.
			cfg := Config{UserAgent: testUA, CAFile: tt.path}
			if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate: %v, want ErrInvalidConfig naming %q", err, tt.want)
			}
		})
	}
}

// TestCAFileAddsToSystemRoots runs itself in a child process whose system
// roots are one CA (SSL_CERT_FILE, read once per process): with -ca-file
// naming another, servers of both are trusted, the system's roots not
// replaced.
func TestCAFileAddsToSystemRoots(t *testing.T) {
	if os.Getenv("FETCH_TEST_ADDED_CA") != "" {
		system, err := x509.SystemCertPool()
		if err != nil {
			t.Fatal(err)
		}
		pool, err := LoadCAFile(os.Getenv("FETCH_TEST_ADDED_CA"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			pool *x509.CertPool
			leaf string // the variable naming the server certificate's file
			want bool
		}{
			{"system pool, server of the system CA", system, "FETCH_TEST_SYSTEM_LEAF", true},
			{"system pool, server of the added CA", system, "FETCH_TEST_ADDED_LEAF", false},
			{"loaded pool, server of the system CA", pool, "FETCH_TEST_SYSTEM_LEAF", true},
			{"loaded pool, server of the added CA", pool, "FETCH_TEST_ADDED_LEAF", true},
		} {
			if got := trusts(c.pool, readCert(t, os.Getenv(c.leaf))); got != c.want {
				t.Errorf("%s: trusted %v, want %v", c.name, got, c.want)
			}
		}
		return
	}
	system, added := testca.New(t), testca.New(t)
	dir := t.TempDir()
	leafFile := func(name string, ca *testca.CA) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafOf(t, ca).Raw}), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCAFileAddsToSystemRoots$", "-test.v")
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+system.WriteFile(t), "SSL_CERT_DIR=",
		"FETCH_TEST_ADDED_CA="+added.WriteFile(t),
		"FETCH_TEST_SYSTEM_LEAF="+leafFile("system-leaf.pem", system), "FETCH_TEST_ADDED_LEAF="+leafFile("added-leaf.pem", added))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCAFileAddsToSystemRoots") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ParseCAs(data)
	if err != nil {
		t.Fatal(err)
	}
	return certs[0]
}

// TestClientCAFile fetches from a server whose certificate a private CA
// signed: refused as a TLS failure without -ca-file, fetched with it.
func TestClientCAFile(t *testing.T) {
	ca := testca.New(t)
	srv := ca.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("intranet")) }))
	plain := newClient(t, nil)
	if _, err := plain.Do(t.Context(), Request{URL: srv.URL + "/"}); Classify(err) != ClassTLS {
		t.Errorf("without the CA: %v (class %q), want a TLS failure", err, Classify(err))
	}
	trusting := newClient(t, func(c *Config) { c.CAFile = ca.WriteFile(t) })
	resp := mustDo(t, trusting, Request{URL: srv.URL + "/"})
	if resp.Status != http.StatusOK || string(resp.Body) != "intranet" {
		t.Errorf("with the CA: %d %q", resp.Status, resp.Body)
	}
}

func FuzzParseCAs(f *testing.F) {
	ca := testca.New(f)
	f.Add(ca.PEM)
	f.Add(append([]byte("x\n"), ca.PEM...))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 0x03, 0x02, 0x01, 0x01}}))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		certs, err := ParseCAs(data)
		if err != nil {
			if certs != nil {
				t.Fatalf("%d certificates with error %v", len(certs), err)
			}
			return
		}
		if len(certs) == 0 {
			t.Fatal("no certificate and no error")
		}
		for _, c := range certs {
			if c == nil || len(c.Raw) == 0 {
				t.Fatalf("empty certificate in %v", certs)
			}
		}
	})
}
