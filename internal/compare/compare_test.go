package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
)

// run builds a result whose headline is tps, with a p95 of p95 ms and a
// series of one-second intervals at the given rates.
func run(tps, p95 float64, series ...float64) *result.Result {
	r := &result.Result{
		Workload:    result.Workload{Name: "w", Headline: "tps", Better: "higher", Options: map[string]string{"threads": "8"}},
		Target:      result.Target{Kind: "sqlite", Engine: "SQLite", Version: "3.46", Settings: map[string]string{"journal_mode": "wal"}},
		Environment: &result.Environment{OS: "linux", CPUs: 2},
		Summary: result.Summary{Headline: tps, HeadlineUnit: "tps", EventsPerS: tps,
			Latency: &result.Latency{MeanMS: 1, Percentiles: []result.Percentile{{P: 95, MS: p95}}}},
	}
	r.Series = append(r.Series, result.Interval{T: 1, DurationS: 1, Warmup: true, EventsPerS: 1}) // ignored
	for i, v := range series {
		r.Series = append(r.Series, result.Interval{T: float64(i + 2), DurationS: 1, EventsPerS: v})
	}
	return r
}

func row(t *testing.T, rep Report, metric string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", metric, rep.Rows)
	return Row{}
}

func TestRepeatsVerdicts(t *testing.T) {
	a := []*result.Result{run(1000, 5), run(1010, 5.1), run(990, 4.9), run(1005, 5)}
	faster := []*result.Result{run(1200, 4), run(1190, 4.1), run(1210, 3.9), run(1195, 4)}
	noise := []*result.Result{run(1010, 5.2), run(985, 4.8), run(1000, 5), run(1002, 5.1)}

	rep := Of(a, faster)
	tps := row(t, rep, "tps")
	if tps.Verdict != Faster || tps.P >= 0.05 {
		t.Errorf("20%% more tps: %+v", tps)
	}
	if !(tps.Ratio.Low < 1.1975/1.00125 && tps.Ratio.High > 1.1975/1.00125 && tps.Ratio.Low > 1) {
		t.Errorf("ratio interval %+v does not hold 1.196 clear of 1", tps.Ratio)
	}
	// A lower p95 is better: faster.
	if p := row(t, rep, "latency p95 (ms)"); p.Verdict != Faster {
		t.Errorf("p95 fell from 5 to 4: %+v", p)
	}
	// And the other way round.
	if r := row(t, Of(faster, a), "tps"); r.Verdict != Slower {
		t.Errorf("B slower: %+v", r)
	}
	if r := row(t, Of(faster, a), "latency p95 (ms)"); r.Verdict != Slower {
		t.Errorf("B's p95 higher: %+v", r)
	}
	if r := row(t, Of(a, noise), "tps"); r.Verdict != Same || !(r.Ratio.Low < 1 && r.Ratio.High > 1) {
		t.Errorf("noise: %+v", r)
	}
	if r := row(t, Of(a, faster[:1]), "tps"); r.Verdict != Untest || !math.IsNaN(r.P) {
		t.Errorf("4 runs against 1: %+v", r)
	}
}

func TestOneRunEachUsesTheSeries(t *testing.T) {
	steady := []float64{}
	higher := []float64{}
	for i := range 20 {
		wiggle := float64(i%3) * 5
		steady = append(steady, 1000+wiggle)
		higher = append(higher, 1100+wiggle)
	}
	rep := Of([]*result.Result{run(1005, 5, steady...)}, []*result.Result{run(1105, 5, higher...)})
	if !strings.Contains(rep.Method, "batch means") {
		t.Errorf("method %q", rep.Method)
	}
	tps := row(t, rep, "tps")
	if tps.Verdict != Faster || math.Abs(tps.Ratio.Value-1105.0/1005) > 0.01 {
		t.Errorf("10%% higher series: %+v", tps)
	}
	same := row(t, Of([]*result.Result{run(1005, 5, steady...)}, []*result.Result{run(1005, 5, steady...)}), "tps")
	if same.Verdict != Same {
		t.Errorf("the same series: %+v", same)
	}
	short := row(t, Of([]*result.Result{run(1, 5, 1, 2)}, []*result.Result{run(1, 5, 1, 2)}), "tps")
	if short.Verdict != Untest || short.Note == "" {
		t.Errorf("two intervals: %+v", short)
	}
}

func TestDiff(t *testing.T) {
	a, b := run(1, 1), run(1, 1)
	if d := Diff(a, b); len(d) != 0 {
		t.Fatalf("identical runs differ: %+v", d)
	}
	b.Workload.Options["threads"] = "16"
	b.Target.Version = "3.47"
	b.Target.Settings["synchronous"] = "off"
	b.Environment.CPUs = 4
	// What was measured at the moment of the run is not part of the setup.
	b.Environment.ClockNowNS = a.Environment.ClockNowNS + 3
	a.Environment.MachineFacts = &result.MachineFacts{ProbeMS: 210, Mounts: []result.Mount{{Path: "/data", FSType: "xfs", FreeBytes: 100, Options: []string{"noatime"}}}}
	b.Environment.MachineFacts = &result.MachineFacts{ProbeMS: 250, Mounts: []result.Mount{{Path: "/data", FSType: "xfs", FreeBytes: 90, Options: []string{"noatime", "nobarrier"}}}}
	got := Diff(a, b)
	want := []Change{
		{"environment.cpus", "2", "4"},
		{"environment.mounts[0].options", `"noatime"`, `"noatime","nobarrier"`},
		{"target.settings.synchronous", "(none)", "off"},
		{"target.version", "3.46", "3.47"},
		{"workload.options.threads", "8", "16"},
	}
	if len(got) != len(want) {
		t.Fatalf("diff %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("diff[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	var buf bytes.Buffer
	WriteDiff(&buf, got)
	if !strings.Contains(buf.String(), "workload.options.threads") {
		t.Errorf("printed diff: %s", buf.String())
	}
}
