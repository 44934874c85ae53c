package api

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/crawlcluster/crawler/pkg/control"
	"github.com/crawlcluster/crawler/pkg/queue"
	"github.com/crawlcluster/crawler/pkg/robots"
	"github.com/crawlcluster/crawler/pkg/store"
	"github.com/crawlcluster/crawler/pkg/urlnorm"
)

// The control routes (package control): every action is written to the store
// with an audit entry (who, when, what, parameters, result), refused ones
// too, and the fetchers apply it within about control.PollInterval.

func (s *Server) controlRoutes() []route {
	return []route{
		{"GET", "/api/v1/control", s.getControl, false},
		{"POST", "/api/v1/control/pause", s.postCrawlPause(true), false},
		{"POST", "/api/v1/control/resume", s.postCrawlPause(false), false},
		{"POST", "/api/v1/hosts/{host}/pause", s.postHostPause(true), false},
		{"POST", "/api/v1/hosts/{host}/resume", s.postHostPause(false), false},
		{"PATCH", "/api/v1/hosts/{host}", s.patchHost, false},
		{"GET", "/api/v1/hosts/{host}/queue", s.getHostQueue, false},
		{"GET", "/api/v1/exclusions", s.getExclusions, false},
		{"POST", "/api/v1/exclusions", s.postExclusion, false},
		{"DELETE", "/api/v1/exclusions/{id}", s.deleteExclusion, false},
		{"GET", "/api/v1/audit", s.getAudit, false},
	}
}

// controlStore returns the store's control state, answering 501 when the
// store keeps none.
func (s *Server) controlStore(w http.ResponseWriter) (store.ControlStore, bool) {
	if c, ok := s.store.(store.Controller); ok {
		return c.Control(), true
	}
	writeError(w, http.StatusNotImplemented, "this crawler's store keeps no control state")
	return nil, false
}

// actor names who sent a request for the audit log: its token's name from
// the token file, else a short hash of its bearer token (the log must not
// hold tokens), or "anonymous" when the API has no tokens. Auth has already
// checked the token, in constant time; naming it need not be.
func (s *Server) actor(r *http.Request) string {
	if len(s.tokenSums) == 0 {
		return "anonymous"
	}
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	sum := sha256.Sum256([]byte(tok))
	for i, t := range s.tokenSums {
		if t == sum && s.tokenNames[i] != "" {
			return s.tokenNames[i]
		}
	}
	return "token:" + hex.EncodeToString(sum[:4])
}

// ControlSummary is what the stats show of the controls.
type ControlSummary struct {
	Paused      bool  `json:"paused"`       // the whole crawl
	PausedHosts int   `json:"paused_hosts"` // hosts an operator paused
	Exclusions  int   `json:"exclusions"`   // exclusion patterns in force
	Version     int64 `json:"version"`      // grows with every change
}

// Controls reads the controls for GET /api/v1/stats and the console; nil when the
// store keeps none.
func (s *Server) Controls(ctx context.Context) (*ControlSummary, error) {
	c, ok := s.store.(store.Controller)
	if !ok {
		return nil, nil
	}
	st, err := c.Control().Controls(ctx)
	if err != nil {
		return nil, err
	}
	return summaryOf(st), nil
}

func summaryOf(c store.Controls) *ControlSummary {
	sum := &ControlSummary{Paused: c.Paused, Exclusions: len(c.Patterns), Version: c.Version}
	for _, h := range c.Hosts {
		if h.Paused {
			sum.PausedHosts++
		}
	}
	return sum
}

// controlState is GET /api/v1/control's answer.
type controlState struct {
	ControlSummary
	PausedAt *time.Time    `json:"paused_at,omitempty"`
	Hosts    []hostControl `json:"hosts"`
}

// hostControl is a host's overrides; null = not overridden.
type hostControl struct {
	Host         string     `json:"host"`
	Paused       bool       `json:"paused"`
	DelaySeconds *float64   `json:"delay_seconds"`
	PageBudget   *int64     `json:"page_budget"`
	Render       *string    `json:"render"` // "always" or "never"; null = by evidence
	UpdatedAt    *time.Time `json:"updated_at,omitempty"`
}

