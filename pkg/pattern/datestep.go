package pattern

import "time"

// dateStep reports whether two URLs are the same but for one date, a step
// or two apart by day, by month or by year (the last of April and the first
// of May, December and January: nextNumber's steps, over a calendar's
// edges), or two days of one month (the month's grid). A calendar's day
// links the days, months and years either side of it and days of its
// month; taken for pages of their own, each day was found on three of them
// and vouched for as the site's (an independent web's calendar: 137 such
// days, 557 requests).
func dateStep(a, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// Back to the start of the digits (and their separators) the
	// difference is in: the date begins there, or a little before.
	for i > 0 && (isDigit(a[i-1]) || dateSep(a[i-1])) {
		i--
	}
	for i < len(a) && i < len(b) && a[i] == b[i] && dateSep(a[i]) {
		i++
	}
	da, na, ok := readDate(a[i:])
	if !ok {
		return false
	}
	db, nb, ok := readDate(b[i:])
	if !ok || da.unit != db.unit || da.layout != db.layout || a[i+na:] != b[i+nb:] {
		return false
	}
	return calendarStep(da, db)
}

// A date read from a URL: its time, whether it names a day or a month, and
// its layout (the order of its numbers and their separators).
type urlDate struct {
	t      time.Time
	unit   byte // 'd' or 'm'
	layout string
}

func dateSep(c byte) bool { return c == '-' || c == '/' || c == '_' || c == '.' }

// readDate reads a date at the start of s: year, month and day, or year and
// month, with one separator or none between them, or day, month and year;
// it returns the date and its length.
func readDate(s string) (urlDate, int, bool) {
	num := func(at, n int) (int, bool) {
		if at+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[at : at+n]) {
			if !isDigit(c) {
				return 0, false
			}
			v = 10*v + int(c-'0')
		}
		return v, true
	}
	sepAt := func(at int) (string, bool) {
		if at < len(s) && dateSep(s[at]) {
			return s[at : at+1], true
		}
		return "", at >= len(s) || !isDigit(s[at])
	}
	end := func(at int) bool { return at >= len(s) || !isDigit(s[at]) }
	// Year first: 2031-04-30, 2031/04, 20310430, 203104.
	if y, ok := num(0, 4); ok && y >= 1000 {
		for _, sep := range []string{"-", "/", "_", ".", ""} {
			w := len(sep)
			if sep != "" && (len(s) <= 4 || s[4:5] != sep) {
				continue
			}
			m, ok := num(4+w, 2)
			if !ok || m < 1 || m > 12 {
				continue
			}
			at := 6 + w
			if sep == "" || at < len(s) && s[at:at+1] == sep {
				if d, ok := num(at+w, 2); ok && end(at+w+2) && validDay(y, m, d) {
					return urlDate{time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), 'd', "ymd" + sep}, at + w + 2, true
				}
			}
			if end(at) {
				if _, ok := sepAt(at); ok {
					return urlDate{time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC), 'm', "ym" + sep}, at, true
				}
			}
		}
		return urlDate{}, 0, false
	}
	// Day first: 30-04-2031, 30.04.2031.
	d, ok1 := num(0, 2)
	if !ok1 || len(s) < 10 || !dateSep(s[2]) || s[5] != s[2] {
		return urlDate{}, 0, false
	}
	m, ok2 := num(3, 2)
	y, ok3 := num(6, 4)
	if !ok2 || !ok3 || !end(10) || m < 1 || m > 12 || !validDay(y, m, d) {
		return urlDate{}, 0, false
	}
	return urlDate{time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), 'd', "dmy" + s[2:3]}, 10, true
}

func validDay(y, m, d int) bool {
	return d >= 1 && d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// calendarStep reports whether two dates are one or two days, months or
// years apart (a month or year step keeping the day of the month), or days
// of one month.
func calendarStep(a, b urlDate) bool {
	if a.t.Equal(b.t) {
		return false
	}
	if a.unit == 'd' {
		days := a.t.Sub(b.t).Hours() / 24
		if days >= -2 && days <= 2 || a.t.Year() == b.t.Year() && a.t.Month() == b.t.Month() {
			return true
		}
		if a.t.Day() != b.t.Day() {
			return false
		}
	}
	months := (a.t.Year()-b.t.Year())*12 + int(a.t.Month()) - int(b.t.Month())
	if months >= -2 && months <= 2 {
		return true
	}
	years := a.t.Year() - b.t.Year()
	return months == 12*years && years >= -2 && years <= 2
}
