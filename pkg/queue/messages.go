package queue

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Record formats. Every value starts with a one-byte schema version so a consumer can
// reject (dead-letter) what it does not understand instead of misreading it.
const (
	urlVersion  byte = 1
	pageVersion byte = 1
	// pageVersionBodyInRaw: the body is the tail of the raw response.
	pageVersionBodyInRaw byte = 2
	// pageVersionRendered: a fifth section holds the rendered DOM.
	pageVersionRendered byte = 3
	// pageVersionScreenshot: a sixth section, after the DOM's, holds the
	// rendered page's screenshot.
	pageVersionScreenshot byte = 4
)

// ErrPoison marks a record that cannot be decoded; it goes to the dead-letter topic.
var ErrPoison = errors.New("undecodable record")

// Kind of a URL candidate.
const (
	KindPage    = "page"
	KindSitemap = "sitemap"
	// KindRobots is a hop of a robots.txt redirect chain: the URL another
	// host's robots.txt redirected to (Parent is that robots.txt, Redirects
	// the hops so far). It goes to the owner of the URL's host, which
	// fetches it in that host's turn, like any request to it, and answers
	// with a KindRobotsAnswer.
	KindRobots = "robots"
	// KindRobotsAnswer carries the end of a robots.txt redirect chain
	// (Robots) back to the owner of the host whose robots.txt it is (URL).
	KindRobotsAnswer = "robots_answer"
	KindVerdict      = "verdict" // a crawl.urls record that only carries a Verdict
	// KindSettled is a crawl.urls record the fetcher sends its own
	// admission when a URL it admitted as generated ends with no content
	// verdict to come (an error, a 4xx, robots, an operator's pattern): the
	// probes of its space that wait for verdicts stop counting it.
	KindSettled = "settled"
	// KindSubresource is a script, stylesheet or data a page needs to render,
	// asked for by the renderer tier: fetched like a page (robots, politeness,
	// the SSRF guard, the WARC), never parsed for links nor revisited.
	KindSubresource = "subresource"
	// KindRequisite is what a page needs to display (a stylesheet, an
	// image, a script, a font), found by the parser with -requisites: fetched
	// like a page but after its host's pages, archived for replay, never
	// parsed for links (a stylesheet only for its own requisites) nor
	// revisited. Parent is the page that needed it.
	KindRequisite = "requisite"
)

// URL is one URL candidate on crawl.urls.
type URL struct {
	URL          string    `json:"url"`
	Depth        int       `json:"depth,omitempty"`
	Priority     int       `json:"priority,omitempty"` // operator-given score bonus (API); 0 = computed
	Kind         string    `json:"kind,omitempty"`     // page (default) or sitemap
	Seed         bool      `json:"seed,omitempty"`
	Redirects    int       `json:"redirects,omitempty"`
	Parent       string    `json:"parent,omitempty"`
	FromRobots   bool      `json:"from_robots,omitempty"` // a sitemap listed in robots.txt
	CrawlID      string    `json:"crawl_id,omitempty"`
	DiscoveredAt time.Time `json:"discovered_at"`
	// DupHops is how many exact or near duplicate pages in a row led here,
	// the page it was found on included (0: that page was distinct).
	DupHops int `json:"dup_hops,omitempty"`
	// ParentHops and ParentOrigin are what admission made of the page it was
	// found on (pattern.Found): 0 hops when that page was grounded, else the
	// pages of generated chains that led to it and the family charged.
	ParentHops   int    `json:"parent_hops,omitempty"`
	ParentOrigin uint64 `json:"parent_origin,omitempty"`
	// Listed marks a sitemap entry: evidence that its URL is part of the site.
	Listed bool `json:"listed,omitempty"`
	// Referrers is how many other pages of the parser's batch linked it,
	// beside Parent (those not made from it: pattern.Neighbours).
	Referrers int `json:"referrers,omitempty"`
	// Verdict is what the parser found a page of this URL's host to be: on a
	// record of KindVerdict it is all the record carries; otherwise it rides
	// on one candidate found on that page. Admission feeds it to the host's
	// URL-pattern budgets.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Revisit marks a planned visit of a stored URL, emitted by the recrawl
	// scheduler of the partition's owner.
	Revisit *Revisit `json:"revisit,omitempty"`
	// Held marks a URL a URL-pattern budget held back (recorded as excluded)
	// that a stopping fetcher handed back: admitted now, its exclusion goes.
	Held bool `json:"held,omitempty"`
	// Chain, on a held URL, is what the budgets that held it made of it:
	// the next owner charges the same family with the same hops instead of
	// describing it afresh from Parent (which would charge the parent's
	// family). Absent from senders that predate it: described afresh.
	Chain *store.Chain `json:"chain,omitempty"`
	// Robots is the answer a KindRobotsAnswer record carries.
	Robots *RobotsAnswer `json:"robots,omitempty"`
}

