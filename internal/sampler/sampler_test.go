package sampler

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

func TestDBRates(t *testing.T) {
	a := []target.Counter{
		{Name: "buffer_pool_read_requests", Unit: "pages", Value: 1000},
		{Name: "buffer_pool_reads", Unit: "pages", Value: 10},
		{Name: "log_bytes", Unit: "bytes", Value: 5000},
		{Name: "questions", Value: 900}, // the server restarted: reset below
		{Name: "dirty_pages", Unit: "pages", Value: 7, Gauge: true},
	}
	b := []target.Counter{
		{Name: "buffer_pool_read_requests", Unit: "pages", Value: 3000},
		{Name: "buffer_pool_reads", Unit: "pages", Value: 30},
		{Name: "log_bytes", Unit: "bytes", Value: 9000},
		{Name: "questions", Value: 5},
		{Name: "dirty_pages", Unit: "pages", Value: 42, Gauge: true},
		{Name: "new_counter", Value: 1},
	}
	got := map[string]struct {
		v          float64
		unit, kind string
	}{}
	for _, r := range DBRates(a, b, 2) {
		got[r.Name] = struct {
			v          float64
			unit, kind string
		}{r.Value, r.Unit, r.Kind}
	}
	check := func(name string, v float64, unit, kind string) {
		t.Helper()
		g, ok := got[name]
		if !ok || g.v != v || g.unit != unit || g.kind != kind {
			t.Errorf("%s = %+v (present %v), want %v %s %s", name, g, ok, v, unit, kind)
		}
	}
	check("db.buffer_pool_read_requests", 1000, "pages/s", result.CounterRate)
	check("db.log_bytes", 2000, "bytes/s", result.CounterRate)
	check("db.dirty_pages", 42, "pages", result.CounterGauge)
	check("db.cache_hit", 99, "%", result.CounterGauge) // 20 of 2000 reads went to disk
	for _, absent := range []string{"db.questions", "db.new_counter"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s: a reset or new counter has no rate yet", absent)
		}
	}
}

// waitFor waits until ok, for as long as a loaded machine may take.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s", what)
		}
	}
}

// samplesSince counts the samples of the series name taken since from.
func samplesSince(s *Sampler, name string, from time.Time) int {
	return samplesIn(s, name, from, time.Now().Add(time.Hour))
}

// samplesIn counts the samples of the series name taken from from to to.
func samplesIn(s *Sampler, name string, from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	sr := s.series[name]
	if sr == nil {
		return 0
	}
	n, lo, hi := 0, secondsSince(s.base, from), secondsSince(s.base, to)
	for _, ps := range [][]point{sr.points.Points(), sr.recent} {
		for _, p := range ps {
			if p.at >= lo && p.at <= hi {
				n += int(p.n)
			}
		}
	}
	return n
}

// TestSamplerKeepsTheRunsAxis samples this machine's /proc and checks the
// points fall on the run's time axis: the samples taken in the run are
// kept, those after its end are not.
func TestSamplerKeepsTheRunsAxis(t *testing.T) {
	s := Start(context.Background(), Config{Interval: 50 * time.Millisecond, NoDB: "none here"})
	start := time.Now()
	waitFor(t, "3 samples of os.cpu.user", func() bool { return samplesSince(s, "os.cpu.user", start) >= 3 })
	end := time.Now()
	// Samples are added in the order they are taken: once two taken after
	// the end are in, so is every one before it.
	waitFor(t, "2 samples after the end", func() bool { return samplesSince(s, "os.cpu.user", end) >= 2 })
	inRun := samplesIn(s, "os.cpu.user", start, end)
	c := s.Stop(start, end)
	if c.Unknown["db"] != "none here" || c.IntervalS != 0.05 {
		t.Errorf("counters: %+v", c)
	}
	var user *result.CounterSeries
	for i := range c.Series {
		if c.Series[i].Name == "os.cpu.user" {
			user = &c.Series[i]
		}
	}
	if user == nil || len(user.Points) != inRun {
		t.Fatalf("os.cpu.user: %d samples in the run, %+v", inRun, user)
	}
	last := 0.0
	for _, p := range user.Points {
		if p[0] < last || p[0] > end.Sub(start).Seconds() || p[1] < 0 || p[1] > 100 {
			t.Fatalf("point %v after %v is off the axis or out of range", p, last)
		}
		last = p[0]
	}
}

