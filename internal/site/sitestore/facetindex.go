package sitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// facetIndex holds, in memory, the facet values of every visible entry as
// small integers (one per facet: the value's number in that facet's
// dictionary), and the counts of the views lists asked for. A view's
// counts are computed once from the rows (a pass over a few bytes an entry,
// where counting in SQL read every row through the driver: 150 to 350 ms
// at 100,000 results) and then kept exact: each entry read later is added
// to every kept view it belongs to.
//
// The store is the truth and the index follows it: before counting, new
// entries are read by seq, and a change of the store's moderation counter
// (a hide, unhide or delete by any server) makes the index build again.
type facetIndex struct {
	syncMu sync.Mutex // one sync at a time
	// dirty asks the next count to sync first, whatever the time: this
	// process wrote.
	dirty  bool
	synced time.Time

	pg bool // seqs may commit out of order: watch the gaps

	mu         sync.Mutex // everything below
	built      bool
	moderation int64               // the counter the rows reflect
	last       int64               // the highest seq read
	gaps       map[int64]time.Time // seqs below last not read yet, and when first missed
	dict       []dictionary        // by position in Facets
	rows       []uint32            // len(Facets) codes an entry, in Facets' order
	ids        []string            // the entries' ids, for the search
	seqs       []int64             // the entries' seqs, ascending
	views      map[string]*facetView
}

// A dictionary numbers one facet's values.
type dictionary struct {
	code   map[string]uint32
	values []string
	lower  []string // for the search
}

func (d *dictionary) intern(v string) uint32 {
	if c, ok := d.code[v]; ok {
		return c
	}
	c := uint32(len(d.values))
	d.code[v] = c
	d.values = append(d.values, v)
	d.lower = append(d.lower, strings.ToLower(v))
	return c
}

// Limits of the index's bookkeeping.
const (
	// syncEvery is how often a count reads what other servers wrote.
	syncEvery = 100 * time.Millisecond
	// gapWindow and gapLife bound the seqs watched for a late commit:
	// PostgreSQL hands out seqs before commit, so a lower one may become
	// visible after a higher one was read.
	gapWindow = 4096
	gapLife   = time.Minute
	// maxViews are the views whose counts are kept; past it they are
	// dropped and counted again when asked for.
	maxViews = 512
)

// facetView is one list's counts: the entries matching its filters and
// search, counted per value of each of its facets with that facet's own
// filter left out.
type facetView struct {
	filters []viewFilter
	words   []string
	keys    []int     // facet positions counted
	counts  [][]int32 // by facet position (nil if not counted), by code
	// words' matches by facet position and code: 0 not known yet, 1 yes, 2 no
	match [][][]uint8
	out   map[string][]Count // the answer, until the counts change
}

type viewFilter struct {
	facet int
	value string
	code  int64 // -1 while no entry has the value
}

func facetPos(key string) int {
	return slices.IndexFunc(Facets, func(f Facet) bool { return f.Key == key })
}

func newFacetIndex(pg bool) *facetIndex {
	return &facetIndex{pg: pg, views: map[string]*facetView{}, gaps: map[int64]time.Time{}}
}

// changed tells the index that this process wrote, so that the next count
// reads the store first.
func (x *facetIndex) changed() {
	x.syncMu.Lock()
	x.dirty = true
	x.syncMu.Unlock()
}

// syncFacets brings the index up to the store: with always (a list, whose
// rows must never lag), when this process wrote, or every syncEvery.
func (s *Store) syncFacets(ctx context.Context, always bool) error {
	x := s.fx
	x.mu.Lock()
	built := x.built
	x.mu.Unlock()
	x.syncMu.Lock()
	if built && !always && !x.dirty && time.Since(x.synced) < syncEvery {
		x.syncMu.Unlock()
		return nil
	}
	defer x.syncMu.Unlock()
	start := time.Now()
	var mod int64
	if err := s.db.QueryRowContext(ctx, "SELECT value FROM site_state WHERE name = 'moderation'").Scan(&mod); err != nil {
		return fmt.Errorf("site store: facet counts: %w", err)
	}
	x.mu.Lock()
	rebuild := !x.built || mod != x.moderation
	last := x.last
	var gaps []int64
	for g := range x.gaps {
		gaps = append(gaps, g)
	}
	x.mu.Unlock()
	if rebuild {
		if err := s.buildFacets(ctx, mod); err != nil {
			return err
		}
	} else if err := s.readNew(ctx, last, gaps); err != nil {
		return err
	}
	x.dirty = false
	x.synced = start
	return nil
}

// facetRowColumns are what the index reads of an entry.
func facetRowColumns() string {
	cols := []string{"seq", "id", "hidden"}
	for _, f := range Facets {
		cols = append(cols, f.Key) // status is a column too
	}
	return strings.Join(cols, ", ")
}

