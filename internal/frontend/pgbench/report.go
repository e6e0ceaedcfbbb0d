package pgbench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dbmark/dbmark/internal/result"
)

// cnum formats a number as PostgreSQL's own printf does (src/port's
// snprintf): NaN and infinities by name, as pgbench prints a percentage
// of no transactions.
func cnum(format string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return fmt.Sprintf(format, v)
}

// figures reads what tpcb's Annotate kept of a run in the result.
type figures struct{ x map[string]string }

func (f figures) int(k string) int64 {
	v, _ := strconv.ParseInt(f.x[k], 10, 64)
	return v
}

func (f figures) float(k string) float64 {
	v, _ := strconv.ParseFloat(f.x[k], 64)
	return v
}

func (f figures) bool(k string) bool { return f.x[k] == "true" }

func (f figures) failures(prefix string) int64 { return f.int(prefix + "failures") }

// Report prints pgbench 15's report of a run of tpcb from its result:
// the lines of printResults, in its order and its number formats. It
// prints nothing for a result that tpcb did not annotate.
func Report(out io.Writer, res *result.Result) {
	f := figures{res.Summary.Extra}
	if f.x == nil || f.x["scripts"] == "" {
		return
	}
	s := &res.Summary
	scripts := strings.Split(f.x["scripts"], ",")
	clients := f.int("clients")
	maxTries := f.int("max_tries")
	unlimited := maxTries == 0 || maxTries >= math.MaxInt32
	failures := f.failures("")
	skipped := f.int("skipped")
	processed := s.Events + s.DrainEvents // pgbench counts those that finish after -T
	totalCnt := float64(processed + skipped + failures)
	benchS := s.DurationS + s.DrainS
	tps := float64(processed) / benchS
	p := func(format string, a ...any) { fmt.Fprintf(out, format, a...) }

	title := "multiple scripts"
	if len(scripts) == 1 {
		title = f.x["script:"+scripts[0]+":title"]
	}
	p("transaction type: %s\n", title)
	p("scaling factor: %d\n", f.int("scale"))
	if m := f.x["partition_method"]; m != "" {
		p("partition method: %s\npartitions: %d\n", m, f.int("partitions"))
	}
	p("query mode: %s\n", f.x["query_mode"])
	p("number of clients: %d\n", clients)
	p("number of threads: %d\n", min(f.int("jobs"), clients))
	if !unlimited {
		p("maximum number of tries: %d\n", maxTries)
	}
	if n := f.int("transactions_per_client"); n > 0 && res.Plan != nil && res.Plan.TimeS == 0 {
		p("number of transactions per client: %d\n", n)
		p("number of transactions actually processed: %d/%d\n", processed, n*clients)
	} else {
		p("duration: %d s\n", int64(math.Round(res.Run.DurationS)))
		p("number of transactions actually processed: %d\n", processed)
	}
	p("number of failed transactions: %d (%s%%)\n", failures, cnum("%.3f", 100*float64(failures)/totalCnt))
	if f.bool("failures_detailed") {
		p("number of serialization failures: %d (%s%%)\n", f.int("serialization_failures"), cnum("%.3f", 100*float64(f.int("serialization_failures"))/totalCnt))
		p("number of deadlock failures: %d (%s%%)\n", f.int("deadlock_failures"), cnum("%.3f", 100*float64(f.int("deadlock_failures"))/totalCnt))
	}
	if maxTries != 1 {
		p("number of transactions retried: %d (%s%%)\n", f.int("retried"), cnum("%.3f", 100*float64(f.int("retried"))/totalCnt))
		p("total number of retries: %d\n", f.int("retries"))
	}
	// pgbench stops here when no transaction ran.
	if processed+skipped <= 0 {
		return
	}
	rate := f.bool("rate_limited")
	limit := f.float("latency_limit_ms")
	if rate && limit > 0 {
		p("number of transactions skipped: %d (%s%%)\n", skipped, cnum("%.3f", 100*float64(skipped)/totalCnt))
	}
	if limit > 0 {
		late := f.int("late")
		pct := 0.0
		if processed > 0 {
			pct = 100 * float64(late) / float64(processed)
		}
		p("number of transactions above the %.1f ms latency limit: %d/%d (%.3f%%)\n", limit, late, processed, pct)
	}
	if f.bool("measured") {
		if l := s.Latency; l != nil && processed > 0 {
			p("latency average = %.3f ms\n", l.MeanMS)
			p("latency stddev = %.3f ms\n", l.StdDevMS)
		}
	} else {
		suffix := ""
		if failures > 0 {
			suffix = " (including failures)"
		}
		p("latency average = %s ms%s\n", cnum("%.3f", 1000*benchS*float64(clients)/totalCnt), suffix)
	}
	if lag := s.ScheduleLag; rate && lag != nil {
		p("rate limit schedule lag: avg %.3f (max %.3f) ms\n", lag.MeanMS, lag.MaxMS)
	}
	if f.bool("connect_each_transaction") {
		p("average connection time = %s ms\n", cnum("%.3f", f.float("connection_time_total_ms")/float64(processed+failures)))
		p("tps = %f (including reconnection times)\n", tps)
	} else {
		p("initial connection time = %.3f ms\n", f.float("initial_connection_ms"))
		p("tps = %f (without initial connection time)\n", tps)
	}

	perScript := len(scripts) > 1
	perCommand := f.x["report_per_command"] == "true"
	if !perScript && !perCommand {
		return
	}
	ops := map[string]*result.OpSummary{}
	for i := range s.Ops {
		ops[s.Ops[i].Name] = &s.Ops[i]
	}
	var totalWeight int64
	for _, n := range scripts {
		totalWeight += f.int("script:" + n + ":weight")
	}
	for i, n := range scripts {
		pre := "script:" + n + ":"
		if perScript {
			var cnt int64
			var lat *result.Latency
			if op := ops["script:"+n]; op != nil {
				cnt, lat = op.Count, op.Latency
			}
			sf := f.failures(pre)
			sTotal := float64(cnt + f.int(pre+"skipped") + sf)
			w := f.int(pre + "weight")
			p("SQL script %d: %s\n", i+1, f.x[pre+"title"])
			p(" - weight: %d (targets %s%% of total)\n", w, cnum("%.1f", 100*float64(w)/float64(totalWeight)))
			p(" - %d transactions (%s%% of total, tps = %f)\n", cnt, cnum("%.1f", 100*float64(cnt)/float64(processed)), float64(cnt)/benchS)
			p(" - number of failed transactions: %d (%s%%)\n", sf, cnum("%.3f", 100*float64(sf)/sTotal))
			if f.bool("failures_detailed") {
				p(" - number of serialization failures: %d (%s%%)\n", f.int(pre+"serialization_failures"), cnum("%.3f", 100*float64(f.int(pre+"serialization_failures"))/sTotal))
				p(" - number of deadlock failures: %d (%s%%)\n", f.int(pre+"deadlock_failures"), cnum("%.3f", 100*float64(f.int(pre+"deadlock_failures"))/sTotal))
			}
			if maxTries != 1 {
				p(" - number of transactions retried: %d (%s%%)\n", f.int(pre+"retried"), cnum("%.3f", 100*float64(f.int(pre+"retried"))/sTotal))
				p(" - total number of retries: %d\n", f.int(pre+"retries"))
			}
			if rate && limit > 0 && sTotal > 0 {
				p(" - number of transactions skipped: %d (%s%%)\n", f.int(pre+"skipped"), cnum("%.3f", 100*float64(f.int(pre+"skipped"))/sTotal))
			}
			if lat != nil && cnt > 0 {
				p(" - latency average = %.3f ms\n - latency stddev = %.3f ms\n", lat.MeanMS, lat.StdDevMS)
			}
		}
		if !perCommand {
			continue
		}
		lead := ""
		if perScript {
			lead = " - "
		}
		what := " and failures"
		if maxTries != 1 {
			what = ", failures and retries"
		}
		p("%sstatement latencies in milliseconds%s:\n", lead, what)
		for j := 1; ; j++ {
			key := fmt.Sprintf("cmd:%s:%d", n, j)
			label, ok := f.x[key]
			if !ok {
				break
			}
			var mean float64
			for _, name := range []string{fmt.Sprintf("stmt:%s:%d", n, j), fmt.Sprintf("meta:%s:%d", n, j), f.x[key+":op"]} {
				if op := ops[name]; op != nil && op.Latency != nil {
					mean = op.Latency.MeanMS
				}
			}
			if maxTries == 1 {
				p("   %11.3f  %10d  %s\n", mean, f.int(key+":failures"), label)
			} else {
				p("   %11.3f  %10d  %10d  %s\n", mean, f.int(key+":failures"), f.int(key+":retries"), label)
			}
		}
	}
}

// VersionLine is the line pgbench prints once connected: pgbench's
// version, and the server's when they differ. dbmark's front end follows
// pgbench 15, so against a 15.x server it prints what a pgbench of that
// release prints; against another it names both.
func VersionLine(serverVersion string) string {
	if strings.HasPrefix(serverVersion, "15.") || serverVersion == "15" {
		return fmt.Sprintf("pgbench (%s)", serverVersion)
	}
	return fmt.Sprintf("pgbench (15 (dbmark), server %s)", serverVersion)
}
