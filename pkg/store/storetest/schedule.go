package storetest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlcluster/crawler/internal/cputime"
	"github.com/crawlcluster/crawler/pkg/store"
)

// The recrawl schedule at the large benchmark's scale (docs/performance.md,
// "Recrawl schedule at a million URLs"): a million stored URLs of 10,000 hosts
// over the 256 partitions, each with a visit planned, a few percent of them due.

const (
	// ScheduleURLs is the size of the schedule the benchmarks fill: the large
	// benchmark's million pages, each planned for a revisit.
	ScheduleURLs = 1_000_000
	// ScheduleURLsShort is its size under -short.
	ScheduleURLsShort = 50_000
	// ScheduleHosts is the number of hosts the URLs spread over.
	ScheduleHosts = 10_000
	// ScheduleWindow is the span the planned visits spread over, uniformly.
	ScheduleWindow = 10 * 24 * time.Hour
	// ScheduleDueShare is the share of it that lies before now: that many of
	// the planned visits are due.
	ScheduleDueShare = 0.02
	// Partitions of crawl.urls (queue.Partitions).
	schedulePartitions = 256
)

// ScheduleSize returns the number of URLs the schedule benchmarks fill:
// ScheduleURLs, or ScheduleURLsShort under -short.
func ScheduleSize() int {
	if testing.Short() {
		return ScheduleURLsShort
	}
	return ScheduleURLs
}

// ScheduledURL returns the k-th URL of a schedule of n, as admission writes
// it (queued) and the schedule the parser plans for it after its first fetch
// at now minus a day. Host k%ScheduleHosts lives in partition
// host%256; its visit lies at k/n of the window, the first ScheduleDueShare
// of the window before now.
func ScheduledURL(k, n int, now time.Time) (store.URL, store.Recrawl) {
	h := k % ScheduleHosts
	host := fmt.Sprintf("www.host%05d.example", h)
	path := fmt.Sprintf("/section-%d/article-%07d.html", k%7, k)
	u := URL(int32(h%schedulePartitions), host, path)
	u.Depth, u.Score, u.DiscoveredAt = 1+k%5, 30+k%40, now.Add(-48*time.Hour)
	// Spread over the window by a permutation of k, so that neither partitions
	// nor hosts get their visits in admission order.
	pos := float64(uint64(k)*2654435761%uint64(n)) / float64(n)
	next := now.Add(time.Duration((pos - ScheduleDueShare) * float64(ScheduleWindow))).Truncate(time.Millisecond)
	fetched := now.Add(-24 * time.Hour)
	r := store.Recrawl{
		NextFetchAt: next, FetchCount: 1 + k%4, ChangeCount: k % 2, Unchanged: 20 * time.Hour, ChangedTime: 4 * time.Hour,
		LastChangeAt: fetched.Add(-time.Hour), LastVisitAt: fetched, Streak: k % 3, ChangeRate: 0.05 + float64(k%20)/10,
	}
	return u, r
}

// FillSchedule stores n scheduled URLs (ScheduledURL) through the write path
// of a crawl: AdmitURLs admits them, AddCaptures stores a capture of each with
// the schedule the parser planned. It returns how long the fill took.
func FillSchedule(tb testing.TB, s store.Store, n int, now time.Time) time.Duration {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	const batch = 2000
	urls := make([]store.URL, 0, batch)
	caps := make([]store.Capture, 0, batch)
	scheds := make([]store.Recrawl, batch)
	for first := 0; first < n; first += batch {
		urls, caps = urls[:0], caps[:0]
		for k := first; k < min(first+batch, n); k++ {
			u, r := ScheduledURL(k, n, now)
			urls = append(urls, u)
			scheds[k-first] = r
		}
		if _, err := s.AdmitURLs(ctx, urls); err != nil {
			tb.Fatalf("fill schedule: admit: %v", err)
		}
		for i, u := range urls {
			id := "sched-" + strconv.Itoa(first+i)
			c := Capture(u, id, id, uint64(first+i)*0x9e3779b97f4a7c15|1)
			c.FetchedAt, c.Change, c.Schedule = scheds[i].LastVisitAt, "first", &scheds[i]
			caps = append(caps, c)
		}
		if err := s.AddCaptures(ctx, caps); err != nil {
			tb.Fatalf("fill schedule: add captures: %v", err)
		}
	}
	return time.Since(start)
}

