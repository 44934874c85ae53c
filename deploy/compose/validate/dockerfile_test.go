package validate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// rendererTarget is the Dockerfile stage with Chromium (docker build --target
// renderer); the last stage, the default target, is distroless.
const rendererTarget = "renderer"

// dockerfile is the parsed Dockerfile: its stages and the defaults of its
// global ARGs (which the FROM lines expand).
type dockerfile struct {
	stages []instructions.Stage
	args   map[string]string
}

func parseDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("parse Dockerfile: %v", err)
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		t.Fatalf("Dockerfile instructions: %v", err)
	}
	d := dockerfile{stages: stages, args: map[string]string{}}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if kv.Value != nil {
				d.args[kv.Key] = *kv.Value
			}
		}
	}
	return d
}

// base is the image a stage starts from, with the global ARGs expanded.
func (d dockerfile) base(st instructions.Stage) string {
	return os.Expand(st.BaseName, func(k string) string { return d.args[strings.Trim(k, "{}")] })
}

func (d dockerfile) stage(name string) (instructions.Stage, bool) {
	i := slices.IndexFunc(d.stages, func(s instructions.Stage) bool { return strings.EqualFold(s.Name, name) })
	if i < 0 {
		return instructions.Stage{}, false
	}
	return d.stages[i], true
}

// runtimeImage is what a runtime stage (the default target or the renderer)
// holds, as the checks need it.
type runtimeImage struct {
	user, cmd string
	workdir   bool
	binaries  []string // COPY --from sources of /usr/local/bin/
	runs      []string
	env       map[string]string
}

// runtime reads a runtime stage and checks what both runtime images must do:
// a non-root user, a WORKDIR, exec-form commands.
func runtime(t *testing.T, st instructions.Stage) runtimeImage {
	t.Helper()
	img := runtimeImage{env: map[string]string{}}
	for _, c := range st.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			img.user = c.User
		case *instructions.WorkdirCommand:
			img.workdir = true
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				img.env[kv.Key] = kv.Value
			}
		case *instructions.CmdCommand:
			img.cmd = strings.Join(c.CmdLine, " ")
			if c.PrependShell {
				t.Errorf("stage %s: CMD %v is shell form; run the binary, not a shell", st.Name, c.CmdLine)
			}
		case *instructions.EntrypointCommand:
			if c.PrependShell {
				t.Errorf("stage %s: ENTRYPOINT %v is shell form", st.Name, c.CmdLine)
			}
		case *instructions.RunCommand:
			img.runs = append(img.runs, strings.Join(c.CmdLine, " "))
		case *instructions.CopyCommand:
			if c.From != "" && strings.HasPrefix(c.DestPath, "/usr/local/bin") {
				img.binaries = append(img.binaries, c.From+":"+strings.Join(c.SourcePaths, ","))
			}
		}
	}
	if u, _, _ := strings.Cut(img.user, ":"); u == "" || u == "0" || u == "root" {
		t.Errorf("stage %s runs as %q, want a non-root user", st.Name, img.user)
	}
	if !img.workdir {
		t.Errorf("stage %s has no WORKDIR", st.Name)
	}
	if len(img.binaries) == 0 {
		t.Errorf("stage %s copies no binaries into /usr/local/bin", st.Name)
	}
	return img
}

