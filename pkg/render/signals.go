package render

import (
	"bytes"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlcluster/crawler/pkg/parse"
)

// Signals are what a page's HTML says about whether it is built by scripts.
// They are read from the document as fetched, before any rendering.
type Signals struct {
	Scripts    int    // <script> elements (inline or with src)
	AppRoot    string // id or attribute of an empty element a framework mounts into
	NoScriptJS bool   // a <noscript> asks for JavaScript
	BuildsDOM  bool   // an inline script writes the document or its links
	TextBytes  int    // visible text the HTML has
	Links      int    // links the HTML has
	LittleText bool   // scripts and next to no text or links: the content comes later
	Reasons    []string
}

// Strong reports whether the signals justify rendering the page before its
// host has a verdict: an empty mount element, a <noscript> plea with
// scripts, or scripts and next to nothing else.
func (s Signals) Strong() bool {
	return s.Scripts > 0 && (s.AppRoot != "" || s.NoScriptJS || s.LittleText)
}

// Reason is the signals in one word list, for the recorded decision.
func (s Signals) Reason() string { return strings.Join(s.Reasons, ",") }

// Thresholds of LittleText. A page with under 256 bytes of visible text and
// at most two links says little for itself; most real pages say more even
// in their navigation alone.
const (
	littleTextBytes = 256
	littleLinks     = 2
)

// maxMountText is the most text a mount point may hold and still wait
// for a script: a loading note.
const maxMountText = 64

// maxScan bounds the bytes of HTML read for signals: mount points, noscript
// notes and bootstrapping scripts sit near the top of a document.
const maxScan = 256 << 10

// mountIDs are the ids the common client-side frameworks mount into by
// convention (create-react-app, Vue CLI, Angular, Next.js, Nuxt, Svelte,
// Ember and others); an element with one of these ids that is empty in the
// HTML is waiting for a script.
var mountIDs = []string{"app", "root", "__next", "__nuxt", "__layout", "react-root", "app-root", "application", "main-app", "svelte", "ember-app", "q-app", "___gatsby"}

// mountAttrs mark a mount point whatever its id.
var mountAttrs = []string{"ng-app", "data-reactroot", "data-react-root", "data-v-app", "data-server-rendered", "x-data"}

// domWriters are what an inline script calls to put content or links into
// the document, or to route on the client.
var domWriters = [][]byte{
	[]byte("innerHTML"), []byte("insertAdjacentHTML"), []byte("appendChild"), []byte("createElement"),
	[]byte("document.write"), []byte("pushState"), []byte("replaceState"), []byte("fetch("),
	[]byte("XMLHttpRequest"), []byte("textContent"), []byte(".append("), []byte("render("),
}

// Read reads the signals of an HTML body; doc is the parse of the same body
// (its text and links). It never fails: malformed HTML is read as far as it
// goes, as browsers do.
func Read(body []byte, doc *parse.Document) Signals {
	var s Signals
	if doc != nil {
		s.TextBytes, s.Links = len(doc.Text), len(doc.Links)
	}
	if len(body) > maxScan {
		body = body[:maxScan]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	var (
		candidate  string // a possible mount point just opened
		candAtom   atom.Atom
		inScript   bool
		inNoscript bool
		mountText  int // bytes of text inside the mount point
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if candidate != "" {
				candidate = "" // the mount point has children: rendered on the server
			}
			switch a {
			case atom.Script:
				s.Scripts++
				inScript = tt == html.StartTagToken
			case atom.Noscript:
				inNoscript = tt == html.StartTagToken
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				key := string(k)
				switch {
				case key == "id" && tt == html.StartTagToken && slices.Contains(mountIDs, strings.ToLower(string(v))):
					candidate, candAtom, mountText = "#"+string(v), a, 0
				case slices.Contains(mountAttrs, key) && tt == html.StartTagToken && a != atom.Html && a != atom.Body:
					candidate, candAtom, mountText = "["+key+"]", a, 0
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if candidate != "" && a == candAtom && s.AppRoot == "" {
				s.AppRoot = candidate
			}
			candidate = ""
			switch a {
			case atom.Script:
				inScript = false
			case atom.Noscript:
				inNoscript = false
			}
		case html.TextToken:
			t := z.Text()
			switch {
			case inScript:
				if !s.BuildsDOM {
					for _, w := range domWriters {
						if bytes.Contains(t, w) {
							s.BuildsDOM = true
							break
						}
					}
				}
			case inNoscript:
				if bytes.Contains(bytes.ToLower(t), []byte("javascript")) {
					s.NoScriptJS = true
				}
			default:
				// A short note ("Loading...") keeps a mount point empty;
				// more text is a server-side render.
				if mountText += len(bytes.TrimSpace(t)); candidate != "" && mountText > maxMountText {
					candidate = ""
				}
			}
		}
	}
	s.LittleText = s.TextBytes < littleTextBytes && s.Links <= littleLinks
	if s.AppRoot != "" {
		s.Reasons = append(s.Reasons, "app_root"+s.AppRoot)
	}
	if s.NoScriptJS {
		s.Reasons = append(s.Reasons, "noscript")
	}
	if s.LittleText && s.Scripts > 0 {
		s.Reasons = append(s.Reasons, "little_text")
	}
	if s.BuildsDOM {
		s.Reasons = append(s.Reasons, "script_builds_dom")
	}
	return s
}
