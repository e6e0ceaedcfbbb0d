package runner

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/series"
	"github.com/dbmark/dbmark/internal/workload"
)

// An event recorded after the last tick that ended before it (its
// client was off the CPU between reading the clock and recording) and
// a drain that ends at that tick: the last point spans no time. Its event
// joins the point before, counted, and every figure stays finite, so the
// result can be written.
func TestLastPointOfNoTimeJoinsTheOneBefore(t *testing.T) {
	specs := []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}}
	start := time.Now()
	reg := metrics.NewRegistry(specs, start)
	r := &run{start: start, base: start, reg: reg, load: &workload.Load{Ops: specs},
		cfg: Config{Percentiles: []float64{50, 99}}}
	h := reg.NewHandle()
	points := series.New(100, result.MergeIntervals)
	tick := start.Add(time.Second)
	for range 100 {
		h.Record(0, time.Millisecond)
	}
	points.Add(r.point(reg.Tick(tick, false)))
	h.Record(0, time.Millisecond) // ended before the tick, recorded after it
	r.lastPoint(points, tick, start, time.Second)

	ps := points.Points()
	if len(ps) != 1 {
		t.Fatalf("%d points, want the one before with the late event joined: %+v", len(ps), ps)
	}
	if b, err := json.Marshal(ps); err != nil {
		t.Fatalf("the series cannot be written: %v", err)
	} else if p := ps[0]; math.Abs(p.EventsPerS*p.DurationS-101) > 0.01 {
		t.Errorf("the point holds %.3f events over %.6f s, want 101: %s", p.EventsPerS*p.DurationS, p.DurationS, b)
	}
}
