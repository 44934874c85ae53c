// Package store defines what the crawler keeps in its metadata store and the
// interfaces the pipeline uses to reach it. Implementations live in their own
// packages (store/sqlite for the embedded mode, store/postgres for clusters), so the
// fetcher, parser and API depend only on the contracts here.
//
// The store is the system of record (DESIGN.md, "Ownership and state"): the exact
// seen-URL set and the queued frontier are durable here, Kafka only carries records
// between tiers. Three rules follow, and every implementation must keep them:
//
//   - AdmitURLs is idempotent (INSERT ... ON CONFLICT DO NOTHING): a record replayed
//     after a crash never queues a URL twice and never resets a fetched one.
//   - A URL's state only moves forward within a crawl cycle (queued -> fetched ->
//     stored | failed | excluded); UpdateURLs never moves it back to queued except
//     through Requeue.
//   - AddCaptures is idempotent on FetchID and runs in one transaction with the URL
//     updates it implies, so a parser that replays a batch after a crash stores
//     nothing twice.
//
// URLs are identified by Hash: the first 8 bytes of the SHA-256 of the normalized
// URL, big-endian, as an int64 (SQL has no unsigned 64-bit type). At a billion URLs
// the chance of any collision is about 3%; at ten million it is 3e-6, and the
// collision would show as one URL reported seen.
package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/crawlcluster/crawler/pkg/urlkind"
)

// ErrNotFound is returned by look-ups of a URL or host the store does not hold.
var ErrNotFound = errors.New("not found")

