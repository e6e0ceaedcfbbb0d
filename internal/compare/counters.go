package compare

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dbmark/dbmark/internal/dips"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// TopCounters is how many moved counters a comparison lists by default.
const TopCounters = 10

const (
	// A counter moved when its typical values on the two sides lie this
	// many robust standard deviations apart (as dips judges a counter
	// during a dip against the rest of the run), on a log scale...
	counterK = 3.0
	// ...where the spread is at least this (about 5% of the value): a
	// counter that barely varies does not stand out for a change of a
	// few percent.
	counterFloor = 0.05
	// The log scale is asinh(x/s), s this fraction of the larger of the
	// two sides' medians: the log of x well above s, straight through
	// zero, so that a counter that rose from nothing is measured too.
	counterZero = 0.01
)

// CounterMove is one sampled counter (an os.* or db.* series) compared
// between two sides: its typical value on each (per second for a rate),
// and how far apart they are.
type CounterMove struct {
	Name string  `json:"name"`
	Unit string  `json:"unit"`
	Kind string  `json:"kind"` // result.CounterRate or result.CounterGauge
	A    float64 `json:"a"`
	B    float64 `json:"b"`
	// Effect is the distance between A and B in robust standard
	// deviations of the two sides' values on a log scale (at least
	// counterFloor): what ranks the counters. Rates vary by factors, so a
	// noisy side does not hide a fall from 250/s to 5/s.
	Effect float64 `json:"effect"`
	// FollowsThroughput marks a rate that changed about as much as the
	// throughput did (dips.FollowsThroughput): the same work counted
	// again, not something that changed how the work was done.
	FollowsThroughput bool `json:"follows_throughput,omitempty"`
}

// CounterMoves are the counters that moved between two sides.
type CounterMoves struct {
	// Throughput is B's throughput over A's (the headline, or events/s
	// for a workload whose headline is better lower); 0 when A's is 0,
	// where there is no ratio.
	Throughput float64 `json:"throughput_ratio"`
	// Top are the counters that moved most and not merely with the
	// throughput, at most the number asked for, the largest effect first.
	Top []CounterMove `json:"top"`
	// WithThroughput are the counters that moved about as much as the
	// throughput did, largest effect first.
	WithThroughput []CounterMove `json:"with_throughput,omitempty"`
	// Compared is how many counters both sides sampled.
	Compared int `json:"compared"`
}

