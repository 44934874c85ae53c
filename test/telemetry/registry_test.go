package telemetry

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/cache"
	"github.com/crawlcluster/crawler/pkg/fetcher"
	"github.com/crawlcluster/crawler/pkg/lag"
	"github.com/crawlcluster/crawler/pkg/parser"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/renderer"
)

// described is one metric a collector describes.
type described struct {
	help   string
	labels []string
}

// recorder is a prometheus.Registerer that keeps the descriptors of what is
// registered on it. Unlike a Registry's Gather, it also sees labelled metrics that
// have no series yet.
type recorder struct {
	mu      sync.Mutex
	metrics map[string]described
}

var _ prometheus.Registerer = (*recorder)(nil)

var (
	descName   = regexp.MustCompile(`fqName: "([^"]+)"`)
	descHelp   = regexp.MustCompile(`help: "((?:[^"\\]|\\.)*)"`)
	descLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

func (r *recorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.metrics == nil {
		r.metrics = map[string]described{}
	}
	for d := range ch {
		s := d.String()
		m := descName.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		var dd described
		if h := descHelp.FindStringSubmatch(s); h != nil {
			dd.help = h[1]
		}
		if l := descLabels.FindStringSubmatch(s); l != nil && strings.TrimSpace(l[1]) != "" {
			for _, lab := range strings.Split(l[1], ",") {
				dd.labels = append(dd.labels, strings.TrimSpace(lab))
			}
		}
		r.metrics[m[1]] = dd
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// codeRegistry returns the crawler_* metrics the code registers in one process,
// built the way the process's main builds them (constructors only: nothing
// connects). It mirrors the wiring in cmd/ and pkg/embedded; TestScrape checks
// the real binaries.
func codeRegistry(t *testing.T, proc string) map[string]described {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := &recorder{}
	// Clients are created, never started: no broker needs to exist.
	kopts := queue.ClientOptions([]string{"127.0.0.1:1"}, log)
	newFetcher := func() {
		var cfg fetcher.Config
		fs := flag.NewFlagSet("fetcher", flag.ContinueOnError)
		cfg.RegisterFlags(fs)
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		f, err := fetcher.New(cfg, nil, kopts, rec, log)
		if err != nil {
			t.Fatalf("fetcher.New: %v", err)
		}
		_ = f
	}
	newParser := func() {
		if _, err := parser.New(parser.Config{RobotsAgent: "telemetrybot"}, nil, nil, kopts, rec, log); err != nil {
			t.Fatalf("parser.New: %v", err)
		}
	}
	newRenderer := func() {
		res := renderer.NewResources(renderer.ResourcesConfig{}, nil, nil, nil)
		if _, err := renderer.New(renderer.Config{}, nil, res, kopts, rec, log); err != nil {
			t.Fatalf("renderer.New: %v", err)
		}
	}
	switch proc {
	case "crawler": // pkg/embedded: fetcher, parser and (with a browser) renderer tiers, local WARC files, no lag exporter
		newFetcher()
		newParser()
		newRenderer()
	case "renderer": // cmd/renderer: the render tier, reading WARC records from object storage
		newRenderer()
		st, err := blob.Open(ctx, "file://"+t.TempDir(), blob.WithRegisterer(rec))
		if err != nil {
			t.Fatalf("blob.Open: %v", err)
		}
		defer st.Close()
	case "fetcher": // cmd/fetcher: the fetcher tier and the shared cache
		newFetcher()
		c, err := cache.Open(ctx, "memory://", cache.WithRegisterer(rec))
		if err != nil {
			t.Fatalf("cache.Open: %v", err)
		}
		defer c.Close()
	case "parser": // cmd/parser with object storage (-blobs s3://...)
		newParser()
		st, err := blob.Open(ctx, "file://"+t.TempDir(), blob.WithRegisterer(rec))
		if err != nil {
			t.Fatalf("blob.Open: %v", err)
		}
		defer st.Close()
	case "frontier": // cmd/frontier: the lag exporter
		lag.New(nil, []string{queue.GroupFetchers, queue.GroupParsers}, rec)
	default:
		t.Fatalf("unknown process %s", proc)
	}
	out := map[string]described{}
	for n, d := range rec.metrics {
		if strings.HasPrefix(n, "crawler_") {
			out[n] = d
		}
	}
	return out
}

// allCodeMetrics is the union of codeRegistry over the processes.
func allCodeMetrics(t *testing.T) map[string]described {
	t.Helper()
	all := map[string]described{}
	for _, p := range processes {
		for n, d := range codeRegistry(t, p) {
			all[n] = d
		}
	}
	return all
}
