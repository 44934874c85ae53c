package trapweb

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// An alphabet is the set of values a slot of a trap URL grammar takes, with
// a successor ("next page", "next day") and a random draw.
type alphaKind uint8

const (
	aDigits alphaKind = iota
	aDate
	aLower
	aBase62
	aHex
	aWords
	aAlnum
	alphaKinds
)

const (
	lowerChars  = "abcdefghijklmnopqrstuvwxyz"
	alnumChars  = "0123456789abcdefghijklmnopqrstuvwxyz"
	hexChars    = "0123456789abcdef"
	base62Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

type alphabet struct {
	kind   alphaKind
	layout string // aDate: a time layout
	month  bool   // aDate: the layout has no day
	minLen int    // aDigits: digits of random values; aLower, aAlnum: lengths; aBase62, aHex: the length
	maxLen int
	joiner string // aWords
	v      *vocabulary
	chars  [256]bool
}

var dayLayouts = []string{"2006-01-02", "20060102", "2006_01_02", "2006.01.02", "02-01-2006", "01-02-2006", "2006/01/02", "02.01.2006"}
var monthLayouts = []string{"2006-01", "200601", "2006_01", "01-2006", "2006/01", "2006.01"}

// newAlphabet draws an alphabet; slash says whether values may contain "/".
func newAlphabet(rng *rand.Rand, v *vocabulary, slash bool) *alphabet {
	a := &alphabet{kind: alphaKind(rng.IntN(int(alphaKinds))), v: v}
	switch a.kind {
	case aDigits:
		a.minLen = 1 + rng.IntN(6)
	case aDate:
		for {
			a.month = rng.IntN(3) == 0
			if a.month {
				a.layout = monthLayouts[rng.IntN(len(monthLayouts))]
			} else {
				a.layout = dayLayouts[rng.IntN(len(dayLayouts))]
			}
			if slash || !strings.Contains(a.layout, "/") {
				break
			}
		}
	case aLower, aAlnum:
		a.minLen = 1 + rng.IntN(5)
		a.maxLen = a.minLen + rng.IntN(8)
	case aBase62:
		a.minLen = 5 + rng.IntN(8)
	case aHex:
		a.minLen = []int{6, 8, 12, 16, 24, 32, 40}[rng.IntN(7)]
	case aWords:
		a.joiner = []string{"-", "_", "."}[rng.IntN(3)]
		a.minLen = 1 + rng.IntN(2)
		a.maxLen = a.minLen + rng.IntN(3)
	}
	set := func(s string) {
		for i := 0; i < len(s); i++ {
			a.chars[s[i]] = true
		}
	}
	switch a.kind {
	case aDigits:
		set("0123456789")
	case aDate:
		set("0123456789")
		for _, c := range a.layout {
			a.chars[byte(c)] = true
		}
	case aLower:
		set(lowerChars)
	case aAlnum:
		set(alnumChars)
	case aBase62:
		set(base62Chars)
	case aHex:
		set(hexChars)
	case aWords:
		set(lowerChars + a.joiner)
	}
	return a
}

func (a *alphabet) String() string {
	switch a.kind {
	case aDigits:
		return "digits"
	case aDate:
		return "date:" + a.layout
	case aLower:
		return fmt.Sprintf("lower%d-%d", a.minLen, a.maxLen)
	case aAlnum:
		return fmt.Sprintf("alnum%d-%d", a.minLen, a.maxLen)
	case aBase62:
		return fmt.Sprintf("base62x%d", a.minLen)
	case aHex:
		return fmt.Sprintf("hex%d", a.minLen)
	case aWords:
		return fmt.Sprintf("words%q", a.joiner)
	}
	return "?"
}

func (a *alphabet) in(c byte) bool { return a.chars[c] }

func randChars(rng *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[rng.IntN(len(set))]
	}
	return string(b)
}

var dateBase = time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)

func (a *alphabet) random(rng *rand.Rand) string {
	switch a.kind {
	case aDigits:
		lim := uint64(1)
		for range a.minLen {
			lim *= 10
		}
		return strconv.FormatUint(rng.Uint64N(lim*10), 10)
	case aDate:
		if a.month {
			return dateBase.AddDate(0, rng.IntN(12*50), 0).Format(a.layout)
		}
		return dateBase.AddDate(0, 0, rng.IntN(366*50)).Format(a.layout)
	case aLower:
		return randChars(rng, lowerChars, a.minLen+rng.IntN(a.maxLen-a.minLen+1))
	case aAlnum:
		s := randChars(rng, alnumChars, a.minLen+rng.IntN(a.maxLen-a.minLen+1))
		return s
	case aBase62:
		return randChars(rng, base62Chars, a.minLen)
	case aHex:
		return randChars(rng, hexChars, a.minLen)
	case aWords:
		n := a.minLen + rng.IntN(a.maxLen-a.minLen+1)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = a.v.text[rng.IntN(len(a.v.text))]
		}
		return strings.Join(ws, a.joiner)
	}
	panic("unknown alphabet")
}

// valid reports whether s is a value of the alphabet: the server answers
// 200 for it.
func (a *alphabet) valid(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !a.chars[s[i]] {
			return false
		}
	}
	switch a.kind {
	case aDigits:
		return len(s) <= 18 && (s == "0" || s[0] != '0')
	case aDate:
		t, err := time.Parse(a.layout, s)
		return err == nil && t.Format(a.layout) == s && t.Year() >= 1000
	case aBase62, aHex:
		return len(s) == a.minLen
	case aWords:
		parts := strings.Split(s, a.joiner)
		if len(parts) > 6 {
			return false
		}
		for _, p := range parts {
			if _, ok := a.v.idx[p]; !ok {
				return false
			}
		}
	}
	return true
}

// next is the successor of a valid value: the next number, day, month,
// string in counting order.
func (a *alphabet) next(s string) string {
	switch a.kind {
	case aDigits:
		n, _ := strconv.ParseUint(s, 10, 64)
		if n >= 999_999_999_999_999_998 {
			n = 0
		}
		return strconv.FormatUint(n+1, 10)
	case aDate:
		t, _ := time.Parse(a.layout, s)
		if a.month {
			t = t.AddDate(0, 1, 0)
		} else {
			t = t.AddDate(0, 0, 1)
		}
		if t.Year() > 9999 {
			t = dateBase
		}
		return t.Format(a.layout)
	case aLower:
		return increment(s, lowerChars, true)
	case aAlnum:
		return increment(s, alnumChars, true)
	case aBase62:
		return increment(s, base62Chars, false)
	case aHex:
		return increment(s, hexChars, false)
	case aWords:
		parts := strings.Split(s, a.joiner)
		last := parts[len(parts)-1]
		parts[len(parts)-1] = a.v.text[(int(a.v.idx[last])+1)%len(a.v.text)]
		return strings.Join(parts, a.joiner)
	}
	panic("unknown alphabet")
}

// increment counts s up by one in the digits set; with grow an overflow
// adds a digit (up to 64), else it wraps.
func increment(s, set string, grow bool) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		k := strings.IndexByte(set, b[i])
		if k < len(set)-1 {
			b[i] = set[k+1]
			return string(b)
		}
		b[i] = set[0]
	}
	if grow && len(b) < 64 {
		return string(set[min(1, len(set)-1)]) + string(b)
	}
	return string(b)
}
