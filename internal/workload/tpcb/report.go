package tpcb

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// totals adds up the clients' counters for one script, or all (-1).
func (rs *runState) totals(script int) scriptStats {
	var t scriptStats
	for i := range rs.stats {
		for j, s := range rs.stats[i].scripts {
			if script >= 0 && j != script {
				continue
			}
			t.late += s.late
			t.skipped += s.skipped
			t.serialization += s.serialization
			t.deadlock += s.deadlock
			t.failed += s.failed
			t.retried += s.retried
			t.retries += s.retries
		}
	}
	return t
}

func (s scriptStats) failures() int64 { return s.serialization + s.deadlock + s.failed }

// Annotate keeps pgbench's figures in the result's summary.extra: the
// scale, the query mode, the failures by kind, retried, late and skipped
// transactions, each script's title and weight with its own counts
// ("script:NAME:..."), and each command's text ("cmd:NAME:N").
func (w *Workload) Annotate(res *result.Result) {
	rs := w.run
	if rs == nil {
		return
	}
	x := res.Summary.Extra
	if x == nil {
		x = map[string]string{}
		res.Summary.Extra = x
	}
	put := func(k string, v int64) { x[k] = strconv.FormatInt(v, 10) }
	put("scale", rs.scale)
	x["query_mode"] = rs.mode
	put("clients", int64(rs.clients))
	put("jobs", int64(w.opt.Jobs))
	if n := rs.env.Plan.PerClient; n > 0 {
		put("transactions_per_client", n)
		// -t as the run applied it: pgbench's default of 10 too.
		if res.Workload.Options != nil {
			res.Workload.Options["transactions"] = strconv.FormatInt(n, 10)
		}
	}
	if rs.limit > 0 {
		x["latency_limit_ms"] = strconv.FormatFloat(w.opt.LatencyLimitMS, 'g', -1, 64)
	}
	putStats := func(prefix string, t scriptStats) {
		put(prefix+"failures", t.failures())
		put(prefix+"serialization_failures", t.serialization)
		put(prefix+"deadlock_failures", t.deadlock)
		put(prefix+"other_failures", t.failed)
		put(prefix+"retried", t.retried)
		put(prefix+"retries", t.retries)
		put(prefix+"skipped", t.skipped)
		put(prefix+"late", t.late)
	}
	putStats("", rs.totals(-1))
	for i, e := range rs.scripts {
		p := "script:" + e.name + ":"
		x[p+"title"] = e.title
		put(p+"weight", e.weight)
		putStats(p, rs.totals(i))
		for j, c := range e.s.Commands {
			x[fmt.Sprintf("cmd:%s:%d", e.name, j+1)] = c.Label
			op := commandSpec(e.name, j, c).Name
			x[result.OpTextKey(op)] = c.Label
			if c.Name != "" {
				// The operation of a named statement, for pgbench's report.
				x[fmt.Sprintf("cmd:%s:%d:op", e.name, j+1)] = op
			}
		}
	}
	if rs.log != nil {
		x["log_files"] = strings.Join(rs.log.paths, " ")
	}
	names := make([]string, len(rs.scripts))
	for i, e := range rs.scripts {
		names[i] = e.name
		for j := range e.s.Commands {
			var failed, retried int64
			for k := range rs.stats {
				failed += rs.stats[k].cmdFailed[i][j]
				retried += rs.stats[k].cmdRetried[i][j]
			}
			put(fmt.Sprintf("cmd:%s:%d:failures", e.name, j+1), failed)
			put(fmt.Sprintf("cmd:%s:%d:retries", e.name, j+1), retried)
		}
	}
	// What pgbench's own report needs besides: the scripts in order, the
	// limits as pgbench states them, and the connection times.
	x["scripts"] = strings.Join(names, ",")
	put("max_tries", int64(rs.maxTries))
	x["measured"] = strconv.FormatBool(rs.measured)
	x["rate_limited"] = strconv.FormatBool(rs.rate)
	x["connect_each_transaction"] = strconv.FormatBool(w.opt.Connect)
	x["failures_detailed"] = strconv.FormatBool(w.opt.FailuresDetailed)
	x["report_per_command"] = strconv.FormatBool(w.opt.ReportPerCommand)
	x["initial_connection_ms"] = strconv.FormatFloat(float64(rs.ready.Load())/1e6, 'f', 3, 64)
	var connNS int64
	for i := range rs.stats {
		connNS += rs.stats[i].connectNS
	}
	x["connection_time_total_ms"] = strconv.FormatFloat(float64(connNS)/1e6, 'f', 3, 64)
}

