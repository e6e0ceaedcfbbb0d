package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/promexport"
	"github.com/dbmark/dbmark/internal/result"
)

var metricsRE = regexp.MustCompile(`dbmark: metrics on (http://\S+)`)

type families = map[string]*dto.MetricFamily

// onSaved is a run's stdout: when the run says its result is saved (the
// last tick long merged, the listener still open) it scrapes once more,
// in text and in protobuf.
type onSaved struct {
	syncBuffer
	url         func() string
	text, proto families
	err         error
}

func (w *onSaved) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(" saved (")) && w.text == nil {
		ctx := context.Background()
		w.text, w.err = promexport.Scrape(ctx, w.url(), false)
		if w.err == nil {
			w.proto, w.err = promexport.Scrape(ctx, w.url(), true)
		}
	}
	return w.syncBuffer.Write(p)
}

// TestLiveMetricsDuringARun scrapes a run's --metrics-addr while it runs
// and holds what it served to the result the run kept.
func TestLiveMetricsDuringARun(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		home(t)
		liveRun(t, "sqlite", "--tables", "1", "--table-size", "1000")
	})
	t.Run("postgres", func(t *testing.T) {
		home(t)
		u := serverURL(t, "DBMARK_TEST_POSTGRES")
		args := []string{"--target", u.String(), "--tables", "2", "--table-size", "1000"}
		prepared(t, "oltp_read_write", args...)
		liveRun(t, "postgres", args...)
	})
}

func liveRun(t *testing.T, engine string, args ...string) {
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	var errb syncBuffer
	url := func() string {
		if m := metricsRE.FindStringSubmatch(errb.String()); m != nil {
			return m[1]
		}
		return ""
	}
	out := &onSaved{url: url}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(context.Background(), append([]string{"run", "oltp_read_write", "--time", "3", "--threads", "2",
			"--report-interval", "250ms", "--metrics-addr", "127.0.0.1:0", "--json", jsonPath}, args...), out, &errb)
	}()
	var scrapes []families
	var code int
