package version

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	want := "crawler dev (commit unknown, " + runtime.Version() + ")"
	if got := String("crawler"); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestProduct(t *testing.T) {
	want := "crawlcluster/dev (parser; commit unknown; " + runtime.Version() + ")"
	if got := Product("parser"); got != want {
		t.Errorf("Product = %q, want %q", got, want)
	}
}

// TestStampedBinary builds a binary with the version and commit set by -ldflags -X,
// as the Dockerfile does (there with CGO_ENABLED=0; here with the default, so the
// build shares its cache with the other tests' builds), and checks -version.
func TestStampedBinary(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	const pkg = "github.com/crawlcluster/crawler/internal/version"
	bin := filepath.Join(t.TempDir(), "frontier")
	build := exec.Command(goBin, "build", "-o", bin,
		"-ldflags", "-X "+pkg+".Version=0.1.0 -X "+pkg+".Commit=abc123",
		"github.com/crawlcluster/crawler/cmd/frontier")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// No backends configured: -version must answer before any validation.
	cmd := exec.Command(bin, "-version")
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("frontier -version: %v", err)
	}
	want := "frontier 0.1.0 (commit abc123, " + runtime.Version() + ")\n"
	if string(out) != want {
		t.Errorf("frontier -version printed %q, want %q", out, want)
	}
	if strings.Count(string(out), "\n") != 1 {
		t.Errorf("want exactly one line, got %q", out)
	}
}