// Counters compares the counters sampled in runs a and b (one run a side:
// its samples after the warm-up; several: each run's median of them) and
// returns the top n (TopCounters when n <= 0) that moved: a counter moves
// when the medians of the two sides lie counterK robust standard
// deviations apart on a log scale. Nil when either side has no counters.
func Counters(a, b []*result.Result, n int) *CounterMoves {
	if n <= 0 {
		n = TopCounters
	}
	sa, sb := sideCounters(a), sideCounters(b)
	if len(sa) == 0 || len(sb) == 0 {
		return nil
	}
	m := &CounterMoves{}
	if ta := throughput(a); ta > 0 {
		m.Throughput = throughput(b) / ta
	}
	var moved []CounterMove
	for name, xa := range sa {
		xb, ok := sb[name]
		if !ok || len(xa.values) == 0 || len(xb.values) == 0 {
			continue
		}
		m.Compared++
		va, vb := stats.Median(xa.values), stats.Median(xb.values)
		if va == vb {
			continue
		}
		scale := max(counterZero*max(math.Abs(va), math.Abs(vb)), 1e-12)
		la, lb := logScale(xa.values, scale), logScale(xb.values, scale)
		ma, mb := stats.Median(la), stats.Median(lb)
		sd := math.Sqrt((sq(stats.RobustSD(la, ma)) + sq(stats.RobustSD(lb, mb))) / 2)
		effect := math.Abs(mb-ma) / max(sd, counterFloor)
		if effect < counterK {
			continue
		}
		cm := CounterMove{Name: name, Unit: xa.unit, Kind: xa.kind, A: va, B: vb, Effect: effect}
		cm.FollowsThroughput = follows(cm, m.Throughput)
		moved = append(moved, cm)
	}
	slices.SortFunc(moved, func(x, y CounterMove) int {
		if c := cmp.Compare(y.Effect, x.Effect); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	m.Top = []CounterMove{}
	for _, cm := range moved {
		switch {
		case cm.FollowsThroughput:
			m.WithThroughput = append(m.WithThroughput, cm)
		case len(m.Top) < n:
			m.Top = append(m.Top, cm)
		}
	}
	return m
}

// follows says whether a rate moved with the throughput tr: by about as
// much (dips' rule), and nearer to that than to not moving at all (with
// the throughput unchanged, a rate that moved did not follow it).
func follows(c CounterMove, tr float64) bool {
	if c.Kind != result.CounterRate || c.A <= 0 || c.B <= 0 || !(tr > 0) || math.IsInf(tr, 0) {
		return false
	}
	r := c.B / c.A
	return dips.FollowsThroughput(r, tr) && math.Abs(math.Log(r/tr)) < math.Abs(math.Log(r))
}

func sq(x float64) float64 { return x * x }

// logScale is xs on the log scale asinh(x/scale).
func logScale(xs []float64, scale float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Asinh(x / scale)
	}
	return out
}

// counterSide is one counter's values on one side of a comparison.
type counterSide struct {
	unit, kind string
	values     []float64
}

// sideCounters are the side's counters by name: with one run, its samples
// after the warm-up; with several, each run's median of those.
func sideCounters(rs []*result.Result) map[string]*counterSide {
	out := map[string]*counterSide{}
	for _, r := range rs {
		if r.Counters == nil {
			continue
		}
		for _, s := range r.Counters.Series {
			var xs []float64
			for _, p := range s.Points {
				if p[0] > r.Run.WarmupS && !math.IsNaN(p[1]) && !math.IsInf(p[1], 0) {
					xs = append(xs, p[1])
				}
			}
			if len(xs) == 0 {
				continue
			}
			cs := out[s.Name]
			if cs == nil {
				cs = &counterSide{unit: s.Unit, kind: s.Kind}
				out[s.Name] = cs
			}
			if len(rs) == 1 {
				cs.values = xs
			} else {
				cs.values = append(cs.values, stats.Median(xs))
			}
		}
	}
	return out
}

// throughput is the side's mean throughput: its headline, or its events
// per second where the headline is better lower (a query suite's time).
func throughput(rs []*result.Result) float64 {
	var sum float64
	for _, r := range rs {
		if r.Workload.Better == "lower" {
			sum += r.Summary.EventsPerS
		} else {
			sum += r.Summary.Headline
		}
	}
	return sum / float64(len(rs))
}

// WriteCounters prints the counters that moved, after a comparison's
// metric rows: "os.disk.vda.writes  1,395 /s  ->  20.1 /s  x0.014".
func WriteCounters(w io.Writer, m *CounterMoves) {
	if m == nil {
		return
	}
	if len(m.Top) == 0 && len(m.WithThroughput) == 0 {
		fmt.Fprintf(w, "\ncounters: none of the %d sampled on both sides moved more than its noise\n", m.Compared)
		return
	}
	if len(m.Top) > 0 {
		fmt.Fprintf(w, "\ncounters that moved most (median, per second for rates; of %d sampled on both sides; throughput B/A %s):\n", m.Compared, m.ThroughputText())
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  COUNTER\tA\t\tB\tB/A\tEFFECT")
		for _, c := range m.Top {
			fmt.Fprintf(tw, "  %s\t%s\t->\t%s\t%s\t%s\n", c.Name, c.AText(), c.BText(), c.RatioText(), c.EffectText())
		}
		tw.Flush()
	}
	if len(m.WithThroughput) > 0 {
		fmt.Fprintf(w, "moved with the throughput (the same work per event, left out above): %s\n", strings.Join(m.WithThroughputText(), ", "))
	}
}

// ThroughputText is the throughput's ratio B/A as WriteCounters prints
// it: "x2.83", or "-" where there is none.
func (m *CounterMoves) ThroughputText() string {
	if m.Throughput == 0 {
		return "-"
	}
	return ratioText(m.Throughput)
}

// WithThroughputText names the counters that moved with the throughput,
// each with its ratio B/A: "db.commits x3.42".
func (m *CounterMoves) WithThroughputText() []string {
	names := make([]string, len(m.WithThroughput))
	for i, c := range m.WithThroughput {
		names[i] = c.Name + " " + c.RatioText()
	}
	return names
}

// AText and BText are the counter's typical values with their unit, as
// WriteCounters prints them: "1,395 /s".
func (c CounterMove) AText() string { return counterValue(c.A, c.Unit) }

// BText: see AText.
func (c CounterMove) BText() string { return counterValue(c.B, c.Unit) }

// RatioText is B/A: "x0.014", or "from 0" where A is 0.
func (c CounterMove) RatioText() string {
	if c.A == 0 {
		return "from 0"
	}
	return ratioText(c.B / c.A)
}

// EffectText is the effect in robust standard deviations: "12 sd".
func (c CounterMove) EffectText() string { return fmt.Sprintf("%.0f sd", c.Effect) }

func ratioText(r float64) string {
	if r >= 100 || r < 0.01 {
		return "x" + strconv.FormatFloat(r, 'g', 2, 64)
	}
	return "x" + strconv.FormatFloat(r, 'f', 2, 64)
}

// counterValue is a counter's value with thousands separated and its unit.
func counterValue(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 3, 64)
	if math.Abs(v) >= 1000 {
		s = thousands(int64(math.Round(v)))
	}
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
