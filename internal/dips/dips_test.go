package dips

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// run is 60 one-second intervals of about 1000 tps (noise as given),
// dipping to dipTo in seconds 41-44 when dipTo > 0, with three counters: a
// disk's utilisation that saturates in the dip, commits that follow the
// throughput, and a flat one.
func run(noise, dipTo float64, seed uint64) *result.Result {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &result.Result{Workload: result.Workload{Better: "higher"}, Summary: result.Summary{HeadlineUnit: "tps"}}
	util := result.CounterSeries{Name: "os.disk.vda.util", Unit: "%", Kind: result.CounterGauge}
	commits := result.CounterSeries{Name: "db.xact_commit", Unit: "/s", Kind: result.CounterRate}
	flat := result.CounterSeries{Name: "os.mem.free", Unit: "MiB", Kind: result.CounterGauge}
	for t := 1.0; t <= 60; t++ {
		v := 1000 * (1 + noise*(rng.Float64()*2-1))
		u := 20 + 4*rng.Float64()
		if dipTo > 0 && t >= 42 && t <= 44 {
			v, u = dipTo, 99
		}
		r.Series = append(r.Series, result.Interval{T: t, DurationS: 1, EventsPerS: v})
		util.Points = append(util.Points, [2]float64{t, u})
		commits.Points = append(commits.Points, [2]float64{t, v})
		flat.Points = append(flat.Points, [2]float64{t, 4096 + rng.Float64()})
	}
	r.Counters = &result.Counters{IntervalS: 1, Series: []result.CounterSeries{commits, flat, util}}
	return r
}

func TestFind(t *testing.T) {
	got := Find(run(0.05, 370, 1))
	if len(got) != 1 {
		t.Fatalf("%d dips, want 1: %+v", len(got), got)
	}
	d := got[0]
	if d.FromS != 41 || d.ToS != 44 || d.Change > -0.6 || d.Change < -0.65 {
		t.Errorf("dip %+v, want 41-44 s at about -63%%", d)
	}
	if len(d.Movers) != 1 || d.Movers[0].Name != "os.disk.vda.util" || d.Movers[0].During != 99 {
		t.Errorf("movers %+v: want the disk alone (commits follow the throughput, free memory is flat)", d.Movers)
	}
	line := Line(d, "tps")
	if !strings.HasPrefix(line, "41-44 s: tps -63%; os.disk.vda.util 99% (typically 2") {
		t.Errorf("line %q", line)
	}
}

// A counter flat at zero that ticks during the dip (a byte on an idle
// NIC, a moment of steal) is no mover; one that rises from zero by a
// real amount (a checkpoint's buffers) is.
func TestMoversFromZero(t *testing.T) {
	r := run(0.05, 370, 1)
	zero := func(name, unit string, during float64) result.CounterSeries {
		return counter(name, unit, result.CounterRate, 0, during)
	}
	r.Counters.Series = append(r.Counters.Series, zero("os.net.eth0.rx_mib", "MiB/s", 0.0006), zero("os.cpu.steal", "%", 0.5),
		zero("db.checkpoint_buffers", "pages/s", 6712))
	if names := moverNames(t, r); strings.Join(names, ",") != "db.checkpoint_buffers,os.disk.vda.util" {
		t.Errorf("movers %v, want the checkpoint's buffers and the disk", names)
	}
}

// No false alarms: steady runs, however noisy, have no dip, on many seeds.
func TestNoDipInSteadyRuns(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		for _, noise := range []float64{0.01, 0.1, 0.3} {
			if got := Find(run(noise, 0, seed)); len(got) > 0 {
				t.Fatalf("seed %d, noise %g: %d dips in a steady run: %s", seed, noise, len(got), Line(got[0], "tps"))
			}
		}
	}
	// A short run tells nothing.
	r := run(0.05, 100, 1)
	r.Series = r.Series[:9]
	if got := Find(r); got != nil {
		t.Errorf("dips in 9 intervals: %+v", got)
	}
}

// A stall to zero is found even in a noisy run, and the rates that fell
// to zero with it (commits) are not its cause; the warm-up is not judged.
func TestStallAndWarmup(t *testing.T) {
	r := run(0.3, 0.001, 7)
	for i := range r.Series { // nothing at all: no commit either
		if r.Series[i].EventsPerS == 0.001 {
			r.Series[i].EventsPerS, r.Counters.Series[0].Points[i][1] = 0, 0
		}
	}
	if got := Find(r); len(got) != 1 || got[0].Change > -0.99 || len(got[0].Movers) != 1 || got[0].Movers[0].Name != "os.disk.vda.util" {
		t.Fatalf("a stall in a noisy run: %+v", got)
	}
	r = run(0.05, 0, 3)
	for i := range 10 {
		r.Series[i].Warmup = true
		r.Series[i].EventsPerS = 100 // a cold cache
	}
	if got := Find(r); len(got) > 0 {
		t.Errorf("the warm-up taken for a dip: %+v", got)
	}
}

// Counters far outside their noise (ten robust standard deviations and
// more) are ranked the engine's first: a server stopped while a build on
// the machine read its disk names the server's late answers before the
// disk's reads, however many more reads there were. Nearer their noise,
// how far each moved still ranks them.
func TestEngineFirstAmongTheFarMoved(t *testing.T) {
	r := run(0.05, 370, 1)
	r.Counters.Series = append(r.Counters.Series,
		counter("os.disk.vda.reads", "/s", result.CounterRate, 20, 8669),
		counter("os.disk.vda.read_mib", "MiB/s", result.CounterRate, 0.1, 135),
		counter("db.status_read_ms", "ms", result.CounterGauge, 6.5, 2289),
		counter("os.cpu.user", "%", result.CounterGauge, 60, 75), // 5 spreads of 3 points above: a mover, nearer its noise
	)
	names := moverNames(t, r)
	if len(names) != 3 || names[0] != "db.status_read_ms" || strings.HasPrefix(names[1], "db.") {
		t.Errorf("movers %v: want db.status_read_ms first, then the machine's far movers", names)
	}
	for _, n := range names {
		if n == "os.cpu.user" {
			t.Errorf("movers %v: a counter near its noise outranked one far outside it", names)
		}
	}
}

// counter is a counter of run's 60 seconds about typical (within 2%),
// at during in the dip's seconds 42-44.
func counter(name, unit, kind string, typical, during float64) result.CounterSeries {
	s := result.CounterSeries{Name: name, Unit: unit, Kind: kind}
	for t := 1.0; t <= 60; t++ {
		v := typical * (1 + 0.01*float64(int(t)%3))
		if t >= 42 && t <= 44 {
			v = during
		}
		s.Points = append(s.Points, [2]float64{t, v})
	}
	return s
}

// moverNames finds r's one dip and names its movers, in their order.
func moverNames(t *testing.T, r *result.Result) []string {
	t.Helper()
	got := Find(r)
	if len(got) != 1 {
		t.Fatalf("%d dips, want 1: %+v", len(got), got)
	}
	var names []string
	for _, m := range got[0].Movers {
		names = append(names, m.Name)
	}
	return names
}
