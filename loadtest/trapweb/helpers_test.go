package trapweb

import (
	"bytes"
	"container/heap"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parsed is what an HTML parser finds in a body: the hrefs of <a> elements
// in order and the visible text of <body>, white space collapsed.
type parsed struct {
	hrefs []string
	text  string
	title string
}

func parseHTML(t testing.TB, body []byte) parsed {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var p parsed
	var text []string
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		switch n.Type {
		case html.ElementNode:
			switch n.DataAtom {
			case atom.A:
				for _, a := range n.Attr {
					if a.Key == "href" {
						p.hrefs = append(p.hrefs, a.Val)
					}
				}
			case atom.Title:
				if n.FirstChild != nil {
					p.title = n.FirstChild.Data
				}
				return
			case atom.Script, atom.Style:
				return
			case atom.Body:
				inBody = true
			}
		case html.TextNode:
			if inBody {
				text = append(text, strings.Fields(n.Data)...)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(doc, false)
	p.text = strings.Join(text, " ")
	return p
}

// walkInstance follows new links of the start page's instance, shortest
// URL first (ties at random), and returns the URLs visited: steps of them,
// or fewer when no page visited links a new URL of the instance.
func walkInstance(w *Web, start string, steps int, rng *rand.Rand) []string {
	_, inst := w.Classify(start)
	seen := map[string]bool{start: true}
	frontier := &urlHeap{{start, 0}}
	var visited []string
	for len(visited) < steps && frontier.Len() > 0 {
		cur := heap.Pop(frontier).(queued).url
		visited = append(visited, cur)
		for _, l := range w.Get(cur).Links {
			if seen[l] {
				continue
			}
			if c, i := w.Classify(l); (c == Trap || c == Variant) && i == inst {
				seen[l] = true
				heap.Push(frontier, queued{l, rng.Uint32()})
			}
		}
	}
	return visited
}

type queued struct {
	url string
	tie uint32
}

// urlHeap pops the shortest URL first, ties in random order.
type urlHeap []queued

func (h urlHeap) Len() int { return len(h) }
func (h urlHeap) Less(i, j int) bool {
	if len(h[i].url) != len(h[j].url) {
		return len(h[i].url) < len(h[j].url)
	}
	return h[i].tie < h[j].tie
}
func (h urlHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *urlHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *urlHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// hostOf is the host name of an absolute URL.
func hostOf(u string) string {
	l, _ := parseLoc(u)
	return l.host
}
