package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
)

// QueriesCSV writes a query suite's runs as Shard-Query's pivot_results
// did: one row per iteration of each stream, one column per query (by
// its label), each cell the run's seconds, empty for a run that failed
// or never ran.
func QueriesCSV(w io.Writer, r *result.Result) error {
	q := r.Queries
	cw := csv.NewWriter(w)
	head := []string{"stream", "iteration"}
	for _, one := range q.List {
		head = append(head, one.Label)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	row := make([]string, len(head))
	for st := 0; st < q.Streams; st++ {
		for it := 1; it <= q.Iterations; it++ {
			row[0], row[1] = strconv.Itoa(st), strconv.Itoa(it)
			for i, one := range q.List {
				row[2+i] = ""
				if run, ok := runOf(one.Runs, st, it, q.Iterations); ok && run.OK() {
					row[2+i] = fmtFloat(run.S)
				}
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// runOf finds the run of stream st's iteration it: in its place in the
// order runs are kept, or else anywhere.
func runOf(runs []result.QueryRun, st, it, iterations int) (result.QueryRun, bool) {
	if i := st*iterations + it - 1; i < len(runs) && runs[i].Stream == st && runs[i].Iteration == it {
		return runs[i], true
	}
	for _, r := range runs {
		if r.Stream == st && r.Iteration == it {
			return r, true
		}
	}
	return result.QueryRun{}, false
}

// DefaultSeries is the CSV table a result exports without --series: a
// query suite's pivot of its runs, else the interval series.
func DefaultSeries(r *result.Result) string {
	if r.Queries != nil && len(r.Queries.List) > 0 {
		return "queries"
	}
	return "intervals"
}
