package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/crawlcluster/crawler/pkg/browser"
	"github.com/crawlcluster/crawler/pkg/render"
	"github.com/crawlcluster/crawler/pkg/renderer"
	"github.com/crawlcluster/crawler/pkg/store/sqlite"
	"github.com/crawlcluster/crawler/pkg/warc"
)

// startRenderer builds the render tier the flags ask for: the parsers'
// decider, and a renderer with its browser pool when a browser is found. With
// -render auto and no browser, rendering is off, said once, and the crawl goes
// on; -render always (or a -browser) without one is an error. stopWatch,
// when not nil, ends the decider's poll of the operator's controls: call it
// before db is closed.
func startRenderer(ctx context.Context, cfg Config, db *sqlite.DB, kopts []kgo.Opt, reg prometheus.Registerer, log *slog.Logger) (r *renderer.Renderer, decider *render.Decider, stopWatch func(), err error) {
	pol, err := cfg.Render.Policy()
	if err != nil {
		return nil, nil, nil, err
	}
	decider = render.NewDecider(pol, db.Render())
	if !decider.Enabled() {
		return nil, nil, nil, nil
	}
	path, err := browser.Find(cfg.Renderer.Browser)
	if err != nil {
		if pol.Mode == render.ModeAlways || cfg.Renderer.Browser != "" {
			return nil, nil, nil, fmt.Errorf("-render %s: %w", pol.Mode, err)
		}
		log.Warn("rendering off: no browser found; pages built by scripts are read from their HTML only", "err", err)
		return nil, nil, nil, nil
	}
	dir := filepath.Join(cfg.DataDir, "warc")
	read := func(_ context.Context, file string, off, n int64) (*warc.Record, error) {
		if filepath.Base(file) != file {
			return nil, fmt.Errorf("WARC segment name %q is not a base name", file)
		}
		return warc.ReadAt(filepath.Join(dir, file), off, n)
	}
	res, bcfg, rcfg := cfg.Renderer.Build(path, cfg.Fetcher.DefaultDelay, db, read,
		func(ctx context.Context, recs ...*kgo.Record) error { return r.Produce(ctx, recs...) })
	bcfg.Log = log.With("component", "browser")
	newPool := func() (*browser.Pool, error) { return browser.New(ctx, bcfg) }
	rcfg.Again = decider // the parsers' own: what they learnt is in it at once
	r, err = renderer.New(rcfg, newPool, res, kopts, reg, log.With("component", "renderer"))
	if err != nil {
		return nil, nil, nil, err
	}
	stopWatch = decider.Watch(ctx, db.Control(), log) // the console's render mode of a host
	log.Info("rendering on: the browser starts at the first page that needs it", "mode", pol.Mode, "browser", path, "tabs", cfg.Renderer.Tabs)
	return r, decider, stopWatch, nil
}
