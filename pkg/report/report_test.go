package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/api"
	"github.com/crawlcluster/crawler/pkg/console/consoletest"
)

// The page loads nothing and every number it marks is report.json's.
func TestWriteSelfContained(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var v api.ReportView
	if err := json.Unmarshal([]byte(`{"generated_at": "2026-11-28T12:00:00Z",
		"urls": {"discovered": 1234567, "fetched": 5, "succeeded": 4, "failed": 1, "excluded": {"total": 3, "by_reason": {"trap_calendar": 3}}},
		"errors": {"http_4xx": 1}, "hosts": 2, "storage": {"captures": 5, "bytes": 500},
		"statuses": {"200": 4, "404": 1}, "content_types": {"text/html": 4, "a/b~c": 1},
		"timeline": {"bucket_seconds": 2, "points": [{"time": "2026-11-28T12:00:00Z", "pages": 3, "bytes": 300, "bytes_per_second": 150},
			{"time": "2026-11-28T12:00:02Z", "pages": 2, "bytes": 200, "errors": 1, "bytes_per_second": 100}]},
		"seeds": [{"url": "http://a.example/", "state": "stored", "status": 301, "redirect_to": "https://a.example/", "pages": 4}],
		"busiest_hosts": [{"host": "a.example", "admitted": 5, "delay_seconds": 0.25}],
		"held": [{"reason": "trap_calendar", "count": 3, "description": "a calendar <script>"}]}`), &v); err != nil {
		t.Fatal(err)
	}
	if !v.GeneratedAt.Equal(at) {
		t.Fatalf("fixture: %v", v.GeneratedAt)
	}
	dir := t.TempDir()
	if err := Write(dir, v, "stopped: idle"); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	html := string(page)
	for _, bad := range []string{"<script", "src=", "href=", "url(", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page has %q: it must load nothing", bad)
		}
	}
	if !strings.Contains(html, "a calendar &lt;script&gt;") {
		t.Error("a description is not escaped")
	}
	marked := regexp.MustCompile(`data-path="([^"]*)"[^>]*>([^<]*)<`).FindAllStringSubmatch(html, -1)
	if len(marked) < 25 {
		t.Fatalf("%d numbers marked, want every number (25 or more)", len(marked))
	}
	for _, m := range marked {
		want, ok := consoletest.Lookup(doc, m[1])
		if !ok {
			t.Errorf("%s: not in report.json", m[1])
			continue
		}
		got, err := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		if err != nil || got != want.(float64) {
			t.Errorf("%s: the page shows %q, report.json has %v", m[1], m[2], want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, HTMLFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("a temporary file is left: %v", err)
	}
}
