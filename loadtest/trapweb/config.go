package trapweb

import "fmt"

// Config chooses the size of the web and seeds everything drawn in it.
type Config struct {
	Seed int64
	// Hosts is the number of ordinary hosts, named h000.<Domain> onwards;
	// default 50.
	Hosts int
	// Pages is the number of real pages per ordinary host: "/", the section
	// index pages and the articles; default 40. A host's real listing
	// pages, when it has a listing, come on top.
	Pages int
	// TrapHosts is the share of ordinary hosts that get 1-3 trap spaces;
	// default 0.5 (0 means the default, a negative share none).
	TrapHosts float64
	// VariantHosts is the share of ordinary hosts whose articles have a
	// family of variants (print/amp/share/reply-like); default 0.3 (0
	// means the default, a negative share none).
	VariantHosts float64
	// CaselessHosts is the share of ordinary hosts that answer every
	// spelling of a path in upper and lower case with its page, and spell
	// some of their links so (caseless.go); default 0.1 (0 means the
	// default, a negative share none).
	CaselessHosts float64
	// ListViews is the share of real listings offered in other orders and
	// layouts as well (views.go); default 0.5 (0 means the default, a
	// negative share none).
	ListViews float64
	// Domain is the suffix of every host name; default "trap.test".
	Domain string
	// Big adds one extra host (named by Web.BigHost) with Big distinct real
	// pages under one URL pattern, all listed in its sitemap (split through
	// a sitemap index when there are more than 10,000 entries), reachable
	// by a paginated listing (20 articles a page, next/prev and a window
	// of page numbers) and by a hub page linking up to 5,000 of them. 0 =
	// no big host.
	Big int
	// Port, when not 0, is written after every host name in absolute URLs:
	// cross-host links in bodies, sitemaps, robots.txt, Seeds, RealPages,
	// Links and Page.URL of pages asked for by name:port. Set it to the
	// port a loopback server answers on for a real crawl through Handler.
	Port int
}

func (c Config) withDefaults() Config {
	if c.Hosts <= 0 {
		c.Hosts = 50
	}
	if c.Pages <= 0 {
		c.Pages = 40
	}
	if c.TrapHosts == 0 {
		c.TrapHosts = 0.5
	}
	if c.VariantHosts == 0 {
		c.VariantHosts = 0.3
	}
	if c.ListViews == 0 {
		c.ListViews = 0.5
	}
	if c.CaselessHosts == 0 {
		c.CaselessHosts = 0.1
	}
	c.CaselessHosts = min(max(c.CaselessHosts, 0), 1)
	c.ListViews = min(max(c.ListViews, 0), 1)
	c.TrapHosts = min(max(c.TrapHosts, 0), 1)
	c.VariantHosts = min(max(c.VariantHosts, 0), 1)
	if c.Domain == "" {
		c.Domain = "trap.test"
	}
	if c.Big < 0 {
		c.Big = 0
	}
	return c
}

// Class says what a URL is in the web: the truth a crawler's trap defence is
// judged against.
type Class int

const (
	Real    Class = iota // a real page: fairly reachable, must be fetched
	Trap                 // a page of a trap space instance
	Variant              // a duplicate/near-duplicate variant of a real page (print, amp, share...)
	Missing              // 404 / not part of the web
	// Meta is /robots.txt and the sitemap files (200, not HTML): neither
	// pages nor traps, and not in RealPages.
	Meta
)

func (c Class) String() string {
	switch c {
	case Real:
		return "real"
	case Trap:
		return "trap"
	case Variant:
		return "variant"
	case Missing:
		return "missing"
	case Meta:
		return "meta"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// Page is the answer to one URL.
type Page struct {
	URL         string // as asked, normalized as a crawler would (absolute)
	Status      int    // 200, 301/302 (Location set), 404
	Location    string // absolute
	ContentType string // "text/html; charset=utf-8", "application/xml" for sitemaps, "text/plain" for robots.txt
	Body        []byte // the full HTML (or XML / robots.txt) as served
	Title       string
	Text        string   // the visible text of the page (what a crawler would fingerprint with SimHash)
	Links       []string // absolute URLs of the <a href> links in Body, in order (resolved, normalized; fragments dropped)
	Canonical   string   // the absolute URL of Body's <link rel="canonical">, if any
	Class       Class
	Instance    string // for Trap and Variant: an id of the trap instance / variant family, e.g. "h003#t1"; "" for Real
}

// Instance describes one trap space instance or variant family, as drawn.
// Mode, Links and Kind are for test logs only: tests must not depend on them.
type Instance struct {
	ID    string // "h003#t1" for traps, "h003#v" for a variant family
	Host  string // host name, without port
	Class Class  // Trap or Variant
	Mode  string // content mode: identical, near, distinct, mixed
	Links string // the link structures drawn, e.g. "self=7 entry=many sitemap token"
	Kind  string // the URL grammar drawn, e.g. "grammar /word-{date:2006_01_02}.html ?key={hex16}"
	Entry string // one URL of the instance that a real page links to
	// Finite is set for an instance of a bounded number of URLs (a
	// listing's views); every other trap space is endless.
	Finite bool
}
