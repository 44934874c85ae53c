package trapsim

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/crawlcluster/crawler/loadtest/trapweb"
	"github.com/crawlcluster/crawler/pkg/parse"
)

// Web is what a simulated crawl reads: a generated web or a folder of
// HTML files.
type Web interface {
	Seeds() []string
	Get(rawURL string) trapweb.Page
	RealPages() []string
}

var _ Web = (*trapweb.Web)(nil)

// DirWeb serves a folder of HTML files (a documentation site) as one host,
// as nginx would: the URL path is the file under the folder, a folder is its
// index.html, a missing file is 404, a file stored gzipped (name.gz) is
// served decoded. Every page reachable by links from the start page is a
// real page: the false positives of a trap defence show up on it.
type DirWeb struct {
	root, host, start string
	cache             map[string]trapweb.Page
	real              []string
}

// NewDirWeb returns the folder root served as host, crawled from start (a
// URL path such as "/index.html").
func NewDirWeb(root, host, start string) *DirWeb {
	d := &DirWeb{root: root, host: host, start: start, cache: map[string]trapweb.Page{}}
	seen := map[string]bool{d.abs(start): true}
	queue := []string{d.abs(start)}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		p := d.Get(u)
		if p.Status != 200 {
			continue
		}
		d.real = append(d.real, u)
		for _, l := range p.Links {
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	sort.Strings(d.real)
	return d
}

func (d *DirWeb) abs(p string) string { return "http://" + d.host + p }

// Seeds returns the start page.
func (d *DirWeb) Seeds() []string { return []string{d.abs(d.start)} }

// RealPages returns the pages reachable by links from the start page.
func (d *DirWeb) RealPages() []string { return d.real }

// Get answers a URL of the host.
func (d *DirWeb) Get(raw string) trapweb.Page {
	u, err := url.Parse(raw)
	if err != nil || u.Host != d.host {
		return trapweb.Page{URL: raw, Status: 404, Class: trapweb.Missing}
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if pg, ok := d.cache[p]; ok {
		pg.URL = raw
		return pg
	}
	pg := d.read(p)
	pg.URL = raw
	d.cache[p] = pg
	return pg
}

func (d *DirWeb) read(p string) trapweb.Page {
	missing := trapweb.Page{Status: 404, Class: trapweb.Missing}
	clean := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") {
		clean = path.Join(clean, "index.html")
	}
	if !strings.HasSuffix(clean, ".html") && !strings.HasSuffix(clean, ".htm") {
		return missing
	}
	name := filepath.Join(d.root, filepath.FromSlash(clean))
	body, err := os.ReadFile(name)
	if err != nil {
		f, gerr := os.Open(name + ".gz")
		if gerr != nil {
			return missing
		}
		defer f.Close()
		zr, zerr := gzip.NewReader(f)
		if zerr != nil {
			return missing
		}
		if body, err = io.ReadAll(zr); err != nil {
			return missing
		}
	}
	base := &url.URL{Scheme: "http", Host: d.host, Path: p}
	links, text := pageLinks(body, base)
	return trapweb.Page{Status: 200, ContentType: "text/html", Body: body, Text: text, Links: links, Class: trapweb.Real}
}

// allLinks returns every http(s) link of a page, resolved, without
// fragments, and its visible text.
// canonicalLink returns the URL a page names canonical, as the crawler's
// parser reads it (parse.Document.Canonical), or "".
func canonicalLink(body []byte, base *url.URL) string {
	doc, err := parse.Parse(body, "text/html", base.String(), nil, parse.Options{})
	if err != nil {
		return ""
	}
	return doc.Canonical
}

func allLinks(body []byte, base *url.URL) ([]string, string) {
	return walkLinks(body, base, func(u *url.URL) bool { return u.Scheme == "http" || u.Scheme == "https" })
}

// pageLinks returns the same-host .html (or folder) links of a page,
// resolved against it or its <base href>, in order and without fragments or
// queries, and its visible text; rel=nofollow links are left out.
func pageLinks(body []byte, base *url.URL) ([]string, string) {
	links, text := walkLinks(body, base, func(u *url.URL) bool {
		q := u.Path
		return u.Host == base.Host && (strings.HasSuffix(q, ".html") || strings.HasSuffix(q, ".htm") || strings.HasSuffix(q, "/"))
	})
	for i, l := range links {
		if u, err := url.Parse(l); err == nil {
			u.RawQuery = ""
			links[i] = u.String()
		}
	}
	return links, text
}

func walkLinks(body []byte, base *url.URL, keep func(*url.URL) bool) ([]string, string) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, ""
	}
	var links []string
	var text strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Style:
				return
			case atom.Base:
				for _, a := range n.Attr {
					if a.Key == "href" {
						if b, err := base.Parse(a.Val); err == nil {
							base = b
						}
					}
				}
			case atom.A:
				var href string
				nofollow := false
				for _, a := range n.Attr {
					switch a.Key {
					case "href":
						href = a.Val
					case "rel":
						nofollow = strings.Contains(a.Val, "nofollow")
					}
				}
				if u, err := base.Parse(strings.TrimSpace(href)); href != "" && !nofollow && err == nil && keep(u) {
					u.Fragment = ""
					links = append(links, u.String())
				}
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
			text.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return links, text.String()
}
