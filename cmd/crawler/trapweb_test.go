package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
)

// TestCrawlTrapWeb crawls a web of random trap shapes (loadtest/trapweb,
// served over loopback by Host header) with the crawler binary: the wiring
// of the admission that loadtest/trapsim judges over many seeds without a
// network. Every real page is requested, the crawl goes idle by itself, and
// the share of requests that went to traps is logged.
func TestCrawlTrapWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crawl; skipped with -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	w := trapweb.Generate(trapweb.Config{Seed: 7, Hosts: 12, Pages: 40, Port: port})
	var mu sync.Mutex
	requested := map[string]int{}
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		u := "http://" + strings.ToLower(r.Host) + r.URL.RequestURI()
		mu.Lock()
		requested[u]++
		mu.Unlock()
		w.Handler().ServeHTTP(rw, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	dir := t.TempDir()
	var hosts strings.Builder
	for _, h := range w.Hosts() {
		hosts.WriteString("127.0.0.1 " + h + "\n")
	}
	hostsFile, seeds := filepath.Join(dir, "hosts"), filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(hostsFile, []byte(hosts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seeds, []byte(strings.Join(w.Seeds(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := crawlArgs(filepath.Join(dir, "data"), seeds, "-hosts-file", hostsFile, "-max-duration", "4m")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	out, runErr := exec.CommandContext(ctx, crawlerBinary(t), args...).CombinedOutput()
	if runErr != nil {
		t.Fatalf("crawler: %v\n%s", runErr, tail(out, 40))
	}
	if !strings.Contains(string(out), `msg="stop began" reason=idle`) {
		t.Errorf("the crawl did not end by going idle:\n%s", tail(out, 20))
	}
	srv.Close()

	mu.Lock()
	defer mu.Unlock()
	byClass := map[trapweb.Class]int{}
	perInstance := map[string]int{}
	total := 0
	for u, n := range requested {
		cl, in := w.Classify(u)
		byClass[cl] += n
		total += n
		if in != "" {
			perInstance[in] += n
		}
	}
	var missed []string
	for _, u := range w.RealPages() {
		if requested[u] == 0 {
			missed = append(missed, u)
		}
	}
	worst, worstID := 0, ""
	for id, n := range perInstance {
		if n > worst {
			worst, worstID = n, id
		}
	}
	t.Logf("crawled in %v: %d requests, %d to real pages, %d to traps and %d to variants (%.1f%%), %d instances entered, at most %d requests in one (%s); %d of %d real pages requested",
		time.Since(start).Round(time.Second), total, byClass[trapweb.Real], byClass[trapweb.Trap], byClass[trapweb.Variant],
		100*float64(byClass[trapweb.Trap]+byClass[trapweb.Variant])/float64(max(total, 1)), len(perInstance), worst, worstID,
		len(w.RealPages())-len(missed), len(w.RealPages()))
	if len(missed) > 0 {
		logMissing(t, filepath.Join(dir, "data"), prefixed(missed))
		t.Errorf("%d real pages never requested, e.g. %v", len(missed), missed[:min(10, len(missed))])
	}
}

// prefixed turns URLs into the "HOST:PORT/path never requested" examples
// logMissing reads.
func prefixed(urls []string) []string {
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		out = append(out, strings.TrimPrefix(u, "http://")+" never requested")
	}
	return out
}
