package nginxtest

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestServeAndLog(t *testing.T) {
	if _, err := Binary(); err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.html"), []byte("<p>a</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("<p>big</p>"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "big.html.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Start(t, root)

	// The transport asks for gzip and decodes it; DisableCompression asks for
	// nothing, so nginx must decompress the stored file itself.
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}
	for _, c := range []struct {
		client *http.Client
		path   string
		status int
		body   string
	}{
		{http.DefaultClient, "/a.html", 200, "<p>a</p>"},
		{http.DefaultClient, "/big.html?x=1", 200, "<p>big</p>"},
		{plain, "/big.html", 200, "<p>big</p>"},
		{plain, "/missing.html", 404, ""},
	} {
		resp, err := c.client.Get(s.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("GET %s: status %d, want %d", c.path, resp.StatusCode, c.status)
		}
		if c.status == 200 && string(body) != c.body {
			t.Errorf("GET %s: body %q, want %q", c.path, body, c.body)
		}
		if c.status == 200 && resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", c.path, resp.Header.Get("Content-Type"))
		}
	}

	s.Stop()
	reqs, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		target string
		status int
	}{{"/a.html", 200}, {"/big.html?x=1", 200}, {"/big.html", 200}, {"/missing.html", 404}}
	if len(reqs) != len(want) {
		t.Fatalf("%d requests logged, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, w := range want {
		r := reqs[i]
		if r.Target != w.target || r.Status != w.status || r.Method != "GET" {
			t.Errorf("request %d: %+v, want GET %s %d", i, r, w.target, w.status)
		}
		if d := time.Since(r.At); d < 0 || d > time.Minute {
			t.Errorf("request %d logged at %v, %v ago", i, r.At, d)
		}
	}
}