// TestLongSamplingStaysBounded samples a /proc of the test's own, with
// room for 4 points: each series must average its samples into at most 4
// (+1) points in time order, and keep every sample taken up to the end,
// though samples after the end (dropped) follow on its heels. The used
// memory is one level while the series fills and merges, then another: a
// sample seen to read the second was taken before the end, so the last
// point must average it in. Nothing here waits on the clock but for the
// samples themselves, so a loaded machine only makes it slower.
func TestLongSamplingStaysBounded(t *testing.T) {
	proc := filepath.Join(t.TempDir(), "proc")
	if err := os.Mkdir(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	const total, before, last = 1 << 20, 1000, 2000 // kB
	setUsed := func(kb int) {
		t.Helper()
		tmp := filepath.Join(proc, "meminfo.tmp")
		text := fmt.Sprintf("MemTotal: %d kB\nMemFree: 1 kB\nMemAvailable: %d kB\n", total, total-kb)
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(proc, "meminfo")); err != nil { // a sample reads one level or the other
			t.Fatal(err)
		}
	}
	setUsed(before)
	const interval = 2 * time.Millisecond
	start := time.Now()
	s := Start(context.Background(), Config{Interval: interval, Root: filepath.Dir(proc), NoDB: "none here", MaxPoints: 4})
	waitFor(t, "series averaging 8 samples a point", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		sr := s.series["os.mem.used"]
		return sr != nil && sr.points.Stride() >= 8
	})
	setUsed(last)
	waitFor(t, "sample of the second level", func() bool { return s.Latest()["os.mem.used"] == last*1024 })
	end := time.Now()
	waitFor(t, "samples after the end, on the series' last point", func() bool { return samplesSince(s, "os.mem.used", end) >= 3 })
	c := s.Stop(start, end)

	var used *result.CounterSeries
	for i, cs := range c.Series {
		if len(cs.Points) > 5 {
			t.Errorf("%s: %d points, limit 4 (+1 being filled)", cs.Name, len(cs.Points))
		}
		if cs.Name == "os.mem.used" {
			used = &c.Series[i]
		}
	}
	if used == nil || len(used.Points) == 0 {
		t.Fatalf("no os.mem.used series in %+v", c)
	}
	at := 0.0
	for _, p := range used.Points {
		if p[0] < at || p[0] > end.Sub(start).Seconds() || p[1] < before*1024 || p[1] > last*1024 {
			t.Errorf("os.mem.used point %v after %.3f s: out of order, after the end at %.3f s, or not a mean of the levels sampled",
				p, at, end.Sub(start).Seconds())
		}
		at = p[0]
	}
	if p := used.Points[len(used.Points)-1]; p[1] <= before*1024 {
		t.Errorf("os.mem.used ends at %v, a mean of the first level only: the samples of the second, taken before the end at %.3f s, were lost (points %v)",
			p, end.Sub(start).Seconds(), used.Points)
	}
}

func TestMergePointsIsTheMeanOfTheSamples(t *testing.T) {
	a := point{at: 1, v: 10, n: 3} // the mean of 3 samples
	b := point{at: 2, v: 50, n: 1}
	m, ok := mergePoints(a, b)
	if !ok || m.v != 20 || m.n != 4 || m.at != b.at {
		t.Errorf("merged %+v, want the mean 20 of 4 samples at the later time", m)
	}
}

