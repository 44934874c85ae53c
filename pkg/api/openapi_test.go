package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"

	apidoc "github.com/crawlcluster/crawler/api"
	"github.com/crawlcluster/crawler/pkg/pattern"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/submit"
)

// The document is loaded and checked once; every test server validates against it.
var loadSpec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

func spec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	doc, err := loadSpec()
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("route api/openapi.yaml: %v", err)
	}
	return doc, r
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc, _ := spec(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q, want 3.x", doc.OpenAPI)
	}
	if doc.Components.SecuritySchemes["bearerAuth"] == nil {
		t.Error("no bearerAuth security scheme")
	}
}

// TestOpenAPIRoutes checks that the mux serves exactly the documented operations,
// and that each documented path reaches its own handler.
func TestOpenAPIRoutes(t *testing.T) {
	doc, _ := spec(t)
	s := New(Config{}, nil, nil, nil, prometheus.NewRegistry(), nil)
	var served, documented []string
	for _, r := range s.routes() {
		served = append(served, r.method+" "+r.path)
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	sort.Strings(served)
	sort.Strings(documented)
	if !slices.Equal(served, documented) {
		t.Errorf("routes and document differ:\nserved:     %v\ndocumented: %v", served, documented)
	}

	mux := s.mux()
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		req := httptest.NewRequest(method, strings.ReplaceAll(strings.ReplaceAll(path, "{", ""), "}", ""), nil)
		if _, pattern := mux.Handler(req); pattern != op {
			t.Errorf("%s %s reaches pattern %q, want %q", method, req.URL.Path, pattern, op)
		}
	}
}

// TestOpenAPISchemasMatchStructs keeps the schemas of the bodies that embed Go
// structs in step with those structs: a field added to store.URL must be
// documented, or this fails.
func TestOpenAPISchemasMatchStructs(t *testing.T) {
	doc, _ := spec(t)
	cases := []struct {
		schema string
		typ    any
	}{
		{"SeedsRequest", seedsRequest{}},
		{"Seed", submit.Seed{}},
		{"SeedsResponse", seedsResponse{}},
		{"SeedResult", submit.Result{}},
		{"Stats", statsView{}},
		{"URLCounts", urlCountsView{}},
		{"ExcludedCounts", excludedView{}},
		{"Throughput", throughputView{}},
		{"RatePoint", ratePoint{}},
		{"HostCounts", hostCountsView{}},
		{"ErrorCounts", errorCountsView{}},
		{"QueueStats", queueView{}},
		{"StorageStats", storageView{}},
		{"Report", ReportView{}},
		{"CrawlLog", crawlLogView{}},
		{"CrawlLogEntry", logEntry{}},
		{"ReportTimeline", ReportTimeline{}},
		{"ReportPoint", ReportPoint{}},
		{"ReportSeed", ReportSeed{}},
		{"ReportReason", ReportReason{}},
		{"Workers", workersView{}},
		{"WorkerGroup", workerGroupView{}},
		{"GroupMember", memberView{}},
		{"EstimatedFinish", finishView{}},
		{"RecrawlSchedule", scheduleView{}},
		{"URLLookup", urlView{}},
		{"URLRecrawl", recrawlView{}},
		{"RenderDecision", renderView{}},
		{"RenderDetail", store.RenderDetail{}},
		{"RenderSubresource", store.RenderSubresource{}},
		{"HostThroughput", hostRateView{}},
		{"Exclusion", exclusionView{}},
		{"RobotsDecision", robotsDecision{}},
		{"RobotsRule", ruleView{}},
		{"RobotsRuleLine", ruleView{}},
		{"Capture", captureView{}},
		{"CaptureRef", captureRef{}},
		{"SearchResults", searchView{}},
		{"SearchResult", searchHitView{}},
		{"WARCLocation", warcView{}},
		{"Links", linksView{}},
		{"Link", linkView{}},
		{"HostLookup", hostView{}},
		{"RobotsState", robotsView{}},
		{"HostDelay", delayView{}},
		{"HostBudget", budgetView{}},
		{"HostQueue", hostQueueView{}},
		{"RecentFetch", fetchView{}},
		{"HostList", hostListView{}},
		{"HostListItem", hostListItem{}},
		{"PatternUsage", pattern.Usage{}},
	}
	for _, c := range cases {
		t.Run(c.schema, func(t *testing.T) {
			ref := doc.Components.Schemas[c.schema]
			if ref == nil {
				t.Fatalf("no schema %s", c.schema)
			}
			var props []string
			for name := range ref.Value.Properties {
				props = append(props, name)
			}
			fields := jsonFields(reflect.TypeOf(c.typ))
			sort.Strings(props)
			sort.Strings(fields)
			if !slices.Equal(props, fields) {
				t.Errorf("schema properties %v, Go fields %v", props, fields)
			}
			if _, view := viewTypes[c.schema]; view {
				// The views are this package's own: a field is required
				// exactly when it is always sent (no omitempty).
				req := slices.Clone(ref.Value.Required)
				sort.Strings(req)
				if want := requiredFields(reflect.TypeOf(c.typ)); !slices.Equal(req, want) {
					t.Errorf("schema required %v, Go fields always sent %v", req, want)
				}
			}
			if ap := ref.Value.AdditionalProperties.Has; ap == nil || *ap {
				t.Errorf("schema %s allows additional properties; set additionalProperties: false so drift shows", c.schema)
			}
		})
	}
}

