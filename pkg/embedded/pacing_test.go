package embedded

import (
	"bytes"
	"cmp"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/pkg/frontier"
)

func TestPacing(t *testing.T) {
	const def = 100 * time.Millisecond
	host := func(name string, delay, backoff time.Duration, queued int) frontier.HostState {
		return frontier.HostState{Host: name, Delay: delay, Backoff: backoff, Queued: queued}
	}
	many := func(n int, delay time.Duration) []frontier.HostState {
		var hs []frontier.HostState
		for i := range n {
			hs = append(hs, host(fmt.Sprintf("h%d.example", i), delay, 0, 3))
		}
		return hs
	}
	var five []string
	for i := range pacingHostsMax {
		five = append(five, fmt.Sprintf("h%d.example (Crawl-delay 2s, 3 queued)", i))
	}
	for _, tc := range []struct {
		name  string
		def   time.Duration // the default delay, def if 0
		hosts []frontier.HostState
		want  string // the paced hosts, "" for none
	}{
		{"nothing queued", 0, []frontier.HostState{host("a.example", 2*time.Second, 0, 0)}, ""},
		{"one Crawl-delay host left", 0, []frontier.HostState{
			host("done.example", def, 0, 0),
			host("slow.example", 2*time.Second, 0, 37),
		}, "slow.example (Crawl-delay 2s, 37 queued)"},
		{"slowest first, a backoff beats the delay", 0, []frontier.HostState{
			host("quick.example", def, 0, 1),
			host("slow.example", 2*time.Second, 0, 4),
			host("busy.example", def, 10*time.Second, 2),
		}, "busy.example (backoff 10s, 2 queued); slow.example (Crawl-delay 2s, 4 queued); quick.example (default delay 100ms, 1 queued)"},
		{"a slow default delay paces too", 2 * time.Second, []frontier.HostState{host("a.example", 2*time.Second, 0, 5)}, "a.example (default delay 2s, 5 queued)"},
		{"only fast hosts", 0, many(3, def), ""},
		{"too many hosts to be the end", 0, many(pacingHostsMax+1, 2*time.Second), ""},
		{"as many as the end may have", 0, many(pacingHostsMax, 2*time.Second), strings.Join(five, "; ")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defaultDelay := cmp.Or(tc.def, def)
			var buf bytes.Buffer
			logPacing(slog.New(slog.NewTextHandler(&buf, nil)), pacing(tc.hosts, defaultDelay))
			got := buf.String()
			if tc.want == "" {
				if got != "" {
					t.Errorf("logged %q, want nothing", got)
				}
				return
			}
			if !strings.Contains(got, `msg="waiting on hosts paced by their delay"`) || !strings.Contains(got, fmt.Sprintf("hosts=%q", tc.want)) {
				t.Errorf("logged %q, want hosts=%q", got, tc.want)
			}
		})
	}
}
