package sitestore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Sort orders of List.
const (
	SortNew      = "new"      // newest submission first
	SortHeadline = "headline" // highest headline first
	SortLow      = "headline_asc"
)

// Query narrows and orders List.
type Query struct {
	Filters       map[string]string // facet key -> value; unknown keys are refused
	Search        string            // words each found in the entry's facets or id
	Sort          string            // SortNew (default), SortHeadline or SortLow
	Cursor        string            // from the previous page; "" for the first
	Limit         int               // 1 to 500; 0 means 50
	IncludeHidden bool
	Comparable    string // only entries with this comparable key
	Reproduces    string // only reproductions of this entry
	// Eligible keeps only entries a leaderboard ranks: ok, released, visible.
	Eligible bool
}

// ErrBadQuery is returned (wrapped) for a filter, sort or cursor that is
// not valid; the message names it.
var ErrBadQuery = errors.New("bad query")

// cursor is the position after the last entry of a page: keyset
// pagination, so a page costs the same however deep it is.
type cursor struct {
	Sort     string  `json:"s"`
	Seq      int64   `json:"q"`
	Headline float64 `json:"h,omitempty"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s, sort string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Sort != sort || math.IsNaN(c.Headline) {
		return c, fmt.Errorf("%w: cursor is not one this list gave (start again without it)", ErrBadQuery)
	}
	return c, nil
}

// where builds the WHERE clause of q.
func (s *Store) where(q Query) (string, []any, error) {
	var conds []string
	var args []any
	if !q.IncludeHidden {
		conds = append(conds, "hidden = 0")
	}
	for k, v := range q.Filters {
		if !isFacet(k) {
			return "", nil, fmt.Errorf("%w: no filter %q", ErrBadQuery, k)
		}
		conds = append(conds, k+" = ?") // k is one of Facets, never user text
		args = append(args, v)
	}
	for _, w := range strings.Fields(strings.ToLower(q.Search)) {
		if len(args) > 64 {
			break
		}
		// instr, not LIKE: the user's % and _ are plain characters.
		if s.pg {
			conds = append(conds, "strpos(search, ?) > 0")
		} else {
			conds = append(conds, "instr(search, ?) > 0")
		}
		args = append(args, w)
	}
	if q.Comparable != "" {
		conds = append(conds, "comparable = ?")
		args = append(args, q.Comparable)
	}
	if q.Reproduces != "" {
		conds = append(conds, "reproduces = ?")
		args = append(args, q.Reproduces)
	}
	if q.Eligible {
		conds = append(conds, "status = 'ok'", "released = 1", "hidden = 0")
	}
	if len(conds) == 0 {
		return "", args, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// List returns a page of entries matching q, without their documents, and
// the cursor of the next page ("" after the last).
func (s *Store) List(ctx context.Context, q Query) ([]Entry, string, error) {
	if q.Sort == "" {
		q.Sort = SortNew
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	if q.Limit < 1 || q.Limit > 500 {
		return nil, "", fmt.Errorf("%w: limit %d is not between 1 and 500", ErrBadQuery, q.Limit)
	}
	if q.Sort == SortNew && q.Search == "" && q.Comparable == "" && q.Reproduces == "" && !q.IncludeHidden && !q.Eligible {
		return s.listNewest(ctx, q)
	}
	where, args, err := s.where(q)
	if err != nil {
		return nil, "", err
	}
	var order string
	var after string
	var c cursor
	if q.Cursor != "" {
		if c, err = decodeCursor(q.Cursor, q.Sort); err != nil {
			return nil, "", err
		}
	}
	switch q.Sort {
	case SortNew:
		order = " ORDER BY seq DESC"
		if q.Cursor != "" {
			after, args = "seq < ?", append(args, c.Seq)
		}
	case SortHeadline:
		order = " ORDER BY headline DESC, seq DESC"
		if q.Cursor != "" {
			after, args = "(headline < ? OR (headline = ? AND seq < ?))", append(args, c.Headline, c.Headline, c.Seq)
		}
	case SortLow:
		order = " ORDER BY headline ASC, seq DESC"
		if q.Cursor != "" {
			after, args = "(headline > ? OR (headline = ? AND seq < ?))", append(args, c.Headline, c.Headline, c.Seq)
		}
	default:
		return nil, "", fmt.Errorf("%w: sort %q is not new, headline or headline_asc", ErrBadQuery, q.Sort)
	}
	if after != "" {
		if where == "" {
			where = " WHERE " + after
		} else {
			where += " AND " + after
		}
	}
	rows, err := s.db.QueryContext(ctx, s.q("SELECT "+listColumns()+" FROM entries"+where+order+fmt.Sprintf(" LIMIT %d", q.Limit+1)), args...)
	if err != nil {
		return nil, "", fmt.Errorf("site store: list: %w", err)
	}
	defer rows.Close()
	var out []Entry
	var last cursor
	for rows.Next() {
		e, seq, err := scanEntry(rows, false)
		if err != nil {
			return nil, "", fmt.Errorf("site store: list: %w", err)
		}
		if len(out) == q.Limit {
			return out, last.encode(), rows.Err()
		}
		out = append(out, e)
		last = cursor{Sort: q.Sort, Seq: seq, Headline: e.Headline}
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("site store: list: %w", err)
	}
	return out, "", nil
}

// listNewest is List of the newest visible entries matching q's filters:
// the facet index finds their seqs, the table gives their columns. A
// filter the table has no index for would otherwise walk the table newest
// first and read every entry it passes.
func (s *Store) listNewest(ctx context.Context, q Query) ([]Entry, string, error) {
	var before int64
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor, q.Sort)
		if err != nil {
			return nil, "", err
		}
		if before = c.Seq; before <= 0 {
			return nil, "", nil
		}
	}
	if err := s.syncFacets(ctx, true); err != nil {
		return nil, "", err
	}
	s.fx.mu.Lock()
	seqs, ok := s.fx.newest(q.Filters, before, q.Limit+1)
	s.fx.mu.Unlock()
	if !ok {
		_, _, err := s.where(q) // names the filter
		return nil, "", err
	}
	if len(seqs) == 0 {
		return nil, "", nil
	}
	more := len(seqs) > q.Limit
	if more {
		seqs = seqs[:q.Limit]
	}
	args := make([]any, len(seqs))
	for i, seq := range seqs {
		args[i] = seq
	}
	// hidden = 0 again: a moderation may have come since the index looked.
	query := "SELECT " + listColumns() + " FROM entries WHERE hidden = 0 AND seq IN (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(seqs)), ", ") + ") ORDER BY seq DESC"
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, "", fmt.Errorf("site store: list: %w", err)
	}
	defer rows.Close()
	out := make([]Entry, 0, len(seqs))
	for rows.Next() {
		e, _, err := scanEntry(rows, false)
		if err != nil {
			return nil, "", fmt.Errorf("site store: list: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("site store: list: %w", err)
	}
	if !more {
		return out, "", nil
	}
	return out, cursor{Sort: q.Sort, Seq: seqs[len(seqs)-1]}.encode(), nil
}

// Count is one facet value and how many entries have it.
type Count struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// top is the n most frequent values, most first, then by value.
func top(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for v, c := range m {
		out = append(out, Count{Value: v, Count: c})
	}
	slices.SortFunc(out, func(a, b Count) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Value, b.Value)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Limits are the submissions one client may make.
type Limits struct {
	PerMinute int
	PerDay    int
}

// spend records a submission by q.Client at q.Now in tx if the limits
// allow it, or returns how long the client must wait.
func (s *Store) spend(ctx context.Context, tx *sql.Tx, q Quota) (wait time.Duration, err error) {
	if s.pg {
		// Two submissions of one client, side by side, would each count
		// the events without the other's: they take turns (SQLite's
		// transactions already do).
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", q.Client); err != nil {
			return 0, fmt.Errorf("site store: rate limit: %w", err)
		}
	}
	nowUS := micros(q.Now)
	day := int64(24 * time.Hour / time.Microsecond)
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM submit_events WHERE at_us <= ?"), nowUS-day); err != nil {
		return 0, fmt.Errorf("site store: rate limit: %w", err)
	}
	for _, w := range []struct {
		n      int
		window int64
	}{{q.Limits.PerMinute, int64(time.Minute / time.Microsecond)}, {q.Limits.PerDay, day}} {
		if w.n <= 0 {
			continue
		}
		var count int
		var oldest *int64
		// The oldest event among the newest n decides when one more fits.
		err := tx.QueryRowContext(ctx, s.q("SELECT COUNT(*), MIN(at_us) FROM (SELECT at_us FROM submit_events WHERE client = ? AND at_us > ? ORDER BY at_us DESC LIMIT ?) AS recent"),
			q.Client, nowUS-w.window, w.n).Scan(&count, &oldest)
		if err != nil {
			return 0, fmt.Errorf("site store: rate limit: %w", err)
		}
		if count >= w.n && oldest != nil {
			wait := time.Duration(*oldest+w.window-nowUS) * time.Microsecond
			return max(wait, time.Second), nil
		}
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO submit_events (client, at_us) VALUES (?, ?)"), q.Client, nowUS); err != nil {
		return 0, fmt.Errorf("site store: rate limit: %w", err)
	}
	return 0, nil
}

// Eligible returns every entry a leaderboard of workload ("" for all)
// may rank: ok runs of released builds, not hidden.
func (s *Store) Eligible(ctx context.Context, workload string) ([]Entry, error) {
	return s.rankable(ctx, workload, true)
}

// Reproductions returns the visible entries that reproduce entry id,
// newest first (at most 100).
func (s *Store) Reproductions(ctx context.Context, id string) ([]Entry, error) {
	// The seqs first, from the (reproduces, seq) index alone, then the
	// rows by seq. Asked in one step, the plan PostgreSQL keeps for the
	// prepared statement (made for any value, and nearly every entry has
	// reproduces = '') walked the whole table by seq for each page of a
	// result.
	rows, err := s.db.QueryContext(ctx, s.q("SELECT "+listColumns()+" FROM entries WHERE seq IN "+
		"(SELECT seq FROM entries WHERE reproduces = ? ORDER BY seq DESC LIMIT 100) ORDER BY seq DESC"), id)
	if err != nil {
		return nil, fmt.Errorf("site store: reproductions of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, _, err := scanEntry(rows, false)
		if err != nil {
			return nil, fmt.Errorf("site store: reproductions of %s: %w", id, err)
		}
		if !e.Hidden {
			out = append(out, e)
		}
	}
	return out, rows.Err()
}
