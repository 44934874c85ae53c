package parser

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/pdftest"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
)

func pdfPage(fetchID, url string, body []byte) queue.Page {
	return page(fetchID, url, "", 200, func(p *queue.Page) {
		p.ContentType = "application/pdf"
		p.Body = body
		p.RawResponse = []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	})
}

// TestPDF: a PDF's text is indexed and its links followed; an encrypted
// one, or one cut short by the body limits, is stored without text, and
// its capture says why.
func TestPDF(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot"})
	const doc, locked, cut = "http://a.example/guide.pdf", "http://a.example/locked.pdf", "http://a.example/cut.pdf"
	admit(t, e, doc, locked, cut)
	whole := pdftest.Make(pdftest.Doc{Pages: []string{"quokka"}})
	truncated := pdfPage("p3", cut, whole[:len(whole)/2])
	truncated.Truncated = "length"
	produce(t, e,
		pdfPage("p1", doc, pdftest.Make(pdftest.Doc{Title: "Walrus guide", Pages: []string{"Tusks", "Pinnipeds everywhere"},
			Links: []string{"/next.html", "http://b.example/other.pdf"}})),
		pdfPage("p2", locked, pdftest.Make(pdftest.Doc{Pages: []string{"zebra"}, Encrypted: true})),
		truncated,
	)
	testenv.Eventually(t, 10*time.Second, "3 captures", func() bool { return len(captures(t, e)) == 3 })
	for url, want := range map[string]string{doc: "", locked: parse.ReasonPDFEncrypted, cut: parse.ReasonPDFTruncated} {
		if c := captures(t, e)[url][0]; c.DocReason != want {
			t.Errorf("%s: document reason %q, want %q", url, c.DocReason, want)
		}
	}
	if got := searchURLs(t, e, "pinnipeds"); !slices.Equal(got, []string{doc}) {
		t.Errorf("pinnipeds: %v, want %s", got, doc)
	}
	if got := searchURLs(t, e, "zebra"); len(got) != 0 {
		t.Errorf("the encrypted PDF's text was read: %v", got)
	}
	if c := captures(t, e)[doc][0]; c.Title != "Walrus guide" || c.Links != 2 {
		t.Errorf("capture %+v: want its title and 2 links", c)
	}
	// Through admission: to crawl.urls, as a page's links.
	wanted := []string{"http://a.example/next.html", "http://b.example/other.pdf"}
	e.ConsumeUntil(t, queue.TopicURLs, 10*time.Second, func(recs []*kgo.Record) bool {
		return countURLs(t, recs, wanted...) == len(wanted)
	})
}
