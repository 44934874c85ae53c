package api

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/store/searchsql"
)

// searchView is the body of GET /api/v1/search.
type searchView struct {
	Query      string          `json:"query"`
	Terms      []string        `json:"terms"`
	Results    []searchHitView `json:"results"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

type searchHitView struct {
	URL         string     `json:"url"`
	URLHash     string     `json:"url_hash"`
	Host        string     `json:"host"`
	Title       string     `json:"title"`
	Snippet     string     `json:"snippet"`
	Status      int        `json:"status"`
	FetchedAt   *time.Time `json:"fetched_at"`
	ContentType string     `json:"content_type"`
	Language    string     `json:"language"`
	Score       float64    `json:"score"`
	Duplicates  int64      `json:"duplicates"`
	CaptureID   int64      `json:"capture_id"`
	Lookup      string     `json:"lookup_href"`
	WARC        string     `json:"warc_href"`
}

// snippetHTML escapes a snippet's text and marks the matched terms up.
func snippetHTML(s string) string {
	s = html.EscapeString(s)
	s = strings.ReplaceAll(s, store.SnippetOpen, "<mark>")
	return strings.ReplaceAll(s, store.SnippetClose, "</mark>")
}

// A cursor is the last hit's score and URL hash, opaque to clients.
func encodeCursor(c store.SearchCursor) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], math.Float64bits(c.Score))
	binary.BigEndian.PutUint64(b[8:], uint64(c.URLHash))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func decodeCursor(s string) (store.SearchCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return store.SearchCursor{}, fmt.Errorf("cursor %q: not one this server gave", s)
	}
	score := math.Float64frombits(binary.BigEndian.Uint64(b[:8]))
	if math.IsNaN(score) {
		return store.SearchCursor{}, fmt.Errorf("cursor %q: not one this server gave", s)
	}
	return store.SearchCursor{Score: score, URLHash: int64(binary.BigEndian.Uint64(b[8:]))}, nil
}

// searchQuery reads the query parameters of GET /api/v1/search.
func searchQuery(q url.Values) (store.SearchQuery, error) {
	sq := store.SearchQuery{Terms: searchsql.Terms(q.Get("q")), Host: q.Get("host"), Limit: searchsql.DefaultSize}
	if len(sq.Terms) == 0 {
		return sq, fmt.Errorf(`query parameter "q" must hold at least one word`)
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > searchsql.MaxLimit {
			return sq, fmt.Errorf("limit %q: want 1..%d", v, searchsql.MaxLimit)
		}
		sq.Limit = n
	}
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return sq, fmt.Errorf("status %q: want an HTTP status, 100..599", v)
		}
		sq.Status = n
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &sq.Since}, {"until", &sq.Until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return sq, fmt.Errorf("%s %q: want an RFC 3339 time", p.name, v)
			}
			*p.to = t
		}
	}
	if v := q.Get("cursor"); v != "" {
		c, err := decodeCursor(v)
		if err != nil {
			return sq, err
		}
		sq.After = &c
	}
	return sq, nil
}

func (s *Server) getSearch(w http.ResponseWriter, r *http.Request) {
	sr, ok := s.store.(store.Searcher)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this crawler's store keeps no search index")
		return
	}
	sq, err := searchQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	hits, err := sr.Search().Search(r.Context(), sq)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	v := searchView{Query: r.URL.Query().Get("q"), Terms: sq.Terms, Results: []searchHitView{}}
	for _, h := range hits {
		v.Results = append(v.Results, searchHitView{
			URL: h.URL, URLHash: hashString(h.URLHash), Host: h.Host, Title: h.Title, Snippet: snippetHTML(h.Snippet),
			Status: h.Status, FetchedAt: timeOrNil(h.FetchedAt), ContentType: h.ContentType, Language: h.Language,
			Score: h.Score, Duplicates: h.Duplicates, CaptureID: h.CaptureID,
			Lookup: "/api/v1/urls?url=" + url.QueryEscape(h.URL),
			WARC:   "/api/v1/captures/" + strconv.FormatInt(h.CaptureID, 10) + "/warc",
		})
	}
	if len(hits) == sq.Limit {
		v.NextCursor = encodeCursor(hits[len(hits)-1].Cursor())
	}
	writeJSON(w, http.StatusOK, v)
}
