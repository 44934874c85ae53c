package render

import "github.com/crawlcluster/crawler/pkg/parse"

// Comparison is what rendering a page found against its HTML alone.
type Comparison struct {
	LinksHTML, LinksRendered int // distinct followable links
	NewLinks                 int // in the rendered DOM and not in the HTML
	TextHTML, TextRendered   int // bytes of visible text
	Gained                   bool
}

// Compare compares the parse of a page's HTML with the parse of its
// rendered DOM. Rendering gained materially when it found at least two new
// links and a tenth more than the HTML had, or half again as much text and
// 200 bytes more: a clock or a cookie banner written by a script is no gain.
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
				c.NewLinks++
			}
		}
	}
	c.Gained = c.NewLinks >= max(2, c.LinksHTML/10) || c.TextRendered >= c.TextHTML+max(200, c.TextHTML/2)
	return c
}
