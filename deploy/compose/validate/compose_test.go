// Package validate checks deploy/compose offline, without a Docker engine: the
// compose file loads and validates with compose-go (the library docker compose is
// built on), and follows the rules of the dev cluster (healthchecks, depends_on
// conditions, a scalable fetcher, pinned images, CRAWLER_* variables that name
// real flags). It is a module of its own so the crawler's go.mod stays clean:
//
//	cd deploy/compose/validate && go test ./...
package validate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	yaml "go.yaml.in/yaml/v4"
)

const (
	composeFile = "../compose.yaml"
	repoRoot    = "../../.."
	// ourImage is the repository of the image built from the Dockerfile.
	ourImage = "crawlcluster/crawler"
	// defaultBinary is what the image runs without a command (its CMD).
	defaultBinary = "crawler"
)

// binaries are the commands in the image, by the name a service's command gives.
var binaries = []string{"crawler", "frontier", "fetcher", "parser", "renderer", "broker"}

// load loads compose.yaml as `docker compose config` would, with interpolation of
// the ${VAR:-default} references from an empty environment (so the result does not
// depend on the caller's shell) and schema validation.
func load(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithWorkingDirectory(".."),
		cli.WithEnv([]string{}),
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("load %s: %v", composeFile, err)
	}
	return p
}

// raw is compose.yaml as written, before compose-go fills in defaults (it adds
// condition: service_started to a depends_on entry that has none).
func raw(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parse %s: %v", composeFile, err)
	}
	return doc
}

func TestLoadsAndValidates(t *testing.T) {
	p := load(t)
	for _, want := range []string{"redpanda", "postgres", "redis", "minio", "init-topics", "init-bucket", "frontier", "fetcher", "parser", "renderer", "prometheus", "grafana"} {
		if _, ok := p.Services[want]; !ok {
			t.Errorf("no service %q", want)
		}
	}
	// The project must survive a round trip through the canonical form too, as
	// `docker compose config` prints it.
	if _, err := p.MarshalYAML(); err != nil {
		t.Errorf("marshal: %v", err)
	}
}

// TestHealth: every service has a healthcheck or waits for a healthy one; every
// stateful service (one with a named volume) has a healthcheck of its own.
func TestHealth(t *testing.T) {
	p := load(t)
	healthy := func(s types.ServiceConfig) bool {
		return s.HealthCheck != nil && !s.HealthCheck.Disable && len(s.HealthCheck.Test) > 0 && s.HealthCheck.Test[0] != "NONE"
	}
	for name, s := range p.Services {
		stateful := false
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeVolume {
				stateful = true
			}
		}
		if stateful && !healthy(s) {
			t.Errorf("%s: stateful (named volume) but no healthcheck", name)
		}
		if healthy(s) {
			continue
		}
		waits := false
		for dep, d := range s.DependsOn {
			if d.Condition == types.ServiceConditionHealthy && healthy(p.Services[dep]) {
				waits = true
			}
		}
		if !waits {
			t.Errorf("%s: no healthcheck, and depends on no service with condition service_healthy", name)
		}
	}
}

