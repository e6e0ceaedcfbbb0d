package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
)

// CSVSeries is one table of a result that exports as its own CSV file:
// every figure the report draws is in one of them.
type CSVSeries struct {
	Name  string // what --series takes and the file name's suffix
	About string
	Has   func(*result.Result) bool
	Write func(io.Writer, *result.Result) error
}

// RunSeries lists a run's CSV tables, the default first.
func RunSeries() []CSVSeries {
	return []CSVSeries{
		{Name: "intervals", About: "one row per interval: rates, errors, latency percentiles, the workload's own figures",
			Has: func(*result.Result) bool { return true }, Write: SeriesCSV},
		{Name: "rows", About: "one row per row mark (iibench): insert and query rates and latencies, table size, against rows",
			Has: func(r *result.Result) bool { return r.Rows != nil && len(r.Rows.Series) > 0 }, Write: RowsCSV},
		{Name: "counters", About: "one row per sample time, one column per OS or engine counter (--sample-interval)",
			Has: func(r *result.Result) bool { return r.Counters != nil && len(r.Counters.Series) > 0 }, Write: CountersCSV},
		{Name: "queries", About: "one row per iteration of each stream, one column per query: its seconds (a query suite)",
			Has: func(r *result.Result) bool { return r.Queries != nil && len(r.Queries.List) > 0 }, Write: QueriesCSV},
		{Name: "ops", About: "one row per operation (each statement of a tpcb script, each query of an OLTP test...): count, rate, latency",
			Has: func(r *result.Result) bool { return len(r.Summary.Ops) > 0 }, Write: OpsCSV},
	}
}