func hostControlOf(h store.HostControl) hostControl {
	out := hostControl{Host: h.Host, Paused: h.Paused, UpdatedAt: timePtr(h.UpdatedAt)}
	if h.Delay >= 0 {
		d := h.Delay.Seconds()
		out.DelaySeconds = &d
	}
	if b, ok := control.Budget(h); ok {
		out.PageBudget = &b
	}
	if h.Render != "" {
		out.Render = &h.Render
	}
	return out
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// readControls reads the control state, answering the error when it cannot.
func readControls(w http.ResponseWriter, r *http.Request, cs store.ControlStore) (store.Controls, bool) {
	c, err := cs.Controls(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "read controls: "+err.Error())
		return c, false
	}
	return c, true
}

func (s *Server) getControl(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.controlStore(w)
	if !ok {
		return
	}
	if c, ok := readControls(w, r, cs); ok {
		writeJSON(w, http.StatusOK, controlStateOf(c))
	}
}

func controlStateOf(c store.Controls) controlState {
	out := controlState{ControlSummary: *summaryOf(c), PausedAt: timePtr(c.PausedAt), Hosts: []hostControl{}}
	for _, h := range c.Hosts {
		out.Hosts = append(out.Hosts, hostControlOf(h))
	}
	return out
}

// refuse answers an action with an error and records the refusal.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, cs store.ControlStore, a store.AuditEntry, code int, msg string) {
	a.Status, a.Result = code, "refused: "+msg
	if err := cs.RecordAudit(r.Context(), a); err != nil {
		s.log.Warn("record refused control action", "action", a.Action, "err", err)
	}
	writeError(w, code, msg)
}

func (s *Server) audit(r *http.Request, action, target string, params any) store.AuditEntry {
	p := "{}"
	if params != nil {
		if b, err := json.Marshal(params); err == nil {
			p = string(b)
		}
	}
	return store.AuditEntry{At: time.Now(), Actor: s.actor(r), Action: action, Target: target, Params: p}
}

func (s *Server) postCrawlPause(paused bool) http.HandlerFunc {
	action := map[bool]string{true: "crawl.pause", false: "crawl.resume"}[paused]
	return func(w http.ResponseWriter, r *http.Request) {
		cs, ok := s.controlStore(w)
		if !ok {
			return
		}
		a := s.audit(r, action, "", nil)
		a.Status, a.Result = http.StatusOK, map[bool]string{true: "crawl paused", false: "crawl resumed"}[paused]
		changed, err := cs.SetCrawlPaused(r.Context(), paused, a)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		c, ok := readControls(w, r, cs)
		if !ok {
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"changed": changed, "control": controlStateOf(c)})
	}
}

// hostOf reads and normalizes the {host} path parameter.
func hostOf(r *http.Request) (string, error) { return normalizeHost(r.PathValue("host")) }

// normalizeHost returns a host[:port] as the crawl keys hosts
// (urlnorm.Authority): lower case, IDNA, a default port (80 or 443) dropped.
func normalizeHost(raw string) (string, error) {
	scheme := "http://"
	if strings.HasSuffix(raw, ":443") {
		scheme = "https://"
	}
	u, err := norm.Normalize(scheme + raw + "/")
	if err != nil || raw == "" || strings.ContainsAny(raw, "/?#@") {
		return "", fmt.Errorf("invalid host %q", raw)
	}
	return urlnorm.Authority(u), nil
}

// hostControlIn returns a host's current overrides (none when it has no row).
func hostControlIn(c store.Controls, host string) store.HostControl {
	for _, h := range c.Hosts {
		if h.Host == host {
			return h
		}
	}
	return store.HostControl{Host: host, Delay: store.NoOverride, PageBudget: store.NoOverride}
}

func (s *Server) postHostPause(paused bool) http.HandlerFunc {
	action := map[bool]string{true: "host.pause", false: "host.resume"}[paused]
	return func(w http.ResponseWriter, r *http.Request) {
		cs, ok := s.controlStore(w)
		if !ok {
			return
		}
		a := s.audit(r, action, r.PathValue("host"), nil)
		host, err := hostOf(r)
		if err != nil {
			s.refuse(w, r, cs, a, http.StatusBadRequest, err.Error())
			return
		}
		a.Target = host
		if paused {
			create, err := strconv.ParseBool(cmp.Or(r.URL.Query().Get("create"), "false"))
			if err != nil {
				s.refuse(w, r, cs, a, http.StatusBadRequest, "create: want true or false")
				return
			}
			known, err := s.hostKnown(r.Context(), cs, host)
			if err != nil {
				writeError(w, http.StatusInternalServerError, "look up host: "+err.Error())
				return
			}
			if !known && !create {
				s.refuse(w, r, cs, a, http.StatusNotFound, "host not known: "+host+
					" (the crawl has no URL of it; pause it with ?create=true to hold it before it has one)")
				return
			}
		}
		s.updateHost(w, r, cs, a, host, func(h *store.HostControl) string {
			h.Paused = paused
			return map[bool]string{true: "host paused", false: "host resumed"}[paused]
		})
	}
}

