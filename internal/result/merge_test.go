package result

import "testing"

func TestMergeIntervals(t *testing.T) {
	a := Interval{T: 1, DurationS: 1, EventsPerS: 100, ReadsPerS: 10, ErrorsPerS: 4, LagMeanMS: 2,
		Latency: []Percentile{{P: 50, MS: 1}, {P: 99, MS: 9}},
		Extra:   map[string]float64{"rows": 100, "rows_per_s": 100}}
	b := Interval{T: 4, DurationS: 3, EventsPerS: 300, ReadsPerS: 30, LagMeanMS: 4,
		Latency: []Percentile{{P: 50, MS: 2}, {P: 99, MS: 5}},
		Extra:   map[string]float64{"rows": 1000, "rows_per_s": 300}}
	m, ok := MergeIntervals(a, b)
	if !ok {
		t.Fatal("two measured intervals must merge")
	}
	// 100 + 900 events in 4 s; 10 + 90 reads; 4 errors.
	if m.T != 4 || m.DurationS != 4 || m.EventsPerS != 250 || m.ReadsPerS != 25 || m.ErrorsPerS != 1 {
		t.Errorf("merged rates: %+v", m)
	}
	// Lag is a mean per event: (100*2 + 900*4) / 1000.
	if m.LagMeanMS != 3.8 {
		t.Errorf("lag %v, want 3.8", m.LagMeanMS)
	}
	if len(m.Latency) != 2 || m.Latency[0].MS != 2 || m.Latency[1].MS != 9 {
		t.Errorf("latency %+v: each percentile must be the higher of the two", m.Latency)
	}
	if a.Latency[0].MS != 1 {
		t.Error("merging changed the first interval's percentiles")
	}
	if m.Extra["rows"] != 1000 || m.Extra["rows_per_s"] != 250 {
		t.Errorf("extra %v: a level keeps the later value, a rate its mean over the time", m.Extra)
	}
	if _, ok := MergeIntervals(Interval{Warmup: true, DurationS: 1}, b); ok {
		t.Error("a warm-up interval must not merge with a measured one")
	}
}

// Each server's events/s merge as the run's do: weighted by time.
func TestMergeIntervalsByServer(t *testing.T) {
	a := Interval{T: 1, DurationS: 1, EventsPerS: 300, ServersEventsPerS: []float64{100, 200}}
	b := Interval{T: 4, DurationS: 3, EventsPerS: 700, ServersEventsPerS: []float64{300, 400}}
	m, _ := MergeIntervals(a, b)
	if len(m.ServersEventsPerS) != 2 || m.ServersEventsPerS[0] != 250 || m.ServersEventsPerS[1] != 350 || m.EventsPerS != 600 {
		t.Errorf("merged %v (%v), want [250 350] (600)", m.ServersEventsPerS, m.EventsPerS)
	}
	if m, _ := MergeIntervals(Interval{DurationS: 1}, Interval{DurationS: 1}); m.ServersEventsPerS != nil {
		t.Errorf("a run on one server's points merge with servers %v", m.ServersEventsPerS)
	}
}