// TestDependsOnConditions: every depends_on entry is the long form with a
// condition, and each condition can be met by the service it names.
func TestDependsOnConditions(t *testing.T) {
	p := load(t)
	services, _ := raw(t)["services"].(map[string]any)
	if len(services) == 0 {
		t.Fatal("no services in the raw file")
	}
	for name, v := range services {
		svc, _ := v.(map[string]any)
		deps, ok := svc["depends_on"]
		if !ok {
			continue
		}
		m, ok := deps.(map[string]any)
		if !ok {
			t.Errorf("%s: depends_on is a list; use the long form with a condition", name)
			continue
		}
		for dep, dv := range m {
			d, _ := dv.(map[string]any)
			cond, _ := d["condition"].(string)
			if cond == "" {
				t.Errorf("%s: depends_on %s has no condition", name, dep)
				continue
			}
			target, ok := p.Services[dep]
			if !ok {
				t.Errorf("%s: depends_on unknown service %s", name, dep)
				continue
			}
			switch cond {
			case types.ServiceConditionHealthy:
				if target.HealthCheck == nil || target.HealthCheck.Disable {
					t.Errorf("%s: waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
				}
			case types.ServiceConditionCompletedSuccessfully:
				if target.Restart != "" && target.Restart != types.RestartPolicyNo {
					t.Errorf("%s: waits for %s to complete, but %s restarts (%s)", name, dep, dep, target.Restart)
				}
			case types.ServiceConditionStarted:
			default:
				t.Errorf("%s: depends_on %s: unknown condition %q", name, dep, cond)
			}
		}
	}
}

// TestFetcherScales: `docker compose up --scale fetcher=N` needs no fixed name and
// no fixed host port on the fetcher.
func TestFetcherScales(t *testing.T) {
	p := load(t)
	f, ok := p.Services["fetcher"]
	if !ok {
		t.Fatal("no fetcher service")
	}
	if f.ContainerName != "" {
		t.Errorf("fetcher has container_name %q; replicas need generated names", f.ContainerName)
	}
	for _, port := range f.Ports {
		if port.Published != "" {
			t.Errorf("fetcher publishes host port %s; two replicas cannot both bind it", port.Published)
		}
	}
}

// pinned reports whether an image reference names a tag other than latest, or a
// digest.
func pinned(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, ok := strings.Cut(last, ":")
	return ok && tag != "" && tag != "latest" && !strings.Contains(tag, "$")
}

func TestImagesPinned(t *testing.T) {
	p := load(t)
	for name, s := range p.Services {
		if s.Image == "" {
			t.Errorf("%s: no image", name)
			continue
		}
		if !pinned(s.Image) {
			t.Errorf("%s: image %q is not pinned by tag", name, s.Image)
		}
	}
	for _, tc := range []struct {
		ref  string
		want bool
	}{
		{"postgres:15.14-alpine", true},
		{"docker.redpanda.com/redpandadata/redpanda:v25.2.7", true},
		{"localhost:5000/x", false},
		{"redis", false},
		{"redis:latest", false},
		{"redis@sha256:0123", true},
	} {
		if got := pinned(tc.ref); got != tc.want {
			t.Errorf("pinned(%q) = %v", tc.ref, got)
		}
	}
}

// TestDockerfileImagesPinned: the Dockerfile's base images are pinned by tag too.
func TestDockerfileImagesPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{}
	froms := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "ARG":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				args[k] = v
			}
		case "FROM":
			froms++
			ref := f[1]
			if strings.HasPrefix(ref, "--platform") && len(f) > 2 {
				ref = f[2]
			}
			ref = os.Expand(ref, func(k string) string { return args[strings.Trim(k, "{}")] })
			if !pinned(ref) {
				t.Errorf("Dockerfile: FROM %s (%s) is not pinned by tag", f[1], ref)
			}
		}
	}
	if froms < 2 {
		t.Errorf("Dockerfile has %d stages, want a multi-stage build", froms)
	}
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
	buildOut  []byte
)

// build builds every binary of the image from the main module, once.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "compose-validate-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		args := []string{"build", "-o", dir + string(filepath.Separator)}
		for _, b := range binaries {
			args = append(args, "./cmd/"+b)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = repoRoot
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	flagEnv = regexp.MustCompile(`\[\$(CRAWLER_[A-Z0-9_]+)\]`)
	anyEnv  = regexp.MustCompile(`CRAWLER_[A-Z0-9_]+`)
)

// envOf returns the variables a binary reads: the [$CRAWLER_...] marker of each
// flag in its -h output, and any other CRAWLER_ name its help mentions (such as
// the frontier's CRAWLER_API_TOKENS).
func envOf(t *testing.T, bin string) (flags, mentioned map[string]bool) {
	t.Helper()
	cmd := exec.Command(bin, "-h")
	cmd.Env = []string{}
	out, _ := cmd.CombinedOutput() // -h exits 0 or 2 depending on the binary
	flags, mentioned = map[string]bool{}, map[string]bool{}
	for _, m := range flagEnv.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	for _, m := range anyEnv.FindAllString(string(out), -1) {
		mentioned[m] = true
	}
	if len(flags) == 0 {
		t.Fatalf("%s -h shows no [$CRAWLER_...] markers:\n%s", bin, out)
	}
	return flags, mentioned
}

