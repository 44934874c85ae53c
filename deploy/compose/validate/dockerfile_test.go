package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// TestDockerfile parses the Dockerfile with BuildKit's own parser and checks the
// image: multi-stage, every binary built static with the version stamped, a
// non-root runtime stage, and exec-form commands (the distroless runtime has no
// shell to run a shell-form one).
func TestDockerfile(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("parse Dockerfile: %v", err)
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		t.Fatalf("Dockerfile instructions: %v", err)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a multi-stage build", len(stages))
	}
	var runs []string
	for _, st := range stages[:len(stages)-1] {
		for _, c := range st.Commands {
			if r, ok := c.(*instructions.RunCommand); ok {
				runs = append(runs, strings.Join(r.CmdLine, " "))
			}
		}
	}
	build := strings.Join(runs, "\n")
	for _, want := range append([]string{
		"-X github.com/crawlcluster/crawler/internal/version.Version=${VERSION}",
		"-X github.com/crawlcluster/crawler/internal/version.Commit=${COMMIT}",
	}, func() (s []string) {
		for _, b := range binaries {
			s = append(s, "./cmd/"+b)
		}
		return s
	}()...) {
		if !strings.Contains(build, want) {
			t.Errorf("the build stage does not run %q", want)
		}
	}
	cgoOff := strings.Contains(build, "CGO_ENABLED=0")
	for _, st := range stages[:len(stages)-1] {
		for _, c := range st.Commands {
			if e, ok := c.(*instructions.EnvCommand); ok {
				for _, kv := range e.Env {
					cgoOff = cgoOff || (kv.Key == "CGO_ENABLED" && kv.Value == "0")
				}
			}
		}
	}
	if !cgoOff {
		t.Error("the build stage does not set CGO_ENABLED=0 (static binaries)")
	}

	final := stages[len(stages)-1]
	var user string
	workdir := false
	for _, c := range final.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.WorkdirCommand:
			workdir = true
		case *instructions.CmdCommand:
			if c.PrependShell {
				t.Errorf("CMD %v is shell form; the runtime image has no shell", c.CmdLine)
			}
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				t.Errorf("ENTRYPOINT %v is shell form; the runtime image has no shell", c.CmdLine)
			}
		case *instructions.RunCommand:
			t.Errorf("RUN %v in the runtime stage; it has no shell", c.CmdLine)
		}
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "0" || u == "root" {
		t.Errorf("runtime stage runs as %q, want a non-root user", user)
	}
	if !workdir {
		t.Error("runtime stage has no WORKDIR")
	}
}
