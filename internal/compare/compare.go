// Package compare sets two groups of results side by side: each metric's
// ratio with its confidence interval and a verdict from a significance
// test, and the differences in what was run where.
package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// Verdicts.
const (
	Faster = "faster"
	Slower = "slower"
	Same   = "no significant difference"
	Untest = "not tested"
)

// metric reads one number from a run and, for one-run comparisons, one
// per interval of its series.
type metric struct {
	name        string
	lowerBetter bool
	run         func(*result.Result) (float64, bool)
	interval    func(result.Interval) (float64, bool)
}

func latencyAt(p float64) (func(*result.Result) (float64, bool), func(result.Interval) (float64, bool)) {
	return func(r *result.Result) (float64, bool) { return r.Summary.Latency.Get(p) },
		func(iv result.Interval) (float64, bool) {
			for _, q := range iv.Latency {
				if q.P == p {
					return q.MS, true
				}
			}
			return 0, false
		}
}

func metrics(headline string, lowerBetter bool) []metric {
	p95, p95i := latencyAt(95)
	p99, p99i := latencyAt(99)
	return []metric{
		{headline, lowerBetter, func(r *result.Result) (float64, bool) { return r.Summary.Headline, true },
			func(iv result.Interval) (float64, bool) { return iv.EventsPerS, true }},
		{"queries/s", false, func(r *result.Result) (float64, bool) { return r.Summary.QueriesPerS, r.Summary.QueriesPerS > 0 },
			func(iv result.Interval) (float64, bool) {
				q := iv.ReadsPerS + iv.WritesPerS + iv.OtherPerS
				return q, q > 0
			}},
		{"latency mean (ms)", true, func(r *result.Result) (float64, bool) {
			if r.Summary.Latency == nil {
				return 0, false
			}
			return r.Summary.Latency.MeanMS, true
		}, nil},
		{"latency p95 (ms)", true, p95, p95i},
		{"latency p99 (ms)", true, p99, p99i},
	}
}

// Row is one metric compared.
type Row struct {
	Metric  string
	A, B    float64 // means
	Ratio   stats.Ratio
	P       float64 // NaN when not tested
	Verdict string
	Note    string
}

// Report is a comparison.
type Report struct {
	Method string
	Rows   []Row
}

