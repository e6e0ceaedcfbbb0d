// Package compare sets two groups of results side by side: each metric's
// ratio with its confidence interval and a verdict from a significance
// test, and the differences in what was run where.
package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// Verdicts.
const (
	Faster     = "faster"
	Slower     = "slower"
	Same       = "no significant difference"
	CannotTell = "cannot tell"
	Untest     = "not tested"
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
// interval series. Query suite runs are compared on the suite's figures
// (suiteOf); QueriesOf compares them query by query.
func Of(a, b []*result.Result) Report {
	if QueryResults(slices.Concat(a, b)...) {
		return suiteOf(a, b)
	}
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
				row.Verdict = CannotTell
				row.Note = fmt.Sprintf("%d and %d intervals are too few batches for a test: need %d batches of 2 intervals a side; use a longer --time or a shorter --report-interval",
					len(xa), len(xb), stats.MinBatches)
				rep.Rows = append(rep.Rows, row)
				continue
			}
			xa, xb = ba, bb
		}
		test(&row, xa, xb, m.lowerBetter)
		rep.Rows = append(rep.Rows, row)
	}
	return rep
}

// test fills row's interval, p and verdict from the samples xa and xb,
// when each side has two or more.
func test(row *Row, xa, xb []float64, lowerBetter bool) {
	if len(xa) < 2 || len(xb) < 2 {
		return
	}
	r, err := stats.RatioOf(xa, xb)
	switch {
	case err == nil:
		row.Ratio = r
	case errors.Is(err, stats.ErrUnbounded):
		row.Note = "no interval: A's mean is not clearly away from zero"
	}
	if t, err := stats.Welch(xa, xb); err == nil {
		row.P = t.P
		row.Verdict = verdict(t, lowerBetter)
	}
	agree(row)
}

