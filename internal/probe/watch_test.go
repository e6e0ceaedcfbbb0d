package probe

import (
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

func series(name string, pts ...[2]float64) result.CounterSeries {
	return result.CounterSeries{Name: name, Points: pts}
}

func TestDuringRun(t *testing.T) {
	cpu := series("os.cpu.user", [2]float64{1, 50}, [2]float64{2, 50}, [2]float64{3, 50}, [2]float64{4, 50})
	for _, c := range []struct {
		name   string
		series []result.CounterSeries
		want   []string
	}{
		{"a steady machine", []result.CounterSeries{cpu, series("os.mem.swap_used", [2]float64{1, 1 << 20}, [2]float64{4, 2 << 20})}, nil},
		{"a check that began", []result.CounterSeries{cpu, series("os.raid.md0.sync_pct", [2]float64{3, 10}, [2]float64{4, 11}),
			series("os.raid.md0.sync_left", [2]float64{3, 7200}, [2]float64{4, 7000})},
			[]string{"RAID md0: a sync (check, resync or rebuild) began 3 s into the run (11% done by its end, about 117 min left)"}},
		{"a check that ended", []result.CounterSeries{cpu, series("os.raid.md1.sync_pct", [2]float64{1, 98}, [2]float64{2, 99.9})},
			[]string{"RAID md1: a sync ran until 2 s into the run (98% to 100%)"}},
		{"a check throughout", []result.CounterSeries{cpu, series("os.raid.md0.sync_pct", [2]float64{1, 20}, [2]float64{4, 21})},
			[]string{"RAID md0: a sync ran through the whole run (20% to 21%): disk throughput was lower throughout"}},
		{"swap that grew", []result.CounterSeries{cpu, series("os.mem.swap_used", [2]float64{1, 0}, [2]float64{2, 300 << 20}, [2]float64{3, 100 << 20})},
			[]string{"swap use grew by 300.0 MiB during the run (to 300.0 MiB at 2 s)"}},
		{"throttled CPUs", []result.CounterSeries{cpu, series("os.cpu.throttles", [2]float64{1, 0}, [2]float64{2, 0}, [2]float64{3, 40}, [2]float64{4, 2})},
			[]string{"the CPUs were throttled for heat about 42 times during the run (first by 3 s)"}},
	} {
		got := DuringRun(&result.Counters{IntervalS: 1, Series: c.series})
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d line(s)", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: %q, want it to start %q", c.name, got[i], w)
			}
		}
	}
}