// TestDockerfile parses the Dockerfile with BuildKit's own parser and checks the
// image: one build stage that builds every binary static with the version
// stamped; a distroless default target with no shell (so no RUN); a renderer
// target with Debian's chromium, the same binaries and the same non-root user.
func TestDockerfile(t *testing.T) {
	d := parseDockerfile(t)
	if len(d.stages) < 2 {
		t.Fatalf("%d stages, want a multi-stage build", len(d.stages))
	}
	// The build stage is the one stage that runs go build, and both runtime
	// images copy their binaries from it.
	var builds []instructions.Stage
	for _, st := range d.stages {
		for _, c := range st.Commands {
			if r, ok := c.(*instructions.RunCommand); ok && strings.Contains(strings.Join(r.CmdLine, " "), "go build") {
				builds = append(builds, st)
				break
			}
		}
	}
	if len(builds) != 1 {
		t.Fatalf("%d stages run go build, want one build stage", len(builds))
	}
	buildStage := builds[0]
	var runs []string
	for _, c := range buildStage.Commands {
		if r, ok := c.(*instructions.RunCommand); ok {
			runs = append(runs, strings.Join(r.CmdLine, " "))
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
	for _, c := range buildStage.Commands {
		if e, ok := c.(*instructions.EnvCommand); ok {
			for _, kv := range e.Env {
				cgoOff = cgoOff || (kv.Key == "CGO_ENABLED" && kv.Value == "0")
			}
		}
	}
	if !cgoOff {
		t.Error("the build stage does not set CGO_ENABLED=0 (static binaries)")
	}

	// The default target (the last stage) serves the frontier, fetcher and
	// parser: distroless, nothing to run a RUN with, no browser.
	final := d.stages[len(d.stages)-1]
	def := runtime(t, final)
	if b := d.base(final); !strings.Contains(b, "distroless") {
		t.Errorf("the default target starts from %q, want a distroless image (the fetcher's attack surface)", b)
	}
	if strings.EqualFold(final.Name, rendererTarget) {
		t.Errorf("the renderer is the last stage, so a plain docker build gives the browser image")
	}
	for _, r := range def.runs {
		t.Errorf("RUN %s in the default target; distroless has no shell", r)
	}

	// The renderer target: Debian with chromium, the same binaries from the same
	// build stage, the same user (the chart's securityContext serves both).
	rs, ok := d.stage(rendererTarget)
	if !ok {
		t.Fatalf("no %q stage (docker build --target %s)", rendererTarget, rendererTarget)
	}
	ren := runtime(t, rs)
	if b := d.base(rs); !strings.HasPrefix(b, "debian:") || !strings.Contains(b, "bookworm") {
		t.Errorf("the renderer target starts from %q, want Debian bookworm (its chromium package)", b)
	}
	install := strings.Join(ren.runs, "\n")
	pkgs := aptInstalled(install)
	for _, pkg := range []string{"chromium", "fonts-liberation", "ca-certificates"} {
		if !slices.Contains(pkgs, pkg) {
			t.Errorf("the renderer target does not apt-get install %s (it installs %v)", pkg, pkgs)
		}
	}
	if !strings.Contains(install, "--no-install-recommends") || !strings.Contains(install, "rm -rf /var/lib/apt/lists") {
		t.Error("the renderer target installs recommends or keeps the apt lists")
	}
	if !slices.Equal(ren.binaries, def.binaries) {
		t.Errorf("the renderer target copies %v, the default target %v; want the same binaries", ren.binaries, def.binaries)
	}
	for _, b := range ren.binaries {
		if from, _, _ := strings.Cut(b, ":"); !strings.EqualFold(from, buildStage.Name) {
			t.Errorf("the renderer copies binaries from %q, not the build stage %q", from, buildStage.Name)
		}
	}
	if ren.user != def.user {
		t.Errorf("the renderer runs as %q, the default target as %q; want the same user", ren.user, def.user)
	}
	if uid, _, _ := strings.Cut(ren.user, ":"); !strings.Contains(install, "--uid "+uid) {
		t.Errorf("the renderer target runs as %q but creates no user with that uid", ren.user)
	}
	if ren.env["CRAWLER_BROWSER"] != "/usr/bin/chromium" {
		t.Errorf("the renderer target sets CRAWLER_BROWSER=%q, want Debian's /usr/bin/chromium", ren.env["CRAWLER_BROWSER"])
	}
	if h := ren.env["HOME"]; h != "/tmp" {
		t.Errorf("the renderer target's HOME is %q; Chromium writes there, and /tmp is the writable folder on a read-only root", h)
	}
	if !strings.HasPrefix(ren.cmd, "renderer") {
		t.Errorf("the renderer target's CMD is %q, want the renderer binary", ren.cmd)
	}
}

// aptInstalled returns the packages the apt-get install commands of a shell
// script name (its arguments up to the next && or ;, options left out).
func aptInstalled(script string) []string {
	var pkgs []string
	for _, cmd := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '&' || r == '\n' }) {
		f := strings.Fields(cmd)
		j, i := slices.Index(f, "apt-get"), slices.Index(f, "install")
		if j < 0 || i < j {
			continue
		}
		for _, a := range f[i+1:] {
			if !strings.HasPrefix(a, "-") {
				pkgs = append(pkgs, a)
			}
		}
	}
	return pkgs
}