// OpsCSV writes the run's operations, one row each: its name, kind, count,
// rate, MiB/s, mean latency and percentiles (empty where it was counted but
// not timed), and its text where the workload recorded it.
func OpsCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	head := []string{"op", "kind", "count", "per_s", "mib_per_s", "mean_ms"}
	for _, p := range r.Run.Percentiles {
		head = append(head, "p"+trimFloat(p)+"_ms")
	}
	if err := cw.Write(append(head, "text")); err != nil {
		return err
	}
	for _, op := range r.Summary.Ops {
		row := []string{op.Name, op.Kind, strconv.FormatInt(op.Count, 10), fmtFloat(op.PerS), fmtFloat(op.MiBPerS)}
		if op.Latency != nil {
			row = append(row, fmtFloat(op.Latency.MeanMS))
			row = append(row, percentileCells(op.Latency.Percentiles, r.Run.Percentiles)...)
		} else {
			row = append(row, make([]string, 1+len(r.Run.Percentiles))...)
		}
		if err := cw.Write(append(row, r.Summary.Extra[result.OpTextKey(op.Name)])); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// SeriesCSV writes a result's interval series, one row per interval: the
// rates, the percentiles, the bandwidth of file I/O when it moved bytes, and
// the workload's own figures (Interval.Extra), one column each.
func SeriesCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	head := []string{"t_s", "duration_s", "warmup", "tps", "reads_per_s", "writes_per_s", "other_per_s", "errors_per_s", "reconnects_per_s", "retries_per_s"}
	for _, p := range r.Run.Percentiles {
		head = append(head, "p"+trimFloat(p)+"_ms")
	}
	head = append(head, "lag_mean_ms")
	mib := slices.ContainsFunc(r.Series, func(iv result.Interval) bool { return iv.ReadMiBPerS != 0 || iv.WriteMiBPerS != 0 })
	if mib {
		head = append(head, "read_mib_per_s", "write_mib_per_s")
	}
	var extras []string
	for _, iv := range r.Series {
		for k := range iv.Extra {
			if !slices.Contains(extras, k) {
				extras = append(extras, k)
			}
		}
	}
	sort.Strings(extras)
	head = append(head, extras...)
	if err := cw.Write(head); err != nil {
		return err
	}
	f := fmtFloat
	for _, iv := range r.Series {
		row := []string{f(iv.T), f(iv.DurationS), strconv.FormatBool(iv.Warmup), f(iv.EventsPerS), f(iv.ReadsPerS),
			f(iv.WritesPerS), f(iv.OtherPerS), f(iv.ErrorsPerS), f(iv.ReconnPerS), f(iv.RetriesPerS)}
		row = append(row, percentileCells(iv.Latency, r.Run.Percentiles)...)
		row = append(row, f(iv.LagMeanMS))
		if mib {
			row = append(row, f(iv.ReadMiBPerS), f(iv.WriteMiBPerS))
		}
		for _, k := range extras {
			v, ok := iv.Extra[k]
			row = append(row, cellIf(v, ok))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// percentileCells are the values of ls at each of ps, empty where absent.
func percentileCells(ls []result.Percentile, ps []float64) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		for _, q := range ls {
			if q.P == p {
				out[i] = fmtFloat(q.MS)
			}
		}
	}
	return out
}

func cellIf(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return fmtFloat(v)
}

// RowsCSV writes the series keyed by rows (iibench's row marks), one row
// per mark. A size the engine does not report (-1) is left empty.
func RowsCSV(w io.Writer, r *result.Result) error {
	if r.Rows == nil {
		return fmt.Errorf("the result has no rows series")
	}
	cw := csv.NewWriter(w)
	head := []string{"rows", "t_s", "table_rows", "inserts_per_s", "cum_inserts_per_s", "queries_per_s", "cum_queries_per_s"}
	for _, what := range []string{"insert", "query"} {
		for _, p := range r.Run.Percentiles {
			head = append(head, what+"_p"+trimFloat(p)+"_ms")
		}
	}
	head = append(head, "data_bytes", "index_bytes")
	if err := cw.Write(head); err != nil {
		return err
	}
	size := func(n int64) string { return cellIf(float64(n), n >= 0) }
	for _, pt := range r.Rows.Series {
		row := []string{strconv.FormatInt(pt.Rows, 10), fmtFloat(pt.T), strconv.FormatInt(pt.TableRows, 10),
			fmtFloat(pt.InsertsPerS), fmtFloat(pt.CumInsertsPerS), fmtFloat(pt.QueriesPerS), fmtFloat(pt.CumQueriesPerS)}
		row = append(row, percentileCells(pt.InsertLatency, r.Run.Percentiles)...)
		row = append(row, percentileCells(pt.QueryLatency, r.Run.Percentiles)...)
		row = append(row, size(pt.DataBytes), size(pt.IndexBytes))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CountersCSV writes the sampled counters wide: one row per sample time,
// one column per counter named with its unit ("os.cpu.iowait (%)"). The
// OS and engine samplers keep their own times: a counter not sampled at a
// row's time has an empty cell there. Times are kept to the millisecond,
// so one counter may have two points at one time (samples taken an
// instant apart, results merged from hosts): the second goes on a row of
// its own with the same time, so that no point is lost.
func CountersCSV(w io.Writer, r *result.Result) error {
	if r.Counters == nil {
		return fmt.Errorf("the result has no counters")
	}
	cw := csv.NewWriter(w)
	head := []string{"t_s"}
	at := map[float64][][]string{}
	var times []float64
	n := len(r.Counters.Series)
	for i, c := range r.Counters.Series {
		name := c.Name
		if c.Unit != "" {
			name += " (" + c.Unit + ")"
		}
		head = append(head, name)
		taken := map[float64]int{} // rows of a time this counter has filled
		for _, p := range c.Points {
			rows := at[p[0]]
			if len(rows) == 0 {
				times = append(times, p[0])
			}
			k := taken[p[0]]
			if k == len(rows) {
				rows = append(rows, make([]string, n))
				at[p[0]] = rows
			}
			rows[k][i] = fmtFloat(p[1])
			taken[p[0]] = k + 1
		}
	}
	sort.Float64s(times)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, t := range times {
		for _, row := range at[t] {
			if err := cw.Write(append([]string{fmtFloat(t)}, row...)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
