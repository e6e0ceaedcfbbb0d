package compare

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// Nagios's plugin states, which a gate exits with.
const (
	GateOK       = 0
	GateWarning  = 1
	GateCritical = 2
	GateUnknown  = 3
)

// GateStates names the states by code.
var GateStates = [...]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}

// Metric is one figure of a run that a gate judges.
type Metric struct {
	// Name is how the user wrote it: headline, qps, mean, p99, op:NAME.
	Name        string
	LowerBetter bool
	value       func(*result.Result) (float64, bool)
}

// ParseMetric reads a gate's --metric: "headline" (the run's headline, in
// its own direction), "qps", "mean" (the mean latency), "pN" (a recorded
// latency percentile, e.g. p99 or p99.9) or "op:NAME" (an operation's rate).
// better is the headline's direction ("higher" or "lower").
func ParseMetric(s, better string) (Metric, error) {
	switch {
	case s == "headline":
		return Metric{Name: s, LowerBetter: better == "lower", value: func(r *result.Result) (float64, bool) {
			return r.Summary.Headline, true
		}}, nil
	case s == "qps":
		return Metric{Name: s, value: func(r *result.Result) (float64, bool) {
			return r.Summary.QueriesPerS, r.Summary.QueriesPerS > 0
		}}, nil
	case s == "mean":
		return Metric{Name: s, LowerBetter: true, value: func(r *result.Result) (float64, bool) {
			if r.Summary.Latency == nil {
				return 0, false
			}
			return r.Summary.Latency.MeanMS, true
		}}, nil
	case strings.HasPrefix(s, "p"):
		p, err := strconv.ParseFloat(s[1:], 64)
		if err != nil || p <= 0 || p >= 100 {
			break
		}
		return Metric{Name: s, LowerBetter: true, value: func(r *result.Result) (float64, bool) {
			return r.Summary.Latency.Get(p)
		}}, nil
	case strings.HasPrefix(s, "op:") && len(s) > 3:
		name := s[3:]
		return Metric{Name: s, value: func(r *result.Result) (float64, bool) {
			for _, op := range r.Summary.Ops {
				if op.Name == name {
					return op.PerS, true
				}
			}
			return 0, false
		}}, nil
	}
	return Metric{}, fmt.Errorf("--metric %q: want headline, qps, mean, a percentile such as p99, or op:NAME (an operation's rate)", s)
}

// GateOptions are a gate's thresholds: a regression of Warn (a fraction:
// 0.05 is 5%) or more warns, of Crit or more is critical. Single lets one
// run a side be judged on its one figure.
type GateOptions struct {
	Metric    Metric
	Warn      float64
	Crit      float64
	Single    bool
	Baselines int // how many baseline runs, for the line (filled by Gate)
}

// GateResult is a gate's verdict: a Nagios state and its one line.
type GateResult struct {
	State int
	Line  string
}

// Gate judges candidate runs b against baseline runs a on one metric.
// With two or more runs a side, a change is a regression only when
// Welch's test finds it significant, and its size (the ratio's point
// estimate) is held to the thresholds; with fewer, one run cannot tell a
// regression from noise, and the state is UNKNOWN unless o.Single.
func Gate(a, b []*result.Result, o GateOptions) GateResult {
	m := o.Metric
	xa, xb := metricValues(a, m), metricValues(b, m)
	if len(xa) == 0 || len(xb) == 0 {
		return GateResult{GateUnknown, fmt.Sprintf("UNKNOWN: %s is not in the %s runs", m.Name, map[bool]string{true: "baseline", false: "candidate"}[len(xa) == 0])}
	}
	ma, mb := mean(xa), mean(xb)
	if ma == 0 {
		return GateResult{GateUnknown, fmt.Sprintf("UNKNOWN: the baseline's %s is 0: no ratio", m.Name)}
	}
	ratio := mb / ma
	worse := ratio - 1 // how much worse, as a fraction
	if !m.LowerBetter {
		worse = 1 - ratio
	}
	figures := fmt.Sprintf("%s %s against %s (%+.1f%%", m.Name, num(mb), num(ma), (ratio-1)*100)
	counts := fmt.Sprintf("%d and %d runs", len(xa), len(xb))
	perf := fmt.Sprintf(" | change=%.2f%%;%g;%g", (ratio-1)*100, signed(o.Warn, m.LowerBetter), signed(o.Crit, m.LowerBetter))

	if len(xa) < 2 || len(xb) < 2 {
		if !o.Single {
			return GateResult{GateUnknown, "UNKNOWN: " + figures + ", " + counts +
				"): one run cannot tell a regression from noise; repeat both sides (--repeat), or judge the one figure with --single" + perf}
		}
		st := thresholdState(worse, o)
		return GateResult{st, GateStates[st] + ": " + figures + ", " + counts + ", one figure judged, noise not excluded)" + describe(st, worse) + perf}
	}
	t, err := stats.Welch(xa, xb)
	if err != nil {
		return GateResult{GateUnknown, "UNKNOWN: " + figures + ", " + counts + "): " + err.Error() + perf}
	}
	interval := ""
	if r, err := stats.RatioOf(xa, xb); err == nil {
		interval = fmt.Sprintf(", 95%% interval %+.1f%% to %+.1f%%", (r.Low-1)*100, (r.High-1)*100)
	} else if errors.Is(err, stats.ErrUnbounded) {
		return GateResult{GateUnknown, "UNKNOWN: " + figures + ", " + counts + "): the baseline is too noisy for a bounded ratio; repeat it more" + perf}
	}
	figures += interval + fmt.Sprintf(", Welch p=%.3g, ", t.P) + counts + ")"
	if !t.Significant() {
		return GateResult{GateOK, "OK: " + figures + ": no significant difference" + perf}
	}
	if worse <= 0 {
		return GateResult{GateOK, "OK: " + figures + ": better" + perf}
	}
	st := thresholdState(worse, o)
	return GateResult{st, GateStates[st] + ": " + figures + describe(st, worse) + perf}
}

func thresholdState(worse float64, o GateOptions) int {
	switch {
	case worse >= o.Crit:
		return GateCritical
	case worse >= o.Warn:
		return GateWarning
	}
	return GateOK
}

func describe(st int, worse float64) string {
	switch {
	case worse < 0:
		return ": better"
	case worse == 0:
		return ": no change"
	case st == GateOK:
		return fmt.Sprintf(": %.1f%% worse, within the thresholds", worse*100)
	}
	return fmt.Sprintf(": %.1f%% worse", worse*100)
}

// signed is a threshold as a change in the metric's own direction, for
// the performance data.
func signed(f float64, lowerBetter bool) float64 {
	if lowerBetter {
		return f * 100
	}
	return -f * 100
}

func metricValues(rs []*result.Result, m Metric) []float64 {
	var out []float64
	for _, r := range rs {
		if v, ok := m.value(r); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}

// num prints a figure: tenths from 100 up, else four significant digits.
func num(f float64) string {
	if math.Abs(f) >= 100 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', 4, 64)
}
