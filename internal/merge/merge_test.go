package merge_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/merge"
	"github.com/dbmark/dbmark/internal/result"
)

var t0 = time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC)

// host makes a result of a host's run: n events of latencies drawn from
// a host-specific distribution, started at start with a one-second
// warm-up, ten one-second intervals after it.
func host(t testing.TB, id string, threads int, start time.Time, n int, scale float64) (*result.Result, []int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(threads), uint64(n)))
	h := hdr.New(1, 3_600_000_000_000, 3)
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(rng.ExpFloat64()*scale) + 1000
		if err := h.RecordValue(vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram("tx", "latency", h)
	if err != nil {
		t.Fatal(err)
	}
	ps := []float64{50, 99}
	r := &result.Result{
		SchemaVersion: result.SchemaVersion, ID: id, ClientID: strings.TrimPrefix(id, "id-"),
		Workload: result.Workload{Name: "oltp_read_only", Headline: "tps", Better: "higher",
			Options: map[string]string{"threads": "2", "table-size": "1000", "time": "10s", "seed": id}},
		Target:    result.Target{Kind: "postgres"},
		Run:       result.RunOptions{Threads: threads, WarmupS: 1, Percentiles: ps},
		StartedAt: start, EndedAt: start.Add(11 * time.Second), Status: result.StatusOK,
		Summary: result.Summary{DurationS: 10, Events: int64(n), EventsPerS: float64(n) / 10, Headline: float64(n) / 10,
			HeadlineUnit: "tps", Queries: result.QueryCounts{Read: int64(10 * n), Total: int64(10 * n)},
			Errors: []result.ErrorCount{{Class: "retryable", Code: "40001", Count: 2}}, ErrorsTotal: 2,
			Ops:     []result.OpSummary{{Name: "tx", Kind: "event", Count: int64(n), PerS: float64(n) / 10, Latency: result.LatencyOf(h, ps)}},
			Latency: result.LatencyOf(h, ps), Concurrency: 1},
		Histograms: []result.Histogram{enc},
		Counters: &result.Counters{IntervalS: 1, Series: []result.CounterSeries{
			{Name: "os.cpu.user", Unit: "%", Kind: "gauge", Source: "os", Points: [][2]float64{{1, 10}, {2, 20}}}}},
	}
	for k := 0; k <= 10; k++ {
		r.Series = append(r.Series, result.Interval{T: float64(k + 1), DurationS: 1, Warmup: k == 0,
			EventsPerS: float64(n) / 10, Latency: []result.Percentile{{P: 99, MS: float64(threads)}}})
	}
	return r, vals
}

// p99 is the 99th percentile of vals by rank, as HdrHistogram defines it.
func p99(vals []int64) int64 {
	s := slices.Clone(vals)
	slices.Sort(s)
	i := int(0.99*float64(len(s))+0.5) - 1
	return s[max(i, 0)]
}