// HashURL returns the store key of a normalized URL.
func HashURL(normalized string) int64 {
	// The string's bytes, not a copy: Sum256 only reads them, and the copy
	// of every URL longer than 32 bytes was 31 MB of a medium crawl.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(normalized), len(normalized)))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// State is where a URL is in its crawl cycle.
type State string

const (
	StateQueued   State = "queued"   // admitted, waiting in a fetcher's frontier
	StateFetched  State = "fetched"  // fetched and handed to the parser tier
	StateStored   State = "stored"   // capture written (content in WARC, metadata here)
	StateFailed   State = "failed"   // gave up: network error or 5xx after retries; Reason says which
	StateExcluded State = "excluded" // admitted, then ruled out at fetch time (robots, redirect limit); Reason says which
)

// Kind says what a URL is fetched for (urlkind). The urls table keeps its
// name (Kind.String, urlkind.Parse), as it always has.
type Kind = urlkind.Kind

const (
	KindPage    = urlkind.Page
	KindSitemap = urlkind.Sitemap
	// KindSubresource is a script or data a rendered page asked for
	// (queue.KindSubresource).
	KindSubresource = urlkind.Subresource
	// KindRequisite is what a page needs to display (queue.KindRequisite).
	KindRequisite = urlkind.Requisite
)

// URL is one row of the urls table.
type URL struct {
	Hash         int64
	Partition    int32 // crawl.urls partition of Host
	URL          string
	Host         string // politeness key (urlnorm.Authority)
	Depth        int
	Level        int // front-queue priority level, 0 most urgent
	Score        int // 0..100
	Kind         Kind
	State        State
	Reason       string // why failed or excluded
	Attempts     int
	Redirects    int // redirect hops that led here
	Parent       string
	CrawlID      string
	DiscoveredAt time.Time
	FetchedAt    time.Time // zero until fetched
	Status       int       // last HTTP status, 0 until fetched or for a network error
	ETag         string
	LastModified string
	Recrawl      Recrawl // change history and next visit (not written by AdmitURLs)
	// SitemapLastMod is the kept sitemap listing's <lastmod>
	// (urls.sitemap_lastmod), zero when none. Only DueURLs and DueAt read
	// it: a listing after the copy was fetched means the revisit will find
	// a change, which the scan ranks by.
	SitemapLastMod time.Time
	// Ancestry carried to the fetch result for the content verdict (see
	// queue.Verdict); not persisted: a URL loaded from the store starts a
	// fresh chain.
	DupHops int    `json:"-"`
	Hops    int    `json:"-"`
	Origin  uint64 `json:"-"`
	// ParentSpace is the space key of the same-host page it was found on.
	ParentSpace uint64 `json:"-"`
	// RewriteOf is the hash of the URL a rewrite being judged maps this one
	// onto (pattern.Decision.Target): the parser compares the page with
	// that URL's stored copy.
	RewriteOf int64 `json:"-"`
}

// Recrawl is a URL's change history and its next visit (recrawl.History in
// the store's terms; see package recrawl).
type Recrawl struct {
	NextFetchAt  time.Time     // zero: no visit planned (never fetched, retired, or recrawl off)
	FetchCount   int           // answers observed
	ChangeCount  int           // visits that found the content changed
	Unchanged    time.Duration // total time of intervals that ended unchanged
	ChangedTime  time.Duration // total time of intervals that ended changed
	LastChangeAt time.Time     // the visit that last saw a change (or the first fetch)
	LastVisitAt  time.Time     // the last answer whose content was compared: where the open interval starts
	Misses       int           // consecutive error or gone answers
	Streak       int           // consecutive answers that confirmed the copy
	ChangeRate   float64       // estimated changes per day; 0 when unknown
}

// URLUpdate moves one URL to a new state after a fetch attempt or a decision.
type URLUpdate struct {
	Hash      int64
	State     State
	Reason    string
	Status    int
	Attempts  int
	FetchedAt time.Time
	// Backoff, when positive on a failed update, schedules a retry: the URL's
	// misses grow by one and its next visit is FetchedAt + Backoff doubled per
	// miss before this one, at most BackoffMax.
	Backoff, BackoffMax time.Duration
}

// Claim asks to move a URL scheduled for Due back to queued for its revisit.
type Claim struct {
	Hash int64
	Due  time.Time // the next_fetch_at the revisit was emitted for
}

// Modification is a sitemap's word that a URL changed at LastMod.
type Modification struct {
	Hash    int64
	LastMod time.Time
	// Seen is when the sitemap saying it was fetched; with it the listing
	// is kept on the URL (URLHistory.SitemapLastMod) as an observation of
	// its changes. Zero: only a visit is planned.
	Seen time.Time
	// KeepPlan records the listing without bringing the visit forward (a
	// page changing faster than the policy chases).
	KeepPlan bool
}

// NewestListings keeps one Modification per URL, the newest listing (by
// Seen, then LastMod), in hash order: the order both stores lock rows in,
// and one row per URL for an UPDATE ... FROM, which would otherwise apply
// an arbitrary one of two.
func NewestListings(mods []Modification) []Modification {
	newest := map[int64]Modification{}
	for _, m := range mods {
		o, ok := newest[m.Hash]
		if !ok || m.Seen.After(o.Seen) || m.Seen.Equal(o.Seen) && m.LastMod.After(o.LastMod) {
			newest[m.Hash] = m
		}
	}
	out := make([]Modification, 0, len(newest))
	for _, m := range newest {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Modification) int { return cmp.Compare(a.Hash, b.Hash) })
	return out
}

// Exclusion records a candidate that was never admitted, and why (DESIGN invariant
// 2: a URL not fetched has a recorded reason). One row per URL: the first reason
// recorded stays, and Count grows with each repeated sighting.
type Exclusion struct {
	Hash    int64
	URL     string // as normalized, or as received when it could not be normalized; see CutFrom
	Host    string
	Reason  string
	Parent  string
	Depth   int
	CrawlID string
	At      time.Time
	// Seen is how many times the URL was recorded (read by HeldURLs): for a
	// held URL, about how many pages were found to link it.
	Seen int
	// CutFrom, when positive, is the length in bytes of the URL as found,
	// of which URL keeps only the first MaxExcludedURL (Cut); 0: URL is whole.
	CutFrom int
	// Chain is what the URL-pattern budgets made of a URL they held back,
	// for whoever decides it again: described afresh from Parent it would be
	// charged to the parent's family instead of the one whose chain led to
	// it. nil: not recorded (rows from before it was, other reasons).
	Chain *Chain
	// DupHops is the held URL's duplicate pages in a row (queue.URL.DupHops).
	DupHops int
}

// Chain is how a URL-pattern budget judged a URL: grounded (0 hops) or
// generated, with the hops of generation that led to it and the family
// charged for them (pattern.Candidate).
type Chain struct {
	Hops   int    `json:"hops,omitempty"`
	Origin uint64 `json:"origin,omitempty"`
}