// hostKnown reports whether the crawl has the host: a row in the store, a
// place in this process's frontier, or a control already. A mistyped name is
// none of these, and pausing it would quietly hold nothing.
func (s *Server) hostKnown(ctx context.Context, cs store.ControlStore, host string) (bool, error) {
	if _, err := s.store.Host(ctx, host); err == nil {
		return true, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	if s.live != nil {
		if _, ok := s.live.LiveHost(host); ok {
			return true, nil
		}
	}
	c, err := cs.Controls(ctx)
	if err != nil {
		return false, err
	}
	for _, h := range c.Hosts {
		if h.Host == host {
			return true, nil
		}
	}
	return false, nil
}

// updateHost applies change to a host's overrides and answers with them.
func (s *Server) updateHost(w http.ResponseWriter, r *http.Request, cs store.ControlStore, a store.AuditEntry, host string, change func(*store.HostControl) string) {
	c, ok := readControls(w, r, cs)
	if !ok {
		return
	}
	h := hostControlIn(c, host)
	a.Result, a.Status = change(&h), http.StatusOK
	h.UpdatedAt = a.At
	if err := cs.SetHostControl(r.Context(), h, a); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, hostControlOf(h))
}

// Bounds of a host's overrides.
const (
	maxDelaySeconds = 3600
	maxPageBudget   = math.MaxInt32
)

// patchHost sets or clears a host's delay, page budget and render mode: a field left out
// stays as it is, null clears the override.
func (s *Server) patchHost(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.controlStore(w)
	if !ok {
		return
	}
	var req map[string]json.RawMessage
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	a := s.audit(r, "host.update", r.PathValue("host"), json.RawMessage(validJSON(body)))
	if err != nil {
		s.refuse(w, r, cs, a, http.StatusRequestEntityTooLarge, "request body over 64 KiB")
		return
	}
	host, err := hostOf(r)
	if err != nil {
		s.refuse(w, r, cs, a, http.StatusBadRequest, err.Error())
		return
	}
	a.Target = host
	if err := json.Unmarshal(body, &req); err != nil || req == nil {
		s.refuse(w, r, cs, a, http.StatusBadRequest, "invalid JSON: want an object with delay_seconds, page_budget and/or render")
		return
	}
	var delay *float64
	var budget *int64
	var mode *string
	for k, v := range req {
		var err error
		switch k {
		case "delay_seconds":
			err = json.Unmarshal(v, &delay)
		case "page_budget":
			err = json.Unmarshal(v, &budget)
		case "render":
			err = json.Unmarshal(v, &mode)
		default:
			err = errors.New("unknown field")
		}
		if err != nil {
			s.refuse(w, r, cs, a, http.StatusBadRequest, fmt.Sprintf("field %q: %v", k, err))
			return
		}
	}
	_, setDelay := req["delay_seconds"]
	_, setBudget := req["page_budget"]
	_, setRender := req["render"]
	switch {
	case !setDelay && !setBudget && !setRender:
		s.refuse(w, r, cs, a, http.StatusBadRequest, "nothing to change: give delay_seconds, page_budget and/or render")
		return
	case mode != nil && *mode != store.RenderAlways && *mode != store.RenderNever && *mode != "auto":
		s.refuse(w, r, cs, a, http.StatusBadRequest, fmt.Sprintf("render %q: want always, never, or auto (or null) for by evidence", *mode))
		return
	case delay != nil && (*delay < 0 || *delay > maxDelaySeconds || math.IsNaN(*delay)):
		s.refuse(w, r, cs, a, http.StatusBadRequest, fmt.Sprintf("delay_seconds %v: want 0 to %d", *delay, maxDelaySeconds))
		return
	case budget != nil && (*budget < 0 || *budget > maxPageBudget):
		s.refuse(w, r, cs, a, http.StatusBadRequest, fmt.Sprintf("page_budget %d: want 0 to %d", *budget, maxPageBudget))
		return
	}
	if delay != nil {
		floor, ok, err := s.crawlDelay(r.Context(), host)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if ok && time.Duration(*delay*float64(time.Second)) < floor {
			s.refuse(w, r, cs, a, http.StatusConflict, fmt.Sprintf("delay_seconds %v is below the host's robots.txt Crawl-delay of %v s", *delay, floor.Seconds()))
			return
		}
	}
	s.updateHost(w, r, cs, a, host, func(h *store.HostControl) string {
		var did []string
		if setDelay {
			h.Delay = store.NoOverride
			did = append(did, "delay override cleared")
			if delay != nil {
				h.Delay = time.Duration(*delay * float64(time.Second)).Round(time.Millisecond)
				did[len(did)-1] = fmt.Sprintf("delay set to %v", h.Delay)
			}
		}
		if setBudget {
			h.PageBudget = store.NoOverride
			did = append(did, "page budget override cleared")
			if budget != nil {
				h.PageBudget = *budget
				did[len(did)-1] = fmt.Sprintf("page budget set to %d", *budget)
			}
		}
		if setRender {
			h.Render = ""
			did = append(did, "render mode by evidence")
			if mode != nil && *mode != "auto" {
				h.Render = *mode
				did[len(did)-1] = "render mode " + *mode
			}
		}
		return strings.Join(did, "; ")
	})
}

