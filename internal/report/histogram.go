package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// sysbench's histogram has 1024 buckets spaced evenly on a log scale from
// 0.001 ms to 100 s, each shown by the value at its start; Histogram counts
// dbmark's latencies (an HDR histogram of nanoseconds, 0.1% precise, far
// finer) into those same buckets so that the two tools' histograms can be
// read side by side, row for row.
const (
	histBuckets = 1024
	histMinMS   = 0.001
	histMaxMS   = 100_000.0
	histWidth   = 40 // characters of the longest bar
)

// histStep is the log of one bucket's width.
var histStep = math.Log(histMaxMS/histMinMS) / (histBuckets - 1)

// Histogram writes h (latencies in nanoseconds) as sysbench's --histogram
// prints its latency histogram: one row per bucket that holds any event,
// its value in milliseconds, a bar scaled to the fullest bucket, the count.
func Histogram(w io.Writer, h *hdr.Histogram) {
	var counts [histBuckets]int64
	var most int64
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		ms := float64(bar.From+bar.To) / 2 / 1e6
		i := 0
		if ms > histMinMS {
			i = min(int(math.Round(math.Log(ms/histMinMS)/histStep)), histBuckets-1)
		}
		counts[i] += bar.Count
		most = max(most, counts[i])
	}
	fmt.Fprintln(w, "Latency histogram (values are in milliseconds)")
	fmt.Fprintln(w, "       value  ------------- distribution ------------- count")
	for i, n := range counts {
		if n == 0 {
			continue
		}
		stars := int(math.Round(float64(n) * histWidth / float64(most)))
		fmt.Fprintf(w, "%12.3f |%-*s %d\n", histMinMS*math.Exp(float64(i)*histStep), histWidth, strings.Repeat("*", stars), n)
	}
	fmt.Fprintln(w, " ")
}
