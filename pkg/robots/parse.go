package robots

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxSize is how much of a robots.txt body is parsed. RFC 9309 section 2.5
// requires at least 500 KiB and Google stops there; content after it is
// ignored, so a fetcher need not read more than MaxSize+1 bytes.
const MaxSize = 500 << 10

// maxCrawlDelay bounds a parsed Crawl-delay so that absurd values cannot
// overflow a time.Duration; the Policy clamp usually applies far earlier.
const maxCrawlDelay = 24 * time.Hour

// File is a parsed robots.txt: its groups in file order and its sitemaps.
type File struct {
	groups   []*fileGroup
	sitemaps []string
}

// fileGroup is one group as written: consecutive user-agent lines and the
// records that follow until the next user-agent line after a rule.
type fileGroup struct {
	agents   []string // lower-case product tokens, "*" for the global group
	rules    []rule
	delay    time.Duration
	hasDelay bool
	sawRule  bool // a later user-agent line starts a new group
}

type key int

const (
	keyUnknown key = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyCrawlDelay
)

// keys lists the record names accepted, including the misspellings Google
// accepts (RFC 9309 section 2.2.4 allows leniency). Crawl-delay is not in the
// RFC; we honour it because slowing down is always polite.
var keys = map[string]key{
	"user-agent":  keyUserAgent,
	"useragent":   keyUserAgent,
	"user agent":  keyUserAgent,
	"allow":       keyAllow,
	"disallow":    keyDisallow,
	"dissallow":   keyDisallow,
	"dissalow":    keyDisallow,
	"disalow":     keyDisallow,
	"diasllow":    keyDisallow,
	"disallaw":    keyDisallow,
	"sitemap":     keySitemap,
	"site-map":    keySitemap,
	"crawl-delay": keyCrawlDelay,
	"crawldelay":  keyCrawlDelay,
	"crawl delay": keyCrawlDelay,
}

// Parse reads a robots.txt body. It never fails: RFC 9309 section 2.3.1.5
// asks crawlers to use whatever lines parse, so unknown or malformed lines are
// skipped. Only the first MaxSize bytes are read; a line cut by that limit is
// dropped rather than read as a shorter (and differently matching) rule.
func Parse(body []byte) *File {
	body = truncate(body)
	body = skipBOM(body)
	f := &File{}
	seen := map[string]bool{}
	var cur *fileGroup
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		k, value, ok := splitLine(string(line))
		if !ok {
			continue
		}
		switch k {
		case keyUserAgent:
			if cur == nil || cur.sawRule {
				cur = &fileGroup{}
				f.groups = append(f.groups, cur)
			}
			cur.agents = append(cur.agents, agentOfLine(value))
		case keyAllow, keyDisallow:
			// Rules before the first user-agent line belong to no group
			// and are ignored (RFC 9309 section 2.2.2).
			if cur == nil {
				continue
			}
			cur.sawRule = true
			if r, ok := newRule(value, k == keyAllow); ok {
				cur.rules = append(cur.rules, r)
			}
		case keyCrawlDelay:
			// Other records must not end a group (section 2.2.4), so
			// this leaves sawRule alone.
			if d, ok := parseCrawlDelay(value); cur != nil && ok {
				cur.delay = max(cur.delay, d)
				cur.hasDelay = true
			}
		case keySitemap:
			if isAbsoluteHTTP(value) && !seen[value] {
				seen[value] = true
				f.sitemaps = append(f.sitemaps, value)
			}
		}
	}
	return f
}

func truncate(body []byte) []byte {
	if len(body) <= MaxSize {
		return body
	}
	cut := body[:MaxSize]
	if c := body[MaxSize]; c == '\n' || c == '\r' {
		return cut
	}
	if i := bytes.LastIndexAny(cut, "\r\n"); i >= 0 {
		return cut[:i+1]
	}
	return nil
}

// skipBOM drops a UTF-8 byte order mark, or the prefix of one, as Google does.
func skipBOM(b []byte) []byte {
	for _, c := range []byte{0xEF, 0xBB, 0xBF} {
		if len(b) == 0 || b[0] != c {
			break
		}
		b = b[1:]
	}
	return b
}

// splitLine splits "key: value # comment". Like Google, it also accepts a
// missing colon when the line is exactly two words ("user-agent FooBot",
// "disallow /"), a common mistake whose meaning is unambiguous. Unlike
// Google, the second word may hold a colon ("sitemap https://x/s.xml",
// "disallow /a:b"): that is tried when the text before the first colon is no
// known key.
func splitLine(line string) (k key, value string, ok bool) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return keyUnknown, "", false
	}
	if name, value, found := strings.Cut(line, ":"); found {
		if k, known := lookupKey(strings.TrimSpace(name)); known {
			return k, strings.TrimSpace(value), true
		}
	}
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return keyUnknown, "", false
	}
	name, value := line[:i], strings.TrimLeft(line[i:], " \t")
	if strings.ContainsAny(value, " \t") {
		return keyUnknown, "", false
	}
	k, known := lookupKey(name)
	if !known {
		return keyUnknown, "", false
	}
	return k, value, true
}

// lookupKey finds a record name case-insensitively without allocating, as
// strings.ToLower would for the usual "User-agent" and "Disallow".
func lookupKey(name string) (key, bool) {
	var buf [len("crawl-delay")]byte
	if len(name) > len(buf) {
		return keyUnknown, false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	k, ok := keys[string(buf[:len(name)])]
	return k, ok
}

// parseCrawlDelay accepts non-negative decimal seconds ("10", "0.5", ".5").
// Anything else (units, signs, exponents, hex, NaN) is ignored rather than
// guessed at.
func parseCrawlDelay(v string) (time.Duration, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	// The syntax is checked above, so the only possible error is ErrRange:
	// more digits than a float64 holds, which is clamped like any other
	// value that is too large rather than ignored.
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs >= maxCrawlDelay.Seconds() {
		return maxCrawlDelay, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

func isAbsoluteHTTP(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return false
	}
	s := strings.ToLower(u.Scheme)
	return s == "http" || s == "https"
}

// Sitemaps returns the absolute http(s) URLs of the Sitemap records, wherever
// they appear in the file, without duplicates and in file order.
func (f *File) Sitemaps() []string {
	if f == nil {
		return nil
	}
	return append([]string(nil), f.sitemaps...)
}
