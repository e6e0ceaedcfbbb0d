package result

// runOnly are the common options that only `run` (and `sweep`) take, not
// `prepare` or `cleanup`: how long a run lasts, how it is measured and
// reported, and what it does with errors. Every other workload option is
// taken by all three. TestRunOnlyOptions (cli)
// holds this list to the commands' flags.
var runOnly = map[string]bool{
	"events": true, "histogram": true, "ignore-errors": true, "json": true, "max-requests": true, "max-time": true,
	"max-tries": true, "no-store": true, "percentiles": true, "probe-root": true, "progress-timestamp": true,
	"rate": true, "report-interval": true, "restart-cmd": true, "sample-interval": true, "server-set": true,
	"show": true, "stall-timeout": true, "strict": true, "time": true, "verbose-errors": true, "warmup": true,
	"wait-idle": true, "start-at": true, "client-id": true, "metrics-addr": true,
	// tpcb's own, in pgbench's words.
	"progress": true, "pgbench-R": true, "pgbench-T": true, "initialize": true,
}

// RunOnly says whether option name is taken by run but not by prepare.
func RunOnly(name string) bool { return runOnly[name] }

// RunOnlyOptions lists them, for the test that checks them.
func RunOnlyOptions() []string {
	out := make([]string, 0, len(runOnly))
	for k := range runOnly {
		out = append(out, k)
	}
	return out
}
