package robots

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const robotsURL = "https://example.com/robots.txt"

// response is what the fake site answers for one URL.
type response struct {
	status   int
	location string
	body     string
	err      error
}

// fakeSite is a Getter over a table of responses; a URL missing from the
// table is a 404. It records the URLs requested.
type fakeSite struct {
	pages map[string]response
	calls []string
}

func (s *fakeSite) get(_ context.Context, url string) (int, string, []byte, error) {
	s.calls = append(s.calls, url)
	r, ok := s.pages[url]
	if !ok {
		return 404, "", nil, nil
	}
	return r.status, r.location, []byte(r.body), r.err
}

// chain returns pages redirecting robotsURL through n hops to
// https://example.com/hop<n>.txt, which holds the file.
func chain(n int) (map[string]response, []string) {
	pages := map[string]response{}
	calls := []string{robotsURL}
	from := robotsURL
	for i := 1; i <= n; i++ {
		to := fmt.Sprintf("https://example.com/hop%d.txt", i)
		pages[from] = response{status: 301, location: to}
		calls = append(calls, to)
		from = to
	}
	pages[from] = response{status: 200, body: entryBody}
	return pages, calls
}

func TestFetch(t *testing.T) {
	five, fiveCalls := chain(MaxRedirects)
	six, sixCalls := chain(MaxRedirects + 1)
	tests := []struct {
		name       string
		pages      map[string]response
		wantStatus int
		wantBody   string
		wantCalls  []string
		wantKind   Kind
	}{
		{
			name:       "file",
			pages:      map[string]response{robotsURL: {status: 200, body: entryBody}},
			wantStatus: 200, wantBody: entryBody, wantKind: KindRules,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "no file",
			wantStatus: 404, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "server error",
			pages:      map[string]response{robotsURL: {status: 500, body: "oops"}},
			wantStatus: 500, wantBody: "oops", wantKind: KindDisallowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name: "relative Location",
			pages: map[string]response{
				robotsURL:                             {status: 301, location: "/real-robots.txt"},
				"https://example.com/real-robots.txt": {status: 200, body: entryBody},
			},
			wantStatus: 200, wantBody: entryBody, wantKind: KindRules,
			wantCalls: []string{robotsURL, "https://example.com/real-robots.txt"},
		},
		{
			name: "relative Location without a slash, with dot segments and spaces",
			pages: map[string]response{
				robotsURL:                          {status: 302, location: " a/../b/robots.txt "},
				"https://example.com/b/robots.txt": {status: 200, body: entryBody},
			},
			wantStatus: 200, wantBody: entryBody, wantKind: KindRules,
			wantCalls: []string{robotsURL, "https://example.com/b/robots.txt"},
		},
		{
			name: "across hosts and schemes",
			pages: map[string]response{
				robotsURL:                            {status: 308, location: "http://cdn.example.net/robots.txt"},
				"http://cdn.example.net/robots.txt":  {status: 307, location: "//cdn2.example.net/r.txt"},
				"http://cdn2.example.net/r.txt":      {status: 303, location: "https://cdn2.example.net/final.txt"},
				"https://cdn2.example.net/final.txt": {status: 200, body: entryBody},
			},
			wantStatus: 200, wantBody: entryBody, wantKind: KindRules,
			wantCalls: []string{robotsURL, "http://cdn.example.net/robots.txt", "http://cdn2.example.net/r.txt", "https://cdn2.example.net/final.txt"},
		},
		{
			name:       "five redirects are followed",
			pages:      five,
			wantStatus: 200, wantBody: entryBody, wantKind: KindRules,
			wantCalls: fiveCalls,
		},
		{
			name:       "the sixth redirect makes the file unavailable",
			pages:      six,
			wantStatus: 404, wantKind: KindAllowAll,
			wantCalls: sixCalls[:MaxRedirects+1],
		},
		{
			name: "redirect loop",
			pages: map[string]response{
				robotsURL:                   {status: 302, location: "/b.txt"},
				"https://example.com/b.txt": {status: 302, location: "/robots.txt"},
			},
			wantStatus: 404, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL, "https://example.com/b.txt", robotsURL, "https://example.com/b.txt", robotsURL, "https://example.com/b.txt"},
		},
		{
			name:       "redirect without Location",
			pages:      map[string]response{robotsURL: {status: 302, body: "moved"}},
			wantStatus: 302, wantBody: "moved", wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "redirect to another scheme is not followed",
			pages:      map[string]response{robotsURL: {status: 301, location: "file:///etc/passwd"}},
			wantStatus: 301, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "redirect to no host is not followed",
			pages:      map[string]response{robotsURL: {status: 301, location: "https:///robots.txt"}},
			wantStatus: 301, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "unparsable Location is not followed",
			pages:      map[string]response{robotsURL: {status: 301, location: "http://[::1"}},
			wantStatus: 301, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "Location resolving to an unparsable URL is not followed",
			pages:      map[string]response{robotsURL: {status: 301, location: "//0::0"}},
			wantStatus: 301, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name:       "300 is not followed",
			pages:      map[string]response{robotsURL: {status: 300, location: "/other.txt"}},
			wantStatus: 300, wantKind: KindAllowAll,
			wantCalls: []string{robotsURL},
		},
		{
			name: "unreachable after a redirect",
			pages: map[string]response{
				robotsURL:                   {status: 301, location: "/b.txt"},
				"https://example.com/b.txt": {status: 503},
			},
			wantStatus: 503, wantKind: KindDisallowAll,
			wantCalls: []string{robotsURL, "https://example.com/b.txt"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			site := &fakeSite{pages: tc.pages}
			status, body, err := Fetch(context.Background(), site.get, robotsURL)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if status != tc.wantStatus || string(body) != tc.wantBody {
				t.Errorf("Fetch = %d, %q; want %d, %q", status, body, tc.wantStatus, tc.wantBody)
			}
			if !slices.Equal(site.calls, tc.wantCalls) {
				t.Errorf("requested %q, want %q", site.calls, tc.wantCalls)
			}
			e := Evaluate(Policy{Agent: testAgent}, status, body, err, testNow, nil)
			if e.Kind != tc.wantKind {
				t.Errorf("Evaluate gives %v, want %v", e.Kind, tc.wantKind)
			}
		})
	}
}