// TestCrawlerEnv: each CRAWLER_* variable given to a service names a flag of the
// binary that service runs, and the binary accepts every value (it parses its
// environment before it answers -version).
func TestCrawlerEnv(t *testing.T) {
	p := load(t)
	dir := build(t)
	names := make([]string, 0, len(p.Services))
	for name := range p.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	ours := 0
	for _, name := range names {
		s := p.Services[name]
		mine := strings.HasPrefix(s.Image, ourImage+":") || s.Build != nil
		if !mine {
			for k := range s.Environment {
				if strings.HasPrefix(k, "CRAWLER_") {
					t.Errorf("%s: %s set on a service that does not run a crawler binary (image %s)", name, k, s.Image)
				}
			}
			continue
		}
		ours++
		bin := defaultBinary
		if len(s.Entrypoint) > 0 {
			t.Errorf("%s: entrypoint %q; the image has none, the command names the binary", name, s.Entrypoint)
			continue
		}
		if len(s.Command) > 0 {
			bin = filepath.Base(s.Command[0])
		}
		known := false
		for _, b := range binaries {
			known = known || b == bin
		}
		if !known {
			t.Errorf("%s: command %q names no binary of the image (%v)", name, s.Command, binaries)
			continue
		}
		path := filepath.Join(dir, bin)
		flags, mentioned := envOf(t, path)
		var env []string
		for k, v := range s.Environment {
			if !strings.HasPrefix(k, "CRAWLER_") {
				continue
			}
			switch {
			case flags[k]:
			case mentioned[k]:
			default:
				t.Errorf("%s: %s is no flag of %s (its flags: %s)", name, k, bin, keys(flags))
				continue
			}
			if v == nil {
				t.Errorf("%s: %s has no value", name, k)
				continue
			}
			env = append(env, k+"="+*v)
		}
		// The values must parse: the binary applies the environment to its flags
		// before it looks at -version, so a bad duration or bool fails here.
		cmd := exec.Command(path, "-version")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %s -version with the service's CRAWLER_* environment: %v\n%s", name, bin, err, out)
		}
	}
	if ours < 4 {
		t.Errorf("%d services run the crawler image, want frontier, fetcher, parser and renderer", ours)
	}
}

func keys(m map[string]bool) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// TestBindMounts: every file or folder a service mounts from the repository exists
// (compose would otherwise create an empty folder in its place).
func TestBindMounts(t *testing.T) {
	p := load(t)
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s: bind mount source %s: %v", name, v.Source, err)
			}
		}
	}
}

// TestPrometheusScrapesEveryProcess: every crawler service is a scrape job, and
// the scalable ones are found through DNS so that every replica is scraped.
func TestPrometheusScrapesEveryProcess(t *testing.T) {
	b, err := os.ReadFile("../prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName      string `yaml:"job_name"`
			DNSSDConfigs []struct {
				Names []string `yaml:"names"`
				Type  string   `yaml:"type"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	want := map[string]int{"frontier": 8080, "fetcher": 9101, "parser": 9102, "renderer": 9104}
	for _, sc := range cfg.ScrapeConfigs {
		for _, d := range sc.DNSSDConfigs {
			for _, n := range d.Names {
				if port, ok := want[n]; ok && d.Port == port && d.Type == "A" {
					delete(want, n)
				}
			}
		}
	}
	for svc, port := range want {
		t.Errorf("prometheus.yml: no dns_sd_configs job for %s:%d (type A)", svc, port)
	}
}

// TestRenderer: the renderer runs the Dockerfile's renderer target (the one with
// a browser) under an image name of its own, the other crawler services the
// default distroless target; the parser sends pages to crawl.render, which the
// init job creates with crawl.pages' partition count (a page keeps its
// partition through the renderer).
func TestRenderer(t *testing.T) {
	p := load(t)
	r, ok := p.Services["renderer"]
	if !ok {
		t.Fatal("no renderer service")
	}
	if r.Build == nil || r.Build.Target != rendererTarget {
		t.Errorf("renderer builds %+v, want the Dockerfile's %q target", r.Build, rendererTarget)
	}
	if len(r.Command) == 0 || r.Command[0] != "renderer" {
		t.Errorf("renderer runs %q, want the renderer binary", r.Command)
	}
	// Two build targets tagged with one name would overwrite each other: the
	// last one built would run everywhere.
	targetOf := map[string]string{}
	for name, s := range p.Services {
		if s.Build == nil {
			continue
		}
		if name != "renderer" && s.Build.Target != "" {
			t.Errorf("%s builds target %q; only the renderer needs the browser image", name, s.Build.Target)
		}
		if prev, ok := targetOf[s.Image]; ok && prev != s.Build.Target {
			t.Errorf("image %s is built from targets %q and %q", s.Image, prev, s.Build.Target)
		}
		targetOf[s.Image] = s.Build.Target
	}
	if v := p.Services["parser"].Environment["CRAWLER_RENDER"]; v == nil || (*v != "auto" && *v != "always") {
		got := "unset"
		if v != nil {
			got = *v
		}
		t.Errorf("parser: CRAWLER_RENDER is %s; with a renderer running, pages needing a browser go to crawl.render (auto)", got)
	}
	if r.MemLimit <= 0 {
		t.Error("renderer has no mem_limit; a browser's memory must be bounded")
	}
	topics := map[string]string{}
	for _, line := range p.Services["init-topics"].Command {
		for _, m := range regexp.MustCompile(`(?m)^\s*create (\S+) (\d+)\s*$`).FindAllStringSubmatch(line, -1) {
			topics[m[1]] = m[2]
		}
	}
	if topics["crawl.render"] == "" || topics["crawl.render"] != topics["crawl.pages"] {
		t.Errorf("init-topics creates %v; want crawl.render with the partitions of crawl.pages", topics)
	}
}