// ChainColumns is e.Chain as the exclusions table keeps it: hops (nil for
// NULL, none recorded) and origin (the key's bits, as the columns are
// signed).
func (e Exclusion) ChainColumns() (hops *int64, origin int64) {
	if e.Chain == nil {
		return nil, 0
	}
	h := int64(e.Chain.Hops)
	return &h, int64(e.Chain.Origin)
}

// ChainOf is the Chain of an exclusions row's hops and origin columns.
func ChainOf(hops *int64, origin int64) *Chain {
	if hops == nil {
		return nil
	}
	return &Chain{Hops: int(*hops), Origin: uint64(origin)}
}

// MaxExcludedURL bounds the URL an exclusion row keeps: a page can hold a
// reference of megabytes, and the normalizer refuses anything over 2 KiB
// anyway, so what is kept is enough to tell where it pointed.
const MaxExcludedURL = 2048

// Cut bounds URL to MaxExcludedURL bytes, cut at a UTF-8 character boundary,
// and records the length it had in CutFrom. A zero Hash becomes the whole
// URL's first, so distinct long URLs keep rows of their own. The stores cut
// every exclusion they record; a caller that holds many a while cuts early.
func (e *Exclusion) Cut() {
	if len(e.URL) <= MaxExcludedURL {
		return
	}
	if e.Hash == 0 {
		e.Hash = HashURL(e.URL)
	}
	n := MaxExcludedURL
	for n > 0 && !utf8.RuneStart(e.URL[n]) {
		n--
	}
	e.CutFrom, e.URL = len(e.URL), strings.Clone(e.URL[:n])
}

// Host is one row of the hosts table: what a new partition owner needs to stay
// polite, and what the API reports.
type Host struct {
	Host        string
	Partition   int32
	Robots      []byte // robots.Entry.MarshalBinary; nil when never fetched
	Delay       time.Duration
	NextAllowed time.Time
	Backoff     time.Duration
	Pages       int // URLs admitted for the host (the per-host budget counts these)
	Errors      int // failed fetches
	UpdatedAt   time.Time
	Excluded    int64 // candidates of the host never admitted (read only; the store counts them)
	// Admission is the host's admission state (pattern.Host.MarshalBinary),
	// read by Hosts only; SaveHosts keeps the stored one when it is nil.
	Admission []byte
}

// Capture is one stored fetch: where its WARC record is and what the parser found.
type Capture struct {
	ID            int64 // assigned by AddCaptures
	FetchID       string
	URLHash       int64
	URL           string
	FetchedAt     time.Time
	Duration      time.Duration // from the request to the end of the body (queue.Page.DurationMS); 0 = unknown
	Status        int
	ContentType   string
	Length        int64  // bytes of the decoded body
	Truncated     string // truncation reason, "" when complete
	WARCFile      string // segment name (base name, or the object key in cluster mode)
	WARCOffset    int64
	WARCLength    int64
	WARCRecordID  string
	PayloadDigest string // "sha1:BASE32", as in the WARC record
	ContentSHA256 []byte // 32 bytes of the decoded body; nil for an empty body
	SimHash       uint64 // 0 = none (non-HTML, noindex or empty text)
	RevisitOf     int64  // capture ID with the identical payload; 0 = original content
	NearDupOf     int64  // capture ID within SimHash distance; 0 = none
	Title         string
	Description   string
	Language      string
	Canonical     string
	NoIndex       bool
	Links         int // links found
	LinksDropped  int // references counted, neither followed nor recorded: past the per-page cap, or a sitemap's invalid entries
	ETag          string
	LastModified  string
	// Location is where a redirect (a 3xx other than 304) sent the
	// crawler: its Location header made absolute against URL; "" for any
	// other answer, or a redirect without a usable Location.
	Location string
	// Kind is what the URL was fetched for; "" on captures stored before
	// it was recorded (sitemaps' excepted).
	Kind Kind
	// Change is what this fetch found compared with the URL's previous copy
	// (a recrawl.Outcome: first, changed, not_modified, identical, near,
	// gone, error, other); "" when not compared.
	Change string
	// DocReason is why a document (a PDF, docx or odt) was not read, or
	// was read only in part (parse.Reason*: pdf_encrypted, pdf_broken,
	// office_truncated, pdf_page_limit, ...); "" when it was read whole, or
	// is no document.
	DocReason string
	// Schedule, when set, is the URL's change history and next visit after
	// this capture, written to the URL row; nil leaves them to the store's
	// own count (fetch_count, change_count by digest).
	Schedule *Recrawl `json:"-"`
	// OutLinks are the hashes of the normalized URLs the page links to;
	// AddCaptures stores them as link-graph edges in the same transaction.
	// Not read back with the capture (see Reader.Links).
	OutLinks []int64 `json:"-"`
	// Index, when set, is what AddCaptures writes to the full-text index
	// (see Searcher) for the capture's URL, in the captures' transaction;
	// nil leaves the URL's entry as it is.
	Index *IndexEntry `json:"-"`
}

