// Package version holds the version and commit stamped into every binary at build
// time, and the -version flag that prints them:
//
//	go build -ldflags "-X github.com/crawlcluster/crawler/internal/version.Version=0.1.0 \
//	    -X github.com/crawlcluster/crawler/internal/version.Commit=abc123" ./cmd/...
//
// Unstamped builds (go run, go test) report "dev" and "unknown".
package version

import (
	"flag"
	"fmt"
	"io"
	"runtime"
)

// Set with -ldflags -X at build time; variables, not constants, so the linker can.
var (
	Version = "dev"
	Commit  = "unknown"
)

// String is the version line of a binary: "crawler 0.1.0 (commit abc123, go1.26.8)".
func String(name string) string {
	return fmt.Sprintf("%s %s (commit %s, %s)", name, Version, Commit, runtime.Version())
}

// Product names the software the way a User-Agent does, with the binary,
// commit and Go version as its comment, for records that say which program
// wrote them (a WARC file's warcinfo): "crawlcluster/0.1.0 (parser; commit
// abc123; go1.26.8)".
func Product(name string) string {
	return fmt.Sprintf("crawlcluster/%s (%s; commit %s; %s)", Version, name, Commit, runtime.Version())
}

// Flag registers -version on fs. After parsing, a main that finds it set prints the
// line with Print and exits 0.
func Flag(fs *flag.FlagSet) *bool {
	return fs.Bool("version", false, "print the version and commit, then exit")
}

// Print writes the version line of the binary name to w.
func Print(w io.Writer, name string) {
	fmt.Fprintln(w, String(name))
}