// agree keeps a verdict from contradicting its own interval. Fieller's
// interval holds 1 exactly when Welch's test is not significant, so they
// can only part at the edge, where rounding decides: there the answer is
// that the data cannot tell.
func agree(r *Row) {
	if math.IsNaN(r.Ratio.Low) || math.IsNaN(r.Ratio.High) {
		return
	}
	holdsOne := r.Ratio.Low <= 1 && 1 <= r.Ratio.High
	if (r.Verdict == Same) != holdsOne && (r.Verdict == Same || r.Verdict == Faster || r.Verdict == Slower) {
		r.Verdict = CannotTell
		r.Note = "at the edge of significance: the test and the interval part on rounding"
	}
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

// Groups of what differed, in the order they are shown: what changes the
// work (the workload, its options, the run's limits), then the machine,
// then the engine, then dbmark itself.
const (
	GroupWork    = "work"
	GroupMachine = "machine"
	GroupEngine  = "engine"
	GroupDbmark  = "dbmark"
)

var groupOrder = map[string]int{GroupWork: 0, GroupMachine: 1, GroupEngine: 2, GroupDbmark: 3}

// Change is one field whose values differ among the results compared.
type Change struct {
	Group  string   `json:"group"`
	Field  string   `json:"field"`  // the field's path in the result document
	Values []string `json:"values"` // one per result, in order; "(none)" where it has none, "(n/a)" where it means nothing
}

// Differences is what differed in what was run, where and with what.
type Differences struct {
	Changes []Change // by group, then field
	// NotComparable says why the results' figures cannot be set side by
	// side (different workloads, open- and closed-loop runs); empty when
	// they can.
	NotComparable []string
	// Notes say what was left out of Changes and why.
	Notes []string
	// Queries compares query suite runs query by query (queries.go): each
	// run after the first against the first; nil unless every run is a
	// query suite's.
	Queries []QueryComparison
	// Counters are the sampled counters that moved most (counters.go):
	// each run after the first against the first, in order; an entry is
	// nil where either of the two sampled none.
	Counters []*CounterMoves
}

// The values shown for a result that has no such field, and for one on
// whose engine the option means nothing.
const (
	none          = "(none)"
	notApplicable = "(n/a)"
)

// Diff lists what differs among runs (two or more) in what was run, where
// and with what: the workload and its options, the runner's options, the
// machine, the target (engine, version, settings) and dbmark. Documents
// are flattened generically, so fields added to them later are diffed too.
// Left out: facts measured at the moment of the run (free space, probe
// times), options that only say how dbmark was asked or where it wrote
// (result.OutputOption), an option on an engine that does not read it, and
// engine settings between different engines (their names are not the
// same vocabulary).
func Diff(runs ...*result.Result) Differences {
	var d Differences
	flat := make([]map[string]string, len(runs))
	keys := map[string]bool{}
	kinds := map[string]bool{}
	for i, r := range runs {
		flat[i] = flatten(setup(r))
		for k := range flat[i] {
			keys[k] = true
		}
		kinds[r.Target.Kind] = true
	}
	acrossEngines := len(kinds) > 1
	if acrossEngines {
		d.Notes = append(d.Notes, fmt.Sprintf("engine settings are not compared across engines (%s)", strings.Join(slices.Sorted(maps.Keys(kinds)), ", ")))
	}
	for k := range keys {
		group, ok := groupOf(k, acrossEngines)
		if !ok {
			continue
		}
		vals := make([]string, len(runs))
		var first string
		applies, same := 0, true
		for i, r := range runs {
			v, has := flat[i][k]
			if !has {
				v = none
			}
			if opt, isOpt := strings.CutPrefix(k, "workload.options."); isOpt && !result.AppliesTo(opt, r.Target.Kind) {
				vals[i] = notApplicable
				continue
			}
			vals[i] = v
			if applies == 0 {
				first = v
			}
			applies++
			same = same && v == first
		}
		if !same {
			d.Changes = append(d.Changes, Change{Group: group, Field: k, Values: vals})
		}
	}
	slices.SortFunc(d.Changes, func(x, y Change) int {
		if c := groupOrder[x.Group] - groupOrder[y.Group]; c != 0 {
			return c
		}
		return strings.Compare(x.Field, y.Field)
	})
	d.NotComparable = notComparable(runs)
	d.Queries = diffQueries(runs)
	for i := 1; i < len(runs); i++ {
		d.Counters = append(d.Counters, Counters(runs[:1], runs[i:i+1], TopCounters))
	}
	return d
}

// groupOf says where field k of a flattened setup is shown, or that it is
// not a difference at all.
func groupOf(k string, acrossEngines bool) (string, bool) {
	if measured(k) {
		return "", false
	}
	top, rest, _ := strings.Cut(k, ".")
	switch top {
	case "workload":
		if opt, ok := strings.CutPrefix(rest, "options."); ok {
			if result.ClassOf(opt) == result.OutputOption || notCompared[opt] {
				return "", false
			}
		}
		return GroupWork, true
	case "run":
		return GroupWork, true
	case "environment":
		return GroupMachine, true
	case "target":
		// The settings a run set are its server.NAME options, already
		// among the work's differences.
		if strings.HasPrefix(rest, "server_set") {
			return "", false
		}
		if acrossEngines {
			section, _, _ := strings.Cut(rest, ".")
			if section == "settings" || section == "non_default" || section == "sizes" {
				return "", false
			}
		}
		return GroupEngine, true
	}
	return GroupDbmark, true
}

// notCompared are options left out of the differences: those the run
// section records as the runner applied them (run.threads,
// run.duration_s...), where the option would be the same fact again; and
// the seed, which a run picks afresh unless told, so that it differs
// between any two.
var notCompared = map[string]bool{
	"threads": true, "time": true, "warmup": true, "events": true, "rate": true, "report-interval": true,
	"max-tries": true, "percentiles": true, "ignore-errors": true, "seed": true,
}

// notComparable says why runs cannot be set side by side, if they cannot.
func notComparable(runs []*result.Result) []string {
	var why []string
	names := map[string]bool{}
	var open, closed int
	for _, r := range runs {
		names[r.Workload.Name] = true
		if r.Run.Rate > 0 {
			open++
		} else {
			closed++
		}
	}
	if len(names) > 1 {
		why = append(why, fmt.Sprintf("different workloads (%s): they do different work, so their figures are not the same measure", strings.Join(slices.Sorted(maps.Keys(names)), ", ")))
	}
	if open > 0 && closed > 0 {
		why = append(why, "open-loop (--rate) and closed-loop runs: an open-loop run's throughput is held to its rate and its latency counts from each event's scheduled start")
	}
	return why
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

// measuredFields are facts read at the moment of the run (free and used
// space, the cost of a clock read, how long the probe took, the database's
// size, the current CPU frequency, a RAID resync's progress): they differ between any two runs and say nothing
// about what was compared.
var measuredFields = map[string]bool{
	"clock_read_ns": true, "probe_ms": true, "free_bytes": true, "used_bytes": true, "data_bytes": true,
	"cpu_mhz": true, "swap_used_bytes": true, "sync_done": true,
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

// WriteNotComparable prints why the runs are not comparable, if they are
// not: before their figures, which it qualifies.
func WriteNotComparable(w io.Writer, d Differences) {
	for _, why := range d.NotComparable {
		fmt.Fprintf(w, "not comparable: %s\n", why)
	}
}

// WriteDiff prints what differed, by group, or says nothing did.
func WriteDiff(w io.Writer, d Differences) {
	if len(d.Changes) == 0 {
		fmt.Fprintln(w, "\nno difference in workload, options, target or machine")
	} else {
		fmt.Fprintln(w, "\nwhat differed:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		group := ""
		for _, c := range d.Changes {
			if c.Group != group {
				group = c.Group
				fmt.Fprintf(tw, "  %s\n", group)
			}
			fmt.Fprintf(tw, "    %s\t%s\n", c.Field, strings.Join(c.Values, "\t->\t"))
		}
		tw.Flush()
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "(%s)\n", n)
	}
}
