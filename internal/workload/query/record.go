package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// finish puts the suite's runs and figures in the result, makes its total
// time the headline, and fails a run in which a query failed.
func (r *run) finish(_ context.Context, res *result.Result) {
	qr := &result.Queries{Iterations: r.opt.Iterations, Streams: r.opt.Streams, Cold: r.opt.Cold,
		Restarted: r.opt.Cold && len(r.opt.RestartCmd) == 1, Dropped: r.dropped}
	var first, last time.Time
	for i, q := range r.qs {
		runs := r.runs[i]
		for j := range runs {
			if runs[j].Kind == result.QueryNotRun {
				continue
			}
			s := r.starts[i][j]
			end := s.Add(time.Duration(runs[j].S * float64(time.Second)))
			if first.IsZero() || s.Before(first) {
				first = s
			}
			if end.After(last) {
				last = end
			}
			runs[j].T = s.Sub(res.StartedAt).Seconds()
		}
		one := figures(q, runs)
		if i < len(r.plans) {
			one.Plan = r.plans[i]
		}
		qr.List = append(qr.List, one)
	}
	if !first.IsZero() {
		total := last.Sub(first)
		for _, d := range r.spent {
			total -= d
		}
		qr.TotalS = max(total, 0).Seconds()
	}
	qr.GeomeanS = geomean(qr.List)
	var failed []string
	for _, q := range qr.List {
		switch {
		case q.Errors > 0:
			qr.Failed++
			failed = append(failed, q.Label+" ("+q.Error+")")
		case !anyRan(q.Runs):
			qr.NotRun++
		}
	}
	res.Queries = qr
	res.Summary.Headline = qr.TotalS
	res.Summary.HeadlineUnit = Headline
	if res.Status != result.StatusOK && res.Status != result.StatusDegraded {
		return // the run's own failure, or an interruption, says it
	}
	switch {
	case qr.Failed > 0:
		res.Status = result.StatusFailed
		res.Error = fmt.Sprintf("%d of %d queries failed: %s", qr.Failed, len(qr.List), listed(failed, 3))
	case qr.NotRun > 0 || incomplete(qr.List):
		res.Status = result.StatusFailed
		res.Error = "the run ended before every stream had run every query (a --time limit?): the suite's time is not the whole suite's"
	}
}

func anyRan(runs []result.QueryRun) bool {
	return slices.ContainsFunc(runs, func(r result.QueryRun) bool { return r.Kind != result.QueryNotRun })
}

// incomplete says whether some run of some query never ran.
func incomplete(qs []result.QueryResult) bool {
	for _, q := range qs {
		if slices.ContainsFunc(q.Runs, func(r result.QueryRun) bool { return r.Kind == result.QueryNotRun }) {
			return true
		}
	}
	return false
}

// listed joins the first n of xs, saying how many more there are.
func listed(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(xs[:n], "; "), len(xs)-n)
}

// figures sums up one query's runs: the cold time is the median of each
// stream's first iteration, the hot time the fastest of the others, the
// median that of every run; only runs that succeeded count.
func figures(q Query, runs []result.QueryRun) result.QueryResult {
	out := result.QueryResult{Label: q.Label, SQL: q.SQL, Runs: runs}
	var cold, hot, all []float64
	for _, rn := range runs {
		switch {
		case rn.Kind == result.QueryNotRun:
			continue
		case !rn.OK():
			if out.Errors == 0 {
				out.Error = rn.Kind + ": " + rn.Error
			}
			out.Errors++
			continue
		}
		out.Rows = rn.Rows
		all = append(all, rn.S)
		if rn.Iteration == 1 {
			cold = append(cold, rn.S)
		} else {
			hot = append(hot, rn.S)
		}
	}
	out.ColdS = median(cold)
	if len(hot) > 0 {
		out.HotS = slices.Min(hot)
	}
	out.MedianS = median(all)
	return out
}

// median of xs (0 for none); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// geomean is the geometric mean of the queries' median times, over those
// with a time.
func geomean(qs []result.QueryResult) float64 {
	var sum float64
	var n int
	for _, q := range qs {
		if q.MedianS > 0 {
			sum += math.Log(q.MedianS)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}
