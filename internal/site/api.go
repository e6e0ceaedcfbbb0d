package site

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/compare"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/site/sitestore"
)

// SubmitAnswer is the answer to a submission.
type SubmitAnswer struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Created is false when the same result was submitted before: ID and
	// URL are then the existing entry's.
	Created bool `json:"created"`
}

// ResultSummary is an entry as lists show it.
type ResultSummary struct {
	ID           string    `json:"id"`
	URL          string    `json:"url"`
	SubmittedAt  time.Time `json:"submitted_at"`
	StartedAt    time.Time `json:"started_at"`
	Kind         string    `json:"kind"`
	Runs         int       `json:"runs"`
	Status       string    `json:"status"`
	Released     bool      `json:"released"`
	Hidden       bool      `json:"hidden,omitempty"`
	Headline     float64   `json:"headline"`
	HeadlineUnit string    `json:"headline_unit"`
	// HeadlineOf says what the headline is of when it is not simply the
	// run's: a sweep's cell and how many repeats it is the median of.
	HeadlineOf string            `json:"headline_of,omitempty"`
	Better     string            `json:"better"`
	Comparable string            `json:"comparable"`
	Reproduces string            `json:"reproduces,omitempty"`
	Facets     map[string]string `json:"facets"`
}

// ResultList is a page of a list.
type ResultList struct {
	Results []ResultSummary `json:"results"`
	// NextCursor fetches the next page; empty on the last.
	NextCursor string `json:"next_cursor,omitempty"`
	// Facets counts entries per value of each filter (with facets=true).
	Facets map[string][]sitestore.Count `json:"facets,omitempty"`
}

// ResultDetail is one entry with its submission.
type ResultDetail struct {
	ResultSummary
	Submission Submission `json:"submission"`
}

// Comparison is several entries side by side, against the first.
type Comparison struct {
	Results []ResultSummary `json:"results"`
	// Ratios are each headline over the first's, turned so that above 1
	// is better.
	Ratios []float64 `json:"ratios"`
	// Differing are the fields of the results' best runs whose values
	// differ: what changes the work first, then the machine, the engine
	// and dbmark (compare.Diff, as dbmark compare shows them).
	Differing []Difference `json:"differing"`
	// NotComparable says why the headlines cannot be set side by side
	// (different workloads, open- and closed-loop runs); empty when they
	// can.
	NotComparable []string `json:"not_comparable"`
	// Notes say what was left out of Differing and why.
	Notes []string `json:"notes"`
	// NotDurable names each result whose engine ran with a setting that
	// does not keep every commit through a crash (fsync=off...), and the
	// settings: its figures are not those of a durable database.
	NotDurable []string `json:"not_durable"`
	// Queries compares query suites query by query, each result after the
	// first against the first (compare.Diff's, as dbmark compare shows
	// them); empty unless every result is a query suite's.
	Queries []compare.QueryComparison `json:"queries"`
	// Counters are the sampled OS and engine counters that moved most
	// from the first result's best run to another's (compare.Diff's, as
	// dbmark compare lists them): one entry per result after the first,
	// in order, left out where either run sampled no counters.
	Counters []CounterComparison `json:"counters"`
}

// CounterComparison is the counters that moved from the first result to
// the one named.
type CounterComparison struct {
	ID    string               `json:"id"`
	Moves compare.CounterMoves `json:"moves"`
}

// Difference is one field and its value in each compared entry.
type Difference struct {
	Group  string   `json:"group"` // work, machine, engine or dbmark
	Name   string   `json:"name"`  // the field's path in the result document
	Values []string `json:"values"`
}

func (s *Server) summary(r *http.Request, e *sitestore.Entry) ResultSummary {
	return ResultSummary{
		ID: e.ID, URL: s.baseURL(r) + "/r/" + e.ID, SubmittedAt: e.SubmittedAt, StartedAt: e.StartedAt,
		Kind: e.Kind, Runs: e.Runs, Status: e.Status, Released: e.Released, Hidden: e.Hidden,
		Headline: e.Headline, HeadlineUnit: e.HeadlineUnit, HeadlineOf: e.HeadlineOf, Better: e.Better, Comparable: e.Comparable,
		Reproduces: e.Reproduces, Facets: e.Facets,
	}
}

