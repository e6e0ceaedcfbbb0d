package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/result"
)

func TestPercentilePoints(t *testing.T) {
	h := hdr.New(1, 3_600_000_000_000, 3)
	for i := int64(1); i <= 10_000; i++ {
		if err := h.RecordValue(i * 1000); err != nil { // 1 µs to 10 ms
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram("event", "latency", h)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := percentilePoints(enc)
	if err != nil {
		t.Fatal(err)
	}
	// 20 points a decade of 1/(1-q) up to the count (4 decades), then the maximum.
	if len(pts) != 81 {
		t.Fatalf("%d points, want 81", len(pts))
	}
	for i := 1; i < len(pts); i++ {
		if pts[i][0] <= pts[i-1][0] || pts[i][1] < pts[i-1][1] {
			t.Fatalf("not increasing at %d: %v then %v", i, pts[i-1], pts[i])
		}
	}
	// x = 10 is the 90th percentile: 9 ms of a uniform 0-10 ms.
	if x, y := pts[20][0], pts[20][1]; math.Abs(x-10) > 1e-9 || math.Abs(y-9) > 0.01 {
		t.Fatalf("point 20 = (%g, %g), want (10, 9)", x, y)
	}
	if last := pts[len(pts)-1]; last[0] != 10_000 || math.Abs(last[1]-10) > 0.01 {
		t.Fatalf("last point %v, want the maximum at x = count", last)
	}
}

// Sweep axes are ordered by what their values mean: sizes, durations and
// numbers by their magnitude; other values as given.
func TestSweepAxisOrder(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"1280M", "1536M", "256M", "2G", "512M"}, []string{"256M", "512M", "1280M", "1536M", "2G"}},
		{[]string{"1m", "10s", "90s"}, []string{"10s", "1m", "90s"}},
		{[]string{"16", "2", "8"}, []string{"2", "8", "16"}},
		{[]string{"seqwr", "seqrd", "rndrd"}, []string{"seqwr", "seqrd", "rndrd"}},
	} {
		got := slices.Clone(c.in)
		sortValues(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%v sorted to %v, want %v", c.in, got, c.want)
		}
	}
}

