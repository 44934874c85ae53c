// Package consoletest drives the operator console in a headless browser for the
// end-to-end tests of the embedded crawler and of the cluster: log in through the
// form, open a page and wait for its data, and compare every number the page
// shows with the API's answer.
//
// The comparison rests on the console's convention: a number shown from the API
// carries data-path, a JSON Pointer to its place in the answer, inside an
// element whose data-api names the route the page read.
package consoletest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/crawlcluster/crawler/internal/browsertest"
)

// Console is one browser tab on one server's console.
type Console struct {
	B     *browsertest.Browser
	Base  string // http://host:port
	Token string // "" = the server has none
}

// Login opens the console, expects the login form (the server has tokens), and
// logs in with c.Token through it.
func (c *Console) Login(t testing.TB) {
	t.Helper()
	c.B.Do(t, 30*time.Second,
		chromedp.Navigate(c.Base+"/#/overview"),
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#token"), c.Token),
		chromedp.Click(chromedp.CSS("#login-submit")),
		chromedp.WaitNotVisible(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS(`[data-page="overview"] [data-api][data-loaded]`)),
	)
}

// Open shows a page by its hash route ("#/hosts") and waits until each of its
// data-api blocks that loads data has; wait lists CSS selectors that must show
// as well.
func (c *Console) Open(t testing.TB, route string, wait ...string) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{
		// The same route again is a reload of the page: no hashchange comes.
		// A new hash draws its page in a later task, so the page shown is
		// emptied first: the waits below cannot match what it showed before.
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("main").replaceChildren(); location.hash === %[1]q ? window.dispatchEvent(new HashChangeEvent("hashchange")) : (location.hash = %[1]q)`, route)),
	}
	for _, sel := range wait {
		actions = append(actions, chromedp.WaitVisible(chromedp.CSS(sel)))
	}
	c.B.Do(t, 30*time.Second, actions...)
}

// Refreshed waits for the polled page's next refresh, so that what it shows is
// younger than the call.
func (c *Console) Refreshed(t testing.TB) {
	t.Helper()
	browsertest.Eval[bool](t, c.B, `new Promise((resolve, reject) => {
		const el = () => document.querySelector('[data-api][data-loaded]');
		const before = el() && el().getAttribute('data-loaded');
		const start = Date.now();
		const iv = setInterval(() => {
			const e = el();
			if (e && e.getAttribute('data-loaded') !== before) { clearInterval(iv); resolve(true); }
			else if (Date.now() - start > 15000) { clearInterval(iv); reject(new Error('no refresh in 15 s')); }
		}, 50);
	})`)
}

// WaitRatesSettled waits, up to limit, until the API's current throughput is
// 0: the crawl's last pages have left the rate window, so the rates stop
// moving between the page's refresh and the API's answer. An idle web alone is
// not enough: the current rate is over the last 10 s and decays after the last
// page (CI saw the page show 1.70 pages/s and the API 0.89 a moment later).
func (c *Console) WaitRatesSettled(t testing.TB, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v, ok := Lookup(c.Get(t, "/api/v1/stats"), "/throughput/current")
		if ok && v == float64(0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the current throughput is still %v after %v with the crawl idle", v, limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Shown is one number on the page.
type Shown struct {
	API  string `json:"api"`
	Path string `json:"path"`
	Text string `json:"text"`
}

// Numbers returns every number the current page shows with its place in an
// API answer.
func (c *Console) Numbers(t testing.TB) []Shown {
	t.Helper()
	return browsertest.Eval[[]Shown](t, c.B, `Array.from(document.querySelectorAll('#main [data-path]')).map((el) => {
		const box = el.closest('[data-api]');
		return { api: box ? box.getAttribute('data-api') : '', path: el.getAttribute('data-path'), text: el.textContent };
	})`)
}

// Tolerance says how far a shown number may be from the API's: Float for
// numbers that are not whole in the API (rates, ages, averages that move with
// the clock), relative; whole numbers must match.
type Tolerance struct {
	Float float64
}

// CheckNumbers compares every number the page shows with a fresh answer of the
// API it came from, and returns how many it compared. Whole numbers must be
// equal (call it when the crawl is idle or paused); others may differ by
// tol.Float (relative) or by the page's rounding to 2 decimals.
func (c *Console) CheckNumbers(t testing.TB, tol Tolerance) int {
	t.Helper()
	shown := c.Numbers(t)
	answers := map[string]any{}
	n := 0
	for _, s := range shown {
		if s.API == "" {
			t.Errorf("number %q at %s is outside any data-api block", s.Text, s.Path)
			continue
		}
		ans, ok := answers[s.API]
		if !ok {
			ans = c.Get(t, s.API)
			answers[s.API] = ans
		}
		want, ok := Lookup(ans, s.Path)
		if !ok {
			t.Errorf("%s: the page shows %q at %s, which the API's answer does not have", s.API, s.Text, s.Path)
			continue
		}
		wantNum, ok := want.(float64)
		if !ok {
			t.Errorf("%s %s: the page shows %q for the non-number %v", s.API, s.Path, s.Text, want)
			continue
		}
		got, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s.Text), ",", ""), 64)
		if err != nil {
			t.Errorf("%s %s: shown %q is not a number", s.API, s.Path, s.Text)
			continue
		}
		n++
		diff := math.Abs(got - wantNum)
		if wantNum == math.Trunc(wantNum) && got == math.Trunc(got) {
			if diff != 0 {
				t.Errorf("%s %s: the page shows %s, the API says %v", s.API, s.Path, s.Text, wantNum)
			}
			continue
		}
		if diff > 0.005+tol.Float*math.Abs(wantNum) {
			t.Errorf("%s %s: the page shows %s, the API says %v (tolerance %.0f%%)", s.API, s.Path, s.Text, wantNum, tol.Float*100)
		}
	}
	return n
}

// Get answers an API path (with the token) as decoded JSON, failing t unless 200.
func (c *Console) Get(t testing.TB, path string) any {
	t.Helper()
	status, v := c.Call(t, "GET", path)
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d: %v", path, status, v)
	}
	return v
}

// Call sends a bodiless request to the API with the token and decodes the answer.
func (c *Console) Call(t testing.TB, method, path string) (int, any) {
	t.Helper()
	req, err := http.NewRequest(method, c.Base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	client := http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("%s %s: status %d, body not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, v
}

// Lookup finds a data-path, a JSON Pointer (RFC 6901), in a decoded JSON answer.
func Lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	if !strings.HasPrefix(path, "/") {
		return nil, false
	}
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for _, k := range strings.Split(path[1:], "/") {
		k = unescape.Replace(k)
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// CheckHosts opens the hosts page, waits until its four lists have loaded
// (they load in parallel), and checks every number on it against the API, as
// CheckNumbers does. A crawl that ran shows some: none fails the test.
func (c *Console) CheckHosts(t testing.TB, tol Tolerance) int {
	t.Helper()
	c.Open(t, "#/hosts", `[data-page="hosts"] table`)
	browsertest.Eval[bool](t, c.B, `new Promise((resolve, reject) => {
		const start = Date.now();
		const iv = setInterval(() => {
			const boxes = Array.from(document.querySelectorAll('[data-page="hosts"] [data-api]'));
			if (boxes.length === 4 && boxes.every((el) => el.childElementCount > 0)) { clearInterval(iv); resolve(true); }
			else if (Date.now() - start > 15000) { clearInterval(iv); reject(new Error('the host lists did not all load in 15 s')); }
		}, 50);
	})`)
	listed := c.CheckNumbers(t, tol)
	if listed == 0 {
		t.Error("the hosts page shows no number from the API after a crawl")
	}
	return listed
}

// Serves reports whether the server's OpenAPI document has a route, so that a
// test of a feature still being built can say it did not run instead of failing.
func (c *Console) Serves(t testing.TB, route string) bool {
	t.Helper()
	resp, err := http.Get(c.Base + "/api/v1/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(doc), "\n  "+route+":")
}

// Widths are the window widths the layout is checked at: a laptop and a
// desktop screen.
var Widths = []int64{1280, 1920}

// Misfit is one element of the page whose content does not fit its box.
type Misfit struct {
	Where string `json:"where"` // the card's title and the element, for the message
	Why   string `json:"why"`
	Text  string `json:"text"`
}

// misfits lists what does not fit on the page shown. An element's content
// overflows when its scroll size exceeds its client size: the rest is clipped,
// or hidden behind a scroll bar the operator has no reason to look for.
// Growing downwards in a box that scrolls (a long link list) hides nothing
// for good and is allowed; sideways never is, as a table's columns after the
// fold are the ones the operator misses. A short word broken across lines
// ("All ow") is squeezed rather than clipped, and fails too.
const misfits = `(() => {
	const out = [];
	const where = (el) => {
		const card = el.closest('section, .card');
		const title = card && card.querySelector('h2') ? card.querySelector('h2').textContent : '';
		let name = el.tagName.toLowerCase();
		if (el.id) name += '#' + el.id;
		if (typeof el.className === 'string' && el.className) name += '.' + el.className.trim().split(/\s+/).join('.');
		return (title ? '"' + title + '" ' : '') + name;
	};
	const text = (el) => (el.textContent || el.value || '').replace(/\s+/g, ' ').trim().slice(0, 120);
	for (const el of document.querySelectorAll('body, body *')) {
		if (el.closest('svg') || el.getClientRects().length === 0) continue;
		const cs = getComputedStyle(el);
		if (cs.display === 'inline' || cs.visibility === 'hidden') continue;
		if (el.scrollWidth > el.clientWidth + 1) {
			out.push({ where: where(el), why: 'content ' + el.scrollWidth + ' px wide in a box of ' + el.clientWidth + ' px', text: text(el) });
		}
		const scrolls = cs.overflowY === 'auto' || cs.overflowY === 'scroll';
		if (el !== document.body && el.scrollHeight > el.clientHeight + 1 && !scrolls) {
			out.push({ where: where(el), why: 'content ' + el.scrollHeight + ' px high in a box of ' + el.clientHeight + ' px', text: text(el) });
		}
	}
	const walk = document.createTreeWalker(document.getElementById('main'), NodeFilter.SHOW_TEXT);
	const range = document.createRange();
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		if (n.parentElement.getClientRects().length === 0) continue;
		for (const m of n.data.matchAll(/(?<!\S)\S{2,24}(?!\S)/g)) {
			range.setStart(n, m.index);
			range.setEnd(n, m.index + m[0].length);
			const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
			if (tops.size > 1) out.push({ where: where(n.parentElement), why: 'the word "' + m[0] + '" is broken over ' + tops.size + ' lines', text: text(n.parentElement) });
		}
	}
	return out;
})()`

// CheckLayout shows the page at each of Widths, fails t for every value that
// does not fit its box (see misfits) and for any error in the page's console,
// and saves a screenshot of each width as name-WIDTH.png in dir. The window is
// left at the first width.
func (c *Console) CheckLayout(t testing.TB, dir, name string) {
	t.Helper()
	for _, w := range Widths {
		c.B.Do(t, 30*time.Second, chromedp.EmulateViewport(w, 900))
		// Two frames: the first lays the page out at the new width.
		browsertest.Eval[bool](t, c.B, `new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))))`)
		for _, m := range browsertest.Eval[[]Misfit](t, c.B, misfits) {
			t.Errorf("%s at %d px: %s: %s (%q)", name, w, m.Where, m.Why, m.Text)
		}
		c.B.Screenshot(t, dir, fmt.Sprintf("%s-%d", name, w))
	}
	c.B.Do(t, 30*time.Second, chromedp.EmulateViewport(Widths[0], 900))
	c.B.CheckNoErrors(t)
}