// submissionBody reads a submission's body, inflated and held to the cap.
func (s *Server) submissionBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Msg: "send application/json"}
	}
	return ReadBody(r.Body, r.Header.Get("Content-Encoding"), s.cfg.MaxBody)
}

// accept decodes, checks and stores the submission b that r sent.
func (s *Server) accept(r *http.Request, b []byte) (SubmitAnswer, int, error) {
	sub, err := Decode(b)
	if err != nil {
		return SubmitAnswer{}, 0, err
	}
	ctx := r.Context()
	if sub.Reproduces != "" {
		if ok, err := s.cfg.Store.Has(ctx, sub.Reproduces); err != nil {
			return SubmitAnswer{}, 0, err
		} else if !ok {
			return SubmitAnswer{}, 0, bad("reproduces", "no result %s on this site", sub.Reproduces)
		}
	}
	// A result already here costs the client nothing: it gets its link.
	if id, err := s.cfg.Store.IDOfHash(ctx, sub.Hash()); err == nil {
		return SubmitAnswer{ID: id, URL: s.baseURL(r) + "/r/" + id}, http.StatusOK, nil
	} else if !errors.Is(err, sitestore.ErrNotFound) {
		return SubmitAnswer{}, 0, err
	}
	e, err := sub.Entry(s.cfg.Now())
	if err != nil {
		return SubmitAnswer{}, 0, err
	}
	e.Facets["durability"] = s.durabilityFacet(sub)
	id, created, wait, err := s.cfg.Store.Put(ctx, e, &sitestore.Quota{Client: s.clientKey(r), Now: s.cfg.Now(), Limits: s.cfg.Limits})
	if err != nil {
		return SubmitAnswer{}, 0, err
	}
	if wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return SubmitAnswer{}, secs, &Error{Status: http.StatusTooManyRequests,
			Msg: fmt.Sprintf("too many submissions from your address: try again in %d s", secs)}
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		s.cfg.Logger.InfoContext(ctx, "result submitted", "id", id, "workload", e.Facets["workload"], "runs", e.Runs)
	}
	return SubmitAnswer{ID: id, URL: s.baseURL(r) + "/r/" + id, Created: created}, status, nil
}

func (s *Server) apiSubmit(w http.ResponseWriter, r *http.Request) {
	b, err := s.submissionBody(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	// The body is read before a slot is taken: a slow upload holds none.
	if !s.adm.acquire(r.Context()) {
		s.busy(w, r)
		return
	}
	defer s.adm.release()
	ans, status, err := s.accept(r, b)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(status))
		}
		s.apiError(w, r, err)
		return
	}
	w.Header().Set("Location", ans.URL)
	writeJSON(w, status, ans)
}

// listQuery reads a list's filters, search, sort and page from a URL.
func listQuery(v url.Values) (sitestore.Query, error) {
	q := sitestore.Query{Filters: map[string]string{}, Search: v.Get("q"), Sort: v.Get("sort"), Cursor: v.Get("cursor")}
	for k, vals := range v {
		switch k {
		case "q", "sort", "cursor", "limit", "facets", "ids":
			continue
		}
		if len(vals) == 0 || vals[0] == "" {
			continue
		}
		q.Filters[k] = vals[0]
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			return q, bad("limit", "not a number")
		}
		q.Limit = n
	}
	return q, nil
}

