package result

// What the options a run records (Workload.Options, by flag name) say
// about it. One table for every reader: the CLI records, reproduces and
// compares runs by it, and the results site keys and compares them by it.

// OptionClass is what an option says about a run.
type OptionClass int

const (
	// WorkOption changes the work a run does (tables, table size, mode,
	// scale, threads, rate...): results are comparable only where these
	// are the same.
	WorkOption OptionClass = iota
	// LimitOption says how long a run lasts and how it is measured (time,
	// warm-up, intervals, percentiles, seed, tries): results that differ
	// in it did the same work, though its figures may differ.
	LimitOption
	// OutputOption says how dbmark was asked and where it wrote (the
	// target and store named, --json, --format, log levels, profiles):
	// nothing about the run, never a difference, never reproduced. Runs
	// do not record it; results made before that was so may hold some.
	OutputOption
)

var optionClasses = map[string]OptionClass{
	"time": LimitOption, "events": LimitOption, "warmup": LimitOption, "report-interval": LimitOption,
	"sample-interval": LimitOption, "percentiles": LimitOption, "affinity": LimitOption, "seed": LimitOption,
	"net-io": LimitOption, "jobs": LimitOption, "no-probe": LimitOption, "max-tries": LimitOption,
	// The transport changes what the client spends, not the work asked of
	// the server: runs on either are compared, and the difference shown.
	"transport": LimitOption,

	"target": OutputOption, "store": OutputOption, "json": OutputOption, "format": OutputOption,
	"help": OutputOption, "no-store": OutputOption, "quiet": OutputOption, "verbose": OutputOption,
	"verbosity": OutputOption, "progress-timestamp": OutputOption, "histogram": OutputOption,
	"cpu-profile": OutputOption, "mem-profile": OutputOption, "probe-root": OutputOption, "show": OutputOption,
	"rows-by": OutputOption, "cols-by": OutputOption,
	// Where pgbench's -l writes: hosts of one merged run name their own.
	"log-prefix": OutputOption,
	// Each server setting is recorded as an option of its own
	// (ServerOption); the command to restart the server is how, not what.
	"server-set": OutputOption, "restart-cmd": OutputOption,
	// A host's name and the instant its window began are recorded in
	// fields of their own (ClientID, StartAt): the same work on several
	// hosts, never a difference between them.
	"client-id": OutputOption, "start-at": OutputOption, "metrics-addr": OutputOption,
}

// ClassOf says what the option named name says about a run; an option it
// does not know changes the work.
func ClassOf(name string) OptionClass { return optionClasses[name] }

// engineOptions are the options only some kinds of target (Target.Kind)
// read. A run on another kind records them with their defaults, which
// mean nothing there.
var engineOptions = map[string][]string{
	"pg-mode":              {"postgres"},
	"db-ps-mode":           {"postgres", "mysql"},
	"mysql-storage-engine": {"mysql"},
	"transport":            {"postgres", "mysql"},
}

// AppliesTo says whether option name means anything on a target of kind.
func AppliesTo(name, kind string) bool {
	kinds, ok := engineOptions[name]
	if !ok {
		return true
	}
	for _, k := range kinds {
		if k == kind {
			return true
		}
	}
	return false
}
