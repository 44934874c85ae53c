package parser

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/officetest"
	"github.com/crawlcluster/crawler/internal/testenv"
	"github.com/crawlcluster/crawler/pkg/parse"
	"github.com/crawlcluster/crawler/pkg/queue"
)

func officePage(fetchID, url, contentType string, body []byte) queue.Page {
	return page(fetchID, url, "", 200, func(p *queue.Page) {
		p.ContentType = contentType
		p.Body = body
		p.RawResponse = []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", contentType, len(body), body))
	})
}

// TestOffice: a docx's and an odt's text is indexed and their links
// followed; an encrypted one, or one cut short by the body limits, is
// stored without text, and its capture says why.
func TestOffice(t *testing.T) {
	e := testenv.New(t)
	runParser(t, e, Config{RobotsAgent: "testbot"})
	const docx, odt, locked, cut = "http://a.example/notes.docx", "http://a.example/notes.odt", "http://a.example/locked.odt", "http://a.example/cut.docx"
	admit(t, e, docx, odt, locked, cut)
	const docxType, odtType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/vnd.oasis.opendocument.text"
	whole := officetest.Make(officetest.Doc{Format: "docx", Paragraphs: []string{"quokka"}})
	truncated := officePage("o4", cut, docxType, whole[:len(whole)/2])
	truncated.Truncated = "length"
	produce(t, e,
		officePage("o1", docx, docxType, officetest.Make(officetest.Doc{Format: "docx", Title: "Puffin notes", Paragraphs: []string{"Burrows", "Sandeels everywhere"},
			Links: []string{"/from-docx.html"}})),
		// A generic type: the name says what it is.
		officePage("o2", odt, "application/octet-stream", officetest.Make(officetest.Doc{Format: "odt", Paragraphs: []string{"Gannets diving"},
			Links: []string{"http://b.example/from-odt.html"}})),
		officePage("o3", locked, odtType, officetest.Make(officetest.Doc{Format: "odt", Paragraphs: []string{"zebra"}, Encrypted: true})),
		truncated,
	)
	testenv.Eventually(t, 10*time.Second, "4 captures", func() bool { return len(captures(t, e)) == 4 })
	for q, want := range map[string][]string{"sandeels": {docx}, "gannets": {odt}, "zebra": nil, "quokka": nil} {
		if got := searchURLs(t, e, q); !slices.Equal(got, want) {
			t.Errorf("search %q: %v, want %v", q, got, want)
		}
	}
	for url, want := range map[string]string{docx: "", odt: "", locked: parse.ReasonOfficeEncrypted, cut: parse.ReasonOfficeTruncated} {
		if c := captures(t, e)[url][0]; c.DocReason != want {
			t.Errorf("%s: document reason %q, want %q", url, c.DocReason, want)
		}
	}
	if c := captures(t, e)[docx][0]; c.Title != "Puffin notes" || c.Links != 1 {
		t.Errorf("capture %+v: want its title and 1 link", c)
	}
	// Through admission: to crawl.urls, as a page's links.
	wanted := []string{"http://a.example/from-docx.html", "http://b.example/from-odt.html"}
	e.ConsumeUntil(t, queue.TopicURLs, 10*time.Second, func(recs []*kgo.Record) bool {
		return countURLs(t, recs, wanted...) == len(wanted)
	})
}