func TestMergeIsExact(t *testing.T) {
	a, va := host(t, "id-a", 2, t0, 20_000, 1e6)
	b, vb := host(t, "id-b", 3, t0.Add(300*time.Millisecond), 30_000, 5e6)
	c, vc := host(t, "id-c", 1, t0.Add(-200*time.Millisecond), 5_000, 2e7)
	m, err := merge.Merge([]*result.Result{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.Events != 55_000 || m.Summary.ErrorsTotal != 6 || m.Summary.Queries.Total != 550_000 || m.Run.Threads != 6 || m.Workload.Options["threads"] != "6" {
		t.Fatalf("counts: events %d errors %d queries %d threads %d (%s)", m.Summary.Events, m.Summary.ErrorsTotal, m.Summary.Queries.Total, m.Run.Threads, m.Workload.Options["threads"])
	}
	if len(m.Summary.Errors) != 1 || m.Summary.Errors[0].Count != 6 {
		t.Fatalf("errors by code: %+v", m.Summary.Errors)
	}
	if m.Summary.EventsPerS != 5500 || m.Summary.Headline != 5500 {
		t.Fatalf("rate %v headline %v, want 5500", m.Summary.EventsPerS, m.Summary.Headline)
	}
	union := slices.Concat(va, vb, vc)
	want := p99(union)
	got, _ := m.Summary.Latency.Get(99)
	h := hdr.New(1, 3_600_000_000_000, 3)
	if !h.ValuesAreEquivalent(int64(got*1e6), want) {
		t.Fatalf("merged p99 %.4f ms, the union's p99 is %.4f ms", got, float64(want)/1e6)
	}
	// The mean of the hosts' p99s is not it: the test would not tell
	// them apart otherwise.
	var mean float64
	for _, r := range []*result.Result{a, b, c} {
		v, _ := r.Summary.Latency.Get(99)
		mean += v / 3
	}
	if h.ValuesAreEquivalent(int64(mean*1e6), want) {
		t.Fatalf("the hosts' mean p99 %.4f equals the union's: the test cannot fail", mean)
	}
	dec, err := m.Histograms[0].Decode()
	if err != nil || dec.TotalCount() != 55_000 {
		t.Fatalf("merged histogram: %v, %d values", err, dec.TotalCount())
	}
	// Little's law over all clients: events/s x mean latency.
	if want := 5500 * dec.Mean() / 1e9; m.Summary.Concurrency != want {
		t.Fatalf("concurrency %v, want %v", m.Summary.Concurrency, want)
	}
	if !m.StartedAt.Equal(t0.Add(-200*time.Millisecond)) || len(m.Clients) != 3 || m.Clients[1].ID != "b" || m.Clients[1].Events != 30_000 {
		t.Fatalf("start %v clients %+v", m.StartedAt, m.Clients)
	}
	if m.Merged == nil || !slices.Equal(m.Merged.Results, []string{"id-a", "id-b", "id-c"}) {
		t.Fatalf("merged note %+v", m.Merged)
	}
	var names []string
	for _, s := range m.Counters.Series {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"a/os.cpu.user", "b/os.cpu.user", "c/os.cpu.user"}) {
		t.Fatalf("counters %v", names)
	}
	// b started 0.5 s after c, the merged start: its points move with it.
	if p := m.Counters.Series[1].Points[0][0]; p < 1.49 || p > 1.51 {
		t.Fatalf("b's first counter point at %v s, want 1.5", p)
	}
}

func TestMergeSeriesAddUpByWallClock(t *testing.T) {
	a, _ := host(t, "id-a", 2, t0, 1000, 1e6)
	b, _ := host(t, "id-b", 5, t0.Add(2*time.Second), 3000, 1e6)
	m, err := merge.Merge([]*result.Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	// a's window is 1..11 s, b's 3..13 s: where both measure, the rate is
	// 100 + 300 and the p99 the higher one.
	var both int
	for _, iv := range m.Series {
		if iv.T > 3.5 && iv.T < 11.5 {
			both++
			if iv.EventsPerS != 400 || iv.Warmup || iv.Latency[0].MS != 5 {
				t.Fatalf("interval at %v s: %+v", iv.T, iv)
			}
		}
	}
	if both != 8 || len(m.Series) != 13 {
		t.Fatalf("%d intervals where both measured, %d in all: %+v", both, len(m.Series), m.Series)
	}
	if m.Summary.DurationS != 12 {
		t.Fatalf("duration %v, want the union of the windows, 12 s", m.Summary.DurationS)
	}
}

func TestMergeRefuses(t *testing.T) {
	mk := func(id string, start time.Time) *result.Result {
		r, _ := host(t, id, 2, start, 100, 1e6)
		return r
	}
	otherWork := mk("id-w", t0)
	otherWork.Workload.Options["table-size"] = "5000"
	otherLoad := mk("id-l", t0)
	otherLoad.Workload.Name = "oltp_write_only"
	query := mk("id-q", t0)
	query.Workload.Better = "lower"
	open := mk("id-o", t0)
	open.Run.Rate = 100
	limitsDiffer := mk("id-t", t0)
	limitsDiffer.Workload.Options["time"] = "20s"
	limitsDiffer.Workload.Options["threads"] = "8"
	cases := []struct {
		name string
		rs   []*result.Result
		want string
	}{
		{"one", []*result.Result{mk("id-a", t0)}, "at least two"},
		{"twice", []*result.Result{mk("id-a", t0), mk("id-a", t0)}, "given twice"},
		{"workloads", []*result.Result{mk("id-a", t0), otherLoad}, "different workloads"},
		{"work options", []*result.Result{mk("id-a", t0), otherWork}, "--table-size"},
		{"lower is better", []*result.Result{query, mk("id-a", t0)}, "better lower"},
		{"open and closed loops", []*result.Result{mk("id-a", t0), open}, "open loop"},
		{"windows apart", []*result.Result{mk("id-a", t0), mk("id-b", t0.Add(time.Minute))}, "do not overlap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := merge.Merge(c.rs)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line naming %q", err, c.want)
			}
		})
	}
	if _, err := merge.Merge([]*result.Result{mk("id-a", t0), limitsDiffer}); err != nil {
		t.Fatalf("limits and threads may differ: %v", err)
	}
}