// RobotsAnswer is how a robots.txt redirect chain ended: the last hop's
// status and body (at most robots.MaxSize+1 bytes), or the transport error
// that ended it.
type RobotsAnswer struct {
	From   string `json:"from"` // the URL that answered
	Status int    `json:"status,omitempty"`
	Body   []byte `json:"body,omitempty"`
	Error  string `json:"error,omitempty"`
	Class  string `json:"class,omitempty"` // fetch.Classify of the error
}

// Revisit is what a revisit record carries: the visit it was planned as (the
// store lets each planned visit through once) and the validators of the copy
// held, for a conditional request.
type Revisit struct {
	Due          time.Time `json:"due"`
	Level        int       `json:"level,omitempty"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
}

// Verdict is the content verdict on one fetched page.
type Verdict struct {
	URL       string `json:"url"`
	Duplicate bool   `json:"duplicate,omitempty"` // exact or near duplicate of an earlier page
	// How admission admitted the page (queue.Page.Hops, Origin, ParentSpace).
	Hops        int    `json:"hops,omitempty"`
	Origin      uint64 `json:"origin,omitempty"`
	ParentSpace uint64 `json:"parent_space,omitempty"`
	DupHops     int    `json:"dup_hops,omitempty"` // duplicate pages in a row that led to the page
	// Unlike: the page had a Page.RewriteOf whose stored copy it is no
	// duplicate of (pattern.Verdict.Unlike).
	Unlike bool `json:"unlike,omitempty"`
	// Close: Unlike, but within simhash.CloseDistance of the target's
	// copy (pattern.Verdict.Close).
	Close bool `json:"close,omitempty"`
	// NoTarget: the page had a Page.RewriteOf with no stored copy yet to
	// compare it with (pattern.Verdict.NoTarget).
	NoTarget bool `json:"no_target,omitempty"`
	// DupOf: with NoTarget, the URL of the earlier page the page
	// duplicates, if it is one (pattern.Verdict.DupOf).
	DupOf string `json:"dup_of,omitempty"`
	// Judged: the page had a Page.RewriteOf, which it was compared with
	// (pattern.Verdict.Judged).
	Judged bool `json:"judged,omitempty"`
	// Relinks are the page's links on its host that the store knew
	// already, as paths with their query (at most MaxRelinks): how often a
	// URL space's known URLs are found again tells a site's pages, which
	// link each other, from a generated space (pkg/pattern).
	Relinks []string `json:"relinks,omitempty"`
	// Fresh are the page's links on its host to URLs the store did not
	// know, in the same form and bound as Relinks: a listing's next page
	// leads somewhere new, another order of a page crawled does not
	// (pkg/pattern, relisting). Absent from senders that predate it.
	Fresh []string `json:"fresh,omitempty"`
	// Canonical is the URL the page names its canonical one (<link
	// rel="canonical">), normalized, when that is another URL of its
	// host (pattern.Verdict.Canonical). Absent from senders that predate
	// it.
	Canonical string `json:"canonical,omitempty"`
}

// MaxRelinks bounds Verdict.Relinks.
const MaxRelinks = 32

// RelinkPath returns what Verdict.Relinks holds of a normalized URL: its path
// and query, the scheme and host being the page's.
func RelinkPath(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// RelinkURLs returns a verdict's Relinks as URLs on its page's scheme and host.
func (v Verdict) RelinkURLs() []string { return v.onHost(v.Relinks) }

// FreshURLs returns a verdict's Fresh as URLs on its page's scheme and host.
func (v Verdict) FreshURLs() []string { return v.onHost(v.Fresh) }

// onHost returns paths (RelinkPath's) as URLs on the scheme and host of
// v's page; what is not a path on it is left out.
func (v Verdict) onHost(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	base := v.URL
	if i := strings.Index(base, "://"); i >= 0 {
		if j := strings.IndexAny(base[i+3:], "/?#"); j >= 0 {
			base = base[:i+3+j]
		}
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "?") || strings.HasPrefix(p, "//") {
			continue // not a path on the page's host: a record from elsewhere
		}
		out = append(out, base+p)
	}
	return out
}

// EncodeURL returns the record value for u.
func EncodeURL(u URL) ([]byte, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("encode url %s: %w", u.URL, err)
	}
	return append([]byte{urlVersion}, b...), nil
}

// DecodeURL parses a crawl.urls record value.
func DecodeURL(v []byte) (URL, error) {
	var u URL
	if len(v) == 0 || v[0] != urlVersion {
		return u, fmt.Errorf("%w: crawl.urls schema version %v", ErrPoison, firstByte(v))
	}
	if err := json.Unmarshal(v[1:], &u); err != nil {
		return u, fmt.Errorf("%w: crawl.urls json: %v", ErrPoison, err)
	}
	if u.URL == "" {
		return u, fmt.Errorf("%w: crawl.urls record without url", ErrPoison)
	}
	return u, nil
}

func firstByte(v []byte) any {
	if len(v) == 0 {
		return "missing"
	}
	return v[0]
}

// Page is one fetch result on crawl.pages.
type Page struct {
	FetchID      string    `json:"fetch_id"` // unique per fetch; the parser's idempotency key
	URL          string    `json:"url"`
	Host         string    `json:"host"`
	Kind         string    `json:"kind"` // page, sitemap or robots
	Depth        int       `json:"depth,omitempty"`
	Redirects    int       `json:"redirects,omitempty"`
	FromRobots   bool      `json:"from_robots,omitempty"`
	Status       int       `json:"status"`
	ContentType  string    `json:"content_type,omitempty"`
	Location     string    `json:"location,omitempty"`
	XRobotsTag   []string  `json:"x_robots_tag,omitempty"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Truncated    string    `json:"truncated,omitempty"` // truncation reason
	IP           string    `json:"ip,omitempty"`
	FetchedAt    time.Time `json:"fetched_at"`
	DurationMS   int64     `json:"duration_ms"` // rounded up: 0 only when unknown
	CrawlID      string    `json:"crawl_id,omitempty"`
	// The connection the page came over, for the WARC-Protocol and
	// WARC-Cipher-Suite fields (fetch.Response says what they hold). Records
	// written before they existed decode with "", which the WARC writer
	// leaves out as unknown.
	Protocol    string `json:"protocol,omitempty"`
	TLSVersion  string `json:"tls_version,omitempty"`
	CipherSuite string `json:"cipher_suite,omitempty"`
	// What admission knew of the URL's ancestry (queue.URL.DupHops), and how
	// it admitted the URL: 0 hops when grounded, else the hops of generated
	// chains that led here and the family charged (pattern.Candidate), for
	// the page's verdict and the links found on it.
	DupHops int    `json:"dup_hops,omitempty"`
	Hops    int    `json:"hops,omitempty"`
	Origin  uint64 `json:"origin,omitempty"`
	// ParentSpace is the space key (pattern.KeyOf) of the page it was found
	// on when that page is on its host: what a space's pages lead to is
	// part of what it earns.
	ParentSpace uint64 `json:"parent_space,omitempty"`
	// RewriteOf is the hash of the URL that a rewrite being judged maps
	// this one onto (store.URL.RewriteOf): the verdict says whether the
	// page is a duplicate of that URL's stored copy (Verdict.Unlike).
	RewriteOf int64 `json:"rewrite_of,omitempty"`

	// Render is what the render tier decided and did for this page: set on
	// the way to crawl.render (Reason) and on the way back (the rest).
	Render *Render `json:"render,omitempty"`

	RawRequest  []byte `json:"-"` // for the WARC request record
	RawResponse []byte `json:"-"` // as received, for the WARC response record
	Body        []byte `json:"-"` // content-decoded
	DOM         []byte `json:"-"` // the rendered document (Render.Outcome "rendered")
	Screenshot  []byte `json:"-"` // the rendered page's viewport, of Render.ScreenshotType
}

