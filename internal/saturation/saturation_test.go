package saturation

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

func series(name, unit string, f func(t float64) float64) result.CounterSeries {
	s := result.CounterSeries{Name: name, Unit: unit, Kind: result.CounterGauge}
	for t := 1.0; t <= 20; t++ {
		s.Points = append(s.Points, [2]float64{t, f(t)})
	}
	return s
}

func runWith(ss ...result.CounterSeries) *result.Result {
	r := &result.Result{Environment: &result.Environment{MemoryB: 8 << 30}, Counters: &result.Counters{IntervalS: 1, Series: ss}}
	for t := 1.0; t <= 20; t++ {
		r.Series = append(r.Series, result.Interval{T: t, DurationS: 1, Warmup: t <= 2})
	}
	return r
}

func TestFind(t *testing.T) {
	flat := func(v float64) func(float64) float64 { return func(float64) float64 { return v } }
	for _, c := range []struct {
		name string
		r    *result.Result
		want []string // resources, most of the run first
	}{
		{"CPU-bound", runWith(series("os.cpu.user", "%", flat(80)), series("os.cpu.system", "%", flat(19)), series("os.cpu.iowait", "%", flat(0)),
			series("os.disk.vda.util", "%", flat(3))), []string{"cpu"}},
		{"I/O-bound", runWith(series("os.cpu.user", "%", flat(10)), series("os.cpu.system", "%", flat(10)), series("os.cpu.iowait", "%", flat(45)),
			series("os.disk.vda.util", "%", func(t float64) float64 {
				if t > 10 {
					return 100
				}
				return 50
			}), series("os.disk.vda.await", "ms", flat(12))), []string{"iowait", "disk vda"}},
		{"idle", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)), series("os.disk.vda.util", "%", flat(10)),
			series("os.mem.used", "bytes", flat(2<<30))), nil},
		{"swapping", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)),
			series("os.mem.swap_used", "bytes", func(t float64) float64 { return t * (1 << 20) })), []string{"memory"}},
		{"lock waits", runWith(series("os.cpu.user", "%", flat(20)), series("os.cpu.system", "%", flat(5)),
			series("db.row_lock_waits", "/s", flat(12)), series("db.blocks_hit", "pages/s", flat(1e5))), []string{"engine"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Find(c.r)
			var res []string
			for _, l := range got {
				res = append(res, l.Resource)
			}
			if strings.Join(res, ",") != strings.Join(c.want, ",") {
				t.Fatalf("%v, want %v: %s", res, c.want, Line(got))
			}
		})
	}
	// The I/O-bound run's disk: half the measured samples at 100%, and its
	// latency said.
	got := Find(runWith(series("os.disk.vda.util", "%", func(t float64) float64 {
		if t > 11 {
			return 100
		}
		return 50
	}), series("os.disk.vda.await", "ms", func(float64) float64 { return 12 })))
	if len(got) != 1 || got[0].Share != 0.5 || !strings.Contains(Line(got), "disk vda busy (75% utilised on average, 12.0 ms a request) 50% of the run") {
		t.Errorf("%+v: %s", got, Line(got))
	}
	if l := Line(nil); !strings.HasPrefix(l, "no sampled resource was at its limit") {
		t.Errorf("nothing saturated says %q", l)
	}
	if Find(&result.Result{}) != nil {
		t.Error("a run without counters has a verdict")
	}
}
