package cli

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/promexport"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/sampler"
)

// listenMetrics binds --metrics-addr before anything runs (nil when not
// given): an address that does not parse or is taken is one line and
// exit 1. A port picked by the system (:0) is printed on stderr.
func (a *App) listenMetrics(addr string) (*promexport.Server, error) {
	if addr == "" {
		return nil, nil
	}
	mx, err := promexport.Listen(addr, a.Logger)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if _, port, _ := net.SplitHostPort(addr); port == "0" {
		fmt.Fprintf(a.Stderr, "dbmark: metrics on %s\n", mx.URL())
	}
	return mx, nil
}

// closeMetrics closes the listener at the end of the run (or sweep),
// letting a scrape under way finish.
func (a *App) closeMetrics(mx *promexport.Server) {
	if mx == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := mx.Close(ctx); err != nil {
		a.Logger.Warn("closing the metrics listener", "err", err)
	}
}

// watch is the runner's hook that serves the run res on the metrics
// listener, with its labels; nil when there is none.
func (o runOpts) watch(res *result.Result, f *runFlags, clients int, smp *sampler.Sampler) func(*metrics.Registry) {
	if o.metrics == nil {
		return nil
	}
	labels := promexport.Labels{Workload: res.Workload.Name, Engine: res.Target.Kind, ClientID: f.start.clientID, RunID: res.ID}
	if o.sweep != nil {
		labels.SweepID, labels.Cell = o.sweep.ID, cellLabel(o.sweep.Cell)
	}
	return func(reg *metrics.Registry) {
		run := promexport.Run{Labels: labels, Clients: clients, Metrics: reg}
		if smp != nil { // a nil *Sampler in the interface would not be nil
			run.Samples = smp
		}
		o.metrics.Serve(run)
	}
}

// cellLabel is a sweep cell's values as one label: name=value, by name.
func cellLabel(cell map[string]string) string {
	parts := make([]string, 0, len(cell))
	for k, v := range cell {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