loop:
	for {
		select {
		case code = <-done:
			break loop
		case <-time.After(150 * time.Millisecond):
		}
		if url() == "" {
			continue
		}
		// Errors are the listener closing at the end; what matters is
		// that enough scrapes during the run succeeded.
		if fams, err := promexport.Scrape(context.Background(), url(), false); err == nil && fams["dbmark_events_total"] != nil {
			scrapes = append(scrapes, fams)
		}
	}
	if code != 0 || out.err != nil || out.text == nil {
		t.Fatalf("run: exit %d, final scrape %v: %s", code, out.err, errb.String())
	}
	res := readResult(t, jsonPath)
	scrapes = append(scrapes, out.text)

	// Several scrapes saw the run go on (at least two counts before the
	// last: a scrape under the race detector takes a second), and no
	// counter went back.
	moving := map[float64]bool{}
	for _, s := range scrapes {
		if n := value(s, "dbmark_events_total"); n > 0 {
			moving[n] = true
		}
	}
	if len(scrapes) < 4 || len(moving) < 3 {
		t.Fatalf("%d scrapes saw %d distinct event counts, want 4 scrapes and 3 counts or more", len(scrapes), len(moving))
	}
	last := map[string]float64{}
	for i, s := range scrapes {
		for key, v := range counters(s) {
			if v < last[key] {
				t.Fatalf("scrape %d: %s went back from %v to %v", i, key, last[key], v)
			}
			last[key] = v
		}
	}

	// The run's labels are on its series.
	lbl := labels(out.text["dbmark_events_total"].Metric[0])
	if lbl["workload"] != "oltp_read_write" || lbl["engine"] != engine || lbl["run_id"] != res.ID {
		t.Fatalf("labels %v, want the run's (%s, %s)", lbl, engine, res.ID)
	}

	// The last scrape holds the result's totals: the events of the
	// window and of the drain after it, each operation's histogram as the
	// result keeps it, the errors, retries and reconnects.
	fin := out.text
	s := res.Summary
	if got, want := value(fin, "dbmark_events_total"), float64(s.Events+s.DrainEvents); got != want {
		t.Errorf("events_total %v, the result %v", got, want)
	}
	byKind := map[string]float64{}
	for _, hh := range res.Histograms {
		if hh.Kind != "latency" {
			continue
		}
		h, err := hh.Decode()
		if err != nil {
			t.Fatal(err)
		}
		m := find(t, fin, "dbmark_latency_seconds", "operation", hh.Op)
		if got := m.GetHistogram().GetSampleCount(); got != uint64(h.TotalCount()) {
			t.Errorf("%s: histogram count %d, the result's %d", hh.Op, got, h.TotalCount())
		}
		if got := find(t, fin, "dbmark_operations_total", "operation", hh.Op).GetCounter().GetValue(); got != float64(h.TotalCount()) {
			t.Errorf("%s: operations_total %v, the result's histogram %d", hh.Op, got, h.TotalCount())
		}
		byKind[labels(m)["kind"]] += float64(h.TotalCount())
	}
	for _, k := range []string{"read", "write", "other"} {
		if got := find(t, fin, "dbmark_queries_total", "kind", k).GetCounter().GetValue(); got != byKind[k] || got < float64(map[string]int64{"read": s.Queries.Read, "write": s.Queries.Write, "other": s.Queries.Other}[k]) {
			t.Errorf("%s queries %v, the result's histograms %v", k, got, byKind[k])
		}
	}
	var errs float64
	for _, m := range metricsOf(fin, "dbmark_errors_total") {
		errs += m.GetCounter().GetValue()
	}
	if errs != float64(s.ErrorsTotal) || value(fin, "dbmark_retries_total") != float64(s.Retries) || value(fin, "dbmark_reconnects_total") != float64(s.Reconnects) {
		t.Errorf("errors %v retries %v reconnects %v, the result's %d %d %d", errs, value(fin, "dbmark_retries_total"), value(fin, "dbmark_reconnects_total"), s.ErrorsTotal, s.Retries, s.Reconnects)
	}
	if got := value(fin, "dbmark_measured_seconds"); math.Abs(got-s.DurationS-s.DrainS) > 0.01 {
		t.Errorf("measured_seconds %v, the result's %v + drain %v", got, s.DurationS, s.DrainS)
	}
	if len(metricsOf(fin, "dbmark_os_sample")) == 0 || (engine == "postgres" && len(metricsOf(fin, "dbmark_engine_sample")) == 0) {
		t.Errorf("sampled counters missing: %d OS, %d engine", len(metricsOf(fin, "dbmark_os_sample")), len(metricsOf(fin, "dbmark_engine_sample")))
	}

	// The protobuf scrape carries native histograms, whose buckets place
	// the result's p99 where it is.
	event := res.Summary.Ops[0].Name
	for _, o := range res.Summary.Ops {
		if o.Kind == metrics.Event.String() {
			event = o.Name
		}
	}
	nh := find(t, out.proto, "dbmark_latency_seconds", "operation", event).GetHistogram()
	if nh.GetSchema() != promexport.Schema || len(nh.PositiveSpan) == 0 {
		t.Fatalf("no native histogram in the protobuf scrape: %v", nh)
	}
	lo, hi := nativeQuantile(nh, 0.99)
	p99 := percentile(res.Summary.Latency, 99) / 1e3
	if p99 < lo*0.998 || p99 > hi*1.002 {
		t.Errorf("p99 %v s outside the native bucket (%v, %v] that holds the 99th percentile", p99, lo, hi)
	}
}

func percentile(l *result.Latency, p float64) float64 {
	for _, q := range l.Percentiles {
		if q.P == p {
			return q.MS
		}
	}
	return math.NaN()
}

