package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/dbmark/dbmark/internal/result"
)

// SeriesCSV writes a result's interval series, one row per interval.
func SeriesCSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	head := []string{"t_s", "duration_s", "warmup", "tps", "reads_per_s", "writes_per_s", "other_per_s", "errors_per_s", "reconnects_per_s", "retries_per_s"}
	for _, p := range r.Run.Percentiles {
		head = append(head, "p"+trimFloat(p)+"_ms")
	}
	head = append(head, "lag_mean_ms")
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, iv := range r.Series {
		row := []string{f(iv.T), f(iv.DurationS), strconv.FormatBool(iv.Warmup), f(iv.EventsPerS), f(iv.ReadsPerS),
			f(iv.WritesPerS), f(iv.OtherPerS), f(iv.ErrorsPerS), f(iv.ReconnPerS), f(iv.RetriesPerS)}
		for _, p := range r.Run.Percentiles {
			v := ""
			for _, q := range iv.Latency {
				if q.P == p {
					v = f(q.MS)
				}
			}
			row = append(row, v)
		}
		row = append(row, f(iv.LagMeanMS))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
