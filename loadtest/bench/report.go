package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// FormatTable writes one row per crawler and then the ratios ours / peer.
func FormatTable(w io.Writer, res *Results) error {
	s := res.Settings
	size := fmt.Sprintf("~%d B/page", s.PageBytes)
	if s.PageBytesMax > s.PageBytes {
		size = fmt.Sprintf("%d-%d B/page", s.PageBytes, s.PageBytesMax)
	}
	delay := fmt.Sprintf("delay %gms", s.DelayMS)
	if s.CrawlDelayShare > 0 {
		delay += fmt.Sprintf(" (Crawl-delay %g-%gms on %g%% of the hosts)", s.CrawlDelayMinMS, s.CrawlDelayMaxMS, s.CrawlDelayShare*100)
	}
	fmt.Fprintf(w, "web: %d hosts x %d pages (fanout %d, %s), %s, max pages %d, %d in flight; %d CPUs, load before %s\n",
		s.Hosts, s.PagesPerHost, s.Fanout, size, delay, s.MaxPages, s.Workers, res.Machine.CPUs, res.Machine.LoadAvg)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "crawler\tpages\tcrawl s\tpages/s\tCPU µs/page\tpeak RSS MiB\tweb µs/req\tcoverage\trobots\tpoliteness\toverlaps\tduplicates\tpoliteness util\t")
	var notes []string
	for _, r := range res.Crawlers {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t\n", r.Crawler)
			notes = append(notes, fmt.Sprintf("%s skipped: %s", r.Crawler, r.Skipped))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.0f\t%.1f\t%.1f\t%.1f%%\t%d\t%d\t%d\t%d\t%.3f\t\n",
			r.Crawler, r.Pages, r.CrawlSec, r.PagesPerSec, r.CPUMicrosPage, r.PeakRSSMiB(), r.WebMicrosPerRq,
			r.Coverage*100, r.Robots, r.Politeness, r.Overlaps, r.Duplicates, r.Utilisation)
		if r.Error != "" {
			notes = append(notes, fmt.Sprintf("%s failed: %s (log %s)", r.Crawler, r.Error, r.LogFile))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, ra := range res.Ratios {
		fmt.Fprintf(w, "ours/%s: pages/s %s, CPU/page %s, peak RSS %s\n",
			ra.Peer, ratio(ra.PagesPerSec), ratio(ra.CPUPerPage), ratio(ra.PeakRSS))
	}
	for _, r := range res.Crawlers {
		if r.Audit != nil && r.Audit.CrawlDelayGaps.Count > 0 {
			g := r.Audit.CrawlDelayGaps
			fmt.Fprintf(w, "%s under a Crawl-delay: politeness util %.3f (gap/delay median %.3f, p90 %.3f, %d gaps)\n",
				r.Crawler, g.Utilisation, g.Median, g.P90, g.Count)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note:", n)
	}
	return nil
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

// Table returns FormatTable's output as a string.
func Table(res *Results) string {
	var b strings.Builder
	FormatTable(&b, res)
	return b.String()
}

// WriteJSON writes res, indented, to path.
func WriteJSON(path string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
