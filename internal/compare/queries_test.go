package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/stats"
)

// suite builds a query suite's result: each query's runs in seconds, one
// stream, the first of each its cold iteration. A negative time is a run
// that failed with a wrong answer.
func suite(total float64, queries ...any) *result.Result {
	qs := &result.Queries{Streams: 1, TotalS: total}
	for i := 0; i < len(queries); i += 2 {
		label, times := queries[i].(string), queries[i+1].([]float64)
		qs.Iterations = len(times)
		q := result.QueryResult{Label: label, SQL: "SELECT " + label}
		var ok, hot []float64
		for j, s := range times {
			rn := result.QueryRun{Iteration: j + 1, S: s, Rows: 1}
			if s < 0 {
				rn.S, rn.Kind, rn.Error = 0, result.QueryWrongAnswer, "0 rows, want 1"
				if q.Errors == 0 {
					q.Error = rn.Kind + ": " + rn.Error
				}
				q.Errors++
			} else {
				ok = append(ok, s)
				if j == 0 {
					q.ColdS = s
				} else {
					hot = append(hot, s)
				}
			}
			q.Runs = append(q.Runs, rn)
		}
		if len(hot) > 0 {
			q.HotS = slices.Min(hot)
		}
		q.MedianS = median(ok)
		qs.List = append(qs.List, q)
	}
	var logs float64
	for _, q := range qs.List {
		logs += math.Log(q.MedianS)
	}
	qs.GeomeanS = math.Exp(logs / float64(len(qs.List)))
	return &result.Result{
		Workload: result.Workload{Name: "query", Headline: "suite seconds", Better: "lower", Options: map[string]string{}},
		Target:   result.Target{Kind: "sqlite", Engine: "SQLite", Version: "3.46"},
		Summary:  result.Summary{Headline: total, HeadlineUnit: "suite seconds", EventsPerS: 100},
		Queries:  qs,
	}
}

