package htmlreport

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
)

// findingRun is a run of 30 one-second intervals that found something of
// every kind: a dip at 12-15 s with the counter that moved then, the CPU
// at its limit, a client-limited figure, reads that missed, a preflight
// warning, and counters of which some moved and some stayed flat.
func findingRun(id int64) Run {
	r := &result.Result{ID: fmt.Sprintf("run%d", id), Workload: result.Workload{Name: "oltp_update_index"},
		StartedAt: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Status: result.StatusOK,
		Warnings: []string{"the CPU governor is powersave: the clock may change under load"},
		Counters: &result.Counters{IntervalS: 1}}
	r.EndedAt = r.StartedAt.Add(30 * time.Second)
	s := &r.Summary
	s.HeadlineUnit = "tps"
	s.Dips = []result.Dip{{FromS: 12, ToS: 15, Change: -0.63, Movers: []result.Mover{{Name: "db.checkpoint_buffers", Unit: "pages/s", During: 5400, Typical: 12}}}}
	s.Saturated = []result.Limit{{Resource: "disk vda", Share: 0.3, Detail: "disk vda 90% busy or more (await 12 ms, queue 4)"}}
	s.Client = &result.ClientCPU{PerEventUS: 41.5, MachineShare: 0.62, CPUs: 2, SharedMachine: true, Limited: true}
	s.ReadCheck = &result.ReadCheck{Checked: 1000, Missed: 12}
	s.Warnings = []string{"12 of 1000 reads that must find rows found none"}
	series := func(name, unit string, f func(t float64) float64) result.CounterSeries {
		c := result.CounterSeries{Name: name, Unit: unit, Kind: result.CounterGauge, Source: strings.SplitN(name, ".", 2)[0]}
		for t := 1.0; t <= 30; t++ {
			c.Points = append(c.Points, [2]float64{t, f(t)})
		}
		return c
	}
	inDip := func(t float64) bool { return t > 12 && t <= 15 }
	r.Counters.Series = []result.CounterSeries{
		series("db.checkpoint_buffers", "pages/s", func(t float64) float64 {
			if inDip(t) {
				return 5400
			}
			return 12
		}),
		series("db.deadlocks", "/s", func(float64) float64 { return 0 }),
		series("os.cpu.user", "%", func(t float64) float64 { return 40 + 30*float64(int(t)%2) }),
		series("os.cpu.steal", "%", func(float64) float64 { return 0.5 }),
		series("os.mem.used", "bytes", func(t float64) float64 { return 4<<30 + t }),
		series("os.disk.vda.util", "%", func(t float64) float64 {
			if inDip(t) {
				return 100
			}
			return 20
		}),
	}
	for t := 1.0; t <= 30; t++ {
		v := 1000.0
		if inDip(t) {
			v = 370
		}
		r.Series = append(r.Series, result.Interval{T: t, DurationS: 1, EventsPerS: v,
			Latency: []result.Percentile{{P: 95, MS: 2}, {P: 99, MS: 5}}})
	}
	return Run{ID: id, Result: r}
}

