package console_test

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/console"
	"github.com/crawlcluster/crawler/pkg/submit"
)

func get(t *testing.T, method, url, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestHandlerServesShellAndFiles(t *testing.T) {
	srv := httptest.NewServer(console.Handler(console.Access{}))
	defer srv.Close()
	for _, c := range []struct {
		path, method string
		code         int
		ctype, body  string
	}{
		{"/", "GET", 200, "text/html", `<script src="app.js"`},
		{"/app.js", "GET", 200, "text/javascript", "'use strict'"},
		{"/app.css", "GET", 200, "text/css", ":root"},
		{"/favicon.svg", "GET", 200, "image/svg+xml", "<svg"},
		{"/index.html", "GET", 200, "text/html", `id="login-form"`},
		{"/nope.js", "GET", 404, "text/plain", ""},
		{"/", "POST", 405, "text/plain", ""},
	} {
		resp, body := get(t, c.method, srv.URL+c.path, "")
		if resp.StatusCode != c.code {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, resp.StatusCode, c.code)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); c.ctype != "" && !strings.HasPrefix(ct, c.ctype) {
			t.Errorf("%s %s: Content-Type %q, want %s", c.method, c.path, ct, c.ctype)
		}
		if !strings.Contains(body, c.body) {
			t.Errorf("%s %s: body lacks %q", c.method, c.path, c.body)
		}
		if c.code == 200 && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: no Content-Security-Policy", c.path)
		}
	}
}

// The console must work with no internet: no file may name another origin.
func TestAssetsLoadNothingFromOutside(t *testing.T) {
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?https?:`)
	err := fs.WalkDir(console.Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(console.Files(), path)
		if err != nil {
			return err
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to another origin: %q", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Mounted on the API, the console answers outside /api/ without a token while
// the API keeps its JSON errors and its auth; -console-public opens GET routes
// only.
func TestMountedOnAPI(t *testing.T) {
	e := testenv.New(t)
	for _, public := range []bool{false, true} {
		s := api.New(api.Config{Tokens: []string{"tok"}, Public: public}, submit.New(e.DB, e.Kafka), e.DB, nil, nil, e.Log,
			api.WithConsole(console.Handler(console.Access{Tokens: true, Public: public})))
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()

		resp, body := get(t, "GET", srv.URL+"/", "")
		if resp.StatusCode != 200 || !strings.Contains(body, `id="login-form"`) {
			t.Errorf("public=%v: GET / status %d, want the shell", public, resp.StatusCode)
		}
		want := fmt.Sprintf(`{"tokens":true,"public":%v}`, public)
		if resp, body := get(t, "GET", srv.URL+"/config.json", ""); resp.StatusCode != 200 || body != want {
			t.Errorf("public=%v: GET /config.json: %d %s, want %s", public, resp.StatusCode, body, want)
		}
		resp, body = get(t, "GET", srv.URL+"/api/v1/nope", "tok")
		if resp.StatusCode != 404 || !strings.Contains(body, `"no such route`) {
			t.Errorf("public=%v: unknown /api/ route: %d %s, want the JSON 404", public, resp.StatusCode, body)
		}
		if resp, _ := get(t, "GET", srv.URL+"/-/healthy", ""); resp.StatusCode != 200 {
			t.Errorf("public=%v: /-/healthy %d", public, resp.StatusCode)
		}

		wantGet := http.StatusUnauthorized
		if public {
			wantGet = http.StatusOK
		}
		if resp, body := get(t, "GET", srv.URL+"/api/v1/stats", ""); resp.StatusCode != wantGet {
			t.Errorf("public=%v: GET stats without a token: %d %s, want %d", public, resp.StatusCode, body, wantGet)
		}
		if resp, _ := get(t, "GET", srv.URL+"/api/v1/stats", "tok"); resp.StatusCode != http.StatusOK {
			t.Errorf("public=%v: GET stats with the token: %d", public, resp.StatusCode)
		}
		// A control action never goes through without a token.
		if resp, _ := get(t, "POST", srv.URL+"/api/v1/frontier/urls", ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("public=%v: POST seeds without a token: %d, want 401", public, resp.StatusCode)
		}
	}
}