// The percentile curve read in one pass is the one read a point at a time.
func TestPercentilePointsInOnePass(t *testing.T) {
	h := hdr.New(1, 3_600_000_000_000, 3)
	for i := range 200_000 {
		h.RecordValue(int64(1000 + (i*7919)%5_000_000 + (i%1000)*(i%1000)*50))
	}
	enc, err := result.EncodeHistogram("event", "latency", h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := percentilePoints(enc)
	if err != nil {
		t.Fatal(err)
	}
	var want [][2]float64
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/20)
		if x >= float64(h.TotalCount()) {
			break
		}
		if v := float64(h.ValueAtQuantile((1-1/x)*100)) / 1e6; v > 0 {
			want = append(want, [2]float64{x, v})
		}
	}
	want = append(want, [2]float64{float64(h.TotalCount()), float64(h.Max()) / 1e6})
	if !slices.Equal(got, want) || len(got) < 100 {
		t.Errorf("%d points, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
}

// Runs whose spans overlap are drawn on one clock, each shifted by its
// start; a run that did not overlap any is left out.
func TestRunsAtTheSameTime(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	run := func(id int64, name string, from, to float64) Run {
		r := &result.Result{ID: fmt.Sprint(id), Workload: result.Workload{Name: name},
			StartedAt: t0.Add(time.Duration(from * float64(time.Second))), EndedAt: t0.Add(time.Duration(to * float64(time.Second)))}
		for s := 1.0; s <= to-from; s++ {
			r.Series = append(r.Series, result.Interval{T: s, DurationS: 1, EventsPerS: 100 * float64(id)})
		}
		return Run{ID: id, Result: r}
	}
	a, b, c, d := run(1, "query", 0, 10), run(2, "iibench", 5, 20), run(3, "oltp_point_select", 30, 40), run(4, "oltp_point_select", 19, 25)
	got := together([]Run{c, b, a, d})
	if len(got) != 1 || len(got[0]) != 3 || got[0][0].ID != 1 || got[0][1].ID != 2 || got[0][2].ID != 4 {
		t.Fatalf("clusters %v, want runs 1, 2 and 4 (4 starts before 2 ends)", got)
	}
	if got := together([]Run{a, c}); len(got) != 0 {
		t.Fatalf("runs apart in time clustered: %v", got)
	}
	g, ok := togetherGroup([]Run{a, b, c})
	if !ok || len(g.Sections) != 1 || len(g.Sections[0].Charts) != 2 {
		t.Fatalf("group %+v", g)
	}
	ch := g.Sections[0].Charts
	if ch[0].Group != ch[1].Group || ch[0].XMax != 20 {
		t.Errorf("charts not on one clock: groups %q %q, x max %g", ch[0].Group, ch[1].Group, ch[0].XMax)
	}
	if p := ch[1].Series[0].Points[0]; p[0] != 6 || p[1] != 200 {
		t.Errorf("the second run's first point %v, want (6, 200): its 1 s shifted by its 5 s later start", p)
	}
	if s := ch[1].Shade[0]; s.From != 5 || s.To != 20 {
		t.Errorf("the second run's span %+v, want 5 to 20", s)
	}
	gs := groups([]Run{a, b, c})
	if gs[0].Anchor != "together" || len(gs) != 4 {
		t.Errorf("groups %d, first %q: want the runs at the same time first, then one a workload", len(gs), gs[0].Anchor)
	}
}

// An insert benchmark with query threads has its query rate against rows
// drawn next to the insert rate; without them, no flat chart of zeros.
func TestRowMarksQueryRate(t *testing.T) {
	r := &result.Result{Rows: &result.Rows{Series: []result.RowPoint{
		{Rows: 1000, InsertsPerS: 900, QueriesPerS: 40}, {Rows: 2000, InsertsPerS: 800, QueriesPerS: 35}}}}
	got := rowMarks(r)
	if len(got) < 2 || got[1].Name != "query rate at each row mark" || got[1].YLabel != "queries/s" ||
		!slices.Equal(got[1].X, []float64{1000, 2000}) || !slices.Equal(got[1].Y, []float64{40, 35}) {
		t.Fatalf("series %+v", got)
	}
	for i := range r.Rows.Series {
		r.Rows.Series[i].QueriesPerS = 0
	}
	for _, s := range rowMarks(r) {
		if s.YLabel == "queries/s" {
			t.Errorf("a query rate drawn for a run with no query threads: %+v", s)
		}
	}
}

// A RAID sync sampled during the run is shaded on its time charts, from
// the interval it was first seen in.
func TestMachineBands(t *testing.T) {
	r := Run{Result: &result.Result{Counters: &result.Counters{IntervalS: 1, Series: []result.CounterSeries{
		{Name: "os.cpu.user", Points: [][2]float64{{1, 5}, {2, 5}, {3, 5}}},
		{Name: "os.raid.md0.sync_pct", Points: [][2]float64{{2, 37.5}, {3, 37.6}}},
	}}}}
	got := machineBands(r)
	if len(got) != 1 || got[0] != (band{From: 1, To: 3, Label: "RAID md0 sync"}) {
		t.Errorf("bands %+v", got)
	}
}

// TestServersBesideTheTotal: a run on several servers draws each server's
// events/s beside its total on the throughput chart.
func TestServersBesideTheTotal(t *testing.T) {
	r := &result.Result{ID: "1", Workload: result.Workload{Name: "oltp_read_only"},
		Servers: []result.Server{{Label: "server1"}, {Label: "server2"}}}
	for s := 1.0; s <= 5; s++ {
		r.Series = append(r.Series, result.Interval{T: s, DurationS: 1, EventsPerS: 300, ServersEventsPerS: []float64{100, 200}})
	}
	runs := []Run{{ID: 1, Result: r}}
	secs := runSections("g1", runs, newLabeler(runs))
	if len(secs) == 0 || len(secs[0].Charts) == 0 || secs[0].Charts[0].ID != "g1-tput" {
		t.Fatalf("no throughput chart: %+v", secs)
	}
	ser := secs[0].Charts[0].Series
	if len(ser) != 3 {
		t.Fatalf("%d series, want the total and 2 servers", len(ser))
	}
	for i, want := range []float64{300, 100, 200} {
		if p := ser[i].Points[2]; p[1] != want {
			t.Errorf("series %q at %v, want %v", ser[i].Name, p, want)
		}
	}
	if !strings.HasSuffix(ser[1].Name, "server1") || !strings.HasSuffix(ser[2].Name, "server2") {
		t.Errorf("series named %q, %q", ser[1].Name, ser[2].Name)
	}
}
