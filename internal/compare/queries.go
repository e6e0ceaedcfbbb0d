package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// Verdicts of a query that cannot be set against itself: it is in one
// group of runs only, or some run of it failed (an error, a timeout, a
// wrong answer) in a group.
const (
	OnlyInA      = "only in A"
	OnlyInB      = "only in B"
	FailedInA    = "failed in A"
	FailedInB    = "failed in B"
	FailedInBoth = "failed in A and B"
)

// QuerySide is one query's figures in one group of runs. With one run
// they are the run's own (result.QueryResult); with more, the median of
// the runs' figures.
type QuerySide struct {
	ColdS   float64 `json:"cold_s"`
	HotS    float64 `json:"hot_s,omitempty"`
	MedianS float64 `json:"median_s"`
	// GeomeanS is the geometric mean of the samples tested (N of them):
	// the figure whose ratio B/A is.
	GeomeanS float64 `json:"geomean_s"`
	N        int     `json:"samples"`
	// Failed counts the query's failed runs over the group; Error is the
	// first one's kind and message.
	Failed int    `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

// QueryRow is one query, by its label, compared: B/A of its geometric
// mean time, so below 1 is faster (lower is better), with the 95%
// interval and p of Welch's test of the times' logarithms (logRatio)
// where there are samples enough to test.
type QueryRow struct {
	Label string     `json:"label"`
	A     *QuerySide `json:"a,omitempty"` // nil when the query is in B only
	B     *QuerySide `json:"b,omitempty"` // nil when the query is in A only
	// Ratio is B's geometric mean time over A's (0 when either has none).
	Ratio   float64     `json:"ratio,omitempty"`
	CI      *[2]float64 `json:"ci,omitempty"`
	P       *float64    `json:"p,omitempty"`
	Verdict string      `json:"verdict"`
	Note    string      `json:"note,omitempty"`
}

// QueryComparison is two groups of query suite runs compared query by
// query, and the geometric mean of the queries' ratios.
type QueryComparison struct {
	// Method says what was tested: which iterations are the samples and
	// whether they are runs or iterations.
	Method string `json:"method"`
	// Rows are in A's order of queries, then the queries B alone has.
	Rows []QueryRow `json:"rows"`
	// Geomean is the geometric mean of the ratios of the GeomeanOf
	// queries that ran and succeeded in both groups (0 when none did):
	// the suite's change with every query weighing the same, whatever its
	// length.
	Geomean   float64 `json:"geomean,omitempty"`
	GeomeanOf int     `json:"geomean_of"`
	// Verdicts counts the queries by verdict.
	Verdicts map[string]int `json:"verdicts"`
}

// QueryResults says whether every run is a query suite's (dbmark run
// query, wisconsin): runs whose figures are per query.
func QueryResults(runs ...*result.Result) bool {
	for _, r := range runs {
		if r == nil || r.Queries == nil {
			return false
		}
	}
	return len(runs) > 0
}

// QueriesOf compares the query suite runs b to a, query by query. With two
// or more runs a side, each query is tested over the runs (each run's
// geometric mean time of it); otherwise over the iterations of the query, pooled over the
// runs and streams of each side. The samples are the warm iterations (the
// second and later: the first is the cold run, which --cold makes colder
// on purpose), or the first iterations when some run has only those. The
// runs' figures must be query results (QueryResults).
func QueriesOf(a, b []*result.Result) QueryComparison {
	cold := false
	for _, r := range slices.Concat(a, b) {
		cold = cold || r.Queries.Iterations < 2
	}
	overRuns := len(a) >= 2 && len(b) >= 2
	which := "warm iterations (the second and later; the first, cold, is shown and not tested)"
	if cold {
		which = "first iterations (a run has only those)"
	}
	qc := QueryComparison{Verdicts: map[string]int{}}
	if overRuns {
		qc.Method = fmt.Sprintf("each query: Welch's t-test of the logarithms of its times over the runs (%d and %d), each run's geometric mean of its %s", len(a), len(b), which)
	} else {
		qc.Method = fmt.Sprintf("each query: Welch's t-test of the logarithms of its %s, pooled over each side's runs and streams; this tells whether these runs differ, not whether a rerun would", which)
	}
	labels, inA, inB := queryLabels(a, b)
	var logSum float64
	for _, l := range labels {
		row := QueryRow{Label: l}
		var xa, xb []float64
		if inA[l] {
			side, samples := querySide(a, l, cold, overRuns)
			row.A, xa = &side, samples
		}
		if inB[l] {
			side, samples := querySide(b, l, cold, overRuns)
			row.B, xb = &side, samples
		}
		judgeQuery(&row, xa, xb, sameSQL(a, b, l))
		if row.Ratio > 0 && isTimed(row.Verdict) {
			logSum += math.Log(row.Ratio)
			qc.GeomeanOf++
		}
		qc.Verdicts[row.Verdict]++
		qc.Rows = append(qc.Rows, row)
	}
	if qc.GeomeanOf > 0 {
		qc.Geomean = math.Exp(logSum / float64(qc.GeomeanOf))
	}
	return qc
}

// isTimed says whether a verdict is about the query's time, so that its
// ratio counts in the geometric mean.
func isTimed(v string) bool {
	return v == Faster || v == Slower || v == Same || v == CannotTell || v == Untest
}

// queryLabels lists the labels of a's queries, then those only b has, and
// which side has each.
func queryLabels(a, b []*result.Result) (labels []string, inA, inB map[string]bool) {
	inA, inB = map[string]bool{}, map[string]bool{}
	for _, side := range []struct {
		runs []*result.Result
		in   map[string]bool
	}{{a, inA}, {b, inB}} {
		for _, r := range side.runs {
			for _, q := range r.Queries.List {
				if !inA[q.Label] && !inB[q.Label] {
					labels = append(labels, q.Label)
				}
				side.in[q.Label] = true
			}
		}
	}
	return labels, inA, inB
}

// querySide sums up query label over runs and gives the samples to test:
// each run's mean (overRuns) or every sample run.
func querySide(runs []*result.Result, label string, cold, overRuns bool) (QuerySide, []float64) {
	var side QuerySide
	var colds, hots, medians, samples []float64
	for _, r := range runs {
		q, ok := queryOf(r, label)
		if !ok {
			continue
		}
		if q.Errors > 0 && side.Error == "" {
			side.Error = q.Error
		}
		side.Failed += q.Errors
		if q.MedianS > 0 {
			colds, medians = append(colds, q.ColdS), append(medians, q.MedianS)
		}
		if q.HotS > 0 {
			hots = append(hots, q.HotS)
		}
		var own []float64
		for _, rn := range q.Runs {
			if rn.OK() && (rn.Iteration == 1) == cold {
				own = append(own, rn.S)
			}
		}
		switch {
		case !overRuns:
			samples = append(samples, own...)
		case len(own) > 0:
			if ls := logs(own); ls != nil {
				samples = append(samples, math.Exp(mean(ls)))
			}
		}
	}
	side.ColdS, side.HotS, side.MedianS = median(colds), median(hots), median(medians)
	side.N = len(samples)
	if ls := logs(samples); len(ls) > 0 {
		side.GeomeanS = math.Exp(mean(ls))
	}
	return side, samples
}

func queryOf(r *result.Result, label string) (result.QueryResult, bool) {
	for _, q := range r.Queries.List {
		if q.Label == label {
			return q, true
		}
	}
	return result.QueryResult{}, false
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}

// sameSQL says whether every run that has query label gives it the same
// text: a ratio between two different statements is no comparison of one.
func sameSQL(a, b []*result.Result, label string) bool {
	sql, seen := "", false
	for _, r := range slices.Concat(a, b) {
		if q, ok := queryOf(r, label); ok {
			if seen && q.SQL != sql {
				return false
			}
			sql, seen = q.SQL, true
		}
	}
	return true
}

// judgeQuery fills in a row's ratio, interval, test and verdict from the
// samples of each side, lower being better: Welch's test, as Of makes,
// on the logarithms of the times (logRatio).
func judgeQuery(row *QueryRow, xa, xb []float64, sameText bool) {
	switch {
	case row.A == nil:
		row.Verdict = OnlyInB
		return
	case row.B == nil:
		row.Verdict = OnlyInA
		return
	}
	var notes []string
	if !sameText {
		notes = append(notes, "its SQL differs between the runs")
	}
	defer func() { row.Note = strings.Join(notes, "; ") }()
	if row.A.GeomeanS > 0 && row.B.GeomeanS > 0 {
		row.Ratio = row.B.GeomeanS / row.A.GeomeanS
	}
	if failed := failedVerdict(row.A, row.B); failed != "" {
		row.Verdict = failed
		for _, s := range []struct {
			name string
			side *QuerySide
		}{{"A", row.A}, {"B", row.B}} {
			if s.side.Failed > 0 {
				notes = append(notes, fmt.Sprintf("%s: %d failed (%s)", s.name, s.side.Failed, s.side.Error))
			}
		}
		return
	}
	if len(xa) < 2 || len(xb) < 2 {
		row.Verdict = CannotTell
		notes = append(notes, fmt.Sprintf("%d and %d samples: a test needs 2 a side (use --iterations 3 or more, or repeat the runs)", len(xa), len(xb)))
		return
	}
	r := Row{Ratio: stats.Ratio{Value: row.Ratio, Low: math.NaN(), High: math.NaN()}, P: math.NaN(), Verdict: Untest}
	if lr, t, err := logRatio(xa, xb); err == nil {
		row.Ratio = lr.Value
		r.Ratio, r.P, r.Verdict = lr, t.P, verdict(t, true)
	}
	agree(&r)
	row.Verdict = r.Verdict
	if r.Note != "" {
		notes = append(notes, r.Note)
	}
	if !math.IsNaN(r.Ratio.Low) {
		row.CI = &[2]float64{r.Ratio.Low, r.Ratio.High}
	}
	if !math.IsNaN(r.P) {
		p := r.P
		row.P = &p
	}
}

// logRatio is Welch's test of the logarithms of the times xa and xb, and
// the ratio of their geometric means, B's over A's, with the test's 95%
// interval carried back from logarithms. A query's times are skewed:
// one run held up by the machine can take ten times the others, and on
// the times themselves (compare's test of means, with Fieller's interval)
// that one run can hide a slowdown of a hundredfold; on their logarithms
// it weighs as what it is, one run in n, and a change of speed is the
// shift it is, whatever the query's length. The interval holds 1 exactly
// when the test is not significant (the same statistic, degrees of
// freedom and quantile).
func logRatio(xa, xb []float64) (stats.Ratio, stats.Test, error) {
	la, lb := logs(xa), logs(xb)
	if la == nil || lb == nil {
		return stats.Ratio{}, stats.Test{}, errors.New("a time of 0 has no logarithm")
	}
	t, err := stats.Welch(la, lb)
	if err != nil {
		return stats.Ratio{}, stats.Test{}, err
	}
	ma, va := meanVar(la)
	mb, vb := meanVar(lb)
	d := mb - ma
	half := stats.TQuantile(1-(1-stats.Level)/2, t.DF) * math.Sqrt(va/float64(len(la))+vb/float64(len(lb)))
	return stats.Ratio{Value: math.Exp(d), Low: math.Exp(d - half), High: math.Exp(d + half)}, t, nil
}

// logs are the natural logarithms of xs, or nil when one is not positive.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if x <= 0 {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
}

// meanVar is the mean and the sample variance of xs (2 or more).
func meanVar(xs []float64) (float64, float64) {
	m := mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, ss / float64(len(xs)-1)
}

func failedVerdict(a, b *QuerySide) string {
	switch {
	case a.Failed > 0 && b.Failed > 0:
		return FailedInBoth
	case a.Failed > 0:
		return FailedInA
	case b.Failed > 0:
		return FailedInB
	}
	return ""
}

// The metrics of a query suite run as a whole, in milliseconds as its
// queries' times are shown.
const (
	SuiteTime    = "suite time (ms)"
	SuiteGeomean = "geometric mean of the medians (ms)"
)

// suiteOf compares query suite runs as a whole: the suite's time and the
// geometric mean of its queries' medians, both lower being better, tested
// over the runs with two or more a side. A suite's run is one figure of
// each, with no interval series to test (its intervals count queries of
// every length alike), so one run a side is shown and not tested: the
// queries' own comparison (QueriesOf) tests that case.
func suiteOf(a, b []*result.Result) Report {
	ms := []metric{
		{SuiteTime, true, func(r *result.Result) (float64, bool) { return r.Queries.TotalS * 1000, r.Queries.TotalS > 0 }, nil},
		{SuiteGeomean, true, func(r *result.Result) (float64, bool) { return r.Queries.GeomeanS * 1000, r.Queries.GeomeanS > 0 }, nil},
	}
	var rep Report
	switch {
	case len(a) >= 2 && len(b) >= 2:
		rep.Method = fmt.Sprintf("Welch's t-test over the runs (%d and %d)", len(a), len(b))
	default:
		rep.Method = fmt.Sprintf("%d and %d runs: the suite's figures are not tested (repeat both sides); each query is tested below", len(a), len(b))
	}
	for _, m := range ms {
		xa, xb := values(a, m), values(b, m)
		if len(xa) == 0 || len(xb) == 0 {
			continue
		}
		row := Row{Metric: m.name, A: mean(xa), B: mean(xb), P: math.NaN(), Verdict: Untest}
		row.Ratio = stats.Ratio{Value: row.B / row.A, Low: math.NaN(), High: math.NaN()}
		test(&row, xa, xb, m.lowerBetter)
		rep.Rows = append(rep.Rows, row)
	}
	return rep
}

// diffQueries compares each run after the first with the first, query by
// query, when every run is a query suite's; nil otherwise.
func diffQueries(runs []*result.Result) []QueryComparison {
	if len(runs) < 2 || !QueryResults(runs...) {
		return nil
	}
	out := make([]QueryComparison, 0, len(runs)-1)
	for _, r := range runs[1:] {
		out = append(out, QueriesOf(runs[:1], []*result.Result{r}))
	}
	return out
}

// WriteQueries prints a comparison query by query, in milliseconds, and
// the geometric mean of the ratios.
func WriteQueries(w io.Writer, qc QueryComparison) {
	fmt.Fprintln(w, "\nper query (ms; cold: the first iteration, hot: the fastest of the others, median: of all; B/A: of the geometric mean time tested, lower is better)")
	fmt.Fprintf(w, "test: %s\n", qc.Method)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tA COLD\tA HOT\tA MEDIAN\tB COLD\tB HOT\tB MEDIAN\tB/A\t95% CI\tp\tVERDICT")
	for _, r := range qc.Rows {
		ratio, ci, p := "-", "-", "-"
		if r.Ratio > 0 {
			ratio = strconv.FormatFloat(r.Ratio, 'f', 3, 64)
		}
		if r.CI != nil {
			ci = fmt.Sprintf("[%.3f, %.3f]", r.CI[0], r.CI[1])
		}
		if r.P != nil {
			p = fmt.Sprintf("%.3g", *r.P)
		}
		v := r.Verdict
		if r.Note != "" {
			v += " (" + r.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Label, sideMS(r.A), sideMS(r.B), ratio, ci, p, v)
	}
	tw.Flush()
	var only []string
	for _, v := range []string{OnlyInA, OnlyInB} {
		var labels []string
		for _, r := range qc.Rows {
			if r.Verdict == v {
				labels = append(labels, r.Label)
			}
		}
		if len(labels) > 0 {
			only = append(only, v+": "+strings.Join(labels, ", "))
		}
	}
	if len(only) > 0 {
		fmt.Fprintf(w, "not compared, %s\n", strings.Join(only, "; "))
	}
	if qc.GeomeanOf == 0 {
		fmt.Fprintln(w, "geometric mean of the per-query ratios: none (no query ran and succeeded in both)")
		return
	}
	how := "the same on the geometric mean"
	switch {
	case qc.Geomean >= 2:
		how = fmt.Sprintf("B takes %.3g times as long on the geometric mean", qc.Geomean)
	case qc.Geomean > 1:
		how = fmt.Sprintf("B %.1f%% slower on the geometric mean", (qc.Geomean-1)*100)
	case qc.Geomean < 1:
		how = fmt.Sprintf("B %.1f%% faster on the geometric mean", (1-qc.Geomean)*100)
	}
	fmt.Fprintf(w, "geometric mean of the %d per-query ratios B/A: %.3f (%s; lower is better)%s\n", qc.GeomeanOf, qc.Geomean, how, verdictCounts(qc))
}

// sideMS is a side's cold, hot and median times in milliseconds, tab
// separated, or dashes for a side that lacks the query.
func sideMS(s *QuerySide) string {
	if s == nil {
		return "-\t-\t-"
	}
	ms := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return strconv.FormatFloat(v*1000, 'f', 3, 64)
	}
	return ms(s.ColdS) + "\t" + ms(s.HotS) + "\t" + ms(s.MedianS)
}

// verdictCounts says how many queries had each verdict, most telling
// first.
func verdictCounts(qc QueryComparison) string {
	var parts []string
	for _, v := range []string{Slower, Faster, Same, CannotTell, Untest, FailedInA, FailedInB, FailedInBoth, OnlyInA, OnlyInB} {
		if n := qc.Verdicts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; queries: " + strings.Join(parts, ", ")
}