// buildFacets reads every entry into a new index at moderation count mod.
func (s *Store) buildFacets(ctx context.Context, mod int64) error {
	fresh := newFacetIndex(s.pg)
	fresh.dict = make([]dictionary, len(Facets))
	for i := range fresh.dict {
		fresh.dict[i].code = map[string]uint32{}
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+facetRowColumns()+" FROM entries ORDER BY seq")
	if err != nil {
		return fmt.Errorf("site store: facet counts: %w", err)
	}
	if _, err := fresh.add(rows, time.Now()); err != nil {
		return err
	}
	x := s.fx
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dict, x.rows, x.ids, x.seqs, x.last, x.gaps = fresh.dict, fresh.rows, fresh.ids, fresh.seqs, fresh.last, fresh.gaps
	x.views = map[string]*facetView{}
	x.moderation = mod
	x.built = true
	return nil
}

// readNew adds the entries after seq last, and those of the gaps that
// have since been committed, to the index and its views.
func (s *Store) readNew(ctx context.Context, last int64, gaps []int64) error {
	x := s.fx
	read := func(query string, args ...any) (int, error) {
		rows, err := s.db.QueryContext(ctx, s.q("SELECT "+facetRowColumns()+" FROM entries WHERE "+query), args...)
		if err != nil {
			return 0, fmt.Errorf("site store: facet counts: %w", err)
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.add(rows, time.Now())
	}
	if len(gaps) > 0 {
		if _, err := read("seq = ANY(?) ORDER BY seq", gaps); err != nil {
			return err
		}
	}
	// A page at a time: with the limit, PostgreSQL walks the primary key
	// even on a table it has no statistics for yet, where it otherwise
	// chose to scan the whole table on every list.
	const page = 1000
	for {
		n, err := read(fmt.Sprintf("seq > ? ORDER BY seq LIMIT %d", page), last)
		if err != nil || n < page {
			return err
		}
		x.mu.Lock()
		last = x.last
		x.mu.Unlock()
	}
}

// add reads entries (facetRowColumns, by seq) into the index and its
// views, closes rows and says how many it read. x.mu is held (or x is not
// shared yet).
func (x *facetIndex) add(rows *sql.Rows, now time.Time) (int, error) {
	defer rows.Close()
	nf := len(Facets)
	vals := make([]sql.RawBytes, nf)
	var seq int64
	var id string
	var hidden int
	dest := []any{&seq, &id, &hidden}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	codes := make([]uint32, nf)
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, fmt.Errorf("site store: facet counts: %w", err)
		}
		n++
		delete(x.gaps, seq)
		late := seq < x.last // a gap filled
		if seq > x.last {
			for g := max(x.last+1, seq-gapWindow); g < seq && x.pg; g++ {
				x.gaps[g] = now
			}
			x.last = seq
		}
		if hidden != 0 {
			continue
		}
		for i, v := range vals {
			codes[i] = x.dict[i].intern(string(v))
		}
		r := len(x.ids)
		if late { // rare: keep the rows in seq order
			r, _ = slices.BinarySearch(x.seqs, seq)
		}
		x.rows = slices.Insert(x.rows, r*nf, codes...)
		x.ids = slices.Insert(x.ids, r, id)
		x.seqs = slices.Insert(x.seqs, r, seq)
		for _, v := range x.views {
			v.add(x, r)
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("site store: facet counts: %w", err)
	}
	for g, at := range x.gaps {
		if now.Sub(at) > gapLife || g < x.last-gapWindow {
			delete(x.gaps, g)
		}
	}
	return n, nil
}

// view returns the kept view for q and keys, counting it if it is new.
// x.mu is held.
func (x *facetIndex) view(q Query, keys []string) (*facetView, error) {
	v := &facetView{counts: make([][]int32, len(Facets))}
	fkeys := slices.Sorted(func(yield func(string) bool) {
		for k := range q.Filters {
			if !yield(k) {
				return
			}
		}
	})
	var key strings.Builder
	for _, k := range fkeys {
		p := facetPos(k)
		if p < 0 {
			return nil, fmt.Errorf("%w: no filter %q", ErrBadQuery, k)
		}
		f := viewFilter{facet: p, value: q.Filters[k], code: -1}
		if c, ok := x.dict[p].code[f.value]; ok {
			f.code = int64(c)
		}
		v.filters = append(v.filters, f)
		fmt.Fprintf(&key, "%s=%q&", k, f.value)
	}
	for _, w := range strings.Fields(strings.ToLower(q.Search)) {
		if len(v.words) > 64 {
			break
		}
		v.words = append(v.words, w)
		v.match = append(v.match, make([][]uint8, len(Facets)))
	}
	fmt.Fprintf(&key, "q=%q&", v.words)
	for i, f := range Facets {
		if len(keys) > 0 && !slices.Contains(keys, f.Key) {
			continue
		}
		v.keys = append(v.keys, i)
		v.counts[i] = make([]int32, len(x.dict[i].values))
		key.WriteString(f.Key + ",")
	}
	if kept, ok := x.views[key.String()]; ok {
		return kept, nil
	}
	for r := range x.ids {
		v.add(x, r)
	}
	if len(x.views) >= maxViews {
		clear(x.views)
	}
	x.views[key.String()] = v
	return v, nil
}

