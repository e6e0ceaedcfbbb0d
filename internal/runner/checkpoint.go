package runner

import (
	"math"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
)

// Span is what the clients did between two of a run's checkpoints
// (Config.Checkpoints), or from the last one to the run's end: sysbench's
// checkpoint reports, whose counters start again at each checkpoint.
type Span struct {
	At                                               time.Duration // since the run's start, at the span's end
	Seconds                                          float64       // the span's length
	Final                                            bool          // the span the run's end closed
	Events, Reads, Writes, Other, Errors, Reconnects int64
	// Latency is the span's events' (their service time under a rate).
	Latency *result.Latency
	// Fairness is the clients' share of the span's events. At a cut
	// (Unfinished), an event cut off counts for its client's events and
	// its time so far in the spread of the clients' times, as sysbench
	// counts the events its forced shutdown stops.
	Fairness *result.Fairness
	// Unfinished counts the events still under way when the drain after
	// the time limit ended (Config.Drain) and the run cut them off; set
	// on the final span.
	Unfinished int
}

// spans is the run's part in its checkpoints.
type spans struct {
	next   int     // the next checkpoint in cfg.Checkpoints
	events []int64 // each client's committed events at the last checkpoint
	busy   []int64 // and its nanoseconds inside them
	cutMu  sync.Mutex
	cut    []cutOff // the events the drain's end cut off
	cutAt  time.Time
}

// cutOff is an event under way when the drain ended.
type cutOff struct {
	client int
	since  time.Time
}

// tracksSpans says whether the run reports spans.
func (r *run) tracksSpans() bool { return r.cfg.OnCheckpoint != nil }

// nextCheckpoint is a channel that fires at the next checkpoint after
// now, nil when none is left.
func (r *run) nextCheckpoint(now time.Time) (<-chan time.Time, func()) {
	cps := r.cfg.Checkpoints
	for r.spans.next < len(cps) && !r.start.Add(cps[r.spans.next]).After(now) {
		r.spans.next++ // passed already: sysbench skips it
	}
	if r.cfg.OnCheckpoint == nil || r.spans.next >= len(cps) {
		return nil, func() {}
	}
	t := time.NewTimer(r.start.Add(cps[r.spans.next]).Sub(now))
	r.spans.next++
	return t.C, func() { t.Stop() }
}

// checkpoint reports the span that ends at now.
func (r *run) checkpoint(now time.Time, final bool) {
	var cut []cutOff
	var cutAt time.Time
	if final {
		r.spans.cutMu.Lock()
		cut, cutAt = r.spans.cut, r.spans.cutAt
		r.spans.cutMu.Unlock()
	}
	// The clients' counts are read just before the metrics (a client
	// commits an event just before it records it), and the histogram's
	// slower work comes after both.
	fair := r.spanFairness(cut, cutAt)
	tot, took := r.reg.Since(now)
	s := Span{At: now.Sub(r.start), Seconds: took.Seconds(), Final: final, Unfinished: len(cut), Fairness: fair}
	s.Events, s.Reads, s.Writes = tot.KindCount(metrics.Event), tot.KindCount(metrics.Read), tot.KindCount(metrics.Write)
	s.Other, s.Errors, s.Reconnects = tot.KindCount(metrics.Other), tot.ErrorCount(""), tot.Reconnects
	s.Latency = result.LatencyOf(r.spanHist(tot), r.cfg.Percentiles)
	r.cfg.OnCheckpoint(s)
}

// spanHist is the histogram of the span's events: their service time
// under a rate (sysbench times an event from its actual start).
func (r *run) spanHist(tot *metrics.Totals) *hdr.Histogram {
	if r.cfg.Rate > 0 {
		for i := range tot.Ops {
			if o := tot.Ops[i]; o.Spec.Kind == metrics.Event && o.Service != nil {
				return o.Service
			}
		}
	}
	return r.headHist(tot)
}

// spanFairness is the clients' share of the span since the last
// checkpoint, with the events cut off at cutAt counted as sysbench
// counts them: in the events and the spread of the times, not in the
// mean time.
func (r *run) spanFairness(cut []cutOff, cutAt time.Time) *result.Fairness {
	n := len(r.clients)
	if n == 0 {
		return nil
	}
	sp := &r.spans
	if sp.events == nil {
		sp.events, sp.busy = make([]int64, n), make([]int64, n)
	}
	events, busy := make([]float64, n), make([]float64, n)
	var f result.Fairness
	for i := range r.clients {
		e, b := r.clients[i].events.Load(), r.clients[i].busy.Load()
		events[i], busy[i] = float64(e-sp.events[i]), time.Duration(b-sp.busy[i]).Seconds()
		sp.events[i], sp.busy[i] = e, b
		f.BusyS += busy[i]
	}
	f.BusyMeanS = f.BusyS / float64(n)
	for _, c := range cut {
		events[c.client]++
		busy[c.client] += cutAt.Sub(c.since).Seconds()
	}
	var ev, bv float64
	for i := range events {
		f.EventsMean += events[i] / float64(n)
	}
	for i := range events {
		ev += (events[i] - f.EventsMean) * (events[i] - f.EventsMean)
		bv += (busy[i] - f.BusyMeanS) * (busy[i] - f.BusyMeanS)
	}
	f.EventsStdDev, f.BusyStdDevS = math.Sqrt(ev/float64(n)), math.Sqrt(bv/float64(n))
	return &f
}

// drain is how long the events under way at the time limit may take.
func (r *run) drain() time.Duration {
	if r.cfg.Drain > 0 {
		return r.cfg.Drain
	}
	return drainFor
}

// noteCut notes the events under way as the drain ends, before the run
// cancels them.
func (r *run) noteCut(now time.Time) {
	var cut []cutOff
	for i := range r.clients {
		if s := r.clients[i].since.Load(); s != 0 && !r.clients[i].done.Load() {
			cut = append(cut, cutOff{client: i, since: r.start.Add(time.Duration(s - 1))})
		}
	}
	r.spans.cutMu.Lock()
	r.spans.cut, r.spans.cutAt = cut, now
	r.spans.cutMu.Unlock()
}
