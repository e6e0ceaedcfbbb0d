package merge_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/merge"
	"github.com/dbmark/dbmark/internal/result"
)

// BenchmarkMerge64HourLongResults merges 64 hosts' one-hour results, each
// with 3600 one-second intervals, 40 counters sampled every second and a
// histogram of 100,000 events (issue: under 5 s and 500 MiB).
func BenchmarkMerge64HourLongResults(b *testing.B) {
	rs := make([]*result.Result, 64)
	for i := range rs {
		r, _ := host(b, fmt.Sprintf("id-%d", i), 4, t0.Add(time.Duration(i)*time.Millisecond), 100_000, 1e6)
		r.Summary.DurationS = 3600
		r.Series = r.Series[:0]
		for k := 0; k <= 3600; k++ {
			r.Series = append(r.Series, result.Interval{T: float64(k + 1), DurationS: 1, Warmup: k == 0, EventsPerS: 100,
				Latency: []result.Percentile{{P: 50, MS: 1}, {P: 99, MS: 3}}, Extra: map[string]float64{"x_per_s": 1}})
		}
		r.Counters.Series = nil
		for c := range 40 {
			pts := make([][2]float64, 3600)
			for k := range pts {
				pts[k] = [2]float64{float64(k + 1), float64(c)}
			}
			r.Counters.Series = append(r.Counters.Series, result.CounterSeries{Name: fmt.Sprintf("os.c%d", c), Points: pts})
		}
		rs[i] = r
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := merge.Merge(rs); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
}