func TestFetchErrors(t *testing.T) {
	t.Run("transport error", func(t *testing.T) {
		site := &fakeSite{pages: map[string]response{robotsURL: {err: errRefused}}}
		_, body, err := Fetch(context.Background(), site.get, robotsURL)
		if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), robotsURL) || body != nil {
			t.Errorf("Fetch = %q, %v; want the transport error naming %s", body, err, robotsURL)
		}
		if e := Evaluate(Policy{Agent: testAgent}, 0, body, err, testNow, nil); e.Kind != KindDisallowAll {
			t.Errorf("Evaluate gives %v, want disallow-all", e.Kind)
		}
	})
	t.Run("transport error after a redirect", func(t *testing.T) {
		const next = "https://example.com/b.txt"
		site := &fakeSite{pages: map[string]response{
			robotsURL: {status: 301, location: "/b.txt"},
			next:      {err: errRefused},
		}}
		_, _, err := Fetch(context.Background(), site.get, robotsURL)
		if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), next) {
			t.Errorf("Fetch error = %v; want the transport error naming %s", err, next)
		}
	})
	t.Run("context ended before the first request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		site := &fakeSite{}
		_, _, err := Fetch(ctx, site.get, robotsURL)
		if !errors.Is(err, context.Canceled) || len(site.calls) != 0 {
			t.Errorf("Fetch error = %v after %d requests; want context.Canceled and none", err, len(site.calls))
		}
	})
	t.Run("context ended between redirects", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		get := func(context.Context, string) (int, string, []byte, error) {
			calls++
			cancel()
			return 301, "/next.txt", nil, nil
		}
		_, _, err := Fetch(ctx, get, robotsURL)
		if !errors.Is(err, context.Canceled) || calls != 1 {
			t.Errorf("Fetch error = %v after %d requests; want context.Canceled after 1", err, calls)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		get := func(context.Context, string) (int, string, []byte, error) {
			return 0, "", nil, fmt.Errorf("Get %q: %w", robotsURL, context.DeadlineExceeded)
		}
		if _, _, err := Fetch(context.Background(), get, robotsURL); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Fetch error = %v, want context.DeadlineExceeded", err)
		}
	})
}

// FuzzFetch feeds arbitrary Location headers to Fetch: it must stay on
// http(s) URLs with a host and stop after MaxRedirects redirects.
func FuzzFetch(f *testing.F) {
	for _, loc := range []string{"/robots.txt", "//h/x", "ftp://h/x", "file:///etc/passwd", "http://[::1", " ", "?q", "#f", "https://h:99999/x", "javascript:alert(1)"} {
		f.Add(loc, 301)
	}
	f.Fuzz(func(t *testing.T, location string, status int) {
		var calls []string
		get := func(_ context.Context, u string) (int, string, []byte, error) {
			calls = append(calls, u)
			return status, location, nil, nil
		}
		got, _, err := Fetch(context.Background(), get, robotsURL)
		if err != nil {
			t.Fatalf("Fetch: %v", err)
		}
		if len(calls) > MaxRedirects+1 {
			t.Fatalf("%d requests, want at most %d", len(calls), MaxRedirects+1)
		}
		for _, c := range calls[1:] {
			u, err := url.Parse(c)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("followed Location %q to %q", location, c)
			}
		}
		if len(calls) == MaxRedirects+1 && isFollowedRedirect(status) && got != 404 {
			t.Fatalf("status %d after exhausting redirects, want 404", got)
		}
	})
}