func validJSON(b []byte) []byte {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}

// crawlDelay returns the host's robots.txt Crawl-delay as the fetchers
// last read it, unclamped (the entry holds the group of the fetchers'
// agent). The fetchers check again whenever they read robots.txt.
func (s *Server) crawlDelay(ctx context.Context, host string) (time.Duration, bool, error) {
	if s.store == nil {
		return 0, false, nil
	}
	h, err := s.store.Host(ctx, host)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("look up host %s: %w", host, err)
	case len(h.Robots) == 0:
		return 0, false, nil
	}
	var e robots.Entry
	if e.UnmarshalBinary(h.Robots) != nil {
		return 0, false, nil
	}
	d, ok := e.Delay(robots.Policy{})
	return d, ok, nil
}

// exclusion is an exclusion pattern as the API shows it.
type exclusion struct {
	ID        int64     `json:"id"`
	Pattern   string    `json:"pattern"`
	Syntax    string    `json:"syntax"`
	Host      string    `json:"host,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	Excluded  int64     `json:"excluded"`
}

func exclusionOf(p store.ExclusionPattern) exclusion {
	return exclusion{ID: p.ID, Pattern: p.Pattern, Syntax: p.Syntax, Host: p.Host, CreatedAt: p.CreatedAt, CreatedBy: p.CreatedBy, Excluded: p.Excluded}
}

func (s *Server) getExclusions(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.controlStore(w)
	if !ok {
		return
	}
	c, ok := readControls(w, r, cs)
	if !ok {
		return
	}
	out := []exclusion{}
	for _, p := range c.Patterns {
		out = append(out, exclusionOf(p))
	}
	writeJSON(w, http.StatusOK, map[string]any{"exclusions": out})
}

type exclusionRequest struct {
	Pattern string `json:"pattern"`
	Syntax  string `json:"syntax"`
	Host    string `json:"host"`
}

func (s *Server) postExclusion(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.controlStore(w)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	a := s.audit(r, "exclusion.add", "", json.RawMessage(validJSON(body)))
	if err != nil {
		s.refuse(w, r, cs, a, http.StatusRequestEntityTooLarge, "request body over 64 KiB")
		return
	}
	var req exclusionRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.refuse(w, r, cs, a, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if req.Syntax == "" {
		req.Syntax = control.SyntaxGlob
	}
	p := store.ExclusionPattern{Pattern: req.Pattern, Syntax: req.Syntax, CreatedAt: a.At, CreatedBy: a.Actor}
	if req.Host != "" {
		host, err := normalizeHost(req.Host)
		if err != nil {
			s.refuse(w, r, cs, a, http.StatusBadRequest, err.Error())
			return
		}
		p.Host = host
	}
	if _, err := control.Compile(p); err != nil {
		s.refuse(w, r, cs, a, http.StatusBadRequest, err.Error())
		return
	}
	a.Status, a.Result = http.StatusCreated, "pattern added; queued URLs that match are excluded by their fetchers"
	p, err = cs.AddExclusionPattern(r.Context(), p, a)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, exclusionOf(p))
}

func (s *Server) deleteExclusion(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.controlStore(w)
	if !ok {
		return
	}
	a := s.audit(r, "exclusion.delete", "exclusion/"+r.PathValue("id"), nil)
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.refuse(w, r, cs, a, http.StatusBadRequest, fmt.Sprintf("invalid exclusion id %q", r.PathValue("id")))
		return
	}
	a.Status, a.Result = http.StatusOK, "pattern deleted; URLs it excluded stay excluded"
	switch err := cs.DeleteExclusionPattern(r.Context(), id, a); {
	case errors.Is(err, store.ErrNotFound):
		s.refuse(w, r, cs, a, http.StatusNotFound, fmt.Sprintf("no exclusion %d", id))
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, http.StatusOK, map[string]any{"deleted": id})
	}
}

// queuedURL is one line of a host's queue export in NDJSON.
type queuedURL struct {
	URL          string    `json:"url"`
	Depth        int       `json:"depth"`
	Level        int       `json:"level"`
	Score        int       `json:"score"`
	Kind         string    `json:"kind"`
	Attempts     int       `json:"attempts"`
	DiscoveredAt time.Time `json:"discovered_at"`
}

// getHostQueue streams the host's queued URLs as the store holds them, one
// per line: text/plain (the URL) or, with format=ndjson, a JSON object per
// URL. It reads the host's partition a page at a time.
func (s *Server) getHostQueue(w http.ResponseWriter, r *http.Request) {
	q, ok := s.store.(interface {
		QueuedURLs(ctx context.Context, p int32, fn func(store.URL) error) error
	})
	if !ok {
		writeError(w, http.StatusNotImplemented, "this crawler's store cannot list queued URLs")
		return
	}
	host, err := hostOf(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	format := r.URL.Query().Get("format")
	switch format {
	case "", "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	case "ndjson":
		w.Header().Set("Content-Type", "application/x-ndjson")
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("format %q: want text or ndjson", format))
		return
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := json.NewEncoder(bw)
	n := 0
	err = q.QueuedURLs(r.Context(), queue.PartitionOf(host), func(u store.URL) error {
		if u.Host != host {
			return nil
		}
		n++
		if format == "ndjson" {
			return enc.Encode(queuedURL{URL: u.URL, Depth: u.Depth, Level: u.Level, Score: u.Score, Kind: u.Kind.String(), Attempts: u.Attempts, DiscoveredAt: u.DiscoveredAt})
		}
		_, err := fmt.Fprintln(bw, u.URL)
		return err
	})
	if err != nil {
		// Headers may be gone: the body ends short, and the log says why.
		s.log.Warn("export host queue", "host", host, "urls", n, "err", err)
		if n == 0 {
			writeError(w, http.StatusInternalServerError, "read queued URLs: "+err.Error())
			return
		}
	}
	_ = bw.Flush()
}

// auditEntry is one audit log entry as the API shows it.
type auditEntry struct {
	ID     int64           `json:"id"`
	At     time.Time       `json:"at"`
	Actor  string          `json:"actor"`
	Action string          `json:"action"`
	Target string          `json:"target"`
	Params json.RawMessage `json:"params"`
	Result string          `json:"result"`
	Status int             `json:"status"`
}

// Audit log pages.
const (
	defaultAuditPage = 100
	maxAuditPage     = 1000
)

// getAudit answers the audit log, newest first, a page at a time: the next
// page is ?before=next_before.
func (s *Server) getAudit(w http.ResponseWriter, r *http.Request) {
	cs, ok := s.controlStore(w)
	if !ok {
		return
	}
	limit, before := defaultAuditPage, int64(0)
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditPage {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want 1 to %d", v, maxAuditPage))
			return
		}
		limit = n
	}
	if v := r.URL.Query().Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("before %q: want an entry id", v))
			return
		}
		before = n
	}
	entries, err := cs.AuditLog(r.Context(), before, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := map[string]any{}
	list := make([]auditEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, auditEntry{ID: e.ID, At: e.At, Actor: e.Actor, Action: e.Action, Target: e.Target, Params: json.RawMessage(validJSON([]byte(e.Params))), Result: e.Result, Status: e.Status})
	}
	out["entries"] = list
	if len(entries) == limit {
		out["next_before"] = entries[len(entries)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
}
