package report

import (
	"fmt"
	"io"

	"github.com/dbmark/dbmark/internal/result"
)

// servers writes each server's part of a run on several (a cluster's
// nodes): where it is, its clients, events and rate, latency and errors,
// and the total they add up to.
func servers(w io.Writer, r *result.Result) {
	if len(r.Servers) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPer server (the threads spread over them round-robin; latency in ms):")
	fmt.Fprintf(w, "    %-8s %7s %10s %12s %9s", "server", "threads", "events", "per sec", "mean")
	for _, p := range r.Run.Percentiles {
		fmt.Fprintf(w, " %9s", "p"+trimFloat(p))
	}
	fmt.Fprintf(w, " %8s  %s\n", "errors", "target")
	var events, errs int64
	var rate float64
	for _, s := range r.Servers {
		fmt.Fprintf(w, "    %-8s %7d", s.Label, s.Clients)
		if s.Summary == nil {
			fmt.Fprintf(w, "  (nothing measured)  %s\n", s.Target.URL)
			continue
		}
		m := s.Summary
		events, errs, rate = events+m.Events, errs+m.ErrorsTotal, rate+m.EventsPerS
		fmt.Fprintf(w, " %10d %12.2f", m.Events, m.EventsPerS)
		latency(w, m.Latency, len(r.Run.Percentiles))
		fmt.Fprintf(w, " %8d  %s %s\n", m.ErrorsTotal, s.Target.URL, s.Target.Version)
	}
	fmt.Fprintf(w, "    %-8s %7d %10d %12.2f", "total", r.Run.Threads, events, rate)
	latency(w, r.Summary.Latency, len(r.Run.Percentiles))
	fmt.Fprintf(w, " %8d\n", errs)
}

// latency writes a row's mean and n percentiles, dashes where there are
// none.
func latency(w io.Writer, l *result.Latency, n int) {
	if l == nil {
		for range n + 1 {
			fmt.Fprintf(w, " %9s", "-")
		}
		return
	}
	fmt.Fprintf(w, " %9.3f", l.MeanMS)
	for i := range n {
		if i < len(l.Percentiles) {
			fmt.Fprintf(w, " %9.3f", l.Percentiles[i].MS)
		} else {
			fmt.Fprintf(w, " %9s", "-")
		}
	}
}
