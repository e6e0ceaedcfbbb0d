package promexport_test

import (
	"context"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/promexport"
)

// served is a run's registry with latencies recorded and merged, served
// on a listener of its own.
func served(t *testing.T, values []time.Duration) (*promexport.Server, *metrics.Registry) {
	t.Helper()
	reg := metrics.NewRegistry([]metrics.OpSpec{{Name: "txn", Kind: metrics.Event}, {Name: "point", Kind: metrics.Read}, {Name: "commit", Kind: metrics.Other}}, time.Now())
	h := reg.NewHandle()
	for _, v := range values {
		h.Record(0, v)
		h.Record(1, v/10)
	}
	h.AddCounts([]metrics.Op{2}, []int64{int64(len(values))}) // counted, not timed
	h.Error("retryable", "40001")
	h.Error("retryable", "40001")
	h.AddRetries(2)
	h.Reconnect()
	reg.Tick(time.Now(), false)
	srv, err := promexport.Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	srv.Serve(promexport.Run{Labels: promexport.Labels{Workload: "oltp_read_write", Engine: "sqlite", ClientID: "web1", RunID: "r-1"}, Clients: 4, Metrics: reg})
	return srv, reg
}

// logUniform draws n latencies spread evenly on a log scale from 20 µs to 2 s.
func logUniform(n int) []time.Duration {
	rng := rand.New(rand.NewPCG(7, 9))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(20e3 * math.Exp(rng.Float64()*math.Log(1e5)))
	}
	return out
}

// near counts the values within the run's histogram precision of bound (in seconds).
func near(values []time.Duration, bound float64) uint64 {
	var n uint64
	for _, v := range values {
		if math.Abs(v.Seconds()-bound) <= bound*2e-3 {
			n++
		}
	}
	return n
}

func series(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no %s in the scrape", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
			}
			if !found {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s%v in the scrape", name, labels)
	return nil
}

