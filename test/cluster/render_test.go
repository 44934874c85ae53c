package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/internal/browsertest"
	"github.com/crawlcluster/crawler/loadtest/synthweb"
	"github.com/crawlcluster/crawler/pkg/blob"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/storetest"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// TestClusterRender: the render tier as its own process. Two fetchers, a
// parser with -render auto and a renderer crawl application hosts of every
// shape beside ordinary ones: the application pages are reached through the
// rendered DOM, every sub-resource request went through the fetchers (no
// robots or politeness violation counting them, no image, font or video,
// each bundle once across the renderer's pages), no page was fetched twice,
// no ordinary page was rendered, and each rendered page has a conversion
// record in S3 beside its response.
func TestClusterRender(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster crawl with a browser; skipped with -short")
	}
	browsertest.Need(t)
	cfg := synthweb.DefaultConfig()
	shapes := synthweb.AppShapes()
	cfg.Hosts, cfg.PagesPerHost, cfg.Apps = len(shapes)+4, 6, len(shapes)
	cfg.AppHang = 8 * time.Second
	w := serveWeb(t, cfg)

	c := newCluster(t)
	c.startFetcher("fetcher-1")
	c.startFetcher("fetcher-2")
	c.startParser("parser-1", "-render", "auto")
	renderer := start(t, "renderer-1", "-broker", c.broker, "-db", c.db, "-blobs", c.blobs, "-listen", "",
		"-render-timeout", "6s", "-render-heap-mib", "64", "-render-tabs", "2")
	submitSeeds(t, c.api, w.Seeds())
	defer func() {
		if t.Failed() {
			logDecisions(t, c)
		}
	}()
	// A bound, not a measure: the whole test took 124 s in one make test,
	// and one run beside other packages' browsers at a load of 17-22 was
	// still crawling, coverage growing, at 3 minutes.
	waitRendered(t, c, w, 6*time.Minute)
	for _, p := range append(append(append(c.fetchers, c.parsers...), renderer), c.frontier) {
		p.stop(t)
	}

	rep := w.Audit(auditConfig())
	t.Logf("audit:\n%s", rep.String())
	for _, p := range rep.RenderProblems() {
		t.Error(p)
	}

	_, blobs := c.openStores()
	ctx := context.Background()
	rendered, conversions := 0, 0
	renderedPages(t, c, w, func(cp store.Capture, _ store.RenderDecision) {
		rendered++
		// The conversion record is in the same segment, after the response
		// (other pages' records of the batch may come between).
		rest, err := readFrom(ctx, blobs, cp.WARCFile, cp.WARCOffset+cp.WARCLength)
		if err != nil {
			t.Errorf("read the segment of %s after its response: %v", cp.URL, err)
			return
		}
		rd := warc.NewReader(bytes.NewReader(rest))
		for {
			rec, err := rd.Next()
			if err != nil {
				t.Errorf("no conversion record of %s (%s) after its response: %v", cp.URL, cp.WARCRecordID, err)
				break
			}
			if rec.Type() == warc.TypeConversion && rec.Header.Get(warc.FieldRefersTo) == cp.WARCRecordID {
				conversions++
				break
			}
		}
	})
	if rendered == 0 || conversions != rendered {
		t.Errorf("%d rendered pages, %d conversion records read back from S3", rendered, conversions)
	}
	t.Logf("%d pages rendered by the renderer process, each with its conversion record in S3", rendered)
}

