package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/store"
)

// Bounds of the crawl log's page.
const (
	defaultLogLimit = 100
	maxLogLimit     = 1000
)

// crawlLogView is GET /api/v1/captures: the crawl log, newest first.
type crawlLogView struct {
	Captures []logEntry `json:"captures"`
}

type logEntry struct {
	ID              int64      `json:"id"`
	URL             string     `json:"url"`
	FetchedAt       *time.Time `json:"fetched_at"`
	Status          int        `json:"status"`
	ContentType     string     `json:"content_type"`
	Length          int64      `json:"length"`
	DurationSeconds *float64   `json:"duration_seconds"`
	Change          string     `json:"change,omitempty"`
	Location        string     `json:"location,omitempty"`
}

func (s *Server) getCaptures(w http.ResponseWriter, r *http.Request) {
	f, limit, err := logFilterOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	caps, err := s.store.RecentCaptures(r.Context(), f, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := crawlLogView{Captures: make([]logEntry, 0, len(caps))}
	for _, c := range caps {
		out.Captures = append(out.Captures, logEntry{ID: c.ID, URL: c.URL, FetchedAt: timeOrNil(c.FetchedAt), Status: c.Status,
			ContentType: c.ContentType, Length: c.Length, DurationSeconds: secondsOrNil(c.Duration), Change: c.Change, Location: c.Location})
	}
	writeJSON(w, http.StatusOK, out)
}

// logFilterOf reads the crawl log's query: host, status (a code, or a class
// such as 4xx), type (a Content-Type prefix) and limit.
func logFilterOf(r *http.Request) (store.CaptureFilter, int, error) {
	q := r.URL.Query()
	f := store.CaptureFilter{Host: strings.ToLower(q.Get("host")), Type: q.Get("type")}
	if st := strings.ToLower(q.Get("status")); st != "" {
		if len(st) == 3 && st[1:] == "xx" && st[0] >= '1' && st[0] <= '5' {
			f.MinStatus = int(st[0]-'0') * 100
			f.MaxStatus = f.MinStatus + 99
		} else if n, err := strconv.Atoi(st); err == nil && n >= 100 && n <= 599 {
			f.MinStatus, f.MaxStatus = n, n
		} else {
			return f, 0, fmt.Errorf("status %q: want a code (404) or a class (4xx)", st)
		}
	}
	limit := defaultLogLimit
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxLogLimit {
			return f, 0, fmt.Errorf("limit %q: want 1..%d", l, maxLogLimit)
		}
		limit = n
	}
	return f, limit, nil
}