// URLHistory is what the parser needs of a URL to compare a new fetch with
// the copy it holds and schedule the next visit.
type URLHistory struct {
	State         State // "" when unknown
	Kind          Kind
	Score         int
	FetchedAt     time.Time
	ContentSHA256 []byte // of the last stored copy with content
	SimHash       uint64
	Recrawl       Recrawl
	// The newest sitemap listing of the URL with a <lastmod>, and when
	// that sitemap was fetched; zero when none.
	SitemapLastMod, SitemapSeenAt time.Time
}

// ScheduleStats summarises the recrawl schedule.
type ScheduleStats struct {
	Scheduled int64     // URLs with a next visit planned
	Due       int64     // of which due now
	OldestDue time.Time // earliest planned visit among the due; zero when none is due
	NextDue   time.Time // earliest planned visit; zero when none
}

// FrontierStore is what a fetcher needs: admission (the exact half of the seen-URL
// check), its partitions' queued URLs and host state, and state transitions.
type FrontierStore interface {
	// AdmitURLs inserts the URLs as queued and bumps each new URL's host Pages
	// counter (creating the host row if needed). Rows that exist already are left as
	// they are. inserted[i] reports whether urls[i] was new.
	AdmitURLs(ctx context.Context, urls []URL) (inserted []bool, err error)
	// Seen reports for each hash whether the URL is in the urls table.
	Seen(ctx context.Context, hashes []int64) ([]bool, error)
	// QueuedURLs calls fn for every queued URL of partition p, in no particular order.
	QueuedURLs(ctx context.Context, p int32, fn func(URL) error) error
	// URLHashes calls fn with the hash of every URL of partition p, whatever its
	// state, to fill the fetcher's Bloom filter.
	URLHashes(ctx context.Context, p int32, fn func(int64) error) error
	// Hosts returns the host rows of partition p.
	Hosts(ctx context.Context, p int32) ([]Host, error)
	// SaveHosts upserts host rows. Pages is not written (AdmitURLs owns it); every
	// other field is.
	SaveHosts(ctx context.Context, hosts []Host) error
	// UpdateURLs applies state transitions.
	UpdateURLs(ctx context.Context, updates []URLUpdate) error
	// RecordExclusions inserts exclusions; a URL already recorded keeps its first
	// reason and has its count incremented.
	RecordExclusions(ctx context.Context, ex []Exclusion) error
	// DueURLs returns up to limit URLs of partition p with a visit planned,
	// earliest first, in state stored or failed, with their Recrawl.
	DueURLs(ctx context.Context, p int32, limit int) ([]URL, error)
	// DueAt is DueURLs of the visits due at now (planned at or before it):
	// the recrawl scan reads only what it may emit, not a partition's next
	// limit visits when one of them is due.
	DueAt(ctx context.Context, p int32, now time.Time, limit int) ([]URL, error)
	// ClaimRevisits moves each claimed URL that is still stored or failed and
	// still scheduled for exactly claim.Due back to queued (attempts 0, no
	// visit planned while queued). claimed[i] reports whether claims[i] did:
	// a revisit record replayed or emitted twice claims nothing the second time.
	ClaimRevisits(ctx context.Context, claims []Claim) (claimed []bool, err error)
	// ForgetExclusions deletes the exclusions of these URL hashes: URLs held
	// back for a while (a trap budget) and admitted after all. Unknown hashes
	// are ignored.
	ForgetExclusions(ctx context.Context, hashes []int64) error
	// HeldURLs returns the URLs a trap budget holds back (exclusions with
	// one of HeldReasons) on each host of from, at most perHost of each
	// after where from says, host by host, first held first.
	HeldURLs(ctx context.Context, from []HeldFrom, perHost int) ([]Exclusion, error)
	// UnqueueURL deletes the row of a URL that is still queued, as if it had
	// never been admitted: its host's page count goes down by one and the
	// store's counters (URLs by state) follow. It reports whether a queued row
	// was deleted; a URL in any other state, or unknown, is left alone (false).
	// The fetcher uses it to turn a queued URL back into a held one (its
	// exclusion recorded first), so that its next admission inserts it anew.
	UnqueueURL(ctx context.Context, hash int64) (bool, error)
}

