//go:build linux

package browser

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// chromiumWith lists the processes whose command line mentions dir.
func chromiumWith(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(dir)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestCloseLeavesNothing(t *testing.T) {
	s := newSite(t, nil)
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := New(ctx, Config{Path: browserPath(t), ProfileDir: dir, Tabs: 2, Settle: 50 * time.Millisecond, RestartAfter: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the third starts a second browser
		renderOK(t, p, s)
	}
	if n := len(chromiumWith(dir)); n < 3 {
		t.Fatalf("%d browser processes while open; is the test looking at the right thing?", n)
	}
	// Memory is sampled every sampleEvery: three quick pages may all end
	// before the first sample.
	for deadline := time.Now().Add(5 * sampleEvery); p.Stats().PeakRSS == 0 && time.Now().Before(deadline); {
		time.Sleep(sampleEvery / 10)
	}
	if st := p.Stats(); st.Restarts != 1 || st.PeakRSS == 0 {
		t.Errorf("stats %+v, want 1 restart and memory measured", st)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := chromiumWith(dir); len(pids) != 0 {
		t.Errorf("%d processes left after Close", len(pids))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("profile directories left: %v", entries)
	}
	if _, err := p.Render(context.Background(), s.doc("/x", okPage), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Render after Close: %v, want ErrClosed", err)
	}
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, before)
}

// waitGoroutines fails when more goroutines than before are still running a
// few seconds later.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestBrowserKilled: a browser process that dies under a page is replaced,
// and the page retried on the new one.
func TestBrowserKilled(t *testing.T) {
	s := newSite(t, map[string]string{"/a.js": "document.body.insertAdjacentHTML('beforeend', '<a href=\"/ok\">ok</a>')"})
	p := newPool(t, Config{Tabs: 1, Settle: 50 * time.Millisecond})
	page := `<!doctype html><html><body><script src="/a.js"></script></body></html>`
	var once sync.Once
	var rec recorder
	load := func(ctx context.Context, r Request) (Response, error) {
		once.Do(func() {
			p.mu.Lock()
			pid := p.cur.pid
			p.mu.Unlock()
			_ = syscall.Kill(pid, syscall.SIGKILL)
		})
		return rec.load(ctx, r)
	}
	res, err := p.Render(context.Background(), s.doc("/p", page), load)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Retried || !strings.Contains(res.DOM, `href="/ok"`) {
		t.Errorf("Retried %v DOM %.200s", res.Retried, res.DOM)
	}
	if st := p.Stats(); st.Restarts != 1 || st.Crashed != 1 {
		t.Errorf("stats %+v, want a restart after a crash", st)
	}
}

func TestCancellation(t *testing.T) {
	s := newSite(t, nil)
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	pctx, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	p, err := New(pctx, Config{Path: browserPath(t), ProfileDir: dir, Tabs: 1, Settle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// A Loader that never answers: only the caller's cancellation ends it.
	page := `<!doctype html><html><body><script src="/never.js"></script></body></html>`
	asked := make(chan struct{})
	load := func(ctx context.Context, r Request) (Response, error) {
		close(asked)
		<-ctx.Done()
		return Response{}, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-asked
		cancel()
	}()
	start := time.Now()
	_, err = p.Render(ctx, s.doc("/p", page), load)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	t.Logf("cancelled render returned in %v", time.Since(start))
	renderOK(t, p, s)

	// The end of New's context closes the pool.
	pcancel()
	deadline := time.Now().Add(10 * time.Second)
	for len(chromiumWith(dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(chromiumWith(dir)); n != 0 {
		t.Errorf("%d processes left after the pool's context ended", n)
	}
	if _, err := p.Render(context.Background(), s.doc("/x", okPage), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Render after the context ended: %v, want ErrClosed", err)
	}
	_ = p.Close()
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, before)
}

// TestBrowserStopped: a browser that stops answering (SIGSTOP) under a page
// is killed and replaced, and the page retried on the new one.
func TestBrowserStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a page timeout")
	}
	s := newSite(t, map[string]string{"/a.js": "document.body.insertAdjacentHTML('beforeend', '<a href=\"/ok\">ok</a>')"})
	before := runtime.NumGoroutine()
	// The render after the restart gets 5 s: a clean-clone CI run of
	// 2223ad2 (race pass beside cmd/crawler and test/cluster) had the new
	// browser's render time out at 2 s before /a.js ran.
	p := newPool(t, Config{Tabs: 1, Settle: 50 * time.Millisecond, PageTimeout: 5 * time.Second, Hang: time.Second})
	page := `<!doctype html><html><body><script src="/a.js"></script></body></html>`
	var once sync.Once
	var rec recorder
	var stopped int
	load := func(ctx context.Context, r Request) (Response, error) {
		once.Do(func() {
			p.mu.Lock()
			stopped = p.cur.pid
			p.mu.Unlock()
			_ = syscall.Kill(stopped, syscall.SIGSTOP)
		})
		return rec.load(ctx, r)
	}
	start := time.Now()
	res, err := p.Render(context.Background(), s.doc("/p", page), load)
	t.Logf("%v after %v, %+v", err, time.Since(start), p.Stats())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Retried || !strings.Contains(res.DOM, `href="/ok"`) {
		t.Errorf("Retried %v DOM %.200s", res.Retried, res.DOM)
	}
	if st := p.Stats(); st.Restarts != 1 || st.Hung != 1 {
		t.Errorf("stats %+v, want a restart after a hang", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(stopped)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stopped browser %d is still there", stopped)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = p.Close()
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, before)
}
