package browser

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRender renders a small page whose links a script builds from a
// JSON fetch, Tabs at a time, and reports what a render costs: CPU of the
// browser's processes and of this one per page (pages/s/core is its inverse),
// and the most memory the browser held per tab; without and with a
// screenshot of each page.
func BenchmarkRender(b *testing.B) {
	for _, shot := range []bool{false, true} {
		b.Run("screenshot="+strconv.FormatBool(shot), func(b *testing.B) { benchRender(b, shot) })
	}
}

func benchRender(b *testing.B, screenshot bool) {
	const tabs = 2
	page := `<!doctype html><html><head><script src="/app.js"></script></head><body><div id="app"></div></body></html>`
	files := map[string]Response{
		"/app.js": {Header: http.Header{"Content-Type": {"text/javascript"}}, Body: []byte(`
fetch('/links.json').then(r => r.json()).then(links => {
  const app = document.getElementById('app');
  for (const l of links) { const a = document.createElement('a'); a.href = l; a.textContent = l; app.appendChild(a); }
});`)},
		"/links.json": {Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`["/a", "/b", "/c", "/d"]`)},
	}
	// The sub-resources come from memory: the benchmark measures the
	// browser, not a server.
	load := func(ctx context.Context, r Request) (Response, error) {
		for path, resp := range files {
			if strings.HasSuffix(r.URL, path) {
				resp.Status = 200
				return resp, nil
			}
		}
		return Response{Status: 404}, nil
	}
	p := newPool(b, Config{Tabs: tabs, Settle: 100 * time.Millisecond, RestartAfter: 1 << 30, Screenshot: screenshot})
	doc := Document{URL: "http://127.0.0.1:1/page", Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(page)}
	// One page first, so that the browser's start is not counted.
	if _, err := p.Render(context.Background(), doc, load); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * sampleEvery) // a sample of the browser alone
	_, browserStart := p.usage()
	selfStart := selfCPU()
	start := time.Now()
	var shotBytes atomic.Int64
	b.ResetTimer()
	b.SetParallelism(tabs)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := p.Render(context.Background(), doc, load)
			if err != nil {
				b.Error(err)
				return
			}
			if !strings.Contains(res.DOM, `href="/d"`) {
				b.Errorf("links missing: %.200s", res.DOM)
				return
			}
			if (res.Screenshot != nil) != screenshot {
				b.Errorf("screenshot of %d bytes (dropped %q) with Screenshot %v", len(res.Screenshot), res.ScreenshotDropped, screenshot)
				return
			}
			shotBytes.Add(int64(len(res.Screenshot)))
		}
	})
	b.StopTimer()
	wall := time.Since(start)
	_, browserEnd := p.usage()
	cpu := browserEnd - browserStart + selfCPU() - selfStart
	b.Logf("%d pages: browser CPU %v, this process %v", b.N, browserEnd-browserStart, selfCPU()-selfStart)
	// BROWSER_BENCH_PROCS=1 shows where the browser's CPU went, per process.
	if os.Getenv("BROWSER_BENCH_PROCS") != "" && b.N > 1 {
		p.mu.Lock()
		for _, e := range processTree(p.cur.pid) {
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(e.pid) + "/cmdline")
			typ := "browser"
			for arg := range strings.SplitSeq(string(cmd), "\x00") {
				if t, ok := strings.CutPrefix(arg, "--type="); ok {
					typ = t
				}
			}
			b.Logf("pid %d %s cpu %v %.90q", e.pid, typ, e.cpu, cmd)
		}
		p.mu.Unlock()
	}
	st := p.Stats()
	if cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "pages/s/core")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/page")
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "pages/s")
	if screenshot {
		b.ReportMetric(float64(shotBytes.Load())/float64(b.N), "screenshot-B/page")
	}
	b.ReportMetric(float64(st.PeakRSSPerTab)/(1<<20), "peak-MiB/tab")
	b.ReportMetric(float64(st.PeakRSS)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(st.IdleRSS)/(1<<20), "idle-MiB")
}

