package browser

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // the decoder of ScreenshotType image/jpeg
	_ "image/png"  // the decoder of ScreenshotType image/png
	"regexp"
	"strconv"
	"testing"
	"time"
)

// screenshotPage writes the viewport's width in device pixels into its DOM,
// so that the test can hold the image against what the page itself saw.
const screenshotPage = `<!doctype html><html><head><title>shot</title></head>
<body style="background:#fafaf0;font:16px sans-serif"><h1>A page to look at</h1>
<p>Some text, a <a href="/a">link</a> and a coloured box.</p>
<div style="width:200px;height:100px;background:#3a6"></div>
<script>document.body.dataset.width = String(Math.round(innerWidth * devicePixelRatio));</script>
</body></html>`

var widthAttr = regexp.MustCompile(`data-width="(\d+)"`)

// TestScreenshot: with Screenshot on, a render brings one image of the
// viewport, as wide as the page's viewport; off, or over its bound, none,
// and the render is the same.
func TestScreenshot(t *testing.T) {
	s := newSite(t, nil)
	for _, tc := range []struct {
		name     string
		on       bool
		maxBytes int
		dropped  string
	}{
		{"on", true, 0, ""},
		{"off", false, 0, ""},
		{"over the bound", true, 100, "too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, Config{Tabs: 1, Settle: 100 * time.Millisecond, PageTimeout: 10 * time.Second,
				Screenshot: tc.on, ScreenshotMaxBytes: tc.maxBytes})
			res, err := p.Render(context.Background(), s.doc("/shot", screenshotPage), nil)
			if err != nil {
				t.Fatal(err)
			}
			m := widthAttr.FindStringSubmatch(res.DOM)
			if m == nil || res.TimedOut {
				t.Fatalf("TimedOut %v, DOM without the page's width: %.300s", res.TimedOut, res.DOM)
			}
			if res.ScreenshotDropped != tc.dropped {
				t.Errorf("ScreenshotDropped %q, want %q", res.ScreenshotDropped, tc.dropped)
			}
			if !tc.on || tc.dropped != "" {
				if res.Screenshot != nil || res.ScreenshotType != "" {
					t.Errorf("%d bytes of %q, want no screenshot", len(res.Screenshot), res.ScreenshotType)
				}
				return
			}
			width, _ := strconv.Atoi(m[1])
			if err := checkImage(res.Screenshot, res.ScreenshotType, width); err != nil {
				t.Fatal(err)
			}
			if st := p.Stats(); st.Screenshots != 1 || st.ScreenshotsDropped != 0 {
				t.Errorf("stats: %d screenshots, %d dropped; want 1, 0", st.Screenshots, st.ScreenshotsDropped)
			}
			t.Logf("%d bytes of %s, %d pixels wide, render took %v", len(res.Screenshot), res.ScreenshotType, width, res.Elapsed)
		})
	}
}

// checkImage decodes img, which must be of the media type typ and width
// pixels wide.
func checkImage(img []byte, typ string, width int) error {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return fmt.Errorf("screenshot of %d bytes does not decode: %w", len(img), err)
	}
	if "image/"+format != typ {
		return fmt.Errorf("screenshot is %s, ScreenshotType says %s", format, typ)
	}
	if cfg.Width != width || cfg.Height == 0 {
		return fmt.Errorf("screenshot %dx%d, want %d pixels wide as the viewport", cfg.Width, cfg.Height, width)
	}
	return nil
}

// TestScreenshotTimedOut: a page that used its time gets no screenshot, and
// still its DOM. PageTimeout is 5 s, not 2: opening the tab may take
// PageTimeout and Hang, and took more than 2 + 2 s twice in a CI run beside
// two end-to-end packages ("open tab: browser hung").
func TestScreenshotTimedOut(t *testing.T) {
	s := newSite(t, nil)
	p := newPool(t, Config{Tabs: 1, Settle: time.Second, PageTimeout: 5 * time.Second, Screenshot: true})
	page := `<!doctype html><html><body><a href="/before">b</a><script>
setInterval(() => document.body.insertAdjacentHTML('beforeend', '<a href="/x">x</a>'), 20);
</script></body></html>`
	res, err := p.Render(context.Background(), s.doc("/busy", page), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Screenshot != nil || res.ScreenshotDropped != "timed_out" {
		t.Errorf("TimedOut %v, %d bytes of screenshot, dropped %q; want a timed-out page without one", res.TimedOut, len(res.Screenshot), res.ScreenshotDropped)
	}
	if st := p.Stats(); st.ScreenshotsDropped != 1 {
		t.Errorf("stats: %d screenshots dropped, want 1", st.ScreenshotsDropped)
	}
}
