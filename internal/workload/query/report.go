package query

import (
	"fmt"
	"io"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
)

// writeQueries writes each query's figures and the suite's.
func writeQueries(w io.Writer, q *result.Queries) {
	fmt.Fprintf(w, "\nQueries (ms; cold: the first iteration, hot: the fastest of the other %d, median: of all", q.Iterations-1)
	if q.Streams > 1 {
		fmt.Fprintf(w, ", over %d streams", q.Streams)
	}
	fmt.Fprintln(w, "):")
	width := len("query")
	for _, r := range q.List {
		width = max(width, len(r.Label))
	}
	fmt.Fprintf(w, "    %-*s %10s %10s %10s %12s  %s\n", width, "query", "cold", "hot", "median", "rows", "errors")
	for _, r := range q.List {
		sec := func(v float64) string {
			if v <= 0 {
				return "-"
			}
			return strconv.FormatFloat(v*1000, 'f', 3, 64)
		}
		errs := ""
		if r.Errors > 0 {
			errs = fmt.Sprintf("%d (%s)", r.Errors, r.Error)
		}
		rows := "-"
		if r.MedianS > 0 {
			rows = strconv.FormatInt(r.Rows, 10)
		}
		fmt.Fprintf(w, "    %-*s %10s %10s %10s %12s  %s\n", width, r.Label, sec(r.ColdS), sec(r.HotS), sec(r.MedianS), rows, errs)
	}
	fmt.Fprintf(w, "suite: %.4f s in all, geometric mean of the medians %.4f s, %d queries", q.TotalS, q.GeomeanS, len(q.List))
	if q.Failed > 0 {
		fmt.Fprintf(w, ", %d failed", q.Failed)
	}
	if q.NotRun > 0 {
		fmt.Fprintf(w, ", %d not run", q.NotRun)
	}
	fmt.Fprintln(w)
	if q.Cold {
		var how string
		switch {
		case q.Restarted && q.Dropped:
			how = "the server restarted and the OS page cache dropped"
		case q.Restarted:
			how = "the server restarted (the OS page cache kept: not root)"
		default:
			how = "the OS page cache dropped"
		}
		fmt.Fprintf(w, "cold runs: %s before each query's first iteration (not counted in the suite's time)\n", how)
	}
}