// BenchRecrawlSchedule fills s with ScheduleSize() scheduled URLs and
// measures what the recrawl scheduler and the API ask of the store: "scan",
// the partition owner's scan of all 256 partitions as the fetcher makes it
// (DueURLs(p, 1) for each partition's earliest planned visit, then
// DueAt(p, now, limit) of those where it is due), and "schedule", the
// Schedule summary every GET /api/v1/stats reads. Each reports the CPU time
// of this process per operation (a database server's is not in it), the Go
// heap and the process's peak RSS while it runs (Memory).
func BenchRecrawlSchedule(b *testing.B, s store.Store) {
	ctx := context.Background()
	n := ScheduleSize()
	now := time.Now().Truncate(time.Millisecond)
	took := FillSchedule(b, s, n, now)
	b.Logf("filled %d scheduled URLs in %v", n, took.Round(time.Millisecond))
	// 256 due visits of each partition with some due was the fetcher's
	// read; 32 is what it reads now of each of 256 (fetcher.dueLimit).
	for _, limit := range []int{256, 32} {
		b.Run(fmt.Sprintf("scan/limit=%d", limit), func(b *testing.B) {
			var rows, due int
			mem := StartMemory()
			cpu := cputime.Measure(b)
			for b.Loop() {
				rows, due = 0, 0
				var duePartitions []int32
				for p := range int32(schedulePartitions) {
					first, err := s.DueURLs(ctx, p, 1)
					if err != nil {
						b.Fatal(err)
					}
					rows += len(first)
					if len(first) == 1 && !first[0].Recrawl.NextFetchAt.After(now) {
						duePartitions = append(duePartitions, p)
					}
				}
				for _, p := range duePartitions {
					all, err := s.DueAt(ctx, p, now, limit)
					if err != nil {
						b.Fatal(err)
					}
					rows += len(all)
					due += len(all)
				}
				mem.Sample()
			}
			cpu()
			b.ReportMetric(float64(rows), "rows/scan")
			b.ReportMetric(float64(due), "due/scan")
			mem.Report(b)
		})
	}
	b.Run("schedule", func(b *testing.B) {
		var st store.ScheduleStats
		mem := StartMemory()
		cpu := cputime.Measure(b)
		for b.Loop() {
			var err error
			if st, err = s.Schedule(ctx, now); err != nil {
				b.Fatal(err)
			}
			mem.Sample()
		}
		cpu()
		want := int64(float64(n) * ScheduleDueShare)
		if st.Scheduled != int64(n) || st.Due < want*9/10 || st.Due > want*11/10 {
			b.Fatalf("Schedule = %+v; want %d scheduled, about %d due", st, n, want)
		}
		mem.Report(b)
		b.ReportMetric(float64(st.Due), "due")
	})
}

// Memory tracks the Go heap in use and the process's peak RSS over a
// benchmark's loop: StartMemory collects garbage, returns freed memory to the
// OS and resets the kernel's RSS high-water mark (VmHWM) to the current RSS,
// so what Report shows is what the loop itself held, not what the set-up did.
type Memory struct {
	heap    uint64 // largest heap in use seen by Sample
	rssBase uint64 // RSS when StartMemory ran
	reset   bool   // the high-water mark was reset
	samples []metrics.Sample
}

// StartMemory starts tracking.
func StartMemory() *Memory {
	debug.FreeOSMemory()
	m := &Memory{samples: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
	m.reset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	m.rssBase, _ = procStatus("VmRSS")
	return m
}

// Sample records the heap in use now; cheap enough to call once per
// iteration (no stop-the-world).
func (m *Memory) Sample() {
	metrics.Read(m.samples)
	if v := m.samples[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > m.heap {
		m.heap = v.Uint64()
	}
}

// Report adds heap-MiB (the largest heap of live and not yet collected
// objects sampled), peak-RSS-MiB (the process's VmHWM since StartMemory, the
// figure the large benchmark bounds) and rss-growth-MiB (that peak less the
// RSS at the start).
func (m *Memory) Report(b *testing.B) {
	runtime.KeepAlive(m)
	b.ReportMetric(float64(m.heap)/(1<<20), "heap-MiB")
	if hwm, ok := procStatus("VmHWM"); ok {
		if !m.reset {
			b.Logf("VmHWM could not be reset: peak-RSS-MiB includes the set-up")
		}
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(hwm-min(hwm, m.rssBase))/(1<<20), "rss-growth-MiB")
	}
}

// procStatus reads a "kB" field of /proc/self/status in bytes.
func procStatus(field string) (uint64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}
