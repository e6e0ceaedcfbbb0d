package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
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
	if short.Verdict != CannotTell || short.Note == "" {
		t.Errorf("two intervals: %+v", short)
	}
}

func TestDiff(t *testing.T) {
	a, b := run(1, 1), run(1, 1)
	if d := Diff(a, b); len(d.Changes) != 0 || len(d.NotComparable) != 0 {
		t.Fatalf("identical runs differ: %+v", d)
	}
	b.Run.Threads = 16
	b.Target.Version = "3.47"
	b.Target.Settings["synchronous"] = "off"
	b.Environment.CPUs = 4
	// What was measured at the moment of the run is not part of the setup.
	b.Environment.ClockNowNS = a.Environment.ClockNowNS + 3
	a.Environment.MachineFacts = &result.MachineFacts{ProbeMS: 210, Mounts: []result.Mount{{Path: "/data", FSType: "xfs", FreeBytes: 100, UsedBytes: 5, Options: []string{"noatime"}}}}
	b.Environment.MachineFacts = &result.MachineFacts{ProbeMS: 250, Mounts: []result.Mount{{Path: "/data", FSType: "xfs", FreeBytes: 90, UsedBytes: 15, Options: []string{"noatime", "nobarrier"}}}}
	// Where the output went is not part of it either.
	a.Workload.Options["format"], b.Workload.Options["format"] = "text", "csv"
	// A server setting a run set is an option of the work, once.
	a.Workload.Options["server.synchronous"], b.Workload.Options["server.synchronous"] = "full", "off"
	a.Target.ServerSet = []result.ServerSetting{{Name: "synchronous", Original: "normal", Set: "full", ReadBack: "2"}}
	b.Target.ServerSet = []result.ServerSetting{{Name: "synchronous", Original: "normal", Set: "off", ReadBack: "0"}}
	got := Diff(a, b)
	// The work first, then the machine, then the engine.
	want := []Change{
		{GroupWork, "run.threads", []string{"0", "16"}},
		{GroupWork, "workload.options.server.synchronous", []string{"full", "off"}},
		{GroupMachine, "environment.cpus", []string{"2", "4"}},
		{GroupMachine, "environment.mounts[0].options", []string{`"noatime"`, `"noatime","nobarrier"`}},
		{GroupEngine, "target.settings.synchronous", []string{"(none)", "off"}},
		{GroupEngine, "target.version", []string{"3.46", "3.47"}},
	}
	if !reflect.DeepEqual(got.Changes, want) {
		t.Fatalf("diff\n got %+v\nwant %+v", got.Changes, want)
	}
	var buf bytes.Buffer
	WriteDiff(&buf, got)
	if out := buf.String(); !strings.Contains(out, "run.threads") || strings.Index(out, "work") > strings.Index(out, "machine") {
		t.Errorf("printed diff: %s", out)
	}
}