// viewTypes are the schemas of the response views of types.go.
var viewTypes = map[string]bool{}

func init() {
	for _, n := range []string{"Stats", "URLCounts", "ExcludedCounts", "Throughput", "RatePoint", "HostCounts",
		"ErrorCounts", "QueueStats", "StorageStats", "Workers", "WorkerGroup", "GroupMember", "EstimatedFinish",
		"RecrawlSchedule", "URLLookup", "URLRecrawl", "Exclusion", "RobotsDecision", "RobotsRule", "RobotsRuleLine",
		"Capture", "CaptureRef", "WARCLocation", "Links", "Link", "HostLookup", "RobotsState", "HostDelay",
		"HostBudget", "HostQueue", "RecentFetch", "HostList", "HostListItem"} {
		viewTypes[n] = true
	}
}

// requiredFields returns, sorted, the JSON names of the fields encoding/json
// always writes (those without omitempty).
func requiredFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" || strings.Contains(opts, "omitempty") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// jsonFields returns the JSON names encoding/json gives a struct's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// conform serves s and checks every exchange against the document: the response
// (status, headers, body) must be documented for the operation; a request the
// document does not allow must be answered with a 4xx, except the per-seed
// rejections the seeds endpoint reports inside a 202; and anything that is not a
// documented operation must get a JSON 404 or 405.
func conform(t *testing.T, s *Server) http.Handler {
	doc, router := spec(t)
	errSchema := doc.Components.Schemas["Error"].Value
	mux := s.mux()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		what := r.Method + " " + r.URL.RequestURI()
		check := r.Clone(context.Background())
		check.Body = io.NopCloser(bytes.NewReader(body))
		if check.Header.Get("Content-Type") == "" && len(body) > 0 {
			check.Header.Set("Content-Type", "application/json") // documented: the body is JSON whatever it says
		}
		route, params, err := router.FindRoute(check)
		for _, v := range params {
			if v == "" { // a path parameter is never empty: /api/v1/hosts/ is no host look-up
				route, err = nil, routers.ErrPathNotFound
			}
		}
		// The router forgives a trailing slash; the mux, as documented, does not.
		if route != nil && strings.HasSuffix(r.URL.Path, "/") && !strings.HasSuffix(route.Path, "/") {
			route, err = nil, routers.ErrPathNotFound
		}
		if err != nil {
			want, allow := http.StatusNotFound, ""
			if methods := documentedMethods(doc, r.URL.Path); methods != nil {
				want, allow = http.StatusMethodNotAllowed, strings.Join(methods, ", ")
			}
			if rec.Code != want {
				t.Errorf("%s: status %d, want %d for an undocumented operation", what, rec.Code, want)
			}
			if got := rec.Header().Get("Allow"); got != allow {
				t.Errorf("%s: Allow %q, want %q from the document", what, got, allow)
			}
			var v any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Errorf("%s: %d body is not JSON: %v", what, rec.Code, err)
			} else if err := errSchema.VisitJSON(v); err != nil {
				t.Errorf("%s: %d body does not match Error: %v", what, rec.Code, err)
			}
			return
		}
		if _, pattern := mux.Handler(r); pattern != route.Method+" "+route.Path {
			t.Errorf("%s: document routes it to %s %s, the mux to %q", what, route.Method, route.Path, pattern)
		}
		in := &openapi3filter.RequestValidationInput{
			Request:    check,
			PathParams: params,
			Route:      route,
			Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true},
		}
		reqErr := openapi3filter.ValidateRequest(context.Background(), in)
		if reqErr != nil && rec.Code < 400 && !partlyRejected(route, rec) {
			t.Errorf("%s: the document rejects the request (%v), the server answered %d", what, reqErr, rec.Code)
		}
		err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in,
			Status:                 rec.Code,
			Header:                 rec.Header(),
			Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
			Options:                in.Options,
		})
		if err != nil {
			t.Errorf("%s: %d response does not match the document: %v\nbody: %s", what, rec.Code, err, rec.Body.Bytes())
		}
	})
}

// documentedMethods returns the methods the document has for the path (HEAD with
// GET), or nil if no documented path template matches it.
func documentedMethods(doc *openapi3.T, path string) []string {
	segs := strings.Split(path, "/")
	for tmpl, item := range doc.Paths.Map() {
		tsegs := strings.Split(tmpl, "/")
		if len(tsegs) != len(segs) {
			continue
		}
		match := true
		for i, ts := range tsegs {
			if strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}") {
				match = match && segs[i] != ""
			} else {
				match = match && ts == segs[i]
			}
		}
		if !match {
			continue
		}
		var methods []string
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			if item.GetOperation(m) != nil || (m == "HEAD" && item.Get != nil) {
				methods = append(methods, m)
			}
		}
		sort.Strings(methods)
		return methods
	}
	return nil
}