// A run's part opens with its findings, most telling first: the dip with
// the counters that moved then, what ran out, the client-limited figure,
// the run's warnings, the machine's.
func TestFindingsFirst(t *testing.T) {
	g := groups([]Run{findingRun(1)})[0]
	if len(g.Findings) != 1 || len(g.Shared) != 0 {
		t.Fatalf("a lone run's findings: %d own, %d shared", len(g.Findings), len(g.Shared))
	}
	var kinds []string
	for _, it := range g.Findings[0].Items {
		kinds = append(kinds, it.Kind)
	}
	if want := []string{findDip, findLimit, findClient, findWarning, findMachine}; !slices.Equal(kinds, want) {
		t.Fatalf("findings in the order %v, want %v", kinds, want)
	}
	dip := g.Findings[0].Items[0]
	if dip.Head != "dip 12-15 s" || !strings.Contains(dip.Text, "tps -63%") ||
		!slices.Equal(dip.Details, []string{"db.checkpoint_buffers 5400 pages/s (typically 12 pages/s)"}) {
		t.Errorf("dip said as %+v", dip)
	}
	if lim := g.Findings[0].Items[1]; lim.Text != "disk vda 90% busy or more (await 12 ms, queue 4), 30% of the run" {
		t.Errorf("what ran out said as %q", lim.Text)
	}

	// Then the charts: throughput and latency first, the counters after.
	var titles []string
	for _, s := range g.Sections {
		titles = append(titles, s.Title)
	}
	want := []string{"Over time", "Counters: CPU", "Counters: disks", "Counters: engine", "Counters that did not move"}
	if !slices.Equal(titles, want) {
		t.Fatalf("sections %q, want %q", titles, want)
	}
	if c := g.Sections[0].Charts; len(c) != 2 || c[0].Title != "Throughput" || c[1].Title != "Latency percentiles per interval" {
		t.Fatalf("over time: %+v", c)
	}

	// Only the counters that moved are drawn; the flat ones are named,
	// with their level, in one line.
	var drawn []string
	for _, s := range g.Sections[1:] {
		for _, c := range s.Charts {
			drawn = append(drawn, c.Title)
		}
	}
	if want := []string{"os.cpu.user (%)", "os.disk.vda.util (%)", "db.checkpoint_buffers (pages/s)"}; !slices.Equal(drawn, want) {
		t.Errorf("counters drawn %q, want %q", drawn, want)
	}
	flat := g.Sections[len(g.Sections)-1]
	if len(flat.Charts) != 0 {
		t.Errorf("flat counters drawn: %+v", flat.Charts)
	}
	for _, w := range []string{"CPU: os.cpu.steal 0.5%", "memory: os.mem.used 4.00 GiB", "engine: db.deadlocks 0 /s"} {
		if !strings.Contains(flat.Note, w) {
			t.Errorf("the flat line %q lacks %q", flat.Note, w)
		}
	}

	// Every counter can be laid over the throughput: a drawn one by its
	// chart, a flat one with its points.
	ov := g.Sections[0].Charts[0].Overlays
	if len(ov) != 6 || ov[0].Chart == "" || ov[5].Chart != "" || len(ov[5].Series) != 1 {
		t.Errorf("overlays %+v", ov)
	}
}

// The page says the findings before any chart, and the counters that moved
// before the line naming the flat ones.
func TestFindingsFirstOnThePage(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, []Run{findingRun(1)}, Options{Library: []byte("/* chart library */")}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	at := func(s string) int {
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("page lacks %q", s)
		}
		return i
	}
	order := []string{`id="g1-findings"`, `<b>dip 12-15 s</b>`, `<b>ran out</b>`, `id="g1-tput"`, `id="g1-lat"`,
		`id="g1-counters-cpu"`, `id="g1-counters-flat"`, `flat, so not drawn`}
	for i := 1; i < len(order); i++ {
		if at(order[i-1]) > at(order[i]) {
			t.Errorf("%q comes after %q", order[i-1], order[i])
		}
	}
	if !regexp.MustCompile(`<a href="#findings-1">1 dip; ran out: disk vda 30%; client-limited; 2 warnings</a>`).MatchString(page) {
		t.Errorf("the summary does not sum up the findings: %s", page[at(`<table class="summary">`):at(`</table>`)])
	}
}

// Findings several runs share are said once with their runs; each run
// keeps its own dips; a run that found nothing is named in one line.
func TestSharedFindings(t *testing.T) {
	a, b, c := findingRun(1), findingRun(2), findingRun(3)
	b.Result.Summary.Saturated[0].Share = 0.45 // the same resource, another figure
	c.Result.Summary = result.Summary{HeadlineUnit: "tps"}
	c.Result.Warnings, c.Result.Counters = nil, nil
	shared, own, quiet := groupFindings([]Run{a, b, c}, newLabeler([]Run{a, b, c}))
	var heads []string
	for _, s := range shared {
		heads = append(heads, s.Head+" "+s.Runs+" "+s.Of)
	}
	want := []string{"ran out #1 #2 2 of 3 runs", "client-limited #1 #2 2 of 3 runs", "warning #1 #2 2 of 3 runs", "before the run #1 #2 2 of 3 runs"}
	if !slices.Equal(heads, want) {
		t.Errorf("shared %q, want %q", heads, want)
	}
	if len(own) != 2 || len(own[0].Items) != 1 || own[0].Items[0].Kind != findDip || own[1].Items[0].Kind != findDip {
		t.Errorf("own findings %+v, want each run's dip", own)
	}
	if quiet != "#3" {
		t.Errorf("quiet runs %q", quiet)
	}
	// The note that nothing ran out comes after what did, whichever run
	// came first.
	d, e := findingRun(4), findingRun(5)
	d.Result.Summary.Saturated, e.Result.Summary.Saturated = nil, nil
	later, _, _ := groupFindings([]Run{d, e, a, b}, newLabeler([]Run{d, e, a, b}))
	if later[0].Kind != findLimit || later[len(later)-1].Kind != findNone || later[len(later)-1].Runs != "#4 #5" {
		t.Errorf("shared findings in the order %+v", later)
	}
	if !shared[0].Varies || shared[1].Varies {
		t.Errorf("the runs' figures differ in %+v, not in %+v", shared[0], shared[1])
	}

	// Among several runs on one chart, each run's dips are shaded on its
	// own line, not across the chart.
	gs := groups([]Run{a, b}) // they ran at the same time: that part comes first
	tput := gs[len(gs)-1].Sections[0].Charts[0]
	for i, s := range tput.Series {
		if len(s.Marks) != 1 || s.Marks[0].From != 12 || s.Marks[0].To != 15 || s.Marks[0].Label != "dip -63%" {
			t.Errorf("run %d's line marks %+v, want its dip", i+1, s.Marks)
		}
	}
	if len(tput.Shade) != 0 {
		t.Errorf("the chart's shade %+v, want none (no warm-up; the dips are the runs')", tput.Shade)
	}
}

