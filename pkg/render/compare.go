package render

import "github.com/crawlcluster/crawler/pkg/parse"

// Comparison is what rendering a page found against its HTML alone.
type Comparison struct {
	LinksHTML, LinksRendered int // distinct followable links
	NewLinks                 int // in the rendered DOM and not in the HTML
	// UnknownLinks are the new links to URLs the crawl did not know when
	// the page was judged (Judge).
	UnknownLinks           int
	TextHTML, TextRendered int // bytes of visible text
	Gained                 bool
	// Added are the new links, in DOM order, for Judge.
	Added []string
}

// Compare compares the parse of a page's HTML with the parse of its
// rendered DOM, and judges it as Judge(nil) does, as if the crawl knew
// none of the links rendering added.
func Compare(html, rendered *parse.Document) Comparison {
	var c Comparison
	seen := map[string]bool{}
	if html != nil {
		c.TextHTML = len(html.Text)
		for _, l := range html.Links {
			if !l.NoFollow && !seen[l.URL] {
				seen[l.URL] = true
				c.LinksHTML++
			}
		}
	}
	if rendered != nil {
		c.TextRendered = len(rendered.Text)
		mine := map[string]bool{}
		for _, l := range rendered.Links {
			if l.NoFollow || mine[l.URL] {
				continue
			}
			mine[l.URL] = true
			c.LinksRendered++
			if !seen[l.URL] {
				c.Added = append(c.Added, l.URL)
			}
		}
	}
	c.NewLinks = len(c.Added)
	c.Judge(nil)
	return c
}

// Judge decides whether rendering gained materially: the DOM leads to at
// least one URL the crawl does not know yet (known, nil when it knows
// none; not known means not linked from the HTML of any page, nor seen by
// the frontier), or it has half again as much text as the HTML and 200
// bytes more. A link the crawl knows is no gain however many there are: a
// navigation bar a script builds on every page of a site leads somewhere
// new on the first page only, and a section whose pages render the same
// known links is crawled as well from their HTML. Nor is a clock or a
// cookie banner written by a script: too little text.
func (c *Comparison) Judge(known func(url string) bool) {
	c.UnknownLinks = 0
	for _, u := range c.Added {
		if known == nil || !known(u) {
			c.UnknownLinks++
		}
	}
	c.Gained = c.UnknownLinks > 0 || c.TextRendered >= c.TextHTML+max(200, c.TextHTML/2)
}