// Render outcomes.
const (
	RenderRendered = "rendered"
	RenderFailed   = "failed"
	// RenderSkipped: a page sent to learn its section (Render.Sample) whose
	// section had its verdict, not to render, by the page's turn.
	RenderSkipped = "skipped"
)

// Render is a page's trip through the render tier.
type Render struct {
	Reason string `json:"reason"` // why it was sent: the signals, or the verdict of its section or host
	// Sample marks a page sent to learn whether its section needs
	// rendering (render.Decision.Sample): the render tier asks again at
	// its turn, and skips it if the section's verdict is in and says no.
	Sample     bool      `json:"sample,omitempty"`
	Outcome    string    `json:"outcome,omitempty"` // "" on the way there; rendered, failed or skipped
	Error      string    `json:"error,omitempty"`   // why it failed: timeout, crashed, hung, ...
	TimedOut   bool      `json:"timed_out,omitempty"`
	FinalURL   string    `json:"final_url,omitempty"`
	Requests   int       `json:"requests,omitempty"` // sub-resources the page asked for and got
	Blocked    int       `json:"blocked,omitempty"`  // sub-resources refused (type, robots, scope, bound)
	RenderedAt time.Time `json:"rendered_at,omitzero"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	// ScreenshotType is the media type of Page.Screenshot, when the render
	// tier took one (-render-screenshots).
	ScreenshotType string `json:"screenshot_type,omitempty"`
	// Detail is what the render waited for and what the page raised.
	Detail *store.RenderDetail `json:"detail,omitempty"`
}

// EncodePage lays a page out as version, then length-prefixed sections: JSON
// metadata, raw request, raw response, decoded body. Bodies stay raw bytes (no
// base64). Most bodies arrive without a content encoding and are the tail of
// the raw response; those records (version 2) carry only the body's length,
// which halves what the broker stores and compresses per page. A rendered
// page adds its DOM (version 3), and its screenshot after it (version 4).
func EncodePage(p Page) ([]byte, error) {
	return EncodePageIn(p, newBuf)
}

func newBuf(n int) []byte { return make([]byte, n) }

// EncodePageIn is EncodePage laid out in get(n), a buffer of at least n
// bytes, the record's length: a caller can recycle records once produced.
func EncodePageIn(p Page, get func(n int) []byte) ([]byte, error) {
	meta, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode page %s: %w", p.URL, err)
	}
	version, body := pageVersion, p.Body
	switch {
	case len(p.Screenshot) > 0:
		version = pageVersionScreenshot
	case len(p.DOM) > 0:
		version = pageVersionRendered
	case len(p.Body) > 0 && bytes.HasSuffix(p.RawResponse, p.Body):
		version, body = pageVersionBodyInRaw, nil
	}
	n := 1 + 6*4 + len(meta) + len(p.RawRequest) + len(p.RawResponse) + len(body) + len(p.DOM) + len(p.Screenshot)
	out := append(get(n)[:0], version)
	for _, sec := range [][]byte{meta, p.RawRequest, p.RawResponse} {
		out = binary.BigEndian.AppendUint32(out, uint32(len(sec)))
		out = append(out, sec...)
	}
	if version == pageVersionBodyInRaw {
		return binary.BigEndian.AppendUint32(out, uint32(len(p.Body))), nil
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	var extra [][]byte
	switch version {
	case pageVersionRendered:
		extra = [][]byte{p.DOM}
	case pageVersionScreenshot:
		extra = [][]byte{p.DOM, p.Screenshot}
	}
	for _, sec := range extra {
		out = binary.BigEndian.AppendUint32(out, uint32(len(sec)))
		out = append(out, sec...)
	}
	return out, nil
}

// DecodePage parses a crawl.pages record value. The byte slices alias v.
func DecodePage(v []byte) (Page, error) {
	var p Page
	n := pageSections(v)
	if n == 0 {
		return p, fmt.Errorf("%w: crawl.pages schema version %v", ErrPoison, firstByte(v))
	}
	rest := v[1:]
	var secs [6][]byte
	for i := range secs[:n] {
		if len(rest) < 4 {
			return p, fmt.Errorf("%w: crawl.pages section %d: short header", ErrPoison, i)
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if i == 3 && v[0] == pageVersionBodyInRaw {
			if uint64(n) > uint64(len(secs[2])) {
				return p, fmt.Errorf("%w: crawl.pages body of %d bytes beyond the raw response", ErrPoison, n)
			}
			secs[3] = secs[2][len(secs[2])-int(n):]
			break
		}
		if uint64(n) > uint64(len(rest)) {
			return p, fmt.Errorf("%w: crawl.pages section %d: length %d beyond record", ErrPoison, i, n)
		}
		secs[i] = rest[:n:n]
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return p, fmt.Errorf("%w: crawl.pages: %d trailing bytes", ErrPoison, len(rest))
	}
	if err := json.Unmarshal(secs[0], &p); err != nil {
		return p, fmt.Errorf("%w: crawl.pages json: %v", ErrPoison, err)
	}
	if p.URL == "" || p.FetchID == "" {
		return p, fmt.Errorf("%w: crawl.pages record without url or fetch_id", ErrPoison)
	}
	p.RawRequest, p.RawResponse, p.Body, p.DOM, p.Screenshot = secs[1], secs[2], secs[3], secs[4], secs[5]
	return p, nil
}

// pageSections is how many sections a crawl.pages record of v's version
// has; 0 for a version it does not know.
func pageSections(v []byte) int {
	if len(v) == 0 {
		return 0
	}
	switch v[0] {
	case pageVersion, pageVersionBodyInRaw:
		return 4
	case pageVersionRendered:
		return 5
	case pageVersionScreenshot:
		return 6
	}
	return 0
}

// Dead-letter record headers.
const (
	HeaderSourceTopic     = "source-topic"
	HeaderSourcePartition = "source-partition"
	HeaderSourceOffset    = "source-offset"
	HeaderReason          = "reason"
)

// DeadLetter wraps a record that could not be processed for the dead-letter topic:
// the original key and value, where it came from, and why it was set aside.
func DeadLetter(rec *kgo.Record, reason error) *kgo.Record {
	return &kgo.Record{
		Topic:     TopicDeadLetter,
		Partition: 0,
		Key:       rec.Key,
		Value:     rec.Value,
		Headers: []kgo.RecordHeader{
			{Key: HeaderSourceTopic, Value: []byte(rec.Topic)},
			{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(int(rec.Partition)))},
			{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
			{Key: HeaderReason, Value: []byte(reason.Error())},
		},
	}
}
