//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/loadtest/synthweb"
)

// crawlerEnv makes the test binary act as the crawler under test: run
// starts it as CMD with the seeds file as its only argument.
const crawlerEnv = "SYNTHWEB_TEST_CRAWLER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(crawlerEnv); mode != "" {
		os.Exit(testCrawler(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// testCrawler fetches robots.txt, "/" and /p/0.html of every seed host,
// 60 ms apart ("polite"), or misbehaves as mode says. Its arguments are the
// seeds file and, optionally, a hosts file to resolve names with.
func testCrawler(mode string, args []string) int {
	switch mode {
	case "fail":
		return 3
	case "hang":
		time.Sleep(time.Minute)
		return 0
	}
	if len(args) != 1 && len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crawler SEEDS_FILE [HOSTS_FILE]")
		return 2
	}
	seeds, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	tr := &http.Transport{}
	if len(args) == 2 {
		names, err := readHostsFile(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if name, port, err := net.SplitHostPort(addr); err == nil && names[name] != "" {
				addr = net.JoinHostPort(names[name], port)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	paths := []string{"robots.txt", "", "p/0.html"}
	if mode == "impolite" {
		paths = paths[1:]
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	for seed := range strings.FieldsSeq(string(seeds)) {
		for _, p := range paths {
			resp, err := c.Get(seed + p)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if mode == "polite" {
				time.Sleep(60 * time.Millisecond)
			}
		}
	}
	return 0
}

// readHostsFile reads /etc/hosts lines into name -> address.
func readHostsFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for line := range strings.Lines(string(b)) {
		line, _, _ = strings.Cut(line, "#")
		if f := strings.Fields(line); len(f) >= 2 {
			for _, name := range f[1:] {
				names[name] = f[0]
			}
		}
	}
	return names, nil
}

// syncBuffer lets a test read what run writes while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRun(t *testing.T) {
	small := []string{"-hosts", "1", "-pages", "1", "-default-delay", "50ms", "-max-retries", "0"}
	tests := []struct {
		name     string
		crawler  string // crawlerEnv mode; "" runs no crawler
		flags    []string
		child    bool
		wantCode int
		wantOut  []string
		maxTime  time.Duration
	}{
		{name: "polite crawler passes", crawler: "polite", child: true, wantCode: 0,
			wantOut: []string{"synthweb audit: OK", "coverage:    100.0% (2 of 2"}},
		{name: "changing web", crawler: "polite", child: true, flags: []string{"-change", "-time-scale", "3600"}, wantCode: 0,
			wantOut: []string{"synthweb audit: OK", "freshness:", "revisits:    0 of 2 page requests", "unconditional-revisits: 0"}},
		{name: "bad change config", flags: []string{"-change", "-change-fast-share", "0.8"}, wantCode: 2},
		{name: "impolite crawler fails the audit", crawler: "impolite", child: true, wantCode: 1,
			wantOut: []string{"synthweb audit: FAIL", "robots:      2", "politeness:  1"}},
		{name: "failing crawler", crawler: "fail", child: true, wantCode: 1},
		{name: "hanging crawler is stopped at -timeout", crawler: "hang", child: true, flags: []string{"-timeout", "300ms"},
			wantCode: 1, wantOut: []string{"missing:     2"}, maxTime: 5 * time.Second},
		{name: "bad flag", flags: []string{"-hosts", "x"}, wantCode: 2},
		{name: "bad web config", flags: []string{"-features", "-hosts", "2"}, wantCode: 2},
		{name: "bad audit config", flags: []string{"-min-delay", "2s", "-max-delay", "1s"}, wantCode: 2},
		{name: "help", flags: []string{"-h"}, wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			seedsFile, reportFile := filepath.Join(dir, "seeds.txt"), filepath.Join(dir, "report.json")
			args := append(append([]string{"-seeds-file", seedsFile, "-report-json", reportFile}, small...), tt.flags...)
			if tt.child {
				t.Setenv(crawlerEnv, tt.crawler)
				args = append(args, "--", os.Args[0], "{seeds}")
			}
			var stdout, stderr syncBuffer
			start := time.Now()
			code := run(args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if tt.maxTime > 0 && time.Since(start) > tt.maxTime {
				t.Errorf("took %v, want at most %v", time.Since(start), tt.maxTime)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if !tt.child {
				return
			}
			var rep synthweb.Report
			b, err := os.ReadFile(reportFile)
			if err == nil {
				err = json.Unmarshal(b, &rep)
			}
			if err != nil || rep.OK() != (tt.wantCode == 0) {
				t.Errorf("JSON report: %v, OK %v:\n%s", err, rep.OK(), b)
			}
			if changing := slices.Contains(tt.flags, "-change"); changing != (rep.Change != nil) || changing && rep.Change.Pages != 2 {
				t.Errorf("JSON report of a changing web %v:\n%s", changing, b)
			}
		})
	}
}

// TestServeUntilSignal serves without a crawler, crawls from the test and
// stops the command with SIGINT.
func TestServeUntilSignal(t *testing.T) {
	pr, pw := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"-hosts", "1", "-pages", "1", "-default-delay", "0"}, pw, &stderr)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	seedsFile, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("no seeds file path: %v\n%s", err, stderr.String())
	}
	seedsFile = strings.TrimSpace(seedsFile)
	if testCrawler("polite", []string{seedsFile}) != 0 {
		t.Fatal("crawl failed")
	}
	// run registered for SIGINT before it printed the path.
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	report, _ := io.ReadAll(out)
	select {
	case c := <-code:
		if c != 0 || !strings.Contains(string(report), "synthweb audit: OK") {
			t.Errorf("exit %d, report:\n%s\nstderr:\n%s", c, report, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after SIGINT")
	}
	if _, err := os.Stat(seedsFile); !os.IsNotExist(err) {
		t.Errorf("temporary seeds file %s left behind (%v)", seedsFile, err)
	}
}

// TestRunNamed runs the crawler on 3 host names on one address, resolved
// with the hosts file, and audits per-IP politeness.
func TestRunNamed(t *testing.T) {
	tests := []struct {
		name     string
		ipDelay  string
		wantCode int
		wantOut  []string
	}{
		{name: "polite per IP", ipDelay: "20ms", wantCode: 0, wantOut: []string{
			"synthweb audit: OK", "per IP:      1 address; at most 1 requests in flight at once (127.0.1.1)",
			"ip-concurrency: 0", "ip-interval: 0"}},
		{name: "too fast for the IP delay", ipDelay: "1s", wantCode: 1, wantOut: []string{
			"synthweb audit: FAIL", "ip-interval: 8", "- 127.0.1.1: h0001.synth.test:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hostsFile := filepath.Join(t.TempDir(), "hosts")
			t.Setenv(crawlerEnv, "polite")
			args := []string{"-hosts", "3", "-pages", "1", "-addresses", "1", "-default-delay", "50ms", "-max-retries", "0",
				"-ip-concurrency", "1", "-ip-delay", tt.ipDelay, "-hosts-file-out", hostsFile,
				"--", os.Args[0], "{seeds}", "{hosts-file}"}
			var stdout, stderr syncBuffer
			if code := run(args, &stdout, &stderr); code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			names, err := readHostsFile(hostsFile)
			if err != nil || len(names) != 3 || names["h0003.synth.test"] != "127.0.1.1" {
				t.Errorf("hosts file %v (err %v)", names, err)
			}
		})
	}
}