// renderedPages calls fn with every capture the render tier rendered and its
// decision, after checking that no page of an ordinary host has a decision.
func renderedPages(t *testing.T, c *cluster, w *synthweb.Web, fn func(store.Capture, store.RenderDecision)) {
	t.Helper()
	st, _ := c.openStores()
	ctx := context.Background()
	appHosts := w.AppHosts()
	err := st.Captures(ctx, func(cp store.Capture) error {
		d, err := st.Render().RenderDecisionOf(ctx, cp.URLHash)
		if err != nil {
			return nil
		}
		_, hostPath, _ := strings.Cut(cp.URL, "://")
		host, _, _ := strings.Cut(hostPath, "/")
		if appHosts[host] == "" {
			t.Errorf("ordinary page %s has a render decision: %+v", cp.URL, d)
		}
		if d.Decision == store.RenderRendered {
			fn(cp, d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// logDecisions logs every render decision of the crawl and, of a render
// that timed out, what it waited for and where the crawl has those URLs.
func logDecisions(t *testing.T, c *cluster) {
	st, _ := c.openStores()
	ctx := context.Background()
	_ = st.Captures(ctx, func(cp store.Capture) error {
		d, err := st.Render().RenderDecisionOf(ctx, cp.URLHash)
		if err != nil {
			return nil
		}
		t.Logf("%s: %s (%s) links %d -> %d", cp.URL, d.Decision, d.Reason, d.LinksHTML, d.LinksRendered)
		var det store.RenderDetail
		if d.Detail == "" || json.Unmarshal([]byte(d.Detail), &det) != nil {
			return nil
		}
		waited := slices.Clone(det.TimedOutWaiting)
		for _, s := range det.Subresources {
			if s.Pending || s.Status == 0 {
				t.Logf("  %s %s: status %d %q waited %d ms (fetch %d ms), pending %v", s.Type, s.URL, s.Status, s.Error, s.WaitMS, s.FetchMS, s.Pending)
				waited = append(waited, s.URL)
			}
		}
		for _, u := range waited {
			info, err := st.URLInfo(ctx, u)
			switch {
			case err != nil:
				t.Logf("  %s: %v", u, err)
			case info.URL != nil:
				t.Logf("  %s: %s %q, %d captures", u, info.URL.State, info.URL.Reason, len(info.Captures))
			case info.Exclusion != nil:
				t.Logf("  %s: excluded %q", u, info.Exclusion.Reason)
			}
		}
		return nil
	})
}

// readFrom reads an object of the blob store from off to its end, which
// ReadRange finds by its out-of-range answers.
func readFrom(ctx context.Context, blobs blob.Store, key string, off int64) ([]byte, error) {
	lo, hi := int64(0), int64(1<<16) // lo bytes readable; hi maybe not
	for {
		_, err := blobs.ReadRange(ctx, key, off, hi)
		if errors.Is(err, blob.ErrOutOfRange) {
			break
		}
		if err != nil {
			return nil, err
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		_, err := blobs.ReadRange(ctx, key, off, mid)
		switch {
		case err == nil:
			lo = mid
		case errors.Is(err, blob.ErrOutOfRange):
			hi = mid
		default:
			return nil, err
		}
	}
	if lo == 0 {
		return nil, nil
	}
	return blobs.ReadRange(ctx, key, off, lo)
}

// waitRendered waits until the web has seen every page it can be crawled to,
// and the three consumer groups have committed everything, several times in
// a row.
func waitRendered(t *testing.T, c *cluster, w *synthweb.Web, timeout time.Duration) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(timeout)
	calm := 0
	for time.Now().Before(deadline) {
		rep := w.Audit(auditConfig())
		lags, _ := queue.GroupLags(context.Background(), adm)
		done := rep.Apps != nil && rep.Apps.Coverage == 1 && rep.Apps.OrdinaryCoverage == 1 && len(lags) == 3
		for _, l := range lags {
			done = done && l == 0
		}
		if done {
			if calm++; calm >= 6 {
				return
			}
		} else {
			calm = 0
		}
		time.Sleep(500 * time.Millisecond)
	}
	rep := w.Audit(auditConfig())
	st, _ := c.openStores()
	storetest.ExplainMissing(t, st, rep.Missing.Examples)
	t.Fatalf("not done after %v:\n%s", timeout, rep.String())
}