// Of compares b to a. With two or more runs a side, each metric is tested
// over the runs; with one run a side, over batch means of the runs'
// interval series.
func Of(a, b []*result.Result) Report {
	first := a[0]
	ms := metrics(first.Summary.HeadlineUnit, first.Workload.Better == "lower")
	var rep Report
	series := len(a) == 1 && len(b) == 1
	switch {
	case series:
		rep.Method = "one run a side: Welch's t-test on batch means of the interval series (intervals are correlated, so batches; this tells whether these two runs differ, not whether a rerun would)"
	case len(a) >= 2 && len(b) >= 2:
		rep.Method = fmt.Sprintf("Welch's t-test over the runs (%d and %d)", len(a), len(b))
	default:
		rep.Method = fmt.Sprintf("%d and %d runs: no test (repeat both sides, or compare one run with one)", len(a), len(b))
	}
	for _, m := range ms {
		var xa, xb []float64
		if series {
			if m.interval == nil {
				continue
			}
			xa, xb = intervals(a[0], m), intervals(b[0], m)
		} else {
			xa, xb = values(a, m), values(b, m)
		}
		if len(xa) == 0 || len(xb) == 0 {
			continue
		}
		row := Row{Metric: m.name, P: math.NaN(), Verdict: Untest}
		row.A, row.B = mean(xa), mean(xb)
		row.Ratio = stats.Ratio{Value: row.B / row.A, Low: math.NaN(), High: math.NaN()}
		if series {
			k := min(stats.Batches(len(xa)), stats.Batches(len(xb)))
			ba, errA := stats.BatchMeans(xa, k)
			bb, errB := stats.BatchMeans(xb, k)
			if errA != nil || errB != nil {
				row.Note = "too few intervals: need 4 a side; use a longer --time"
				rep.Rows = append(rep.Rows, row)
				continue
			}
			xa, xb = ba, bb
		}
		if len(xa) >= 2 && len(xb) >= 2 {
			if r, err := stats.RatioOf(xa, xb); err == nil {
				row.Ratio = r
			}
			if t, err := stats.Welch(xa, xb); err == nil {
				row.P = t.P
				row.Verdict = verdict(t, m.lowerBetter)
			}
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep
}

func verdict(t stats.Test, lowerBetter bool) string {
	if !t.Significant() {
		return Same
	}
	if (t.T > 0) != lowerBetter {
		return Faster
	}
	return Slower
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func values(rs []*result.Result, m metric) []float64 {
	var out []float64
	for _, r := range rs {
		if v, ok := m.run(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// intervals are a run's measured intervals (no warm-up, and not the short
// last one a limit cuts off).
func intervals(r *result.Result, m metric) []float64 {
	var full float64
	for _, iv := range r.Series {
		full = max(full, iv.DurationS)
	}
	var out []float64
	for _, iv := range r.Series {
		if iv.Warmup || iv.DurationS < full/2 {
			continue
		}
		if v, ok := m.interval(iv); ok {
			out = append(out, v)
		}
	}
	return out
}

// Write prints the comparison.
func Write(w io.Writer, rep Report) {
	fmt.Fprintf(w, "test: %s\n", rep.Method)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tA\tB\tB/A\t95% CI\tp\tVERDICT")
	for _, r := range rep.Rows {
		ci, p := "-", "-"
		if !math.IsNaN(r.Ratio.Low) {
			ci = fmt.Sprintf("[%.3f, %.3f]", r.Ratio.Low, r.Ratio.High)
		}
		if !math.IsNaN(r.P) {
			p = fmt.Sprintf("%.3g", r.P)
		}
		v := r.Verdict
		if r.Note != "" {
			v += " (" + r.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.3f\t%s\t%s\t%s\n", r.Metric, r.A, r.B, r.Ratio.Value, ci, p, v)
	}
	tw.Flush()
}

// Change is one field that differs.
type Change struct{ Field, A, B string }

// Diff lists what differs between two runs in what was run, where and
// with what: the workload and its options, the runner's options, the
// target (engine, version, settings) and the machine. Documents are
// flattened generically, so fields added to them later are diffed too.
func Diff(a, b *result.Result) []Change {
	fa, fb := flatten(setup(a)), flatten(setup(b))
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []Change
	for k := range keys {
		if measured(k) {
			continue
		}
		va, okA := fa[k]
		vb, okB := fb[k]
		if va == vb && okA == okB {
			continue
		}
		if !okA {
			va = "(none)"
		}
		if !okB {
			vb = "(none)"
		}
		out = append(out, Change{k, va, vb})
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Field, y.Field) })
	return out
}

// setup is the part of a run that says what the comparison is of.
func setup(r *result.Result) map[string]any {
	return map[string]any{
		"tool": r.Tool, "workload": r.Workload, "target": r.Target, "environment": r.Environment, "run": r.Run,
	}
}

func flatten(v any) map[string]string {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]string{"(unencodable)": err.Error()}
	}
	var doc any
	_ = json.Unmarshal(b, &doc) // it was just encoded
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				walk(join(prefix, k), x)
			}
		case []any:
			if objects(t) {
				// Lists of records (disks, mounts) are compared field by
				// field, so one changed field is one line.
				for i, x := range t {
					walk(fmt.Sprintf("%s[%d]", prefix, i), x)
				}
				return
			}
			parts := make([]string, len(t))
			for i, x := range t {
				bb, _ := json.Marshal(x)
				parts[i] = string(bb)
			}
			out[prefix] = strings.Join(parts, ",")
		case nil:
		default:
			out[prefix] = fmt.Sprint(t)
		}
	}
	walk("", doc)
	return out
}

// objects says whether a JSON list holds records.
func objects(xs []any) bool {
	for _, x := range xs {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return len(xs) > 0
}

// measuredFields are facts read at the moment of the run (free space, the
// cost of a clock read, how long the probe took, the database's size, the
// current CPU frequency): they differ between any two runs and say nothing
// about what was compared.
var measuredFields = map[string]bool{
	"clock_read_ns": true, "probe_ms": true, "free_bytes": true, "data_bytes": true,
	"cpu_mhz": true, "swap_used_bytes": true,
}

func measured(key string) bool {
	i := strings.LastIndexByte(key, '.')
	return measuredFields[key[i+1:]]
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// WriteDiff prints the differences, or says there are none.
func WriteDiff(w io.Writer, cs []Change) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "\nno difference in workload, options, target or machine")
		return
	}
	fmt.Fprintln(w, "\nwhat differed:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range cs {
		fmt.Fprintf(tw, "  %s\t%s\t->\t%s\n", c.Field, c.A, c.B)
	}
	tw.Flush()
}
