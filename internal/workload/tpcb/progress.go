package tpcb

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
)

// liveCounts are one client's counts that progress lines report per
// interval. The client adds to them; the ticker reads them.
type liveCounts struct {
	failed, skipped, retried, retries atomic.Int64
}

// liveFigures is what pgbench's progress line says of the last interval,
// filled by tick and read by LiveLine, both on the runner's ticker.
type liveFigures struct {
	meanMS, stddevMS                  float64
	failed, skipped, retried, retries int64
	last                              [4]int64 // the totals at the previous tick
}

// tick takes the interval's latency and the clients' counts since the
// previous tick (workload.Load's Tick).
func (rs *runState) tick(iv metrics.Interval, _ *result.Interval) {
	p := &rs.prog
	p.meanMS, p.stddevMS = 0, 0
	if h := iv.EventHist(); h.TotalCount() > 0 {
		p.meanMS, p.stddevMS = h.Mean()/1e6, h.StdDev()/1e6
	}
	var now [4]int64
	for i := range rs.stats {
		c := &rs.stats[i].live
		now[0] += c.failed.Load()
		now[1] += c.skipped.Load()
		now[2] += c.retried.Load()
		now[3] += c.retries.Load()
	}
	p.failed, p.skipped, p.retried, p.retries = now[0]-p.last[0], now[1]-p.last[1], now[2]-p.last[2], now[3]-p.last[3]
	p.last = now
}

// LiveLine is pgbench 15's progress line (workload.LiveLiner):
//
//	progress: 5.0 s, 4530.2 tps, lat 1.765 ms stddev 0.412, 0 failed
//
// then ", lag X ms" under -R, ", N skipped" under -R with -L, and
// ", N retried, N retries" when --max-tries is not 1. With
// --progress-timestamp the time is the Unix time to the millisecond.
// It is "" (dbmark's own line) when the interval was given as dbmark's
// --report-interval rather than pgbench's -P/--progress.
func (w *Workload) LiveLine(iv result.Interval, at time.Time, stamped bool) string {
	rs := w.run
	if rs == nil || !changed(w.fs, "progress") {
		return ""
	}
	p := &rs.prog
	var b strings.Builder
	if stamped {
		fmt.Fprintf(&b, "progress: %d.%03d s", at.Unix(), at.Nanosecond()/int(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "progress: %.1f s", iv.T)
	}
	fmt.Fprintf(&b, ", %.1f tps, lat %.3f ms stddev %.3f, %d failed", iv.EventsPerS, p.meanMS, p.stddevMS, p.failed)
	if rs.rate {
		fmt.Fprintf(&b, ", lag %.3f ms", iv.LagMeanMS)
		if rs.limit > 0 {
			fmt.Fprintf(&b, ", %d skipped", p.skipped)
		}
	}
	if rs.maxTries != 1 {
		fmt.Fprintf(&b, ", %d retried, %d retries", p.retried, p.retries)
	}
	return b.String()
}
