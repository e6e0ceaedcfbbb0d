package promexport

import (
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbmark/dbmark/internal/metrics"
)

// Labels name a run on every series it serves; empty ones are left out.
type Labels struct {
	Workload string
	Engine   string
	ClientID string // run --client-id: the host among several
	RunID    string // the result's id
	SweepID  string // a sweep's run: the sweep's id
	Cell     string // and its cell (threads=8 rate=100)
}

func (l Labels) constLabels() prometheus.Labels {
	out := prometheus.Labels{}
	for k, v := range map[string]string{"workload": l.Workload, "engine": l.Engine, "client_id": l.ClientID,
		"run_id": l.RunID, "sweep_id": l.SweepID, "cell": l.Cell} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// Sampled is a run's sampled OS and engine counters (sampler.Sampler):
// each one's last value, as the result's counters record it (a rate per
// second for a cumulative counter), and its unit.
type Sampled interface {
	Latest() map[string]float64
	Units() map[string]string
}

// Run is a run to serve.
type Run struct {
	Labels  Labels
	Clients int
	Metrics *metrics.Registry
	Samples Sampled // nil: none
}

// Serve makes r the run served, in place of the one before: a sweep's
// runs are served one after another from one listener, each with its
// cell's labels. The last run's series stay until the next one starts.
func (s *Server) Serve(r Run) { s.run.Store(newRunCollector(r)) }

// liveRun collects the run being served. It describes nothing: the
// series it gives change with the run (its labels, its operations).
type liveRun struct{ s *Server }

func (liveRun) Describe(chan<- *prometheus.Desc) {}

func (l liveRun) Collect(ch chan<- prometheus.Metric) {
	if c := l.s.run.Load(); c != nil {
		c.collect(ch)
	}
}

// runCollector turns one run's merged totals into series at each scrape.
type runCollector struct {
	run                                Run
	events, queries, ops, errs         *prometheus.Desc
	retries, reconnects, measured, thr *prometheus.Desc
	latency, osSample, engSample       *prometheus.Desc
}

func newRunCollector(r Run) *runCollector {
	cl := r.Labels.constLabels()
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_"+name, help, labels, cl)
	}
	return &runCollector{run: r,
		events:     d("events_total", "Events (transactions) committed in the measured window, and after it while the clients drain."),
		queries:    d("queries_total", "Statements completed, by kind: read, write, other.", "kind"),
		ops:        d("operations_total", "Completions of each operation the workload records, timed or not.", "operation", "kind"),
		errs:       d("errors_total", "Failed tries, by what was done about them (class) and the engine's code.", "class", "code"),
		retries:    d("retries_total", "Tries repeated after a retryable error, counted with the transaction that ended."),
		reconnects: d("reconnects_total", "Connections opened again after one was lost."),
		measured:   d("measured_seconds", "Length of the measured window so far (0 during the warm-up)."),
		thr:        d("clients", "Clients the run drives, each with its own connection."),
		latency:    d("latency_seconds", "Latency of each timed operation, from its (intended) start to its end.", "operation", "kind"),
		osSample:   d("os_sample", "Last sample of an OS counter on the client's machine, as the result records it: a rate per second for a cumulative counter, else the level.", "counter", "unit"),
		engSample:  d("engine_sample", "Last sample of an engine counter, as the result records it: a rate per second for a cumulative counter, else the level.", "counter", "unit"),
	}
}

func (c *runCollector) collect(ch chan<- prometheus.Metric) {
	snap := c.run.Metrics.Snapshot()
	counter := func(d *prometheus.Desc, v int64, lv ...string) {
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(d, prometheus.CounterValue, float64(v), snap.Since, lv...)
	}
	var byKind [metrics.Meta + 1]int64
	for _, o := range snap.Ops {
		byKind[o.Spec.Kind] += o.Count
		counter(c.ops, o.Count, o.Spec.Name, o.Spec.Kind.String())
		ch <- newHistogram(c.latency, o, snap.Since, o.Spec.Name, o.Spec.Kind.String())
	}
	counter(c.events, byKind[metrics.Event])
	for _, k := range []metrics.Kind{metrics.Read, metrics.Write, metrics.Other} {
		counter(c.queries, byKind[k], k.String())
	}
	for k, n := range snap.Errors {
		counter(c.errs, n, k.Class, k.Code)
	}
	counter(c.retries, snap.Retries)
	counter(c.reconnects, snap.Reconnects)
	ch <- prometheus.MustNewConstMetric(c.measured, prometheus.GaugeValue, snap.Measured.Seconds())
	ch <- prometheus.MustNewConstMetric(c.thr, prometheus.GaugeValue, float64(c.run.Clients))
	if c.run.Samples != nil {
		c.samples(ch)
	}
}

// samples gives the sampled counters' last values, the OS's and the
// engine's apart, each named as the result names it without its source.
func (c *runCollector) samples(ch chan<- prometheus.Metric) {
	latest, units := c.run.Samples.Latest(), c.run.Samples.Units()
	names := make([]string, 0, len(latest))
	for n := range latest {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := c.osSample
		name, ok := strings.CutPrefix(n, "os.")
		if !ok {
			d = c.engSample
			name = strings.TrimPrefix(n, "db.")
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, latest[n], name, units[n])
	}
}