// HeldFrom is where a read of a host's held URLs begins: after the URL
// first held at At with Hash (the last one a read before returned), or at
// the first when At is zero. A host can hold more than its fetcher keeps
// in memory, and the first it held may be parked already: each read goes
// on where the one before ended.
type HeldFrom struct {
	Host string
	At   time.Time
	Hash int64
}

// HeldAfter returns where the read after held ends: after its last URL.
func HeldAfter(e Exclusion) HeldFrom { return HeldFrom{Host: e.Host, At: e.At, Hash: e.Hash} }

// ReasonPatternBudget is the exclusion reason of a URL a pattern budget holds
// back (pattern.ReasonPatternBudget).
const ReasonPatternBudget = "trap_pattern_budget"

// HeldReasons are the exclusion reasons of URLs held back that may be
// admitted later (pattern's Reason constants): HeldURLs finds them by these.
// The held-URL queries and the exclusions_held index spell them out.
var HeldReasons = []string{ReasonPatternBudget, "trap_duplicate_space", "dust_rewrite"}

// CaptureStore is what a parser needs.
type CaptureStore interface {
	// StoredFetches reports for each fetch ID whether a capture with it exists.
	StoredFetches(ctx context.Context, fetchIDs []string) ([]bool, error)
	// URLStates returns the state of each URL hash ("" when unknown).
	URLStates(ctx context.Context, hashes []int64) ([]State, error)
	// URLHistories returns what the store holds of each URL hash for change
	// detection (State "" when unknown).
	URLHistories(ctx context.Context, hashes []int64) ([]URLHistory, error)
	// ConfirmedCapture returns the capture a 304 for this URL confirms: the
	// newest status-200 capture of the URL, or, when that one is a revisit,
	// the original it refers to. ErrNotFound if the URL has none.
	ConfirmedCapture(ctx context.Context, urlHash int64) (Capture, error)
	// Modified plans a visit at due for each URL a sitemap says changed after
	// its stored copy was fetched (state stored, fetched before LastMod,
	// next visit later than due or retired not; not KeepPlan). It returns how
	// many moved. A listing with Seen is kept on its URL, in any state,
	// unless the URL holds a newer one (URLHistory.SitemapLastMod).
	Modified(ctx context.Context, mods []Modification, due time.Time) (int, error)
	// ContentOwner returns the first capture with this content digest and status
	// 200, the original a revisit record refers to.
	ContentOwner(ctx context.Context, sha []byte) (Capture, error) // ErrNotFound if none
	// NearDuplicate returns the ID and distance of a capture whose SimHash is within
	// maxDist of fp, through the banded index (never a scan). ok is false if none.
	NearDuplicate(ctx context.Context, fp uint64, maxDist int) (id int64, dist int, ok bool, err error)
	// AddCaptures stores captures in one transaction: inserts them (a FetchID that
	// exists already is skipped, and its ID left 0), adds each SimHash to the banded
	// index, and moves each capture's URL to StateStored with its fetch time, status,
	// ETag and Last-Modified. The IDs are written back into caps.
	AddCaptures(ctx context.Context, caps []Capture) error
}

// Stats is a snapshot for the API and the progress line.
type Stats struct {
	URLs       map[State]int64  // rows per state
	Excluded   map[string]int64 // never-admitted candidates per reason
	Reasons    map[string]int64 // failed and excluded URLs per reason
	Captures   int64
	Revisits   int64
	NearDups   int64
	Hosts      int64
	ContentLen int64            // bytes of decoded bodies stored
	Statuses   map[string]int64 // captures per HTTP status class: "2xx".."5xx", "other"
	Segments   int64            // WARC segments that hold captures
	WARCBytes  int64            // bytes of the captures' WARC records
	// BlockedHosts have a robots.txt that could not be read (5xx, 429,
	// unreachable): nothing else is fetched from them until it can.
	BlockedHosts int64
	// SitemapsNotFound are the captures of sitemaps that are not there
	// (SitemapNotFound), of the 4xx in Statuses.
	SitemapsNotFound int64
}