// politePage is a page with n scripts of its own host in <head>, the last
// building the links: the crawl fetches them one at a time, a host's delay
// apart, however the browser asks.
func politePage(n int) (string, map[string]string) {
	var head strings.Builder
	files := map[string]string{}
	for i := range n {
		path := "/s" + strconv.Itoa(i) + ".js"
		head.WriteString(`<script src="` + path + `"></script>`)
		files[path] = "window.s" + strconv.Itoa(i) + " = true;"
	}
	files["/s"+strconv.Itoa(n-1)+".js"] = `document.addEventListener('DOMContentLoaded', () => {
  const app = document.getElementById('app');
  for (const l of ['/a', '/b', '/c']) { const a = document.createElement('a'); a.href = l; a.textContent = l; app.appendChild(a); }
});`
	return `<!doctype html><html><head>` + head.String() + `</head><body><div id="app"></div></body></html>`, files
}

// BenchmarkRenderPolite reports a render's wall time per page (ns/op) as a
// function of its sub-resources and its host's delay, the crawl's
// politeness imitated by a Loader that answers one request at a time, a
// delay apart: pages one after another, one tab. many-hosts renders 8 pages
// at once, each on its own host, at a 1 s delay, and reports renders per
// second per core (CPU of the browser and this process): the tabs spend
// most of their time waiting, which costs no CPU.
//
//	go test ./pkg/browser -run '^$' -bench RenderPolite -benchtime 3x
func BenchmarkRenderPolite(b *testing.B) {
	for _, delay := range []time.Duration{0, 200 * time.Millisecond, time.Second} {
		for _, n := range []int{1, 4, 10} {
			b.Run(fmt.Sprintf("delay=%v/subresources=%d", delay, n), func(b *testing.B) {
				page, files := politePage(n)
				p := newPool(b, Config{Tabs: 1, RestartAfter: 1 << 30, PageTimeout: time.Minute})
				doc := Document{URL: "http://app.test/", Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(page)}
				b.ResetTimer()
				for range b.N {
					l := &politeLoader{delay: delay, files: files, start: time.Now()}
					res, err := p.Render(context.Background(), doc, l.load)
					if err != nil || !strings.Contains(res.DOM, `href="/c"`) || res.TimedOut {
						b.Fatalf("render: %v, timed out %v, DOM %.200s", err, res.TimedOut, res.DOM)
					}
				}
			})
		}
	}
	b.Run("many-hosts/delay=1s/subresources=4", func(b *testing.B) {
		const tabs = 8
		page, files := politePage(4)
		p := newPool(b, Config{Tabs: tabs, RestartAfter: 1 << 30, PageTimeout: time.Minute})
		var host atomic.Int64
		render := func() error {
			doc := Document{URL: fmt.Sprintf("http://h%d.test/", host.Add(1)), Status: 200,
				Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(page)}
			l := &politeLoader{delay: time.Second, files: files, start: time.Now()}
			res, err := p.Render(context.Background(), doc, l.load)
			if err == nil && !strings.Contains(res.DOM, `href="/c"`) {
				err = fmt.Errorf("links missing: %.200s", res.DOM)
			}
			return err
		}
		if err := render(); err != nil { // the browser's start is not counted
			b.Fatal(err)
		}
		_, browserStart := p.usage()
		selfStart := selfCPU()
		start := time.Now()
		b.ResetTimer()
		var wg sync.WaitGroup
		sem := make(chan struct{}, tabs)
		for range b.N {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := render(); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		wall := time.Since(start)
		_, browserEnd := p.usage()
		cpu := browserEnd - browserStart + selfCPU() - selfStart
		if cpu > 0 {
			b.ReportMetric(float64(b.N)/cpu.Seconds(), "renders/s/core")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/render")
		}
		b.ReportMetric(float64(b.N)/wall.Seconds(), "renders/s")
	})
}
