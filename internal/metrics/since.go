package metrics

import "time"

// sinceMark is what the registry keeps for spans that end off the ticks
// (sysbench's checkpoint reports): everything recorded since the last
// mark, and what a mark drained from the handles before the interval it
// belongs to was closed.
type sinceMark struct {
	at      time.Time
	since   *Totals // recorded since the last mark
	spare   *Totals // the span returned last, reused for the next
	pending *Totals // drained by a mark, not yet in an interval
	fresh   *Totals // scratch: what one drain took
}

// TrackSince makes the registry keep what was recorded since the last
// call to Since (from now until the first). Call it before the run starts.
func (r *Registry) TrackSince() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mark = &sinceMark{at: r.start, since: newTotals(r.specs), spare: newTotals(r.specs), pending: newTotals(r.specs), fresh: newTotals(r.specs)}
}

// Since returns everything recorded since the previous call (or the
// start) and how long that span is, and starts a new span at now. The
// intervals of Tick are not disturbed: what Since drains from the handles
// goes into the next interval as well. The totals are valid until the
// next call.
func (r *Registry) Since(now time.Time) (*Totals, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.mark
	r.drainFresh()
	m.pending.add(m.fresh)
	out, took := m.since, now.Sub(m.at)
	m.spare.reset()
	m.since, m.spare, m.at = m.spare, out, now
	return out, took
}

// drainFresh moves the handles' data into the mark's scratch totals and
// adds it to the span; the caller holds r.mu.
func (r *Registry) drainFresh() {
	m := r.mark
	m.fresh.reset()
	for _, h := range r.handles {
		m.fresh.drain(h, r.groupOf(h))
	}
	m.since.add(m.fresh)
}

// tickInto fills t, the interval Tick closes, with what a mark drained
// before and what the handles hold now; the caller holds r.mu.
func (r *Registry) tickInto(t *Totals) {
	if r.mark == nil {
		for _, h := range r.handles {
			t.drain(h, r.groupOf(h))
		}
		return
	}
	t.add(r.mark.pending)
	r.mark.pending.reset()
	r.drainFresh()
	t.add(r.mark.fresh)
}