// A two-axis sweep (pgbench's clients x transactions per client) is shown
// as a table, rows and columns in the order of their values, and as a box
// of the headline per value of the first axis over every run.
func TestSweepTable(t *testing.T) {
	var runs []Run
	for _, c := range []string{"16", "8"} {
		for _, tx := range []string{"1000", "200", "500"} {
			for it := 1; it <= 2; it++ {
				r := &result.Result{ID: fmt.Sprint(len(runs)), Status: result.StatusOK, Workload: result.Workload{Name: "tpcb"},
					Sweep: &result.SweepRef{ID: "sw", Cell: map[string]string{"client": c, "transactions": tx}, Iteration: it}}
				r.Summary.HeadlineUnit = "tps"
				r.Summary.Headline = float64(len(c)*1000 + len(tx)*10 + it)
				runs = append(runs, Run{ID: int64(len(runs) + 1), Result: r})
			}
		}
	}
	secs := sweepSections("g1", sweepRuns{ID: "sw", Runs: runs})
	if len(secs) != 1 || secs[0].Table == nil {
		t.Fatalf("no table: %+v", secs)
	}
	tb := secs[0].Table
	if tb.Corner != `client \ transactions` || !slices.Equal(tb.Cols, []string{"200", "500", "1000"}) {
		t.Fatalf("table head %q %q", tb.Corner, tb.Cols)
	}
	if len(tb.Rows) != 2 || tb.Rows[0].Name != "8" || !slices.Equal(tb.Rows[0].Values, []string{"1032", "1032", "1042"}) {
		t.Fatalf("table rows %+v", tb.Rows)
	}
	box := secs[0].Charts[0]
	if box.Kind != "box" || !slices.Equal(box.XCategories, []string{"8", "16"}) ||
		*box.Series[0].Boxes[0] != [5]float64{1031, 1031.25, 1032, 1038.75, 1042} {
		t.Errorf("box per client count %+v", box)
	}
}

// The machine is shown once: what every run shared, then the facts that
// differed with a column per run.
func TestMachineOnce(t *testing.T) {
	env := func(swap uint64) *result.Environment {
		return &result.Environment{Hostname: "db1", OS: "linux", Arch: "amd64", CPUs: 2, CPUModel: "Xeon", MemoryB: 8 << 30,
			MachineFacts: &result.MachineFacts{SwapBytes: 4 << 30, SwapUsedBytes: swap, Governor: "performance"}}
	}
	a, b := findingRun(1), findingRun(2)
	a.Result.Environment, b.Result.Environment = env(0), env(300<<20)
	m := machineOf([]Run{a, b})
	var common []string
	for _, kv := range m.Common {
		common = append(common, kv.K)
		if strings.Contains(kv.V, "powersave") {
			t.Errorf("a preflight warning among the machine's facts: %v", kv)
		}
	}
	for _, k := range []string{"host", "CPU", "memory", "governor", "swap"} {
		if !slices.Contains(common, k) {
			t.Errorf("%q not among the shared facts %q", k, common)
		}
	}
	if len(m.Differing) != 1 || m.Differing[0].Name != "swap in use" || !slices.Equal(m.Differing[0].Values, []string{"", "300.0 MiB"}) {
		t.Errorf("differing %+v", m.Differing)
	}
}