func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	q, err := listQuery(r.URL.Query())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	rows, next, err := s.cfg.Store.List(r.Context(), q)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := ResultList{Results: []ResultSummary{}, NextCursor: next}
	for i := range rows {
		out.Results = append(out.Results, s.summary(r, &rows[i]))
	}
	if r.URL.Query().Get("facets") == "true" {
		if out.Facets, err = s.cfg.Store.Facets(r.Context(), sitestore.Query{Filters: q.Filters, Search: q.Search}); err != nil {
			s.apiError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// visible returns entry id with its submission, unless it is hidden (an
// admin still sees it).
func (s *Server) visible(r *http.Request, id string) (*sitestore.Entry, *Submission, error) {
	e, err := s.cfg.Store.Get(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if e.Hidden && !s.isAdmin(r.Header.Get("Authorization")) {
		return nil, nil, fmt.Errorf("%w: hidden", sitestore.ErrNotFound)
	}
	var sub Submission
	if err := json.Unmarshal(e.Document, &sub); err != nil {
		return nil, nil, fmt.Errorf("decode stored result %s: %w", id, err)
	}
	return e, &sub, nil
}

func (s *Server) apiGet(w http.ResponseWriter, r *http.Request) {
	e, sub, err := s.visible(r, r.PathValue("id"))
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ResultDetail{ResultSummary: s.summary(r, e), Submission: *sub})
}

// maxCompare is how many results one comparison takes.
const maxCompare = 12

// compare loads the entries named by ids (comma-separated), each with get:
// visible for the API, visiblePage for pages.
func (s *Server) compare(r *http.Request, ids string, get func(*http.Request, string) (*sitestore.Entry, *Submission, error)) ([]*sitestore.Entry, []*Submission, error) {
	var es []*sitestore.Entry
	var subs []*Submission
	seen := map[string]bool{}
	for _, id := range strings.Split(ids, ",") {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		if len(es) == maxCompare {
			return nil, nil, bad("ids", "at most %d results", maxCompare)
		}
		e, sub, err := get(r, id)
		if errors.Is(err, sitestore.ErrNotFound) {
			return nil, nil, &Error{Status: http.StatusNotFound, Field: "ids", Msg: fmt.Sprintf("no result %q", id)}
		}
		if err != nil {
			return nil, nil, err
		}
		es, subs = append(es, e), append(subs, sub)
	}
	if len(es) < 2 {
		return nil, nil, bad("ids", "name two results or more, separated by commas")
	}
	return es, subs, nil
}

// comparison sets the entries side by side: their headlines' ratios to
// the first's, and what differed between their best runs.
func (s *Server) comparison(es []*sitestore.Entry, subs []*Submission, sum func(*sitestore.Entry) ResultSummary) Comparison {
	c := Comparison{Results: []ResultSummary{}, Ratios: []float64{}, Differing: []Difference{}, NotComparable: []string{}, Notes: []string{}, NotDurable: []string{}, Queries: []compare.QueryComparison{},
		Counters: []CounterComparison{}}
	runs := make([]*result.Result, len(es))
	for i, e := range es {
		c.Results = append(c.Results, sum(e))
		c.Ratios = append(c.Ratios, ratio(e.Better, e.Headline, es[0].Headline))
		runs[i] = subs[i].Primary()
	}
	d := compare.Diff(runs...)
	for _, ch := range d.Changes {
		c.Differing = append(c.Differing, Difference{Group: ch.Group, Name: ch.Field, Values: ch.Values})
	}
	c.NotComparable = append(c.NotComparable, d.NotComparable...)
	c.Notes = append(c.Notes, d.Notes...)
	c.NotDurable = append(c.NotDurable, s.notDurableLines(es, runs)...)
	c.Queries = append(c.Queries, d.Queries...)
	for i, m := range d.Counters {
		if m != nil {
			c.Counters = append(c.Counters, CounterComparison{ID: es[i+1].ID, Moves: *m})
		}
	}
	return c
}

// ratio is v against base, above 1 when v is better.
func ratio(better string, v, base float64) float64 {
	if v == 0 || base == 0 {
		return 0
	}
	if better == "lower" {
		return base / v
	}
	return v / base
}

func (s *Server) apiCompare(w http.ResponseWriter, r *http.Request) {
	es, subs, err := s.compare(r, r.URL.Query().Get("ids"), s.visible)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.comparison(es, subs, func(e *sitestore.Entry) ResultSummary { return s.summary(r, e) }))
}

// ModerationAnswer is the answer to a moderation request.
type ModerationAnswer struct {
	ID     string `json:"id"`
	Action string `json:"action"`
}

func (s *Server) apiHide(hidden bool) http.HandlerFunc {
	action := map[bool]string{true: "hidden", false: "shown"}[hidden]
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := s.cfg.Store.SetHidden(r.Context(), id, hidden); err != nil {
			s.apiError(w, r, err)
			return
		}
		s.cfg.Logger.InfoContext(r.Context(), "moderation", "id", id, "action", action)
		writeJSON(w, http.StatusOK, ModerationAnswer{ID: id, Action: action})
	}
}

func (s *Server) apiDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.cfg.Store.Delete(r.Context(), id); err != nil {
		s.apiError(w, r, err)
		return
	}
	s.cfg.Logger.InfoContext(r.Context(), "moderation", "id", id, "action", "deleted")
	writeJSON(w, http.StatusOK, ModerationAnswer{ID: id, Action: "deleted"})
}
