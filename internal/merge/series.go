package merge

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// alignSeries puts every host's intervals on one grid by wall clock and
// sums them. The grid's step is the longest of the hosts' usual interval
// lengths, and its origin the earliest measured window's start: hosts
// started with --start-at tick together from that instant, so their
// measured intervals fall on the grid's cells exactly. An interval goes
// to the cell holding its midpoint; a host's intervals in one cell are
// first combined over their time (result.MergeIntervals). A cell is a
// warm-up cell only when every host's interval in it is warm-up.
func alignSeries(start time.Time, rs []*result.Result) []result.Interval {
	step := 0.0
	origin := windowStart(rs[0])
	for _, r := range rs {
		step = max(step, usualLength(r.Series))
		origin = minTime(origin, windowStart(r))
	}
	if step <= 0 {
		return nil
	}
	type cell struct {
		perHost map[int]result.Interval
		order   []int
	}
	cells := map[int]*cell{}
	for i, r := range rs {
		for _, iv := range r.Series {
			mid := at(r.StartedAt, iv.T-iv.DurationS/2)
			k := int(math.Floor(mid.Sub(origin).Seconds() / step))
			c, ok := cells[k]
			if !ok {
				c = &cell{perHost: map[int]result.Interval{}}
				cells[k] = c
			}
			prev, ok := c.perHost[i]
			if !ok {
				c.perHost[i] = iv
				c.order = append(c.order, i)
				continue
			}
			c.perHost[i] = combine(prev, iv)
		}
	}
	keys := make([]int, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]result.Interval, 0, len(keys))
	for _, k := range keys {
		c := cells[k]
		end := origin.Add(seconds(float64(k+1) * step))
		sum := result.Interval{T: end.Sub(start).Seconds(), DurationS: step, Warmup: true}
		var lagEvents float64
		for _, i := range c.order {
			iv := c.perHost[i]
			sum.Warmup = sum.Warmup && iv.Warmup
			add(&sum, iv)
			if e := iv.EventsPerS * iv.DurationS; iv.LagMeanMS > 0 && e > 0 {
				sum.LagMeanMS += iv.LagMeanMS * e
				lagEvents += e
			}
		}
		if lagEvents > 0 {
			sum.LagMeanMS /= lagEvents
		}
		out = append(out, sum)
	}
	return out
}

// usualLength is the median length of a series' intervals.
func usualLength(ivs []result.Interval) float64 {
	if len(ivs) == 0 {
		return 0
	}
	d := make([]float64, len(ivs))
	for i, iv := range ivs {
		d[i] = iv.DurationS
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// combine makes one interval of two of one host's that fell in one cell,
// their rates averaged over their time.
func combine(a, b result.Interval) result.Interval {
	warm := a.Warmup && b.Warmup
	a.Warmup, b.Warmup = false, false
	m, _ := result.MergeIntervals(a, b)
	m.Warmup = warm
	return m
}

// add adds one host's interval into a cell: rates add up; a percentile
// is the highest of the hosts' (without the intervals' histograms no
// exact one can be had); of a workload's own figures, rates ("_per_s")
// add up and levels keep the highest.
func add(sum *result.Interval, iv result.Interval) {
	sum.EventsPerS += iv.EventsPerS
	sum.ReadsPerS += iv.ReadsPerS
	sum.WritesPerS += iv.WritesPerS
	sum.OtherPerS += iv.OtherPerS
	sum.ReadMiBPerS += iv.ReadMiBPerS
	sum.WriteMiBPerS += iv.WriteMiBPerS
	sum.ErrorsPerS += iv.ErrorsPerS
	sum.ReconnPerS += iv.ReconnPerS
	sum.RetriesPerS += iv.RetriesPerS
	for _, p := range iv.Latency {
		i := slices.IndexFunc(sum.Latency, func(q result.Percentile) bool { return q.P == p.P })
		switch {
		case i < 0:
			sum.Latency = append(sum.Latency, p)
		case p.MS > sum.Latency[i].MS:
			sum.Latency[i].MS = p.MS
		}
	}
	for k, v := range iv.Extra {
		if sum.Extra == nil {
			sum.Extra = map[string]float64{}
		}
		old, ok := sum.Extra[k]
		switch {
		case !ok:
			sum.Extra[k] = v
		case strings.HasSuffix(k, "_per_s"):
			sum.Extra[k] = old + v
		default:
			sum.Extra[k] = max(old, v)
		}
	}
}