// AddCounter adds one row of a store's counters table (name, key, n) to s:
// both stores keep the same counters.
func (s *Stats) AddCounter(name, key string, n int64) {
	switch name {
	case "urls":
		s.URLs[State(key)] += n
	case "reasons":
		s.Reasons[key] += n
	case "excluded":
		s.Excluded[key] += n
	case "status":
		s.Statuses[key] += n
	case "hosts":
		s.Hosts += n
	case "captures":
		s.Captures += n
	case "revisits":
		s.Revisits += n
	case "near_dups":
		s.NearDups += n
	case "content_len":
		s.ContentLen += n
	case "sitemaps_not_found":
		s.SitemapsNotFound += n
	case "warc_bytes":
		s.WARCBytes += n
	}
}

// Row is what a SQL row scan needs: *sql.Row, *sql.Rows, pgx.Row, pgx.Rows.
type Row interface{ Scan(dest ...any) error }

// ScanWith returns row with extra as the destinations of its last columns,
// after the ones a caller's Scan asks for: a scan function of a table's
// columns serves a query that reads more.
func ScanWith(row Row, extra ...any) Row {
	return scanFunc(func(dest ...any) error { return row.Scan(append(dest, extra...)...) })
}

type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// NewStats returns Stats with its maps made.
func NewStats() Stats {
	return Stats{URLs: map[State]int64{}, Excluded: map[string]int64{}, Reasons: map[string]int64{}, Statuses: map[string]int64{}}
}

// SitemapNotFound tells whether a capture is of a sitemap the site does not
// have (404 or 410): the crawler's own /sitemap.xml probe, or one robots.txt
// names. It is no error of the site, so the stores count it apart (counter
// sitemaps_not_found) and the error counts leave it out.
func SitemapNotFound(kind Kind, status int) bool {
	return kind == KindSitemap && (status == 404 || status == 410)
}

// StatusClass is the counters' key of an HTTP status: "2xx" for 200-299 and
// so on, "other" outside 100-599 (0 included).
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return string(rune('0'+status/100)) + "xx"
}

// Link is one end of a link-graph edge.
type Link struct {
	Hash  int64
	URL   string // "" when the URL was never admitted (excluded, or not yet read)
	State State  // "" when not admitted
}

// Links is a URL's place in the link graph.
type Links struct {
	Out      []Link // pages it links to, at most the limit asked
	In       []Link // pages linking to it, at most the limit asked
	OutCount int64  // all out-links stored
	InCount  int64  // all in-links stored
	InHosts  int64  // distinct hosts of the pages linking to it
}

// LinkRows reads rows of (hash, url, state), the stores' link queries, into to.
func LinkRows(rows interface {
	Row
	Next() bool
	Err() error
}, to *[]Link) error {
	for rows.Next() {
		var k Link
		var state string
		if err := rows.Scan(&k.Hash, &k.URL, &state); err != nil {
			return err
		}
		k.State = State(state)
		*to = append(*to, k)
	}
	return rows.Err()
}

// HostOrder is how HostList sorts.
type HostOrder string

const (
	HostsBusiest  HostOrder = "busiest"  // most URLs admitted
	HostsSlowest  HostOrder = "slowest"  // longest delay plus backoff
	HostsFailing  HostOrder = "failing"  // most failed fetches
	HostsExcluded HostOrder = "excluded" // most candidates never admitted
)

// HostOrders lists the orders HostList accepts.
var HostOrders = []HostOrder{HostsBusiest, HostsSlowest, HostsFailing, HostsExcluded}

// URLInfo is everything the store knows about one URL.
type URLInfo struct {
	URL       *URL       // nil when never admitted
	Exclusion *Exclusion // non-nil when recorded as excluded before admission
	Captures  []Capture  // newest first
}

