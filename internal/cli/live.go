package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sampler"
)

// livePrinter prints the live lines from its own goroutine: a line waits
// there for the counters sampled at its tick, never in the runner's loop.
type livePrinter struct {
	out    io.Writer
	errOut io.Writer                                                  // where a peer's own form of the line goes
	peer   func(p result.Interval, at time.Time, stamped bool) string // the peer's form of a line (Hooks.LiveLine); nil: dbmark's only
	own    func(p result.Interval, threads int) string                // a front end's form of the line, on out in place of dbmark's
	smp    *sampler.Sampler                                           // nil: no counters
	driven bool                                                       // smp samples at each line's tick
	show   []string
	stamp  bool
	every  time.Duration // the report interval
	wait   time.Duration // how long a line waits for its counters
	lines  chan liveLine
	done   chan struct{}
}

type liveLine struct {
	text  string
	toErr bool   // the peer's form, on errOut
	kick  uint64 // the sample taken at this line's tick; 0: none
}

func startLive(out, errOut io.Writer, peer func(result.Interval, time.Time, bool) string, smp *sampler.Sampler, driven bool, show []string, stamp bool, interval time.Duration) *livePrinter {
	lp := &livePrinter{out: out, errOut: errOut, peer: peer, smp: smp, driven: driven && smp != nil, show: show, stamp: stamp, every: interval,
		wait:  min(max(interval/2, 10*time.Millisecond), time.Second),
		lines: make(chan liveLine, 256), done: make(chan struct{})}
	go lp.print()
	return lp
}

// sink is the runner's Sink: it renders the line and asks for the
// counters at once, then hands both to the printer.
func (lp *livePrinter) sink(p result.Interval, threads int) {
	now := time.Now()
	var l liveLine
	if lp.peer != nil {
		l.text = lp.peer(p, now, lp.stamp)
		l.toErr = l.text != ""
	}
	switch {
	case l.toErr:
	case lp.own != nil:
		l.text = lp.own(p, threads)
	case lp.stamp:
		l.text = report.LiveLineAt(p, threads, now)
	default:
		l.text = report.LiveLine(p, threads, lp.every)
	}
	if lp.driven {
		l.kick = lp.smp.Kick()
	}
	lp.lines <- l
}

func (lp *livePrinter) print() {
	defer close(lp.done)
	for l := range lp.lines {
		w := lp.out
		if l.toErr {
			w = lp.errOut
		}
		fmt.Fprintln(w, l.text+lp.counters(l.kick))
	}
}

// counters is the --show part of a line.
func (lp *livePrinter) counters(kick uint64) string {
	if lp.smp == nil || len(lp.show) == 0 {
		return ""
	}
	if kick == 0 {
		return report.Shown(lp.show, lp.smp.Latest(), lp.smp.Units(), nil)
	}
	latest, stale := lp.smp.Wait(kick, lp.wait)
	return report.Shown(lp.show, latest, lp.smp.Units(), stale)
}

// stop prints the lines still queued and returns once they are out.
func (lp *livePrinter) stop() {
	close(lp.lines)
	<-lp.done
}
