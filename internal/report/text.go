// Package report renders results for people and spreadsheets: the live
// interval line, the text summary, and CSV.
package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/dips"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/saturation"
)

// LiveLine renders one interval as sysbench's --report-interval line,
// field for field up to reconn/s, so that what parses sysbench's lines
// parses dbmark's: the percentile sysbench shows is the 95th when it is
// among --percentiles, else the first; the other percentiles, retries,
// schedule lag and a workload's own figures follow. The time is given to
// the precision of the report interval every: whole seconds, as
// sysbench's, when every is (a tick a loaded machine delivers late still
// reads "[ 2s ]"), else to the hundredth.
func LiveLine(iv result.Interval, threads int, every time.Duration) string {
	if every > 0 && every%time.Second == 0 {
		return liveLine(iv, threads, strconv.FormatFloat(math.Round(iv.T), 'f', 0, 64))
	}
	return liveLine(iv, threads, trimFloat(math.Round(iv.T*100)/100))
}

// LiveLineAt is LiveLine stamped with the Unix time at, in seconds to the
// millisecond, instead of the time since the start (pgbench's
// --progress-timestamp), so lines line up with other logs of the machine.
func LiveLineAt(iv result.Interval, threads int, at time.Time) string {
	return liveLine(iv, threads, strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
}

func liveLine(iv result.Interval, threads int, stamp string) string {
	var b strings.Builder
	tag := ""
	if iv.Warmup {
		tag = " warmup"
	}
	fmt.Fprintf(&b, "[ %ss%s ] thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f)",
		stamp, tag, threads, iv.EventsPerS, iv.ReadsPerS+iv.WritesPerS+iv.OtherPerS, iv.ReadsPerS, iv.WritesPerS, iv.OtherPerS)
	if iv.ReadMiBPerS > 0 || iv.WriteMiBPerS > 0 {
		fmt.Fprintf(&b, " MiB/s (r/w): %.2f/%.2f", iv.ReadMiBPerS, iv.WriteMiBPerS)
	}
	// An interval without events has no latency: sysbench then shows
	// its (default) 95th percentile as 0.
	head := result.Percentile{P: 95}
	if i := slices.IndexFunc(iv.Latency, func(p result.Percentile) bool { return p.P == 95 }); i >= 0 {
		head = iv.Latency[i]
	} else if len(iv.Latency) > 0 {
		head = iv.Latency[0]
	}
	fmt.Fprintf(&b, " lat (ms,%s%%): %.2f err/s: %.2f reconn/s: %.2f", trimFloat(head.P), head.MS, iv.ErrorsPerS, iv.ReconnPerS)
	var names, vals []string
	for _, p := range iv.Latency {
		if p.P != head.P {
			names = append(names, "p"+trimFloat(p.P))
			vals = append(vals, strconv.FormatFloat(p.MS, 'f', 2, 64))
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, " lat (ms) %s: %s", strings.Join(names, "/"), strings.Join(vals, "/"))
	}
	if iv.RetriesPerS > 0 {
		fmt.Fprintf(&b, " retries/s: %.2f", iv.RetriesPerS)
	}
	if iv.LagMeanMS > 0 {
		fmt.Fprintf(&b, " lag (ms): %.2f", iv.LagMeanMS)
	}
	if v := iv.Extra["missed_reads_per_s"]; v > 0 {
		fmt.Fprintf(&b, " missed reads/s: %.2f", v)
	}
	if rows, ok := iv.Extra["rows"]; ok {
		fmt.Fprintf(&b, " rows: %.0f rows/s: %.0f table: %.0f", rows, iv.Extra["rows_per_s"], iv.Extra["table_rows"])
		if d, ok := iv.Extra["data_bytes"]; ok {
			fmt.Fprintf(&b, " data/index MB: %.1f/%.1f", d/1e6, iv.Extra["index_bytes"]/1e6)
		}
	}
	return b.String()
}

func trimFloat(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Summary writes the summary of a result, in sysbench's order with more detail.
func Summary(w io.Writer, r *result.Result) {
	s := &r.Summary
	fmt.Fprintf(w, "\n%s on %s %s (%s", r.Workload.Name, r.Target.Engine, r.Target.Version, r.Target.URL)
	if n := len(r.Servers); n > 1 {
		fmt.Fprintf(w, " and %d more server(s)", n-1)
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintf(w, "status: %s", r.Status)
	if r.Error != "" {
		fmt.Fprintf(w, " (%s)", r.Error)
	} else if r.Status == result.StatusDegraded {
		fmt.Fprint(w, " (clients lost their connection and reconnected: see the reconnect wait)")
	}
	fmt.Fprintf(w, "\nthreads: %d  seed: %d", r.Run.Threads, r.Seed)
	if r.Run.Rate > 0 {
		fmt.Fprintf(w, "  rate: %g/s (open loop)", r.Run.Rate)
	}
	fmt.Fprintln(w)
	if len(r.Target.ServerSet) > 0 {
		parts := make([]string, len(r.Target.ServerSet))
		for i, s := range r.Target.ServerSet {
			parts[i] = fmt.Sprintf("%s=%s (read back %s, was %s)", s.Name, s.Set, s.ReadBack, s.Original)
		}
		fmt.Fprintf(w, "server settings: %s\n", strings.Join(parts, ", "))
	}
	hosts(w, r)
	if r.Target.Kind == "dir" {
		// File I/O: operations and bytes, no transactions or queries.
		fmt.Fprintln(w, "\nFile I/O statistics:")
		fmt.Fprintf(w, "    operations:                          %-10d (%.2f per sec.)\n", s.Events, s.EventsPerS)
		fmt.Fprintf(w, "    read, MiB/s:                         %.2f\n", s.ReadMiBPerS)
		fmt.Fprintf(w, "    written, MiB/s:                      %.2f\n", s.WriteMiBPerS)
		fmt.Fprintf(w, "    errors:                              %-10d (%.2f per sec.)\n", s.ErrorsTotal, perSec(s.ErrorsTotal, s.DurationS))
	} else {
		fmt.Fprintln(w, "\nSQL statistics:")
		fmt.Fprintln(w, "    queries performed:")
		fmt.Fprintf(w, "        read:                            %d\n", s.Queries.Read)
		fmt.Fprintf(w, "        write:                           %d\n", s.Queries.Write)
		fmt.Fprintf(w, "        other:                           %d\n", s.Queries.Other)
		fmt.Fprintf(w, "        total:                           %d\n", s.Queries.Total)
		fmt.Fprintf(w, "    transactions:                        %-10d (%.2f per sec.)\n", s.Events, s.EventsPerS)
		fmt.Fprintf(w, "    queries:                             %-10d (%.2f per sec.)\n", s.Queries.Total, s.QueriesPerS)
		fmt.Fprintf(w, "    errors:                              %-10d (%.2f per sec.)\n", s.ErrorsTotal, perSec(s.ErrorsTotal, s.DurationS))
		fmt.Fprintf(w, "    retries:                             %-10d (%.2f per sec.)\n", s.Retries, perSec(s.Retries, s.DurationS))
		fmt.Fprintf(w, "    reconnects:                          %-10d (%.2f per sec.)\n", s.Reconnects, perSec(s.Reconnects, s.DurationS))
		if s.ReadMiBPerS > 0 || s.WriteMiBPerS > 0 {
			fmt.Fprintf(w, "    read, MiB/s:                         %.2f\n", s.ReadMiBPerS)
			fmt.Fprintf(w, "    written, MiB/s:                      %.2f\n", s.WriteMiBPerS)
		}
		if c := s.ReadCheck; c != nil && c.Missed > 0 {
			fmt.Fprintf(w, "    reads that must find rows:           %-10d (%d found none or too few, %.3g%%)\n", c.Checked, c.Missed, 100*c.MissedShare())
		}
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "        %-9s %-20s %d\n", e.Class, e.Code, e.Count)
	}
	fmt.Fprintln(w, "\nGeneral statistics:")
	fmt.Fprintf(w, "    total time (measured):               %.4fs\n", s.DurationS)
	if r.Run.WarmupS > 0 {
		fmt.Fprintf(w, "    warm-up (not counted):               %.4fs\n", r.Run.WarmupS)
	}
	if s.DrainS > 0 {
		fmt.Fprintf(w, "    after the time limit:                %.4fs to finish %d events under way (latencies kept, not in the rates)\n", s.DrainS, s.DrainEvents)
	}
	fmt.Fprintf(w, "    total number of events:              %d\n", s.Events)
	if s.Concurrency > 0 {
		fmt.Fprintf(w, "    events in flight (events/s x mean latency): %.2f of %d clients\n", s.Concurrency, r.Run.Threads)
	}
	if c := s.Client; c != nil {
		fmt.Fprintf(w, "    client CPU (dbmark's process):       %s", c.Describe())
		switch {
		case c.IncludesEngine:
			fmt.Fprint(w, " (the embedded engine's work included)")
		case c.SharedMachine:
			fmt.Fprint(w, " (the server runs on this machine too)")
		}
		fmt.Fprintln(w)
	}
	label := "Latency (ms):"
	if r.Run.Rate > 0 {
		label = "Latency (ms, from the intended start):"
	}
	if len(s.LatencyOps) > 0 {
		label = strings.TrimSuffix(label, ":") + " of " + strings.Join(s.LatencyOps, ", ") + ":"
	}
	writeLatency(w, label, s.Latency)
	if r.Run.Rate > 0 {
		writeLatency(w, "Service time (ms, from the actual start):", s.Service)
		writeLatency(w, "Schedule lag (ms):", s.ScheduleLag)
	}
	if len(s.Ops) > 1 {
		fmt.Fprintln(w, "\nPer operation (ms):")
		hdr := "    %-18s %10s %12s %9s"
		fmt.Fprintf(w, hdr, "operation", "count", "per sec", "mean")
		for _, p := range r.Run.Percentiles {
			fmt.Fprintf(w, " %9s", "p"+trimFloat(p))
		}
		fmt.Fprintf(w, " %9s\n", "max")
		for _, o := range s.Ops {
			if o.Count == 0 || o.Latency == nil {
				continue
			}
			fmt.Fprintf(w, "    %-18s %10d %12.2f %9.3f", o.Name, o.Count, o.PerS, o.Latency.MeanMS)
			for _, p := range o.Latency.Percentiles {
				fmt.Fprintf(w, " %9.3f", p.MS)
			}
			fmt.Fprintf(w, " %9.3f\n", o.Latency.MaxMS)
		}
	}
	servers(w, r)
	if len(s.Disconnects) > 0 {
		writeDisconnects(w, s)
	}
	if r.Rows != nil {
		writeRows(w, r.Rows, r.Run.Percentiles)
	}
	if len(s.Dips) > 0 {
		fmt.Fprintln(w, "\nDips (throughput well below its running median, and the counters that moved then):")
		for _, d := range s.Dips {
			fmt.Fprintf(w, "    %s\n", dips.Line(d, s.HeadlineUnit))
		}
	}
	if r.Counters != nil && len(r.Counters.Series) > 0 {
		fmt.Fprintf(w, "\nWhat saturated (on this machine): %s\n", saturation.Line(s.Saturated))
	}
	fmt.Fprintf(w, "\n%s: %.2f\n", r.Workload.Headline, s.Headline)
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	for _, m := range r.Counters.Missing() {
		fmt.Fprintln(w, m)
	}
	if note := s.Client.LimitedNote(); note != "" {
		fmt.Fprintf(w, "warning: %s\n", note)
	}
}

// writeDisconnects shows a degraded run's outages: the wait from each
// failed attempt's start to the client's next committed event, the
// latency with those waits counted, and each client's outage.
func writeDisconnects(w io.Writer, s *result.Summary) {
	if l := s.ReconnectWait; l != nil {
		fmt.Fprintf(w, "\nReconnect wait (ms, from the failed attempt's start to the next committed event):\n")
		fmt.Fprintf(w, "         outages:                        %d\n", len(s.Disconnects))
		fmt.Fprintf(w, "         avg:                            %.3f\n", l.MeanMS)
		fmt.Fprintf(w, "         max:                            %.3f\n", l.MaxMS)
	}
	writeLatency(w, "Latency including reconnects (ms, each reconnect wait counted as an event):", s.LatencyWithReconnects)
	fmt.Fprintln(w, "\nDisconnected clients (s since the start):")
	fmt.Fprintf(w, "    %-8s %10s %10s %14s %10s\n", "client", "lost at", "back at", "disconnected", "wait")
	for _, d := range s.Disconnects {
		back, wait := "not back", "-"
		if d.Back {
			back = fmt.Sprintf("%.3f", d.BackS)
		}
		if d.WaitS > 0 {
			wait = fmt.Sprintf("%.3f", d.WaitS)
		}
		fmt.Fprintf(w, "    %-8d %10.3f %10s %14.3f %10s\n", d.Client, d.StartS, back, d.DisconnectedS, wait)
	}
}

func writeLatency(w io.Writer, label string, l *result.Latency) {
	fmt.Fprintf(w, "\n%s\n", label)
	if l == nil {
		fmt.Fprintln(w, "    (no events)")
		return
	}
	fmt.Fprintf(w, "         min:                            %.3f\n", l.MinMS)
	fmt.Fprintf(w, "         avg:                            %.3f\n", l.MeanMS)
	fmt.Fprintf(w, "         stddev:                         %.3f\n", l.StdDevMS)
	fmt.Fprintf(w, "         max:                            %.3f\n", l.MaxMS)
	for _, p := range l.Percentiles {
		fmt.Fprintf(w, "         %-32s%.3f\n", trimFloat(p.P)+"th percentile:", p.MS)
	}
}

func perSec(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}
