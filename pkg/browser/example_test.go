package browser_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/crawlcluster/crawler/pkg/browser"
)

// The crawler renders a page it has fetched; the Loader is where robots.txt,
// politeness, scope and the WARC records of sub-resources belong.
func ExamplePool_Render() {
	path, err := browser.Find("")
	if err != nil {
		fmt.Println("rendering off:", err)
		return
	}
	ctx := context.Background()
	pool, err := browser.New(ctx, browser.Config{Path: path, Tabs: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	doc := browser.Document{
		URL:    "http://app.example/",
		Status: 200,
		Header: http.Header{"Content-Type": {"text/html"}},
		Body:   []byte(`<div id="app"></div><script src="/app.js"></script>`),
	}
	load := func(ctx context.Context, r browser.Request) (browser.Response, error) {
		// Check robots.txt for r.URL, wait for its host's turn, fetch
		// (or take it from the crawl's cache), archive, answer.
		return browser.Response{}, errors.New("disallowed by robots.txt")
	}
	res, err := pool.Render(ctx, doc, load)
	switch {
	case errors.Is(err, browser.ErrCrashed), errors.Is(err, browser.ErrHung):
		fmt.Println("render failed:", err) // record the reason; the page was tried twice
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println(len(res.DOM) > 0, res.Requests, res.TimedOut)
	}
}
