// Package console is the operator console: a small single-page application that
// watches and steers a crawl through the JSON API, served at / by the frontier tier
// and by the embedded crawler (see api.WithConsole).
//
// It is one HTML shell, one JavaScript file and one style sheet, embedded in the
// binary and written without a framework or a build step, so the console works on a
// machine with no internet and is reviewed as the files it serves. Charts are
// inline SVG drawn by the script. The shell holds no crawl data: every number comes
// from an API call that carries the operator's bearer token, kept in the browser's
// sessionStorage from the login form. The Content-Security-Policy lets the page
// load and call nothing but its own origin.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
)

//go:embed assets
var assets embed.FS

// Files are the console's files, for tests that check what is served.
func Files() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// csp keeps the page to its own origin: no script, style, image or connection
// elsewhere, and no inline script, so injected markup cannot run.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Access is how the API behind the console is protected, which the page reads
// from /config.json before its first call: with a token required it shows the
// login form instead of asking the API and being refused.
type Access struct {
	Tokens bool `json:"tokens"` // the API needs a bearer token
	Public bool `json:"public"` // its GET routes do not (-console-public)
}

// Handler serves the console: the shell at /, its files and /config.json.
// Pages are hash routes (/#/hosts/example.com), so a deep link always loads
// the shell; any other path is a 404.
func Handler(access Access) http.Handler {
	files := Files()
	config, err := json.Marshal(access)
	if err != nil {
		panic(err) // two booleans
	}
	fileServer := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// Small files; a new binary must show its own console at once.
		h.Set("Cache-Control", "no-cache")
		name := path.Clean(r.URL.Path)
		if name == "/config.json" {
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(config)
			return
		}
		if name == "/" || name == "/index.html" {
			http.ServeFileFS(w, r, files, "index.html")
			return
		}
		if _, err := fs.Stat(files, name[1:]); err != nil {
			http.NotFound(w, r)
			return
		}
		fileServer.ServeHTTP(w, r)
	})
}
