// Package report writes a crawl's report into its data folder at every stop of
// the embedded crawler, and for `crawler report`: report.json, the API's
// GET /api/v1/report answer, and report.html, the same drawn for a person.
//
// The HTML page is one file that loads nothing: its style is inline, its charts
// are inline SVG drawn here, and it has no script, so it opens from a disk, an
// e-mail or an archive years later as it did on the day. Every number it shows
// from the report carries data-path, a JSON Pointer into report.json, as the
// console's do, so that a test can hold the page to the API.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crawlcluster/crawler/pkg/api"
)

// File names in the data folder.
const (
	JSONFile = "report.json"
	HTMLFile = "report.html"
)

// Write writes the report's JSON and HTML into dir, each replaced whole (a
// reader never sees half a file). note, when not empty, is said under the
// title (why the run stopped).
func Write(dir string, v api.ReportView, note string) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	var page bytes.Buffer
	if err := HTML(&page, v, note); err != nil {
		return err
	}
	for name, b := range map[string][]byte{JSONFile: append(js, '\n'), HTMLFile: page.Bytes()} {
		if err := replace(filepath.Join(dir, name), b); err != nil {
			return err
		}
	}
	return nil
}

func replace(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// HTML writes the report as one self-contained page.
func HTML(w io.Writer, v api.ReportView, note string) error {
	if err := page.Execute(w, pageData{R: v, Note: note, SeedsListed: v.Seeds != nil}); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

type pageData struct {
	R           api.ReportView
	Note        string
	SeedsListed bool
}

// counted is one row of a breakdown, largest first.
type counted struct {
	Key  string
	N    int64
	Path string
}

func sorted(m map[string]int64, path string) []counted {
	out := make([]counted, 0, len(m))
	for k, n := range m {
		out = append(out, counted{Key: k, N: n, Path: path + "/" + pointerKey(k)})
	}
	slices.SortFunc(out, func(a, b counted) int {
		if a.N != b.N {
			if a.N > b.N {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// pointerKey escapes a key for a JSON Pointer (RFC 6901).
func pointerKey(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

func num(v any) string {
	switch x := v.(type) {
	case int:
		return group(int64(x))
	case int64:
		return group(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return group(int64(x))
		}
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprint(v)
}

// group writes n with thousands separators, as the console does.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// timeline draws the report's timeline as a line of one field per second
// (pages or bytes) and bars of errors, in SVG.
func timeline(tv api.ReportTimeline, field string) template.HTML {
	const W, H, L, B, T, R = 900, 180, 56, 22, 8, 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s over time">`, W, H, template.HTMLEscapeString(field))
	if len(tv.Points) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no capture</text></svg>`, L, H/2)
		return template.HTML(b.String())
	}
	vals := make([]float64, len(tv.Points))
	errs := make([]float64, len(tv.Points))
	vmax := 1.0
	for i, p := range tv.Points {
		switch field {
		case "pages":
			vals[i] = float64(p.Pages) / tv.BucketSeconds
		case "bytes":
			vals[i] = p.BytesPerSecond
		}
		errs[i] = float64(p.Errors) / tv.BucketSeconds
		vmax = max(vmax, vals[i], errs[i])
	}
	vmax *= 1.1
	n := len(tv.Points)
	x := func(i int) float64 { return L + float64(W-L-R)*float64(i)/float64(max(n-1, 1)) }
	y := func(v float64) float64 { return T + float64(H-T-B)*(1-v/vmax) }
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, L, H-B, W-R, H-B)
	fmt.Fprintf(&b, `<text x="4" y="%d">0</text><text x="4" y="%.0f">%s</text>`, H-B, y(vmax/1.1)+4, template.HTMLEscapeString(short(vmax/1.1)))
	bw := math.Max(1, float64(W-L-R)/float64(n)*0.6)
	for i, e := range errs {
		if e > 0 {
			fmt.Fprintf(&b, `<rect class="err" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, x(i)-bw/2, y(e), bw, float64(H-B)-y(e))
		}
	}
	var line strings.Builder
	for i, v := range vals {
		fmt.Fprintf(&line, "%.1f,%.1f ", x(i), y(v))
	}
	fmt.Fprintf(&b, `<polyline class="line" points="%s"/>`, strings.TrimSpace(line.String()))
	first, last := tv.Points[0].Time, tv.Points[n-1].Time
	fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text><text x="%d" y="%d" text-anchor="end">%s</text>`,
		L, H-4, first.Format("15:04:05"), W-R, H-4, last.Format("15:04:05 MST"))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// short writes a chart's scale: 3 significant figures, with k and M.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

// bars draws a breakdown as horizontal bars, in SVG.
func bars(rows []counted) template.HTML {
	if len(rows) == 0 {
		return `<p class="muted">none</p>`
	}
	const W, row, L = 420, 18, 150
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="bars" viewBox="0 0 %d %d" role="img" aria-label="breakdown">`, W, row*len(rows))
	top := rows[0].N
	for i, r := range rows {
		w := 0.0
		if top > 0 {
			w = float64(W-L-60) * float64(r.N) / float64(top)
		}
		fmt.Fprintf(&b, `<text x="0" y="%d">%s</text><rect class="bar" x="%d" y="%d" width="%.1f" height="%d"/><text x="%.1f" y="%d">%s</text>`,
			i*row+13, template.HTMLEscapeString(r.Key), L, i*row+3, w, row-6, float64(L)+w+4, i*row+13, group(r.N))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
