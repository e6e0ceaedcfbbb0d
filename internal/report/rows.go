package report

import (
	"fmt"
	"io"

	"github.com/dbmark/dbmark/internal/result"
)

// writeRows shows what a table-growing workload (iibench) reports: rows,
// sizes, index builds and the series keyed by rows.
func writeRows(w io.Writer, r *result.Rows, ps []float64) {
	fmt.Fprintf(w, "\nRows (%s):\n", r.Table)
	fmt.Fprintf(w, "    inserted:                            %-10d (%.2f per sec.)\n", r.Inserted, r.PerS)
	if r.Deleted > 0 {
		fmt.Fprintf(w, "    deleted:                             %d\n", r.Deleted)
	}
	fmt.Fprintf(w, "    in the table:                        %d\n", r.TableRows)
	if r.Resumed {
		fmt.Fprintf(w, "    resumed from:                        %d\n", r.ResumedFrom)
	}
	fmt.Fprintf(w, "    data / index size (MB):              %s / %s\n", mb(r.DataBytes), mb(r.IndexBytes))
	for _, b := range r.IndexBuilds {
		if b.Error != "" {
			fmt.Fprintf(w, "    index %-30s failed after %.2fs: %s\n", b.Name, b.Seconds, b.Error)
			continue
		}
		fmt.Fprintf(w, "    index %-30s built in %.2fs\n", b.Name, b.Seconds)
	}
	if len(r.Series) == 0 {
		return
	}
	p := rowsPercentile(ps)
	fmt.Fprintf(w, "\n    %12s %8s %12s %12s %10s %10s %10s %10s %10s\n", "rows", "t (s)", "ins/s", "cum ins/s", "q/s",
		"ins p"+trimFloat(p), "q p"+trimFloat(p), "data MB", "index MB")
	for _, pt := range r.Series {
		fmt.Fprintf(w, "    %12d %8.1f %12.1f %12.1f %10.1f %10s %10s %10s %10s\n", pt.Rows, pt.T, pt.InsertsPerS, pt.CumInsertsPerS,
			pt.QueriesPerS, pctOf(pt.InsertLatency, p), pctOf(pt.QueryLatency, p), mb(pt.DataBytes), mb(pt.IndexBytes))
	}
}

// rowsPercentile is the one percentile of ps the rows table and lines show:
// the middle one (p99 of the defaults 50,95,99,99.9).
func rowsPercentile(ps []float64) float64 {
	if len(ps) == 0 {
		return 99
	}
	return ps[len(ps)/2]
}

// RowLine renders one point of the rows series as it is reached, like the
// insert benchmark's line every N rows: interval and cumulative rates, the
// insert and query latency at the summary's percentile of ps, and the sizes.
func RowLine(pt result.RowPoint, ps []float64) string {
	p := rowsPercentile(ps)
	return fmt.Sprintf("[ rows: %d ] t: %.1fs ins/s: %.1f cum ins/s: %.1f q/s: %.1f ins/q p%s (ms): %s/%s table: %d data/index MB: %s/%s",
		pt.Rows, pt.T, pt.InsertsPerS, pt.CumInsertsPerS, pt.QueriesPerS, trimFloat(p),
		pctOf(pt.InsertLatency, p), pctOf(pt.QueryLatency, p), pt.TableRows, mb(pt.DataBytes), mb(pt.IndexBytes))
}

func mb(b int64) string {
	if b < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(b)/1e6)
}

func pctOf(l []result.Percentile, p float64) string {
	for _, q := range l {
		if q.P == p {
			return fmt.Sprintf("%.2f", q.MS)
		}
	}
	return "-"
}
