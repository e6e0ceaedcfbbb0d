// Package dips finds where a run's throughput fell well below its running
// median (the flushing stalls, checkpoints and locks that tuning hunts)
// and, for each dip, the counters that moved most at that moment against
// the rest of the run.
package dips

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

const (
	// minIntervals is the fewest measured intervals a run needs before a
	// dip means anything against its median.
	minIntervals = 10
	// halfWindow intervals each side make the running median: wide enough
	// that a stall of several intervals does not drag it down.
	halfWindow = 15
	// An interval dips when it is this fraction below the running median
	// and, so that a noisy run raises no alarm, also noiseK robust
	// standard deviations below it (or stallDrop below it).
	minDrop = 0.25
	noiseK  = 4.0
	// A fall of stallDrop or more is a dip however noisy the run: noise
	// on a busy machine does not take four fifths of the throughput.
	stallDrop = 0.8
	// A counter moves when its mean during the dip is moverK robust
	// standard deviations (at least 5% of its typical value) from its
	// typical value over the rest of the run.
	moverK    = 3.0
	maxMovers = 3
	// Beyond farK robust standard deviations a counter is far outside
	// its noise, and how far no longer ranks it: among such counters the
	// engine's (the server under test) come first, the machine's after
	// them, since any other work on the machine moves those (a build's
	// disk reads during a server's stall).
	farK = 10.0
)

// Find returns the dips of r's measured throughput, oldest first, each
// with the counters that moved. A run whose workload's headline is better
// when lower (a query suite's time) is judged on its events per second.
func Find(r *result.Result) []result.Dip {
	ts, vs := throughput(r)
	if len(vs) < minIntervals {
		return nil
	}
	scale := stats.RobustSD(vs, stats.Median(vs))
	var out []result.Dip
	open := false
	for i, v := range vs {
		med := runningMedian(vs, i)
		dips := med > 0 && v < med*(1-minDrop) && (med-v > noiseK*scale || v < med*(1-stallDrop))
		switch {
		case dips && !open:
			out = append(out, result.Dip{FromS: ts[i][0], ToS: ts[i][1], Change: v/med - 1})
			open = true
		case dips:
			d := &out[len(out)-1]
			d.ToS = ts[i][1]
			d.Change = min(d.Change, v/med-1)
		default:
			open = false
		}
	}
	for i := range out {
		out[i].Movers = movers(r.Counters, out[i])
	}
	return out
}

// throughput is the measured intervals' headline rate (or events/s) with
// each interval's [start, end] in seconds.
func throughput(r *result.Result) (spans [][2]float64, vals []float64) {
	key := r.Summary.HeadlineSeries
	if r.Workload.Better == "lower" {
		key = ""
	}
	var full float64
	for _, iv := range r.Series {
		full = max(full, iv.DurationS)
	}
	for _, iv := range r.Series {
		// The warm-up and the short last interval a limit cuts off are
		// not the run's steady state.
		if iv.Warmup || iv.DurationS < full/2 {
			continue
		}
		v := iv.EventsPerS
		if key != "" {
			var ok bool
			if v, ok = iv.Extra[key]; !ok {
				continue
			}
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		spans = append(spans, [2]float64{iv.T - iv.DurationS, iv.T})
		vals = append(vals, v)
	}
	return spans, vals
}

func runningMedian(vs []float64, i int) float64 {
	lo, hi := max(0, i-halfWindow), min(len(vs), i+halfWindow+1)
	return stats.Median(vs[lo:hi])
}

// movers ranks the counters by how far their mean during d lies from
// their typical value over the rest of the run, in robust standard
// deviations. A rate that fell with the throughput, by about as much (the
// commits of the transactions that did not run), is the dip itself, not
// its cause, and is left out.
func movers(c *result.Counters, d result.Dip) []result.Mover {
	if c == nil {
		return nil
	}
	// A counter's point at t covers the sampling interval before t.
	half := c.IntervalS / 2
	type scored struct {
		m     result.Mover
		score float64
	}
	var all []scored
	for _, s := range c.Series {
		var in, outside []float64
		for _, p := range s.Points {
			if p[0] > d.FromS+half && p[0] <= d.ToS+half {
				in = append(in, p[1])
			} else {
				outside = append(outside, p[1])
			}
		}
		if len(in) == 0 || len(outside) < 3 {
			continue
		}
		during, typical := mean(in), stats.Median(outside)
		spread := max(stats.RobustSD(outside, typical), 0.05*math.Abs(typical), floor(s.Unit))
		score := math.Abs(during-typical) / spread
		if score < moverK {
			continue
		}
		if s.Kind == result.CounterRate && typical > 0 && during < typical && FollowsThroughput(during/typical, 1+d.Change) {
			continue
		}
		all = append(all, scored{result.Mover{Name: s.Name, Unit: s.Unit, During: during, Typical: typical}, score})
	}
	engine := func(s scored) bool { return strings.HasPrefix(s.m.Name, "db.") }
	slices.SortStableFunc(all, func(a, b scored) int {
		fa, fb := min(a.score, farK), min(b.score, farK)
		switch {
		case fa != fb:
			return cmp.Compare(fb, fa)
		case engine(a) != engine(b):
			if engine(a) {
				return -1
			}
			return 1
		case a.score != b.score:
			return cmp.Compare(b.score, a.score)
		}
		return strings.Compare(a.m.Name, b.m.Name)
	})
	var out []result.Mover
	for _, s := range all[:min(len(all), maxMovers)] {
		out = append(out, s.m)
	}
	return out
}

// FollowsThroughput says whether a rate that changed by ratio (new over
// old) changed about as much as the throughput did (throughput, new over
// old): within 30% of it (within 0.05 of zero for a stall, where 30% of
// nothing is nothing), so that it is the same work counted again (the
// commits of the transactions that ran), not a cause.
func FollowsThroughput(ratio, throughput float64) bool {
	return math.Abs(ratio-throughput) <= max(0.3*throughput, 0.05)
}

// floor is the least spread a counter of unit is given: a counter that
// is flat at zero (steal, a NIC the run does not use, lock waits) would
// otherwise stand out with any tick above it, one a minute. A mover
// must change by three of these at least.
func floor(unit string) float64 {
	switch {
	case unit == "%":
		return 1 // percentage point
	case strings.HasPrefix(unit, "bytes"):
		return 256 << 10
	case unit == "ms":
		return 1
	}
	return 0.25 // MiB/s, pages/s, events/s, a count
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// Line says a dip in one line: "41-44 s: tps -63%; os.disk.vda.util 98%
// (typically 12%), db.checkpoints 1/s (typically 0/s)".
func Line(d result.Dip, unit string) string {
	if unit == "" {
		unit = "events/s"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s-%s s: %s %+.0f%%", secs(d.FromS), secs(d.ToS), unit, d.Change*100)
	for i, m := range d.Movers {
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		fmt.Fprintf(&b, "%s%s %s (typically %s)", sep, m.Name, value(m.During, m.Unit), value(m.Typical, m.Unit))
	}
	if len(d.Movers) == 0 {
		b.WriteString("; no sampled counter stood out")
	}
	return b.String()
}

func secs(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

func value(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if math.Abs(v) >= 1000 {
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if unit == "%" {
		return s + "%"
	}
	return strings.TrimSpace(s + " " + unit)
}