// partlyRejected reports whether a seeds request that breaks the schema in some
// entries was answered, as documented, with those entries rejected one by one.
func partlyRejected(route *routers.Route, rec *httptest.ResponseRecorder) bool {
	if route.Operation.OperationID != "submitSeeds" || rec.Code != http.StatusAccepted {
		return false
	}
	var resp seedsResponse
	return json.Unmarshal(rec.Body.Bytes(), &resp) == nil && resp.Rejected > 0
}

// TestErrorsAreJSON covers every 4xx the server itself produces: each carries the
// JSON error body (conform checks it against the document) with its status.
func TestErrorsAreJSON(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"tok"}, MaxSeeds: 1, MaxBodyBytes: 200})
	cases := []struct {
		method, path, token, body string
		code                      int
		allow                     string
	}{
		{"GET", "/nope", "", "", 404, ""},
		{"GET", "/api/v1/hosts/", "tok", "", 404, ""},
		{"GET", "/api/v1/hosts/a/b", "tok", "", 404, ""},
		{"GET", "/api/v1/hosts/none.example", "tok", "", 404, ""},
		{"GET", "/api/v1/urls?url=http://none.example/", "tok", "", 404, ""},
		{"GET", "/api/v1/urls", "tok", "", 400, ""},
		{"GET", "/api/v1/urls?url=http://%zz", "tok", "", 400, ""},
		{"POST", "/api/v1/frontier/urls", "tok", `{"urls":`, 400, ""},
		{"POST", "/api/v1/frontier/urls", "tok", `{"urls":[{"url":"http://a/"},{"url":"http://b/"}]}`, 413, ""},
		{"POST", "/api/v1/frontier/urls", "tok", `{"urls":[{"url":"http://a/` + strings.Repeat("x", 300) + `"}]}`, 413, ""},
		{"POST", "/api/v1/frontier/urls", "", `{"urls":[{"url":"http://a/"}]}`, 401, ""},
		{"GET", "/api/v1/stats", "wrong", "", 401, ""},
		{"GET", "/api/v1/frontier/urls", "tok", "", 405, "POST"},
		{"PUT", "/api/v1/frontier/urls", "tok", "", 405, "POST"},
		{"DELETE", "/api/v1/stats", "tok", "", 405, "GET, HEAD"},
		{"POST", "/api/v1/urls?url=http://a/", "tok", "", 405, "GET, HEAD"},
		{"DELETE", "/api/v1/hosts/a.example", "tok", "", 405, "GET, HEAD, PATCH"},
		{"POST", "/api/v1/openapi.yaml", "", "", 405, "GET, HEAD"},
		{"POST", "/-/healthy", "", "", 405, "GET, HEAD"},
		{"PATCH", "/-/ready", "", "", 405, "GET, HEAD"},
		{"POST", "/metrics", "", "", 405, "GET, HEAD"},
		{"OPTIONS", "/api/v1/stats", "", "", 405, "GET, HEAD"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req, err := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Errorf("status %d, want %d", resp.StatusCode, c.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var out struct {
				Error string `json:"error"`
				Code  int    `json:"code"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if out.Error == "" || out.Code != c.code {
				t.Errorf("body %+v, want an error and code %d", out, c.code)
			}
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
		})
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"tok"}})
	resp, err := http.Get(e.srv.URL + "/api/v1/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/yaml" {
		t.Errorf("status %d, Content-Type %q: want 200 application/yaml without a token", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, apidoc.OpenAPI) {
		t.Error("served document differs from api/openapi.yaml")
	}
}

func TestBearerScheme(t *testing.T) {
	e := newEnv(t, Config{Tokens: []string{"tok", ""}})
	cases := []struct {
		header string
		code   int
	}{
		{"Bearer tok", 200},
		{"bearer tok", 200},
		{"BEARER tok", 200},
		{"Bearer ", 401}, // the empty token configured is dropped
		{"Bearer", 401},
		{"Basic tok", 401},
		{"tok", 401},
		{"Bearer tok2", 401},
		{"Bearer  tok", 401},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/stats", nil)
		req.Header.Set("Authorization", c.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("Authorization %q: status %d, want %d", c.header, resp.StatusCode, c.code)
		}
	}
}

func TestHTTPServerLimits(t *testing.T) {
	s := New(Config{}, nil, nil, nil, nil, nil).NewHTTPServer("127.0.0.1:0")
	if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
		t.Errorf("timeouts %v/%v/%v/%v: every one must be set", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout)
	}
	if s.MaxHeaderBytes <= 0 || s.MaxHeaderBytes > 1<<20 {
		t.Errorf("MaxHeaderBytes %d", s.MaxHeaderBytes)
	}
	if s.WriteTimeout <= clusterTimeout {
		t.Errorf("WriteTimeout %v leaves no room for the %v cluster look-up of /api/v1/stats", s.WriteTimeout, clusterTimeout)
	}
}