// Reader serves the API's look-ups.
type Reader interface {
	Stats(ctx context.Context) (Stats, error)
	URLInfo(ctx context.Context, normalized string) (URLInfo, error) // ErrNotFound when unknown
	Host(ctx context.Context, host string) (Host, error)             // ErrNotFound when unknown
	Captures(ctx context.Context, fn func(Capture) error) error      // every capture, by ID
	ReportReader
	Schedule(ctx context.Context, now time.Time) (ScheduleStats, error)
	// Capture returns one capture by ID; ErrNotFound when unknown.
	Capture(ctx context.Context, id int64) (Capture, error)
	// Links returns up to limit out-links and in-links of a URL, with the
	// totals and the number of distinct hosts linking in.
	Links(ctx context.Context, hash int64, limit int) (Links, error)
	// HostList returns up to limit host rows in the given order (Robots not
	// read), with Excluded set.
	HostList(ctx context.Context, order HostOrder, limit int) ([]Host, error)
	// RecentFetches returns up to limit URLs of the host fetched most
	// recently, newest first, each with its last fetch's duration.
	RecentFetches(ctx context.Context, host string, limit int) ([]Fetch, error)
	// RecentCaptures returns up to limit captures that match f, newest
	// first: the crawl log.
	RecentCaptures(ctx context.Context, f CaptureFilter, limit int) ([]Capture, error)
	// HostActivity counts the host's URLs by the bucket of width bucket
	// their last fetch falls in, from since on, oldest first; buckets
	// without a fetch are left out. A URL fetched again counts at its
	// latest fetch only.
	HostActivity(ctx context.Context, host string, since time.Time, bucket time.Duration) ([]Bucket, error)
}

// CaptureFilter narrows the crawl log; a zero field matches every capture.
type CaptureFilter struct {
	Host string // the URL's authority (urlnorm.Authority), exactly
	// MinStatus and MaxStatus bound the status, both included; 0 and 0
	// match every status.
	MinStatus, MaxStatus int
	Type                 string // the Content-Type begins with it, case-insensitively
}

// StatusBounds returns f's status range for a query: every status when none
// was asked for.
func (f CaptureFilter) StatusBounds() (lo, hi int) {
	if f.MinStatus == 0 && f.MaxStatus == 0 {
		return 0, 999
	}
	return f.MinStatus, f.MaxStatus
}

// SeedURL is a URL the crawl started from and where its redirect led.
type SeedURL struct {
	URL
	RedirectTo string // where its redirect led (its capture's Location); "" when none
}

// ReportCapture is what a crawl's report reads of a capture.
type ReportCapture struct {
	URL         string
	FetchedAt   time.Time
	Length      int64
	Status      int
	ContentType string
	Kind        Kind
}

// ReportReader reads the captures for a crawl's report: only the columns
// it sums, in one pass (package reportsql), as reading whole captures
// (Reader.Captures) took most of the report's time.
type ReportReader interface {
	// ReportCaptures calls fn for every capture, in no particular order,
	// while it holds a connection: fn must not call the store.
	ReportCaptures(ctx context.Context, fn func(ReportCapture) error) error
}

// SeedLister lists the URLs a crawl started from, for its report; both SQL
// stores do (package reportsql).
type SeedLister interface {
	// Seeds returns up to limit seed URLs (depth 0, no parent), by URL.
	Seeds(ctx context.Context, limit int) ([]SeedURL, error)
}

// Fetch is a URL as its last fetch left it.
type Fetch struct {
	URL
	// Duration is that fetch's, read from its capture; 0 when unknown: no
	// capture has it (a failed fetch, or one not parsed yet) or the capture
	// predates durations.
	Duration time.Duration
}

// FetchOf reads one row of a RecentFetches query: the URL's columns, read by
// scanURL, then the duration in milliseconds of the capture of its last fetch
// (0 when none); both stores' queries answer in that shape.
func FetchOf(row Row, scanURL func(Row) (URL, error)) (Fetch, error) {
	var ms int64
	u, err := scanURL(ScanWith(row, &ms))
	return Fetch{URL: u, Duration: time.Duration(ms) * time.Millisecond}, err
}

// Bucket is a count over the time from Start to Start plus the bucket width.
type Bucket struct {
	Start time.Time
	Count int64
}