// TestPointsKeepTheirTime: put on a run axis that starts 90 s after the
// sampler, a point keeps its millisecond for the first two hours, and a
// day in (where merged points span minutes) stays within 10 ms.
func TestPointsKeepTheirTime(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := base.Add(90 * time.Second)
	for _, c := range []struct {
		d   time.Duration
		tol float64
	}{
		{90*time.Second + time.Millisecond, 0},
		{2*time.Hour + 123*time.Millisecond, 0},
		{24*time.Hour + 7*time.Millisecond, 0.010},
	} {
		p := point{at: secondsSince(base, base.Add(c.d)), n: 1}
		want := (c.d - 90*time.Second).Seconds()
		if got, ok := p.onAxis(base.Sub(start).Seconds()); !ok || math.Abs(got-want) > c.tol+1e-9 {
			t.Errorf("%v after the sampler's start: at %v s (%v) on the run's axis, want %v (within %v)", c.d, got, ok, want, c.tol)
		}
	}
	// A sample taken just before the run started is not on its axis, even
	// when it rounds to 0.
	early := point{at: secondsSince(base, start.Add(-300*time.Microsecond)), n: 1}
	if got, ok := early.onAxis(base.Sub(start).Seconds()); ok {
		t.Errorf("a sample 0.3 ms before the start is on the axis at %v s", got)
	}
	if size := unsafe.Sizeof(point{}); size > 16 {
		t.Errorf("a point takes %d bytes; each counter keeps thousands of them", size)
	}
}

// A driven sampler reads only when kicked, and Wait returns the values of
// that very read: one stored point per kick, taken between the kick and
// Wait's return.
func TestDrivenSamplesAtEachKick(t *testing.T) {
	s := Start(context.Background(), Config{Interval: 20 * time.Millisecond, NoDB: "none here", Driven: true})
	start := time.Now()
	time.Sleep(30 * time.Millisecond)
	var kickedAt, answeredAt []float64
	for range 3 {
		time.Sleep(20 * time.Millisecond)
		kickedAt = append(kickedAt, time.Since(start).Seconds())
		latest, stale := s.Wait(s.Kick(), 30*time.Second)
		answeredAt = append(answeredAt, time.Since(start).Seconds())
		if len(stale) > 0 {
			t.Fatalf("stale after a generous wait: %v", stale)
		}
		if _, ok := latest["os.mem.used"]; !ok {
			t.Fatalf("no os.mem.used in %v", latest)
		}
	}
	c := s.Stop(start, time.Now())
	for _, sr := range c.Series {
		if sr.Name != "os.mem.used" {
			continue
		}
		if len(sr.Points) != 3 {
			t.Fatalf("%d points for 3 kicks: %v", len(sr.Points), sr.Points)
		}
		for i, at := range kickedAt {
			// The axis is in milliseconds.
			if p := sr.Points[i][0]; p < at-0.001 || p > answeredAt[i]+0.001 {
				t.Errorf("point %d at %.4fs, kicked at %.4fs and answered at %.4fs", i, p, at, answeredAt[i])
			}
		}
		return
	}
	t.Fatal("no os.mem.used series")
}

// Kicks that come an instant apart (ticks the runner emits at once after
// a stall) are answered by one sample: a second one would be a rate over
// the instant between, and share its time on the millisecond axis.
func TestDrivenKicksAnInstantApartShareASample(t *testing.T) {
	// An instant is under a quarter of the interval: a minute, so that a
	// loaded machine's delay between the two kicks stays one.
	s := Start(context.Background(), Config{Interval: time.Minute, NoDB: "none here", Driven: true})
	start := time.Now()
	time.Sleep(30 * time.Millisecond)
	for range 2 {
		if _, stale := s.Wait(s.Kick(), 30*time.Second); len(stale) > 0 {
			t.Fatalf("stale after a generous wait: %v", stale)
		}
	}
	c := s.Stop(start, time.Now())
	for _, sr := range c.Series {
		if sr.Name == "os.mem.used" {
			if len(sr.Points) != 1 {
				t.Errorf("%d points for 2 kicks an instant apart: %v", len(sr.Points), sr.Points)
			}
			return
		}
	}
	t.Fatal("no os.mem.used series")
}