func queryRow(t *testing.T, qc QueryComparison, label string) QueryRow {
	t.Helper()
	for _, r := range qc.Rows {
		if r.Label == label {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", label, qc.Rows)
	return QueryRow{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestQueriesOfOneRunASide(t *testing.T) {
	// Cold runs (the first of each) far off the warm ones: they are shown,
	// not tested, and not in the ratio. B's warm times are A's times 2, 1
	// (in another order) and 1/4, so the ratios of geometric means are
	// exact.
	a := suite(10,
		"twice", []float64{9, 1.0, 1.1, 0.9, 1.0},
		"same", []float64{9, 1.0, 1.2, 0.8, 1.0},
		"quarter", []float64{9, 2.0, 2.2, 1.8, 2.0},
		"gone", []float64{9, 1, 1, 1, 1},
		"broken", []float64{9, 1.0, 1.1, 0.9, 1.0},
	)
	b := suite(12,
		"twice", []float64{1, 2.0, 2.2, 1.8, 2.0},
		"same", []float64{1, 1.2, 1.0, 1.0, 0.8},
		"quarter", []float64{1, 0.5, 0.55, 0.45, 0.5},
		"broken", []float64{1, 1.0, -1, 0.9, 1.0},
		"new", []float64{1, 1, 1, 1, 1},
	)
	qc := QueriesOf([]*result.Result{a}, []*result.Result{b})
	if !strings.Contains(qc.Method, "warm iterations") {
		t.Errorf("method %q", qc.Method)
	}
	twice := queryRow(t, qc, "twice")
	if twice.Verdict != Slower || !near(twice.Ratio, 2) || twice.CI == nil || !(twice.CI[0] > 1 && twice.CI[1] > 2) || twice.P == nil || *twice.P >= 0.05 {
		t.Errorf("twice as long: %+v (ci %v)", twice, twice.CI)
	}
	if twice.A.ColdS != 9 || twice.A.HotS != 0.9 || twice.A.MedianS != 1 || twice.A.N != 4 || twice.B.MedianS != 2 || !near(twice.A.GeomeanS, math.Pow(1.1*0.9, 0.25)) {
		t.Errorf("twice's figures: A %+v, B %+v", *twice.A, *twice.B)
	}
	if r := queryRow(t, qc, "same"); r.Verdict != Same || !near(r.Ratio, 1) || !(r.CI[0] < 1 && r.CI[1] > 1) {
		t.Errorf("noise: %+v", r)
	}
	if r := queryRow(t, qc, "quarter"); r.Verdict != Faster || !near(r.Ratio, 0.25) {
		t.Errorf("a quarter of the time: %+v", r)
	}
	if r := queryRow(t, qc, "gone"); r.Verdict != OnlyInA || r.B != nil || r.Ratio != 0 {
		t.Errorf("in A only: %+v", r)
	}
	if r := queryRow(t, qc, "new"); r.Verdict != OnlyInB || r.A != nil {
		t.Errorf("in B only: %+v", r)
	}
	if r := queryRow(t, qc, "broken"); r.Verdict != FailedInB || !strings.Contains(r.Note, "B: 1 failed (wrong answer: 0 rows, want 1)") {
		t.Errorf("a wrong answer in B: %+v", r)
	}
	// The geometric mean of the ratios of the queries timed on both sides,
	// by hand: (2 × 1 × 0.25)^(1/3) = 0.5^(1/3) = 0.7937005259840998.
	if qc.GeomeanOf != 3 || !near(qc.Geomean, 0.7937005259840998) {
		t.Errorf("geometric mean %v of %d ratios, want 0.7937 of 3", qc.Geomean, qc.GeomeanOf)
	}
	want := map[string]int{Slower: 1, Same: 1, Faster: 1, OnlyInA: 1, OnlyInB: 1, FailedInB: 1}
	for v, n := range want {
		if qc.Verdicts[v] != n {
			t.Errorf("%d %q, want %d: %v", qc.Verdicts[v], v, n, qc.Verdicts)
		}
	}
	var buf bytes.Buffer
	WriteQueries(&buf, qc)
	out := buf.String()
	for _, want := range []string{
		"A COLD", "B MEDIAN", "9000.000", // A's cold run of twice, in ms
		"not compared, only in A: gone; only in B: new",
		"geometric mean of the 3 per-query ratios B/A: 0.794 (B 20.6% faster on the geometric mean; lower is better); queries: 1 slower, 1 faster, 1 no significant difference",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printed comparison lacks %q:\n%s", want, out)
		}
	}
}

// With two warm iterations or fewer a side there is nothing to test; with
// one iteration the first ones are the samples.
func TestQueriesOfTooFew(t *testing.T) {
	a, b := suite(1, "q", []float64{5, 1}), suite(1, "q", []float64{5, 2})
	r := queryRow(t, QueriesOf([]*result.Result{a}, []*result.Result{b}), "q")
	if r.Verdict != CannotTell || !strings.Contains(r.Note, "1 and 1 samples") || r.CI != nil || r.P != nil || !near(r.Ratio, 2) {
		t.Errorf("one warm iteration a side: %+v", r)
	}
	a, b = suite(1, "q", []float64{1}), suite(1, "q", []float64{3})
	qc := QueriesOf([]*result.Result{a, a}, []*result.Result{b})
	if r := queryRow(t, qc, "q"); r.Verdict != CannotTell || !near(r.Ratio, 3) || !strings.Contains(qc.Method, "first iterations") {
		t.Errorf("one iteration: %+v (%s)", r, qc.Method)
	}
}

// With runs repeated on both sides the runs are the samples: each one's
// mean time of the query.
func TestQueriesOfOverRuns(t *testing.T) {
	var a, b []*result.Result
	for _, d := range []float64{0, 0.1, -0.1} {
		a = append(a, suite(10+d, "q", []float64{5, 1 + d, 1 + d}))
		b = append(b, suite(8+d, "q", []float64{5, 3 * (1 + d), 3 * (1 + d)}))
	}
	qc := QueriesOf(a, b)
	r := queryRow(t, qc, "q")
	if !strings.Contains(qc.Method, "over the runs (3 and 3)") || r.A.N != 3 || r.Verdict != Slower || !near(r.Ratio, 3) {
		t.Errorf("over runs: %+v (%s)", r, qc.Method)
	}
	// The suite as a whole: less time is faster, never worse.
	rep := Of(a, b)
	total := row(t, rep, SuiteTime)
	if total.Verdict != Faster || !near(total.A, 10000) || !near(total.B, 8000) {
		t.Errorf("suite time 10 s against 8 s: %+v", total)
	}
	for _, r := range rep.Rows {
		if strings.Contains(r.Metric, "latency") || strings.Contains(r.Metric, "/s") {
			t.Errorf("a query suite compared on %q, a figure over queries of every length", r.Metric)
		}
	}
	if r := row(t, Of(a[:1], b[:1]), SuiteTime); r.Verdict != Untest {
		t.Errorf("one suite run a side: %+v", r)
	}
}

// Diff, which the site's comparison shares, compares every query suite
// run after the first with the first.
func TestDiffComparesQueries(t *testing.T) {
	a, b, c := suite(1, "q", []float64{1, 1, 1.1}), suite(1, "q", []float64{1, 2, 2.1}), suite(1, "q", []float64{1, 3, 3.3})
	d := Diff(a, b, c)
	if len(d.Queries) != 2 || !near(d.Queries[0].Rows[0].Ratio, math.Sqrt(2*2.1/1.1)) || !near(d.Queries[1].Rows[0].Ratio, math.Sqrt(3*3.3/1.1)) {
		t.Fatalf("queries of three runs: %+v", d.Queries)
	}
	// The site sends it as JSON: no NaN where a figure is missing.
	b.Queries.List = append(b.Queries.List, result.QueryResult{Label: "new", Runs: []result.QueryRun{{Iteration: 1, S: 1}}, ColdS: 1, MedianS: 1})
	js, err := json.Marshal(Diff(a, b).Queries)
	if err != nil || !strings.Contains(string(js), `"verdict":"only in B"`) || !strings.Contains(string(js), `"ci":[`) {
		t.Errorf("as JSON: %s, %v", js, err)
	}
	if d := Diff(a, run(1, 1)); d.Queries != nil {
		t.Errorf("a query suite against a plain run: %+v", d.Queries)
	}
}

// One run held up by the machine does not hide a hundredfold slowdown,
// as it would in a test of the times themselves.
func TestQueriesOfOutlier(t *testing.T) {
	wa, wb := []float64{1, 1.1, 0.9, 1, 1}, []float64{100, 110, 90, 100, 3000}
	if raw, err := stats.Welch(wa, wb); err != nil || raw.Significant() {
		t.Fatalf("the times themselves: %+v, %v; the case shows nothing", raw, err)
	}
	a, b := suite(1, "q", append([]float64{1}, wa...)), suite(1, "q", append([]float64{1}, wb...))
	r := queryRow(t, QueriesOf([]*result.Result{a}, []*result.Result{b}), "q")
	want := math.Pow(100*110*90*100*3000/(1.1*0.9), 0.2)
	if r.Verdict != Slower || !near(r.Ratio, want) || !(r.CI[0] > 10) {
		t.Errorf("a hundredfold slower with one outlier: %+v (ci %v), want ratio %g", r, r.CI, want)
	}
}