func TestARunsCountersAndHistograms(t *testing.T) {
	values := logUniform(20000)
	srv, _ := served(t, values)
	ctx := context.Background()
	text, err := promexport.Scrape(ctx, srv.URL(), false)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{"dbmark_events_total": 20000, "dbmark_retries_total": 2, "dbmark_reconnects_total": 1, "dbmark_clients": 4} {
		m := series(t, text, name, "workload", "oltp_read_write", "engine", "sqlite", "client_id", "web1", "run_id", "r-1")
		if got := m.GetCounter().GetValue() + m.GetGauge().GetValue(); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := series(t, text, "dbmark_queries_total", "kind", "read").GetCounter().GetValue(); got != 20000 {
		t.Errorf("read queries %v, want 20000", got)
	}
	if got := series(t, text, "dbmark_queries_total", "kind", "other").GetCounter().GetValue(); got != 20000 {
		t.Errorf("other queries (counted, not timed) %v, want 20000", got)
	}
	if got := series(t, text, "dbmark_errors_total", "class", "retryable", "code", "40001").GetCounter().GetValue(); got != 2 {
		t.Errorf("errors %v, want 2", got)
	}

	// The process's own runtime: its heap, its goroutines' stacks, its
	// threads, which split its resident memory.
	for _, name := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_heap_idle_bytes", "go_threads", "go_goroutines"} {
		if got := series(t, text, name).GetGauge().GetValue(); got <= 0 {
			t.Errorf("%s = %v, want more than 0", name, got)
		}
	}

	// Classic buckets: each bound's count is the values at or under it,
	// but for those within the run's histogram precision of it.
	hist := series(t, text, "dbmark_latency_seconds", "operation", "txn", "kind", "event").GetHistogram()
	var sum float64
	for _, v := range values {
		sum += v.Seconds()
	}
	if hist.GetSampleCount() != 20000 || math.Abs(hist.GetSampleSum()-sum) > 1e-6*sum {
		t.Fatalf("count %d sum %v, want 20000 and %v", hist.GetSampleCount(), hist.GetSampleSum(), sum)
	}
	if len(hist.Bucket) < len(promexport.Buckets) {
		t.Fatalf("%d classic buckets, want %d", len(hist.Bucket), len(promexport.Buckets))
	}
	for _, b := range hist.Bucket {
		var exact uint64
		for _, v := range values {
			if v.Seconds() <= b.GetUpperBound() {
				exact++
			}
		}
		if d := int64(b.GetCumulativeCount()) - int64(exact); uint64(max(d, -d)) > near(values, b.GetUpperBound()) {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), exact)
		}
	}

	// Native buckets, as a scraper asking for protobuf reads them.
	pb, err := promexport.Scrape(ctx, srv.URL(), true)
	if err != nil {
		t.Fatal(err)
	}
	nh := series(t, pb, "dbmark_latency_seconds", "operation", "txn").GetHistogram()
	if nh.GetSchema() != promexport.Schema || len(nh.PositiveSpan) == 0 {
		t.Fatalf("no native histogram: schema %d, %d spans", nh.GetSchema(), len(nh.PositiveSpan))
	}
	counts := promexport.NativeBuckets(nh)
	var total uint64
	width := math.Exp2(1.0 / (1 << promexport.Schema))
	for i, n := range counts {
		hi := math.Exp2(float64(i) / (1 << promexport.Schema))
		var exact uint64
		for _, v := range values {
			if s := v.Seconds(); s <= hi && s > hi/width {
				exact++
			}
		}
		if d := int64(n) - int64(exact); uint64(max(d, -d)) > near(values, hi)+near(values, hi/width) {
			t.Errorf("native bucket %d (le %v): %d, want %d", i, hi, n, exact)
		}
		total += n
	}
	if total != 20000 || len(hist.Bucket) == 0 {
		t.Fatalf("native buckets hold %d, want 20000", total)
	}
	// The text format carries no native buckets, protobuf both kinds.
	if text["dbmark_latency_seconds"].Metric[0].GetHistogram().GetSchema() != 0 || len(nh.Bucket) == 0 {
		t.Fatal("the formats do not carry the histograms each can")
	}
}

func TestListenRefusesBadAddresses(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for addr, want := range map[string]string{
		"localhost":          "not a host:port",
		"127.0.0.1:port":     "cannot listen",
		busy.Addr().String(): "address already in use",
		"203.0.113.7:9464":   "cannot listen",
		"127.0.0.1:99999":    "cannot listen",
	} {
		_, err := promexport.Listen(addr, nil)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "--metrics-addr ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Listen(%q): %v, want one line with %q", addr, err, want)
		}
	}
}

// BenchmarkScrape: one scrape of a run with 16 timed operations, in
// protobuf (both kinds of histogram), end to end over HTTP.
func BenchmarkScrape(b *testing.B) {
	specs := make([]metrics.OpSpec, 16)
	for i := range specs {
		specs[i] = metrics.OpSpec{Name: "op" + string(rune('a'+i)), Kind: metrics.Read}
	}
	reg := metrics.NewRegistry(specs, time.Now())
	h := reg.NewHandle()
	for i, v := range logUniform(100000) {
		h.Record(metrics.Op(i%16), v)
	}
	reg.Tick(time.Now(), false)
	srv, err := promexport.Listen("127.0.0.1:0", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())
	srv.Serve(promexport.Run{Metrics: reg})
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := promexport.Scrape(ctx, srv.URL(), true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshot: what a scrape holds the ticker's lock for.
func BenchmarkSnapshot(b *testing.B) {
	specs := make([]metrics.OpSpec, 16)
	for i := range specs {
		specs[i] = metrics.OpSpec{Name: "op", Kind: metrics.Read}
	}
	reg := metrics.NewRegistry(specs, time.Now())
	h := reg.NewHandle()
	for i, v := range logUniform(100000) {
		h.Record(metrics.Op(i%16), v)
	}
	reg.Tick(time.Now(), false)
	for b.Loop() {
		reg.Snapshot()
	}
}
