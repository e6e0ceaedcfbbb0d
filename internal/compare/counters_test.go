package compare

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// run is a run of headline tps whose counters hold each value in vals
// (by name, a rate per second) at one-second samples, with a little
// noise, after a one-second warm-up sampled at ten times the rate.
func counterRun(tps float64, vals map[string]float64) *result.Result {
	r := &result.Result{Run: result.RunOptions{WarmupS: 1}, Counters: &result.Counters{IntervalS: 1}}
	r.Summary.Headline = tps
	for name, v := range vals {
		s := result.CounterSeries{Name: name, Unit: "/s", Kind: result.CounterRate}
		s.Points = append(s.Points, [2]float64{1, v * 10}) // the warm-up's: left out
		for i := range 12 {
			noise := 1 + 0.04*math.Sin(float64(i)*1.7)
			s.Points = append(s.Points, [2]float64{float64(i + 2), v * noise})
		}
		r.Counters.Series = append(r.Counters.Series, s)
	}
	return r
}

func TestCountersThatMoved(t *testing.T) {
	a := counterRun(100, map[string]float64{"db.commits": 100, "db.wal_syncs": 100, "os.cpu.user": 50, "db.checkpoints": 0, "db.rows_read": 400})
	b := counterRun(200, map[string]float64{"db.commits": 200, "db.wal_syncs": 5, "os.cpu.user": 51, "db.checkpoints": 3, "db.rows_read": 400})
	m := Counters([]*result.Result{a}, []*result.Result{b}, 0)
	if m == nil || m.Compared != 5 || m.Throughput != 2 {
		t.Fatalf("%+v", m)
	}
	top := map[string]CounterMove{}
	for _, c := range m.Top {
		top[c.Name] = c
	}
	if c, ok := top["db.wal_syncs"]; !ok || c.A != 100 && math.Abs(c.A-100) > 4 || c.B > 6 {
		t.Errorf("the WAL syncs' fall is not found: %+v", m.Top)
	}
	if _, ok := top["db.checkpoints"]; !ok {
		t.Errorf("a counter that rose from zero is not found: %+v", m.Top)
	}
	if _, ok := top["os.cpu.user"]; ok {
		t.Errorf("a 2%% change within the noise is called a move: %+v", m.Top)
	}
	// Reads per second stayed where they were: no move, whatever the
	// throughput did.
	if _, ok := top["db.rows_read"]; ok {
		t.Errorf("a rate that stayed is called a move: %+v", m.Top)
	}
	if len(m.WithThroughput) != 1 || m.WithThroughput[0].Name != "db.commits" {
		t.Errorf("commits doubled with the throughput and should be named apart: %+v", m.WithThroughput)
	}
	if one := Counters([]*result.Result{a}, []*result.Result{b}, 1); len(one.Top) != 1 || one.Top[0].Effect < m.Top[len(m.Top)-1].Effect {
		t.Errorf("top 1: %+v", one.Top)
	}
	// The same throughput on both sides: nothing follows it.
	c := counterRun(200, map[string]float64{"db.commits": 130})
	if m := Counters([]*result.Result{b}, []*result.Result{c}, 0); len(m.WithThroughput) != 0 || len(m.Top) != 1 {
		t.Errorf("with the throughput unchanged, a rate that moved is a move: %+v", m)
	}
	// Two runs a side: each run's median, then the sides' medians.
	a2 := counterRun(110, map[string]float64{"db.wal_syncs": 90, "os.cpu.user": 49})
	b2 := counterRun(190, map[string]float64{"db.wal_syncs": 6, "os.cpu.user": 50})
	m = Counters([]*result.Result{a, a2}, []*result.Result{b, b2}, 0)
	i := slices.IndexFunc(m.Top, func(c CounterMove) bool { return c.Name == "db.wal_syncs" })
	if i < 0 || m.Top[i].A < 90 || m.Top[i].A > 100 || m.Top[i].B > 6 || math.Abs(m.Throughput-390.0/210) > 1e-9 {
		t.Errorf("two runs a side: %+v", m)
	}
	// A side of no throughput has no ratio, and the comparison still
	// encodes as JSON (the site's API answers with it).
	z := counterRun(0, map[string]float64{"db.wal_syncs": 0})
	m = Counters([]*result.Result{z}, []*result.Result{b}, 0)
	if _, err := json.Marshal(m); err != nil || m.Throughput != 0 || m.ThroughputText() != "-" {
		t.Errorf("from no throughput: ratio %v, %q, %v", m.Throughput, m.ThroughputText(), err)
	}
	if i := slices.IndexFunc(m.Top, func(c CounterMove) bool { return c.Name == "db.wal_syncs" }); i < 0 || m.Top[i].RatioText() != "from 0" {
		t.Errorf("a rate that rose from 0: %+v", m.Top)
	}
	if Counters([]*result.Result{a}, []*result.Result{{}}, 0) != nil {
		t.Error("a side without counters gives a comparison")
	}
}