// nativeQuantile is the native bucket (lower, upper] that holds the
// value at quantile q.
func nativeQuantile(h *dto.Histogram, q float64) (float64, float64) {
	buckets := promexport.NativeBuckets(h)
	idx := make([]int, 0, len(buckets))
	for i := range buckets {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	// The rank as HdrHistogram counts it (rounded, at least 1).
	rank := max(1, math.Floor(q*float64(h.GetSampleCount())+0.5))
	var cum uint64
	for _, i := range idx {
		cum += buckets[i]
		if float64(cum) >= rank {
			f := float64(int(1) << promexport.Schema)
			return math.Exp2(float64(i-1) / f), math.Exp2(float64(i) / f)
		}
	}
	return math.Inf(1), math.Inf(1)
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.Label {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

func metricsOf(f families, name string) []*dto.Metric {
	if f[name] == nil {
		return nil
	}
	return f[name].Metric
}

func find(t *testing.T, f families, name string, kv ...string) *dto.Metric {
	t.Helper()
next:
	for _, m := range metricsOf(f, name) {
		l := labels(m)
		for i := 0; i < len(kv); i += 2 {
			if l[kv[i]] != kv[i+1] {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s%v", name, kv)
	return nil
}

// value is the one series of name: a counter's or a gauge's value.
func value(f families, name string) float64 {
	ms := metricsOf(f, name)
	if len(ms) != 1 {
		return math.NaN()
	}
	return ms[0].GetCounter().GetValue() + ms[0].GetGauge().GetValue()
}

// counters are every counter and histogram count of a run's series in
// a scrape (not the process's, which the test's own work moves too), by
// series.
func counters(f families) map[string]float64 {
	out := map[string]float64{}
	for name, fam := range f {
		if !strings.HasPrefix(name, "dbmark_") {
			continue
		}
		for _, m := range fam.Metric {
			key := fmt.Sprint(name, labels(m))
			switch fam.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func TestMetricsAddrBadInput(t *testing.T) {
	home(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	ctx := context.Background()
	oneLineError(t, dbmark(t, ctx, "run", "oltp_point_select", "--metrics-addr", "9464"), `--metrics-addr "9464": not a host:port`)
	o := dbmark(t, ctx, "run", "oltp_point_select", "--metrics-addr", busy.Addr().String())
	oneLineError(t, o, "address already in use")
	oneLineError(t, dbmark(t, ctx, "sweep", "oltp_point_select", "--threads", "1,2", "--metrics-addr", busy.Addr().String()), "address already in use")
	oneLineError(t, dbmark(t, ctx, "serve", "--metrics-addr", "nonsense"), "--metrics-addr")
	if o := dbmark(t, ctx, "results", "list"); strings.Contains(o.stdout, "oltp_point_select") {
		t.Fatalf("a run was kept after a refused --metrics-addr: %s", o.stdout)
	}
}

// TestServeMetrics: the site's own request metrics, on a listener apart
// from the site, labelled by route pattern, never by the path asked.
func TestServeMetrics(t *testing.T) {
	home(t)
	site, out, _ := serveOut(t, "--store", filepath.Join(t.TempDir(), "site.db"), "--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`serving the site's metrics on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no metrics address in %q", out.String())
	}
	var wg sync.WaitGroup
	for _, path := range []string{"/r/0123456789abcdef", "/r/secret-token-here?user=alice", "/results", "/no/such/page", "/api/v1/results/42"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(site + path)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	if resp, err := http.Get(site + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the site serves its metrics to the public")
		}
	}
	fams, err := promexport.Scrape(context.Background(), m[1], false)
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	routes := map[string]float64{}
	for _, mm := range metricsOf(fams, "dbmark_site_http_requests_total") {
		l := labels(mm)
		for _, v := range l {
			if strings.Contains(v, "secret") || strings.Contains(v, "alice") || strings.Contains(v, "0123456789") {
				t.Fatalf("a request's path in a label: %v", l)
			}
		}
		routes[l["route"]+" "+l["code"]] += mm.GetCounter().GetValue()
		total += mm.GetCounter().GetValue()
	}
	// The five requests, and the one for /metrics that the site answered
	// as any page it does not have.
	if total != 6 || routes["GET /r/{file} 404"] != 2 || routes["GET /results 200"] != 1 || routes["/ 404"] != 2 {
		t.Fatalf("requests by route and status: %v", routes)
	}
	if got := find(t, fams, "dbmark_site_http_request_duration_seconds", "route", "GET /results").GetHistogram().GetSampleCount(); got != 1 {
		t.Fatalf("durations counted %d, want 1", got)
	}
	if got := value(fams, "dbmark_site_http_requests_in_flight"); got != 0 {
		t.Fatalf("in flight after the answers: %v", got)
	}
}

// TestSweepServesEachCell: one listener serves a sweep's runs in turn,
// each with its cell's labels.
func TestSweepServesEachCell(t *testing.T) {
	home(t)
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(context.Background(), []string{"sweep", "oltp_point_select", "--threads", "1,2", "--time", "500ms",
			"--table-size", "1000", "--metrics-addr", "127.0.0.1:0"}, io.Discard, &errb)
	}()
	cells := map[string]string{} // cell -> run_id
	for {
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("sweep: exit %d: %s", code, errb.String())
			}
			if len(cells) != 2 || cells["threads=1"] == "" || cells["threads=2"] == "" || cells["threads=1"] == cells["threads=2"] {
				t.Fatalf("cells served: %v, want threads=1 and threads=2, each its own run", cells)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		m := metricsRE.FindStringSubmatch(errb.String())
		if m == nil {
			continue
		}
		fams, err := promexport.Scrape(context.Background(), m[1], false)
		if err != nil {
			continue // the listener closing at the end
		}
		for _, mm := range metricsOf(fams, "dbmark_events_total") {
			if l := labels(mm); l["sweep_id"] != "" && mm.GetCounter().GetValue() > 0 {
				cells[l["cell"]] = l["run_id"]
			}
		}
	}
}
