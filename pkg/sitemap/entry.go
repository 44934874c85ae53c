package sitemap

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxLocBytes caps a location. sitemaps.org asks for fewer than 2,048
// characters; longer URLs exist in the wild, so the cap is looser, but a
// multi-kilobyte "URL" is a trap or garbage, not a page.
const maxLocBytes = 8 << 10

// validLoc reports whether loc (already trimmed) is an absolute http(s) URL
// the crawler can take as a candidate. Normalization is the caller's job.
func validLoc(loc string) bool {
	if loc == "" || len(loc) > maxLocBytes || !utf8.ValidString(loc) {
		return false
	}
	u, err := url.Parse(loc)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme == "http" || scheme == "https"
}

// lastModLayouts are the W3C datetime profile the protocol names, in order of
// frequency, followed by deviations common enough in real sitemaps to accept:
// no zone (read as UTC), a space instead of 'T', a zone without a colon.
// time.Parse accepts fractional seconds after any seconds field.
var lastModLayouts = []string{
	"2006-01-02",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006",
	"2006-01",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
}

// parseLastMod returns the time in UTC, or the zero time when s is not a
// date the crawler can trust for recrawl scheduling.
func parseLastMod(s string) time.Time {
	s = strings.TrimSpace(s)
	if len(s) < 4 || len(s) > 64 {
		return time.Time{}
	}
	for _, layout := range lastModLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// parseChangeFreq returns the protocol value in lower case, or "" for
// anything else.
func parseChangeFreq(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "always", "hourly", "daily", "weekly", "monthly", "yearly", "never":
		return s
	}
	return ""
}

// parsePriority returns the priority in [0, 1], or -1 when absent or invalid.
func parsePriority(s string) float64 {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 32 {
		return -1
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		return -1
	}
	return f
}