// BucketOf reads one row of a HostActivity query, (bucket number, count),
// with buckets width milliseconds wide counted from the Unix epoch; both
// stores' queries answer in that shape.
func BucketOf(row Row, width int64) (Bucket, error) {
	var b, n int64
	if err := row.Scan(&b, &n); err != nil {
		return Bucket{}, err
	}
	return Bucket{Start: time.UnixMilli(b * width).UTC(), Count: n}, nil
}

// Store is a whole metadata store.
type Store interface {
	FrontierStore
	CaptureStore
	Reader
	Close() error
}

// Operator control of a running crawl (pkg/control): what an operator has
// asked for through the API, which every fetcher follows. The store is its
// source of truth; Controls.Version grows with every change, so a fetcher
// polls one number and reads the rest only when it moved.

// Controls is the whole control state.
type Controls struct {
	Version  int64 // grows with every change
	Paused   bool  // the whole crawl: no fetcher starts a request
	PausedAt time.Time
	Hosts    []HostControl      // by host
	Patterns []ExclusionPattern // by ID
}

// HostControl is an operator's override of one host's politeness.
type HostControl struct {
	Host       string // urlnorm.Authority
	Paused     bool
	Delay      time.Duration // replaces the host's delay, never below its robots.txt Crawl-delay; negative = none
	PageBudget int64         // replaces the per-host page budget; negative = none
	// Render is the operator's render mode for the host, over the page
	// signals and the verdicts (pkg/render): RenderAlways, RenderNever or
	// "" (by evidence).
	Render    string
	UpdatedAt time.Time
}

// HostControl.Render values.
const (
	RenderAlways = "always"
	RenderNever  = "never"
)

// NoOverride marks HostControl.Delay and PageBudget as not set.
const NoOverride = -1

// ExclusionPattern is an operator's pattern of URLs not to crawl (the
// syntaxes are package control's).
type ExclusionPattern struct {
	ID        int64
	Pattern   string
	Syntax    string // "glob" or "regexp"
	Host      string // only URLs of this host; "" = any host
	CreatedAt time.Time
	CreatedBy string
	Excluded  int64 // queued URLs moved to excluded and candidates refused so far
}

// AuditEntry is one control action as the audit log keeps it.
type AuditEntry struct {
	ID     int64
	At     time.Time
	Actor  string // the token's name, or "anonymous" when the API has no tokens
	Action string // e.g. "pause", "host.update", "exclusion.add"
	Target string // the host or pattern acted on; "" for the whole crawl
	Params string // the request's parameters as JSON
	Result string // what was done, or why nothing was
	Status int    // the HTTP status answered
}

// Controller is a store that keeps control state: both SQL stores are.
type Controller interface {
	Control() ControlStore
}

// ControlStore keeps the control state and its audit log. Every change runs
// in one transaction with its audit entry and a new Version.
type ControlStore interface {
	// ControlVersion returns Controls.Version: one small read, polled by
	// every fetcher about once a second.
	ControlVersion(ctx context.Context) (int64, error)
	Controls(ctx context.Context) (Controls, error)
	// SetCrawlPaused pauses or resumes the crawl; changed is false when it
	// already was (the audit entry is written either way).
	SetCrawlPaused(ctx context.Context, paused bool, a AuditEntry) (changed bool, err error)
	// SetHostControl replaces a host's overrides; a row with nothing set is
	// deleted.
	SetHostControl(ctx context.Context, hc HostControl, a AuditEntry) error
	// AddExclusionPattern stores p and returns it with its ID.
	AddExclusionPattern(ctx context.Context, p ExclusionPattern, a AuditEntry) (ExclusionPattern, error)
	// DeleteExclusionPattern deletes a pattern: ErrNotFound when unknown
	// (and then nothing is written).
	DeleteExclusionPattern(ctx context.Context, id int64, a AuditEntry) error
	// CountExcluded adds to the patterns' Excluded counts, by pattern ID;
	// it does not change Version.
	CountExcluded(ctx context.Context, counts map[int64]int64) error
	// RecordAudit writes an entry of an action that changed nothing (refused).
	RecordAudit(ctx context.Context, a AuditEntry) error
	// AuditLog returns up to limit entries with ID below before (0 = from
	// the newest), newest first.
	AuditLog(ctx context.Context, before int64, limit int) ([]AuditEntry, error)
}
