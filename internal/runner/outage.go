package runner

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
)

// A client that loses its connection reconnects and goes on, and the run
// goes to its end; but what it measured holds the outage, so the run is
// degraded, never ok. Each outage is kept: when the attempt that met it
// began, when the client was connected again, and the wait until its
// next committed event, the time a user of the database would have
// waited for that transaction. The waits count in a latency of their own
// (Summary.LatencyWithReconnects), beside the events' latency, which
// stays that of the events that ran, as in a clean run, so that runs
// compare as before.

// outage is one client's, from the attempt that met a lost connection
// to its next committed event.
type outage struct {
	start, back time.Duration // readings of the client's clock; back: 0 while not connected again
	reconnects  int
}

// outages are the run's, settled.
type outages struct {
	mu   sync.Mutex
	list []result.Disconnect
}

// lost records that wk lost its connection in the attempt that began at
// tryStart; an outage already open goes on.
func (r *run) lost(wk *worker, tryStart time.Duration) {
	if wk.out == nil {
		wk.out = &outage{start: tryStart}
	}
	wk.out.back = 0
	wk.out.reconnects++
}

// settle closes wk's outage, if it has one: at its committed event's end
// (a reading of its clock) when ok is non-zero, else as the run ends
// without one.
func (r *run) settle(wk *worker, ok time.Duration) {
	o := wk.out
	if o == nil {
		return
	}
	wk.out = nil
	d := result.Disconnect{Client: wk.id, StartS: r.at(wk.clock.Time(o.start)), Reconnects: o.reconnects}
	if o.back != 0 {
		d.Back, d.BackS = true, r.at(wk.clock.Time(o.back))
		d.DisconnectedS = ms(o.back - o.start)
	} else {
		d.DisconnectedS = ms(wk.clock.Read() - o.start)
	}
	if ok != 0 {
		// To the microsecond: a reconnect on loopback and the next event
		// can take less than a millisecond, a wait all the same.
		d.WaitS = max(float64((ok-o.start).Microseconds())/1e6, 1e-6)
	}
	r.outages.mu.Lock()
	r.outages.list = append(r.outages.list, d)
	r.outages.mu.Unlock()
}

// at is t in seconds since the run's start, to the millisecond.
func (r *run) at(t time.Time) float64 { return ms(t.Sub(r.start)) }

// ms is d in seconds, to the millisecond.
func ms(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// summarize adds the outages to s: the list in order of time, the waits'
// distribution, and head (the events' latency) with each wait counted as
// one more event, the one the outage cut off.
func (o *outages) summarize(s *result.Summary, head *hdr.Histogram, ps []float64) {
	o.mu.Lock()
	list := slices.Clone(o.list)
	o.mu.Unlock()
	if len(list) == 0 {
		return
	}
	slices.SortFunc(list, func(a, b result.Disconnect) int {
		return cmp.Or(cmp.Compare(a.StartS, b.StartS), cmp.Compare(a.Client, b.Client))
	})
	s.Disconnects = list
	waits := metrics.NewHistogram()
	with := metrics.NewHistogram()
	if head != nil {
		with.Merge(head)
	}
	clients := map[int]bool{}
	var longest float64
	for _, d := range list {
		clients[d.Client] = true
		longest = max(longest, d.DisconnectedS)
		if d.WaitS > 0 {
			ns := int64(d.WaitS * 1e9)
			_ = waits.RecordValue(ns)
			_ = with.RecordValue(ns)
		}
	}
	s.ReconnectWait = result.LatencyOf(waits, ps)
	s.LatencyWithReconnects = result.LatencyOf(with, ps)
	s.Warnings = append(s.Warnings, fmt.Sprintf(
		"%d of the clients lost their connection and reconnected (%d outages, the longest %.1f s): the run is degraded; the figures include the outage (see the reconnect wait)",
		len(clients), len(list), longest))
}
