package admit

import (
	"net/url"
	"strings"
	"time"
)

// A calendar page links to the next month forever. Real archives stay near
// the present, so a year and month far outside [now-past, now+future] marks
// a generated page. A year alone is not enough: too many ids and prices look
// like years.

// date is a year and month found in a URL; day is 0 when only the month is
// known.
type date struct{ year, month, day int }

// calendarTrap reports whether the path or query names a date outside the
// window. Recognized forms: path segments /YYYY/MM[/DD]; YYYY-MM[-DD] or
// YYYY_MM[_DD] inside a path segment or a query value (also YYYY/MM in a
// value); and separate year and month parameters (?y=2031&m=4).
func (r *Rules) calendarTrap(segs []string, query string, now time.Time) bool {
	w := window{now: now, past: r.cfg.CalendarPast, future: r.cfg.CalendarFuture}
	for i, s := range segs {
		if y, ok := year(s); ok && i+1 < len(segs) {
			if m, ok := twoDigits(segs[i+1], 12); ok {
				d := date{year: y, month: m}
				if i+2 < len(segs) {
					d.day, _ = twoDigits(segs[i+2], 31)
				}
				if w.outside(d) {
					return true
				}
			}
		}
		if scanDates(s, w.outside) {
			return true
		}
	}
	if query == "" {
		return false
	}
	var split date // from separate year/month/day parameters
	for p := range strings.SplitSeq(query, "&") {
		name, value, _ := strings.Cut(p, "=")
		name = strings.ToLower(unescape(name))
		value = unescape(value)
		if scanDates(value, w.outside) {
			return true
		}
		switch {
		case split.year == 0 && isYearName(name):
			split.year, _ = year(value)
		case split.month == 0 && isMonthName(name):
			split.month, _ = upToTwoDigits(value, 12)
		case split.day == 0 && isDayName(name):
			split.day, _ = upToTwoDigits(value, 31)
		}
	}
	return split.year != 0 && split.month != 0 && w.outside(split)
}

// window is the range of dates a real archive plausibly links to. A negative
// past or future leaves that side open.
type window struct {
	now          time.Time
	past, future time.Duration
}

func (w window) outside(d date) bool {
	start := time.Date(d.year, time.Month(d.month), max(d.day, 1), 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 1, 0)
	if d.day != 0 {
		end = start.AddDate(0, 0, 1)
	}
	if w.past >= 0 && !end.After(w.now.Add(-w.past)) {
		return true
	}
	return w.future >= 0 && start.After(w.now.Add(w.future))
}

// scanDates calls fn for each YYYY-MM[-DD] (separator '-', '_' or '/') in s
// whose digit runs stand alone, and reports whether fn returned true.
func scanDates(s string, fn func(date) bool) bool {
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := digitsEnd(s, i)
		if y, ok := year(s[i:j]); ok && j+1 < len(s) && isDateSep(s[j]) {
			k := digitsEnd(s, j+1)
			if m, ok := twoDigits(s[j+1:k], 12); ok {
				d := date{year: y, month: m}
				if k+1 < len(s) && s[k] == s[j] {
					d.day, _ = twoDigits(s[k+1:digitsEnd(s, k+1)], 31)
				}
				if fn(d) {
					return true
				}
			}
		}
		i = j
	}
	return false
}

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isDateSep(c byte) bool { return c == '-' || c == '_' || c == '/' }

// year parses exactly four digits in 1000..2999.
func year(s string) (int, bool) {
	if len(s) != 4 || (s[0] != '1' && s[0] != '2') {
		return 0, false
	}
	return number(s, 1000, 2999)
}

// twoDigits parses exactly two digits in 1..hi ("04", not "4").
func twoDigits(s string, hi int) (int, bool) {
	if len(s) != 2 {
		return 0, false
	}
	return number(s, 1, hi)
}

// upToTwoDigits parses one or two digits in 1..hi; parameters spell months
// either way (m=4, m=04).
func upToTwoDigits(s string, hi int) (int, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	return number(s, 1, hi)
}

// number parses a decimal in lo..hi. Out of range it returns 0, so that
// "m=99" or a day "45" is no month or day at all rather than one that
// time.Date would carry into later years.
func number(s string, lo, hi int) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	if n < lo || n > hi {
		return 0, false
	}
	return n, true
}

func isYearName(n string) bool {
	return n == "y" || n == "yr" || n == "yy" || n == "yyyy" || strings.HasSuffix(n, "year")
}

func isMonthName(n string) bool {
	return n == "m" || n == "mo" || n == "mon" || n == "mm" || strings.HasSuffix(n, "month")
}

func isDayName(n string) bool {
	return n == "d" || n == "dd" || strings.HasSuffix(n, "day")
}

func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}