// Report prints pgbench's summary: its header, the failures, retries,
// late and skipped transactions, and per script (when there are several)
// and per command (-r) what pgbench shows.
func (w *Workload) Report(out io.Writer, res *result.Result) {
	rs := w.run
	if rs == nil {
		return
	}
	s := &res.Summary
	t := rs.totals(-1)
	title := rs.scripts[0].title
	if len(rs.scripts) > 1 {
		title = "multiple scripts"
	}
	fmt.Fprintln(out, "\npgbench summary:")
	fmt.Fprintf(out, "transaction type: %s\n", title)
	fmt.Fprintf(out, "scaling factor: %d\n", rs.scale)
	fmt.Fprintf(out, "query mode: %s\n", rs.mode)
	fmt.Fprintf(out, "number of clients: %d\n", rs.clients)
	fmt.Fprintf(out, "number of threads: %d\n", min(w.opt.Jobs, rs.clients))
	fmt.Fprintf(out, "maximum number of tries: %d\n", rs.maxTries)
	processed := s.Events + s.DrainEvents // pgbench counts those that finish after -T
	all := processed + t.failures() + t.skipped
	if n := rs.env.Plan.PerClient; n > 0 {
		fmt.Fprintf(out, "number of transactions per client: %d\n", n)
		fmt.Fprintf(out, "number of transactions actually processed: %d/%d\n", processed, rs.env.Plan.Events)
	} else {
		fmt.Fprintf(out, "duration: %.0f s\n", res.Run.DurationS)
		fmt.Fprintf(out, "number of transactions actually processed: %d\n", processed)
	}
	pct := func(n, of int64) float64 {
		if of == 0 {
			return 0
		}
		return 100 * float64(n) / float64(of)
	}
	fmt.Fprintf(out, "number of failed transactions: %d (%.3f%%)\n", t.failures(), pct(t.failures(), all))
	if w.opt.FailuresDetailed {
		fmt.Fprintf(out, "number of serialization failures: %d (%.3f%%)\n", t.serialization, pct(t.serialization, all))
		fmt.Fprintf(out, "number of deadlock failures: %d (%.3f%%)\n", t.deadlock, pct(t.deadlock, all))
	}
	if rs.maxTries != 1 {
		fmt.Fprintf(out, "number of transactions retried: %d (%.3f%%)\n", t.retried, pct(t.retried, all))
		// The summary's count, so that the two agree.
		fmt.Fprintf(out, "total number of retries: %d\n", s.Retries)
	}
	if rs.rate && rs.limit > 0 {
		fmt.Fprintf(out, "number of transactions skipped: %d (%.3f%%)\n", t.skipped, pct(t.skipped, all))
	}
	if rs.limit > 0 {
		fmt.Fprintf(out, "number of transactions above the %.1f ms latency limit: %d/%d (%.3f%%)\n",
			w.opt.LatencyLimitMS, t.late, processed, pct(t.late, processed))
	}
	l := s.Latency
	switch {
	case rs.measured && l != nil:
		// pgbench times each transaction only under -R, -L or -P: the
		// committed ones' mean and deviation.
		fmt.Fprintf(out, "latency average = %.3f ms\n", l.MeanMS)
		fmt.Fprintf(out, "latency stddev = %.3f ms\n", l.StdDevMS)
	case !rs.measured && processed+t.failures() > 0:
		// Otherwise pgbench's average is the clients' time over every
		// transaction that ended, failed ones included.
		avg := 1000 * (s.DurationS + s.DrainS) * float64(rs.clients) / float64(processed+t.failures())
		suffix := ""
		if t.failures() > 0 {
			suffix = " (including failures)"
		}
		fmt.Fprintf(out, "latency average = %.3f ms%s\n", avg, suffix)
	}
	if l != nil {
		for _, p := range l.Percentiles {
			fmt.Fprintf(out, "latency p%s = %.3f ms\n", strconv.FormatFloat(p.P, 'f', -1, 64), p.MS)
		}
	}
	if lag := s.ScheduleLag; lag != nil {
		fmt.Fprintf(out, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", lag.MeanMS, lag.MaxMS)
	}
	fmt.Fprintf(out, "tps = %f (without initial connection time)\n", s.EventsPerS)

	ops := map[string]*result.OpSummary{}
	for i := range s.Ops {
		ops[s.Ops[i].Name] = &s.Ops[i]
	}
	for i, e := range rs.scripts {
		st := rs.totals(i)
		op := ops["script:"+e.name]
		if len(rs.scripts) > 1 {
			fmt.Fprintf(out, "SQL script %d: %s\n", i+1, e.title)
			fmt.Fprintf(out, " - weight: %d (targets %.1f%% of total)\n", e.weight, pct(e.weight, rs.total))
			var n int64
			var tps float64
			if op != nil {
				n, tps = op.Count, op.PerS
			}
			fmt.Fprintf(out, " - %d transactions (%.1f%% of total, tps = %f)\n", n, pct(n, processed), tps)
			fmt.Fprintf(out, " - number of failed transactions: %d (%.3f%%)\n", st.failures(), pct(st.failures(), n+st.failures()+st.skipped))
			if rs.maxTries != 1 {
				fmt.Fprintf(out, " - number of transactions retried: %d\n - total number of retries: %d\n", st.retried, st.retries)
			}
			if rs.rate && rs.limit > 0 {
				fmt.Fprintf(out, " - number of transactions skipped: %d\n", st.skipped)
			}
			if op != nil && op.Latency != nil {
				fmt.Fprintf(out, " - latency average = %.3f ms\n - latency stddev = %.3f ms\n", op.Latency.MeanMS, op.Latency.StdDevMS)
			}
		}
		if !w.opt.ReportPerCommand {
			continue
		}
		if len(rs.scripts) > 1 {
			fmt.Fprintln(out, " - statement latencies in milliseconds:")
		} else {
			fmt.Fprintln(out, "statement latencies in milliseconds:")
		}
		for j, c := range e.s.Commands {
			var mean float64
			if k := int(e.cmdOps[j]); k >= 0 && k < len(s.Ops) && s.Ops[k].Latency != nil {
				mean = s.Ops[k].Latency.MeanMS
			}
			fmt.Fprintf(out, "   %11.3f  %s\n", mean, c.Label)
		}
	}
}
