package htmlreport_test

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/report/htmlreport"
	"github.com/dbmark/dbmark/internal/result"
)

type chartSpec struct {
	ID          string
	Kind        string
	XCategories []string
	XMax        float64
	Shade       []struct{ From, To float64 }
	Series      []struct {
		Name   string
		Points [][2]float64
		Breaks []int
		Values []*float64
		Boxes  []*[5]float64
	}
}

// renderSpecs renders runs and reads back the chart specs the page's
// script draws.
func renderSpecs(t *testing.T, runs []htmlreport.Run) (string, map[string]chartSpec) {
	t.Helper()
	var b bytes.Buffer
	if err := htmlreport.Render(&b, runs, htmlreport.Options{Library: []byte("/* chart library */")}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="dbmark-data">(.*?)</script>`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatal("no chart data in the page")
	}
	var data struct{ Charts []chartSpec }
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	specs := map[string]chartSpec{}
	for _, c := range data.Charts {
		specs[c.ID] = c
	}
	return b.String(), specs
}

func TestChartsFromRealRuns(t *testing.T) {
	runs := sharedSample(t)
	page, specs := renderSpecs(t, runs)

	// The sweep's line: one line per rand-type, the mean tps of each cell's
	// two iterations at each thread count.
	line, ok := specs["g1-sweep-5f0c2d9e-line"]
	if !ok || !slices.Equal(line.XCategories, []string{"1", "2"}) || len(line.Series) != 2 {
		t.Fatalf("sweep line chart: %+v", line)
	}
	cellRuns := func(threads, randType string) []float64 {
		var ys []float64
		for _, r := range runs {
			if s := r.Result.Sweep; s != nil && s.Cell["threads"] == threads && s.Cell["rand-type"] == randType {
				ys = append(ys, r.Result.Summary.Headline)
			}
		}
		return ys
	}
	for _, s := range line.Series {
		rt := strings.TrimPrefix(s.Name, "rand-type=")
		for i, th := range line.XCategories {
			ys := cellRuns(th, rt)
			if len(ys) != 2 || s.Values[i] == nil || math.Abs(*s.Values[i]-(ys[0]+ys[1])/2) > 1e-6 {
				t.Errorf("%s threads=%s: %v, want the mean of %v", s.Name, th, s.Values[i], ys)
			}
		}
	}
	// Box plots: a box per cell, grouped by threads and coloured by
	// rand-type; two runs a cell are too few to box, so each box is of the
	// cell's runs' per-interval rates.
	box := specs["g1-sweep-5f0c2d9e-box"]
	if !slices.Equal(box.XCategories, []string{"1", "2"}) || len(box.Series) != 2 || box.Series[0].Name != "rand-type=uniform" {
		t.Fatalf("box chart: categories %v, %d series", box.XCategories, len(box.Series))
	}
	var rates []float64
	for _, r := range runs {
		if s := r.Result.Sweep; s != nil && s.Cell["threads"] == "1" && s.Cell["rand-type"] == "uniform" {
			for _, iv := range r.Result.Series {
				if !iv.Warmup {
					rates = append(rates, iv.EventsPerS)
				}
			}
		}
	}
	slices.Sort(rates)
	if b := box.Series[0].Boxes[0]; len(rates) < 2 || b == nil || b[0] != rates[0] || b[4] != rates[len(rates)-1] || b[2] < rates[0] || b[2] > rates[len(rates)-1] {
		t.Errorf("box %v for the intervals %v", b, rates)
	}
	if _, ok := specs["g1-sweep-5f0c2d9e-bars"]; !ok {
		t.Error("no grouped bars for a two-axis sweep")
	}

	// Over time: a line per sweep cell (its first iteration), the warm-up
	// shaded, on a time axis shared with the counters.
	tput := specs["g1-tput"]
	if len(tput.Series) != 4 || len(tput.Shade) == 0 || tput.Shade[0].To <= 0 {
		t.Fatalf("throughput over time: %d lines, shade %v", len(tput.Series), tput.Shade)
	}
	for _, s := range tput.Series {
		if !strings.Contains(s.Name, "threads=") || len(s.Points) < 4 {
			t.Errorf("line %q with %d points", s.Name, len(s.Points))
		}
	}
	// Runs outside a sweep are told apart by the options that differ.
	names := []string{specs["g2-tput"].Series[0].Name, specs["g2-tput"].Series[1].Name}
	if !strings.HasSuffix(names[0], "threads=1") || !strings.HasSuffix(names[1], "threads=2") {
		t.Errorf("overlaid runs named %v", names)
	}
	if ctr := specs["g2-ctr1"]; ctr.XMax != specs["g2-tput"].XMax || len(ctr.Series) != 2 {
		t.Errorf("counter chart not on the throughput's time axis: %+v", ctr)
	}
	// The insert benchmark's runs: their insert rate against the rows
	// inserted, one line each.
	if rows := specs["g3-rows1"]; len(rows.Series) != 2 || len(rows.Series[0].Points) == 0 {
		t.Errorf("rows chart: %+v", rows)
	}
	// Several runs: the event latency of each, from its histogram.
	if pct := specs["g1-pct"]; len(pct.Series) != 4 || pct.Kind != "percentile" {
		t.Errorf("latency by percentile: %d lines", len(pct.Series))
	}
	// The environment: beyond the basics, where the data lived, and the
	// engine's settings that are not at their default (dbmark sets WAL).
	for _, want := range []string{"oltp_point_select", "oltp_read_write", "Options that differ", "journal_mode",
		"working dir ", "not the default delete"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestLoneRunShowsEveryOperation(t *testing.T) {
	runs := sharedSample(t)
	var lone []htmlreport.Run
	for _, r := range runs {
		if r.Result.Workload.Name == "oltp_read_write" {
			lone = []htmlreport.Run{r}
		}
	}
	_, specs := renderSpecs(t, lone)
	pct := specs["g1-pct"]
	var names []string
	for _, s := range pct.Series {
		names = append(names, s.Name)
	}
	// oltp_read_write records its transactions and each kind of statement.
	if len(names) < 3 || !slices.Contains(names, "oltp_read_write") || !slices.Contains(names, "point_select") {
		t.Fatalf("latency lines of a lone run: %v", names)
	}
	if _, ok := specs["g1-sweep-5f0c2d9e-line"]; ok {
		t.Error("sweep charts for a run outside a sweep")
	}
}

// A CPU whose maximum frequency cannot be read (cpufreq is missing in most
// VMs and containers) shows its frequency alone, never "(max 0)".
func TestCPUFrequencyWithoutMaximum(t *testing.T) {
	real := sharedSample(t)[0]
	for _, c := range []struct {
		max        float64
		want, lack string
	}{{0, "<td>2246</td>", "(max 0)"}, {3000, "<td>2246 (max 3000)</td>", "(max 0)"}} {
		b, _ := json.Marshal(real.Result)
		var r result.Result
		if err := json.Unmarshal(b, &r); err != nil || r.Environment == nil || r.Environment.MachineFacts == nil {
			t.Fatalf("the real run has no machine facts: %v", err)
		}
		r.Environment.CPUMHz, r.Environment.CPUMaxMHz = 2246, c.max
		page, _ := renderSpecs(t, []htmlreport.Run{{ID: real.ID, Result: &r}})
		if !strings.Contains(page, c.want) || strings.Contains(page, c.lack) {
			i := strings.Index(page, "CPU MHz")
			t.Errorf("max %v: want %q, not %q: %s", c.max, c.want, c.lack, page[i:min(len(page), i+80)])
		}
	}
}

// A degraded run says so in the summary table, with its outage.
func TestDegradedRunInSummary(t *testing.T) {
	res := *sharedSample(t)[0].Result
	res.Status = result.StatusDegraded
	res.Summary.Disconnects = []result.Disconnect{{Client: 0, StartS: 1, BackS: 8, Back: true, DisconnectedS: 7, WaitS: 7.2}, {Client: 1, StartS: 1, BackS: 8.1, Back: true, DisconnectedS: 7.1, WaitS: 7.25}}
	res.Summary.ReconnectWait = &result.Latency{MaxMS: 7250}
	page, _ := renderSpecs(t, []htmlreport.Run{{Result: &res}})
	for _, want := range []string{`class="status-degraded"`, ">degraded <span", "2 clients lost their connection; reconnect wait max 7250 ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// A run whose reads that must find rows missed says how many in the
// summary table, and a failed one why.
func TestMissedReadsInSummary(t *testing.T) {
	res := *sharedSample(t)[0].Result
	res.Summary.ReadCheck = &result.ReadCheck{Checked: 1000, Missed: 12}
	failed := res
	failed.Status, failed.Error = result.StatusFailed, "900 of 1000 reads that must find rows found none"
	page, _ := renderSpecs(t, []htmlreport.Run{{Result: &res}, {Result: &failed}})
	for _, want := range []string{`<span class="missed">(12 of 1000 reads that must find rows found none)</span>`, `title="900 of 1000 reads that must find rows found none">failed`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// A run's client CPU is in the summary table; a client-limited figure is
// marked, with the note saying what to do under the table.
func TestClientLimitedInSummary(t *testing.T) {
	res := *sharedSample(t)[0].Result
	res.Summary.Client = &result.ClientCPU{PerEventUS: 41.5, MachineShare: 0.62, CPUs: 2, SharedMachine: true, Limited: true}
	page, _ := renderSpecs(t, []htmlreport.Run{{Result: &res}})
	for _, want := range []string{"<td class=\"n\">41.5 µs per event, 62% of 2 CPUs</td>", `<span class="limited">(client-limited)</span>`,
		"client-limited: dbmark itself used 62% of this machine&#39;s 2 CPUs", "run dbmark on another machine, or with fewer clients"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	res.Summary.Client.Limited = false
	if page, _ := renderSpecs(t, []htmlreport.Run{{Result: &res}}); strings.Contains(page, "client-limited") {
		t.Error("a figure the client did not limit is marked")
	}
}

// A counter series with missing samples (its source lost its connection)
// is drawn with a break after the last sample before the gap.
func TestCounterGapBreaksTheLine(t *testing.T) {
	res := *sharedSample(t)[0].Result
	res.Counters = &result.Counters{IntervalS: 1, Series: []result.CounterSeries{{
		Name: "db.xact_commit", Unit: "/s", Kind: result.CounterRate, Source: "db",
		Points: [][2]float64{{1, 10}, {2, 11}, {3, 12}, {9, 13}, {10, 14}},
		Gaps:   [][2]float64{{3, 9}},
	}}}
	_, specs := renderSpecs(t, []htmlreport.Run{{Result: &res}})
	found := false
	for _, c := range specs {
		for _, s := range c.Series {
			if len(s.Points) == 5 && s.Points[3][0] == 9 {
				found = true
				if !slices.Equal(s.Breaks, []int{3}) {
					t.Errorf("breaks %v, want [3]: the line must not join 3 s to 9 s", s.Breaks)
				}
			}
		}
	}
	if !found {
		t.Fatal("no counter chart of db.xact_commit")
	}
}