// add counts entry r of x in v, if it belongs.
func (v *facetView) add(x *facetIndex, r int) {
	codes := x.rows[r*len(Facets) : (r+1)*len(Facets)]
	for w := range v.words {
		if !v.found(x, w, r, codes) {
			return
		}
	}
	missed, missedFacet := 0, -1
	for i := range v.filters {
		f := &v.filters[i]
		if f.code < 0 { // the value may have come since
			if c, ok := x.dict[f.facet].code[f.value]; ok {
				f.code = int64(c)
			}
		}
		if int64(codes[f.facet]) != f.code {
			missed++
			missedFacet = f.facet
			if missed > 1 {
				return
			}
		}
	}
	for _, k := range v.keys {
		if missed == 1 && missedFacet != k {
			continue
		}
		c := codes[k]
		for int(c) >= len(v.counts[k]) {
			v.counts[k] = append(v.counts[k], 0)
		}
		v.counts[k][c]++
	}
	v.out = nil
}

// found says whether word w of v is in entry r's id or in one of its
// facet values but status (what searchText holds).
func (v *facetView) found(x *facetIndex, w, r int, codes []uint32) bool {
	word := v.words[w]
	if strings.Contains(x.ids[r], word) {
		return true
	}
	for i, f := range Facets {
		if f.Key == "status" {
			continue
		}
		m := v.match[w][i]
		c := codes[i]
		for int(c) >= len(m) {
			m = append(m, 0)
		}
		if m[c] == 0 {
			m[c] = 2
			if strings.Contains(x.dict[i].lower[c], word) {
				m[c] = 1
			}
		}
		v.match[w][i] = m
		if m[c] == 1 {
			return true
		}
	}
	return false
}

// answer is v's counts, the 30 most frequent values of each facet.
func (v *facetView) answer(x *facetIndex) map[string][]Count {
	if v.out != nil {
		return v.out
	}
	out := map[string][]Count{}
	for _, k := range v.keys {
		m := map[string]int{}
		for c, n := range v.counts[k] {
			if n > 0 {
				m[x.dict[k].values[c]] = int(n)
			}
		}
		out[Facets[k].Key] = top(m, 30)
	}
	v.out = out
	return out
}

// Facets counts, for each facet, the visible entries per value among those
// q's filters and search match, with that facet's own filter left out (so
// a reader sees what else the facet could be set to). At most 30 values a
// facet, most first. keys chooses the facets; none means all. Only
// q.Filters and q.Search are read.
//
// The counts come from the in-memory index (facetIndex), which first reads
// what was written since it last looked: this process's writes are always
// counted, other servers' within syncEvery.
func (s *Store) Facets(ctx context.Context, q Query, keys ...string) (map[string][]Count, error) {
	if err := s.syncFacets(ctx, false); err != nil {
		return nil, err
	}
	x := s.fx
	x.mu.Lock()
	defer x.mu.Unlock()
	v, err := x.view(q, keys)
	if err != nil {
		return nil, err
	}
	return v.answer(x), nil
}

// newest returns the seqs of the newest visible entries (below before, if
// not 0) that match every filter, newest first, at most n; ok is false
// when a filter is no facet. The scan stops at the n-th match: its cost
// depends on how many entries a filter keeps, not on the table's size.
func (x *facetIndex) newest(filters map[string]string, before int64, n int) (seqs []int64, ok bool) {
	type want struct {
		facet int
		code  uint32
	}
	var ws []want
	for k, v := range filters {
		p := facetPos(k)
		if p < 0 {
			return nil, false
		}
		c, found := x.dict[p].code[v]
		if !found {
			return nil, true // no entry has the value
		}
		ws = append(ws, want{p, c})
	}
	nf := len(Facets)
	r := len(x.seqs) - 1
	if before != 0 {
		i, _ := slices.BinarySearch(x.seqs, before)
		r = i - 1
	}
row:
	for ; r >= 0 && len(seqs) < n; r-- {
		codes := x.rows[r*nf : (r+1)*nf]
		for _, w := range ws {
			if codes[w.facet] != w.code {
				continue row
			}
		}
		seqs = append(seqs, x.seqs[r])
	}
	return seqs, true
}
