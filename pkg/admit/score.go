package admit

import "strings"

// mediaExtensions are file types worth fetching later than pages: they bring
// no links and cost bandwidth.
var mediaExtensions = map[string]struct{}{
	".jpg": {}, ".jpeg": {}, ".png": {}, ".gif": {}, ".webp": {}, ".svg": {}, ".ico": {},
	".pdf": {}, ".zip": {}, ".gz": {}, ".tar": {}, ".mp3": {}, ".mp4": {}, ".avi": {},
	".mov": {}, ".doc": {}, ".docx": {}, ".xls": {}, ".xlsx": {}, ".ppt": {}, ".pptx": {},
	".exe": {}, ".dmg": {}, ".iso": {},
}

// Scoring weights from the project's seed documents.
const (
	depthPenalty     = 10
	mediaPenalty     = 20
	longQueryPenalty = 10
	newHostBonus     = 5
	newHostPages     = 10  // HostPages below this earns the bonus
	longQueryBytes   = 100 // a query longer than this is long
	longQueryParams  = 5   // so is one with more parameters than this
)

// scoreOf rates a candidate 0..100: shallow pages first, media and
// parameter-heavy URLs later, and a small lift for hosts the crawl has barely
// seen, so that one large site does not crowd out new ones.
func scoreOf(depth int, u parts, hostPages int) int {
	s := 100 - depthPenalty*max(depth, 0)
	if isMedia(u.path) {
		s -= mediaPenalty
	}
	if len(u.query) > longQueryBytes || countParams(u.query) > longQueryParams {
		s -= longQueryPenalty
	}
	if hostPages < newHostPages {
		s += newHostBonus
	}
	return min(max(s, 0), 100)
}

// level maps scores evenly onto levels front queues: 100 -> 0, 0 -> levels-1.
func level(score, levels int) int {
	score = min(max(score, 0), 100)
	return (100 - score) * levels / 101
}

func isMedia(path string) bool {
	last := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(last, ';'); i >= 0 {
		last = last[:i] // path parameters are not part of the name
	}
	dot := strings.LastIndexByte(last, '.')
	if dot < 0 || len(last)-dot > 6 {
		return false
	}
	_, ok := mediaExtensions[strings.ToLower(last[dot:])]
	return ok
}

// countParams counts non-empty '&'-separated parameters.
func countParams(query string) int {
	n := 0
	for p := range strings.SplitSeq(query, "&") {
		if p != "" {
			n++
		}
	}
	return n
}