// realRun reads a result recorded by a real run on the embedded SQLite
// (the site's test data: redacted by dbmark results export).
func realRun(t *testing.T, name string) *result.Result {
	t.Helper()
	r, err := result.ReadFile(filepath.Join("..", "site", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// changed is a copy of r changed by fn.
func changed(t *testing.T, r *result.Result, fn func(*result.Result)) *result.Result {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	c, err := result.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	fn(c)
	return c
}

func fields(d Differences) []string {
	var out []string
	for _, c := range d.Changes {
		out = append(out, c.Group+" "+c.Field)
	}
	return out
}

// A 20 s run with a 5 s warm-up against a 10 s run with none: the time
// and the warm-up are what differed, in the work.
func TestDiffTimeAndWarmup(t *testing.T) {
	a := changed(t, realRun(t, "oltp_point_select"), func(r *result.Result) {
		r.Run.DurationS, r.Run.WarmupS = 20, 5
		r.Workload.Options["time"], r.Workload.Options["warmup"] = "20s", "5s"
	})
	b := changed(t, a, func(r *result.Result) {
		r.Run.DurationS, r.Run.WarmupS, r.Run.Threads = 10, 0, a.Run.Threads*2
		r.Workload.Options["time"], r.Workload.Options["warmup"] = "10s", "0s"
		r.Workload.Options["threads"] = strconv.Itoa(r.Run.Threads)
	})
	d := Diff(a, b)
	want := []string{"work run.duration_s", "work run.threads", "work run.warmup_s"}
	if got := fields(d); !reflect.DeepEqual(got, want) || len(d.NotComparable) != 0 {
		t.Errorf("differed: %q, not comparable: %q; want %q and comparable", got, d.NotComparable, want)
	}
}

// Open and closed loop, and different workloads, are not comparable, and
// the reasons say so.
func TestDiffNotComparable(t *testing.T) {
	a := realRun(t, "oltp_point_select")
	open := changed(t, a, func(r *result.Result) { r.Run.Rate = 20000 })
	d := Diff(a, open)
	if len(d.NotComparable) != 1 || !strings.Contains(d.NotComparable[0], "open-loop") {
		t.Errorf("rate against none: not comparable %q", d.NotComparable)
	}
	if got := fields(d); !reflect.DeepEqual(got, []string{"work run.rate"}) {
		t.Errorf("rate against none differed in %q", got)
	}
	ro := realRun(t, "oltp_read_only")
	d = Diff(a, ro, open)
	if len(d.NotComparable) != 2 || !strings.Contains(d.NotComparable[0], "oltp_point_select, oltp_read_only") {
		t.Errorf("three runs: not comparable %q", d.NotComparable)
	}
	if len(d.Changes) == 0 || d.Changes[0].Field != "run.rate" && d.Changes[0].Group != GroupWork || len(d.Changes[0].Values) != 3 {
		t.Errorf("three runs: changes %+v", d.Changes)
	}
	var buf bytes.Buffer
	WriteNotComparable(&buf, d)
	if !strings.Contains(buf.String(), "not comparable: different workloads") {
		t.Errorf("printed: %s", buf.String())
	}
}

// Across engines, an option one engine does not read is no difference, and
// the engines' settings are not set against each other.
func TestDiffAcrossEngines(t *testing.T) {
	pg := changed(t, realRun(t, "oltp_point_select"), func(r *result.Result) {
		r.Target = result.Target{Kind: "postgres", Engine: "PostgreSQL", Version: "17.2",
			Settings: map[string]string{"shared_buffers": "128MB", "fsync": "on"}}
		r.Workload.Options["pg-mode"] = "simple"
		r.Workload.Options["mysql-storage-engine"] = "innodb"
	})
	maria := changed(t, pg, func(r *result.Result) {
		r.Target = result.Target{Kind: "mysql", Engine: "MariaDB", Version: "11.4",
			Settings: map[string]string{"innodb_buffer_pool_size": "128M"}}
		r.Workload.Options["pg-mode"] = "prepared" // the default, recorded and unread
		r.Workload.Options["mysql-storage-engine"] = "myisam"
	})
	d := Diff(pg, maria)
	want := []string{"engine target.engine", "engine target.kind", "engine target.version"}
	if got := fields(d); !reflect.DeepEqual(got, want) {
		t.Errorf("across engines differed in %q, want %q", got, want)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "mysql, postgres") {
		t.Errorf("notes %q", d.Notes)
	}
	// On the same engine, the option is a difference again.
	pg2 := changed(t, pg, func(r *result.Result) { r.Workload.Options["pg-mode"] = "prepared" })
	if got := fields(Diff(pg, pg2)); !reflect.DeepEqual(got, []string{"work workload.options.pg-mode"}) {
		t.Errorf("pg-mode on PostgreSQL differed in %q", got)
	}
}

// consistent fails when a row's verdict contradicts its own interval: a
// verdict of faster or slower whose interval holds 1, or no significant
// difference with an interval clear of 1.
func consistent(t *testing.T, what string, r Row) {
	t.Helper()
	if math.IsNaN(r.Ratio.Low) {
		return
	}
	holdsOne := r.Ratio.Low <= 1 && 1 <= r.Ratio.High
	switch r.Verdict {
	case Faster, Slower:
		if holdsOne {
			t.Errorf("%s: %s with an interval [%g, %g] that holds 1", what, r.Verdict, r.Ratio.Low, r.Ratio.High)
		}
	case Same:
		if !holdsOne {
			t.Errorf("%s: %q with an interval [%g, %g] clear of 1", what, r.Verdict, r.Ratio.Low, r.Ratio.High)
		}
	}
}

// A short run against one that did nothing: 5 intervals make 2 batches,
// and Welch's test on 2 batches a side has one degree of freedom. The
// verdict cannot be "no significant difference" next to an interval of
// [0, 0]; with so few batches it is "cannot tell", and says why.
func TestTooFewBatchesCannotTell(t *testing.T) {
	busy := run(613, 5, 613, 200, 200, 1026, 1026)
	idle := run(0, 5, 0, 0, 0, 0, 0)
	r := row(t, Of([]*result.Result{busy}, []*result.Result{idle}), "tps")
	consistent(t, "613 tps against 0", r)
	if r.Verdict != CannotTell || !strings.Contains(r.Note, "batches") || !strings.Contains(r.Note, "--time") {
		t.Errorf("5 intervals a side: %+v, want %q with why", r, CannotTell)
	}
	var out bytes.Buffer
	Write(&out, Of([]*result.Result{busy}, []*result.Result{idle}))
	if strings.Contains(out.String(), Same) {
		t.Errorf("printed:\n%s", out.String())
	}
	// Enough intervals: the same two runs are told apart.
	var long, zero []float64
	for i := range 20 {
		long = append(long, 600+float64(i%4)*10)
		zero = append(zero, 0)
	}
	r = row(t, Of([]*result.Result{run(613, 5, long...)}, []*result.Result{run(0, 5, zero...)}), "tps")
	consistent(t, "20 intervals against 0", r)
	if r.Verdict != Slower {
		t.Errorf("20 intervals of 600 against 0: %+v", r)
	}
}

// Whatever the samples, a verdict agrees with its interval.
func TestVerdictNeverContradictsInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 1))
	for i := range 2000 {
		n, m := 2+rng.IntN(5), 2+rng.IntN(5)
		scaleA, scaleB := rng.Float64()*100, rng.Float64()*100
		var a, b []*result.Result
		for range n {
			a = append(a, run(1000+rng.NormFloat64()*scaleA, 5))
		}
		shift := []float64{0, 10, 100, -1000}[rng.IntN(4)]
		for range m {
			b = append(b, run(1000+shift+rng.NormFloat64()*scaleB, 5))
		}
		consistent(t, "draw "+strconv.Itoa(i), row(t, Of(a, b), "tps"))
	}
}
