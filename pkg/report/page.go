package report

import (
	"html/template"
	"strings"
	"time"
)

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":      num,
	"sorted":   sorted,
	"bars":     bars,
	"timeline": timeline,
	"ptr":      pointerKey,
	"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 MST") },
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"join": strings.Join,
}).Parse(pageHTML))

// pageHTML is the report page. Its style is inline and it has no script:
// nothing in it can ask the network for anything (the Content-Security-Policy
// meta says so to a browser as well).
const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crawl report, {{when .R.GeneratedAt}}</title>
<style>
:root { --fg: #1d232a; --muted: #5c6670; --line: #d8dde2; --bg: #f6f7f9; --accent: #1f5f8b; --bad: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; padding: 1.2em 1.6em 3em; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 .2em; }
h2 { font-size: 15px; margin: 0 0 .5em; }
.muted { color: var(--muted); }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 380px), 1fr)); gap: 1em; margin-top: 1em; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .8em 1em; min-width: 0; }
section.wide { grid-column: 1 / -1; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .2em .6em .2em 0; border-bottom: 1px solid #eef0f2; vertical-align: top; }
th { color: var(--muted); font-weight: 500; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
td.url { overflow-wrap: anywhere; }
svg { width: 100%; height: auto; display: block; }
svg text { font-size: 11px; fill: var(--muted); }
svg .line { fill: none; stroke: var(--accent); stroke-width: 1.5; }
svg .err { fill: var(--bad); opacity: .7; }
svg .bar { fill: var(--accent); }
svg .axis { stroke: var(--line); }
.key span { display: inline-block; width: .8em; height: .8em; margin: 0 .3em 0 .8em; vertical-align: -1px; }
</style>
</head>
<body>
<h1>Crawl report</h1>
<p class="muted">As of {{when .R.GeneratedAt}}{{if .Note}} · {{.Note}}{{end}} · the same numbers as <code>GET /api/v1/report</code> and report.json beside this file.</p>
<div class="grid">
<section><h2>URLs</h2><table>
<tr><td>Discovered</td><td class="num" data-path="/urls/discovered">{{num .R.URLs.Discovered}}</td></tr>
<tr><td>Fetched</td><td class="num" data-path="/urls/fetched">{{num .R.URLs.Fetched}}</td></tr>
<tr><td>Stored</td><td class="num" data-path="/urls/succeeded">{{num .R.URLs.Succeeded}}</td></tr>
<tr><td>Failed</td><td class="num" data-path="/urls/failed">{{num .R.URLs.Failed}}</td></tr>
<tr><td>Still queued</td><td class="num" data-path="/urls/queued">{{num .R.URLs.Queued}}</td></tr>
<tr><td>Duplicate content</td><td class="num" data-path="/urls/duplicate_content">{{num .R.URLs.DuplicateContent}}</td></tr>
<tr><td>Blocked by robots.txt (polite, not an error)</td><td class="num" data-path="/urls/blocked_by_robots">{{num .R.URLs.BlockedByRobots}}</td></tr>
<tr><td>Excluded</td><td class="num" data-path="/urls/excluded/total">{{num .R.URLs.Excluded.Total}}</td></tr>
<tr><td>Hosts</td><td class="num" data-path="/hosts">{{num .R.Hosts}}</td></tr>
</table></section>
<section><h2>Errors</h2><table>
<tr><td>Network</td><td class="num" data-path="/errors/network">{{num .R.Errors.Network}}</td></tr>
<tr><td>Timeout</td><td class="num" data-path="/errors/timeout">{{num .R.Errors.Timeout}}</td></tr>
<tr><td>HTTP 4xx</td><td class="num" data-path="/errors/http_4xx">{{num .R.Errors.HTTP4xx}}</td></tr>
<tr><td>HTTP 5xx</td><td class="num" data-path="/errors/http_5xx">{{num .R.Errors.HTTP5xx}}</td></tr>
<tr><td>robots.txt unreadable</td><td class="num" data-path="/errors/robots">{{num .R.Errors.Robots}}</td></tr>
</table></section>
<section><h2>Storage</h2><table>
<tr><td>Captures</td><td class="num" data-path="/storage/captures">{{num .R.Storage.Captures}}</td></tr>
<tr><td>Bytes of bodies</td><td class="num" data-path="/storage/bytes">{{num .R.Storage.Bytes}}</td></tr>
<tr><td>Bytes of WARC records</td><td class="num" data-path="/storage/warc_bytes">{{num .R.Storage.WARCBytes}}</td></tr>
<tr><td>WARC segments</td><td class="num" data-path="/storage/warc_segments">{{num .R.Storage.WARCSegments}}</td></tr>
</table></section>
<section class="wide"><h2>Pages per second over time</h2>
<p class="muted key"><span style="background:#1f5f8b"></span>pages/s<span style="background:#b3261e"></span>4xx and 5xx answers/s · buckets of <span data-path="/timeline/bucket_seconds" style="display:inline;width:auto;height:auto;margin:0;background:none">{{num .R.Timeline.BucketSeconds}}</span> s</p>
{{timeline .R.Timeline "pages"}}</section>
<section class="wide"><h2>Bytes per second over time</h2>{{timeline .R.Timeline "bytes"}}</section>
<section><h2>HTTP status</h2>{{bars (sorted .R.Statuses "/statuses")}}<table>
{{range sorted .R.Statuses "/statuses"}}<tr><td>{{.Key}}</td><td class="num" data-path="{{.Path}}">{{num .N}}</td></tr>{{end}}
</table></section>
<section><h2>Content types</h2>{{bars (sorted .R.ContentTypes "/content_types")}}<table>
{{range sorted .R.ContentTypes "/content_types"}}<tr><td>{{.Key}}</td><td class="num" data-path="{{.Path}}">{{num .N}}</td></tr>{{end}}
</table></section>
<section><h2>Traps held, and why</h2>{{if .R.Held}}<table><tr><th>Reason</th><th class="num">URLs</th><th>Why</th></tr>
{{range $i, $h := .R.Held}}<tr><td>{{$h.Reason}}</td><td class="num" data-path="/held/{{$i}}/count">{{num $h.Count}}</td><td>{{$h.Description}}</td></tr>{{end}}
</table>{{else}}<p class="muted">No URL was held as a trap.</p>{{end}}</section>
<section class="wide"><h2>Seeds</h2>{{if .R.Seeds}}<table><tr><th>Seed</th><th>State</th><th class="num">Status</th><th>Redirected to</th><th class="num">Pages under it</th></tr>
{{range $i, $s := .R.Seeds}}<tr><td class="url">{{$s.URL}}</td><td>{{$s.State}}{{if $s.Reason}} ({{$s.Reason}}){{end}}</td><td class="num">{{if $s.Status}}<span data-path="/seeds/{{$i}}/status">{{$s.Status}}</span>{{else}}—{{end}}</td><td class="url">{{$s.RedirectTo}}</td><td class="num" data-path="/seeds/{{$i}}/pages">{{num $s.Pages}}</td></tr>{{end}}
</table>{{else}}<p class="muted">{{if .SeedsListed}}No seed.{{else}}This store cannot list its seeds.{{end}}</p>{{end}}</section>
<section class="wide"><h2>Busiest hosts</h2>{{if .R.BusiestHosts}}<table><tr><th>Host</th><th class="num">URLs admitted</th><th class="num">Errors</th><th class="num">Excluded</th><th class="num">Delay (s)</th></tr>
{{range $i, $h := .R.BusiestHosts}}<tr><td class="url">{{$h.Host}}</td><td class="num" data-path="/busiest_hosts/{{$i}}/admitted">{{num $h.Admitted}}</td><td class="num" data-path="/busiest_hosts/{{$i}}/errors">{{num $h.Errors}}</td><td class="num" data-path="/busiest_hosts/{{$i}}/excluded">{{num $h.Excluded}}</td><td class="num" data-path="/busiest_hosts/{{$i}}/delay_seconds">{{num $h.DelaySeconds}}</td></tr>{{end}}
</table>{{else}}<p class="muted">No host.</p>{{end}}</section>
</div>
</body>
</html>
`
