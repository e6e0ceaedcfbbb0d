// Package tpcb is pgbench's workload: its four tables built as pgbench -i
// builds them, its builtin scripts (tpcb-like, simple-update, select-only)
// and custom scripts in its language, with pgbench's options and short
// flags, its per-transaction logs and its TPC-B balance check, on every
// engine.
package tpcb

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/workload"
)

// Version changes when the schema, data or builtin scripts change.
const Version = "1"

// Name is the workload's name.
const Name = "tpcb"

// Register adds the workload to r.
func Register(r *workload.Registry) {
	r.Register(Name, func() workload.Spec { return New().Spec() })
}

// Spec declares the workload with pgbench's ways: its positional database
// name and -h/-p/-U, its information options, its progress lines and its
// own report.
func (w *Workload) Spec() workload.Spec {
	return workload.Spec{
		Meta: w.Meta(), Flags: w.Flags, Load: w.Load,
		// What pgbench -i builds: a sweep over one prepares each cell
		// afresh, and a reproduction prepares with them.
		PrepareOptions: []string{"scale", "fillfactor", "init-steps", "foreign-keys", "unlogged-tables", "partitions",
			"partition-method", "tablespace", "index-tablespace"},
		Hooks: workload.Hooks{
			Inform: w.Inform, PrepareInstead: w.PrepareInstead, Args: w.Args, FillTarget: w.FillTarget, Plan: w.Plan,
			Prepare: w.Prepare, Cleanup: w.Cleanup, Prepared: w.Prepared, Check: w.Check,
			LiveLine: w.LiveLine, Annotate: w.Annotate, Report: w.Report,
		},
	}
}

// Options are pgbench's, with its defaults.
type Options struct {
	// Initialization (pgbench -i).
	Initialize      bool // -i on run: prepare in place of the run
	Scale           int64
	Fillfactor      int
	InitSteps       string
	ForeignKeys     bool
	Unlogged        bool
	Partitions      int
	PartitionMethod string
	NoVacuum        bool // -n: no vacuum before a run, or in init
	Tablespace      string
	IndexTablespace string

	// Scripts.
	Scripts      []scriptArg // -b, -f, -S, -N in order
	Defines      []string    // -D NAME=VALUE
	ListBuiltins bool        // -b list: print the builtin scripts instead
	ShowScript   string      // --show-script NAME: print it instead

	// Running.
	Transactions      int64 // -t, per client
	Jobs              int   // -j: pgbench's threads, recorded; each client has a goroutine of its own
	Connect           bool  // -C
	LatencyLimitMS    float64
	ReportPerCommand  bool
	FailuresDetailed  bool
	ExitOnAbort       bool // a client's fatal error ends every client (pgbench 16's)
	VacuumAll         bool
	Log               bool
	LogPrefix         string
	AggregateInterval int
	SamplingRate      float64

	// pgbench's connection options: they fill in the target (FillTarget).
	Host, Port, User, DBName string
	Debug                    bool // -d: dbmark's debug log
	Version                  bool // -V: print the version and exit

	// PgbenchForm is set by the pgbench front end: messages during the
	// run (--verbose-errors, -d) take pgbench's form on standard error.
	PgbenchForm bool
	// Quiet is -i's -q under PgbenchForm: a progress line every 5 seconds.
	Quiet bool
	// VerboseErrors is --verbose-errors under PgbenchForm: each error a
	// transaction is tried again after, and what the client then does.
	VerboseErrors bool
}

// Workload is pgbench's workload.
type Workload struct {
	opt Options
	fs  *pflag.FlagSet
	run *runState // set by Load, read by the report
}

// New returns the workload with pgbench's defaults.
func New() *Workload {
	return &Workload{opt: Options{Scale: 1, Fillfactor: 100, InitSteps: defaultInitSteps, LogPrefix: "pgbench_log"}}
}

// Opts returns the options, for tests and callers that set them directly.
func (w *Workload) Opts() *Options { return &w.opt }

// Meta describes the workload.
func (w *Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Description: "pgbench: TPC-B-like builtin scripts and custom scripts in pgbench's language",
		Version: Version, Headline: "tps", Better: "higher"}
}

// pgbenchNames maps pgbench's long option names to dbmark's where they
// differ and are not aliases.
var pgbenchNames = map[string]string{
	"unlogged":         "unlogged-tables",
	"report-latencies": "report-per-command",
}

// Flags binds pgbench's options and gives the common ones pgbench's short
// flags. The run subcommand binds the common ones (threads, time, ...)
// before this; prepare and check bind fewer, so each is looked up.
func (w *Workload) Flags(fs *pflag.FlagSet) {
	w.fs = fs
	o := &w.opt
	if f := fs.Lookup("pg-mode"); f != nil {
		// pgbench sends its queries in the simple protocol unless -M says
		// otherwise; scripts with \; and \aset rely on it.
		_ = f.Value.Set("simple")
		f.DefValue = "simple"
	}
	// pgbench's short flags for the common options: pflag registers a
	// shorthand only when a flag is added, so each is an alias sharing the
	// common flag's value, under pgbench's long name where it has one.
	for _, a := range []struct{ common, long, short string }{
		{"threads", "client", "c"}, {"time", "", "T"}, {"report-interval", "progress", "P"},
		{"rate", "", "R"}, {"pg-mode", "protocol", "M"},
	} {
		alias(fs, a.common, a.long, a.short)
	}
	if f := fs.Lookup("seed"); f != nil {
		f.Value = &seedValue{Value: f.Value}
		f.Usage += `; pgbench's --random-seed forms "time" and "rand" work too`
	}
	if f := fs.Lookup("max-tries"); f != nil {
		// pgbench tries a transaction once unless told otherwise.
		_ = f.Value.Set("1")
		f.DefValue = "1"
	}
	prev := fs.GetNormalizeFunc()
	fs.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		n := string(prev(f, name))
		if m, ok := pgbenchNames[n]; ok {
			return pflag.NormalizedName(m)
		}
		return pflag.NormalizedName(n)
	})

	if fs.Lookup("time") != nil {
		// Only the run takes -i: a pgbench command line with dbmark's
		// "run tpcb" in front of it initializes as pgbench -i does.
		fs.BoolVarP(&o.Initialize, "initialize", "i", false, "initialize in place of the run, as pgbench -i: the same as dbmark prepare tpcb with the other options given")
	}
	fs.Int64VarP(&o.Scale, "scale", "s", o.Scale, "scale factor: 100000 accounts per unit (prepare); for custom scripts, the value of :scale (run)")
	fs.IntVarP(&o.Fillfactor, "fillfactor", "F", o.Fillfactor, "fill factor of the tables, PostgreSQL only (prepare)")
	fs.StringVarP(&o.InitSteps, "init-steps", "I", o.InitSteps, "initialization steps: d drop, t tables, g client-side data, G server-side data, v vacuum, p primary keys, f foreign keys (prepare)")
	fs.BoolVar(&o.ForeignKeys, "foreign-keys", false, "create foreign keys between the tables (prepare)")
	fs.BoolVar(&o.Unlogged, "unlogged-tables", false, "create unlogged tables, PostgreSQL only (prepare)")
	fs.IntVar(&o.Partitions, "partitions", 0, "partition pgbench_accounts into this many partitions (prepare)")
	fs.StringVar(&o.PartitionMethod, "partition-method", "", "partition method: range (default) or hash (prepare)")
	fs.BoolVarP(&o.NoVacuum, "no-vacuum", "n", false, "do not vacuum before the run (or during prepare)")
	fs.StringVar(&o.Tablespace, "tablespace", "", "create the tables in this tablespace, PostgreSQL only (prepare)")
	fs.StringVar(&o.IndexTablespace, "index-tablespace", "", "create the primary keys' indexes in this tablespace, PostgreSQL only (prepare)")

	bindScripts(fs, o)
	fs.StringArrayVarP(&o.Defines, "define", "D", nil, "NAME=VALUE: a variable for the scripts; repeatable")

	fs.Int64VarP(&o.Transactions, "transactions", "t", 0, "transactions per client (pgbench's default is 10 when neither -t nor -T is given)")
	fs.IntVarP(&o.Jobs, "jobs", "j", 1, "pgbench's number of threads: accepted and recorded (dbmark runs each client on a goroutine of its own, which Go spreads over the CPUs)")
	fs.BoolVarP(&o.Connect, "connect", "C", false, "open a new connection for each transaction")
	fs.Float64VarP(&o.LatencyLimitMS, "latency-limit", "L", 0, "count transactions over this many ms as late; with --rate, skip those already that late at their scheduled start")
	fs.BoolVarP(&o.ReportPerCommand, "report-per-command", "r", false, "report each command's latency, failures and retries")
	fs.BoolVar(&o.FailuresDetailed, "failures-detailed", false, "report failures by kind (serialization, deadlock)")
	fs.BoolVar(&o.ExitOnAbort, "exit-on-abort", false, "end the run, all clients, when one fails with an error that is neither retried nor ignored (pgbench 16's); without it that client ends and the others go on, as in pgbench 15")
	fs.BoolVarP(&o.VacuumAll, "vacuum-all", "v", false, "vacuum pgbench_accounts too before the run (dbmark's --verbose keeps its long name)")
	fs.StringVarP(&o.Host, "host", "h", "", "PostgreSQL server's host or socket directory, as pgbench's (fills in --target; --help is help)")
	fs.StringVarP(&o.Port, "port", "p", "", "PostgreSQL server's port, as pgbench's (fills in --target)")
	fs.StringVarP(&o.User, "username", "U", "", "PostgreSQL user name, as pgbench's (fills in --target; the password comes from PGPASSWORD or ~/.pgpass)")
	fs.BoolVarP(&o.Debug, "debug", "d", false, "log debugging detail (dbmark's --verbose; not pgbench's protocol trace)")
	fs.BoolVarP(&o.Version, "version", "V", false, "print dbmark's version and exit")
	fs.BoolVarP(&o.Log, "log", "l", false, "write each transaction to a log file, in pgbench's format")
	fs.StringVar(&o.LogPrefix, "log-prefix", o.LogPrefix, "prefix of the -l log files")
	fs.IntVar(&o.AggregateInterval, "aggregate-interval", 0, "with -l, write one line per this many seconds instead of one per transaction")
	fs.Float64Var(&o.SamplingRate, "sampling-rate", 0, "with -l, log only this fraction of the transactions (0.01: 1%)")
}

// PrepareInstead says -i was given to the run: pgbench's initialization,
// which is dbmark's prepare.
func (w *Workload) PrepareInstead() bool { return w.opt.Initialize }

// alias adds a flag sharing common's value with pgbench's short name and
// long name (hidden "pgbench-X" when pgbench's long name is dbmark's own).
func alias(fs *pflag.FlagSet, common, long, short string) {
	f := fs.Lookup(common)
	if f == nil || fs.ShorthandLookup(short) != nil {
		return
	}
	name := long
	if name == "" {
		name = "pgbench-" + short
	}
	usage := f.Usage
	if tag := "(pgbench's -" + short + ")"; !strings.Contains(usage, tag) {
		usage += " " + tag
	}
	fs.VarP(f.Value, name, short, usage)
	a := fs.Lookup(name)
	a.DefValue = f.DefValue
	if long == "" {
		a.Hidden = true
	}
}

// changed says whether the common flag or its pgbench alias was given.
func changed(fs *pflag.FlagSet, names ...string) bool {
	for _, n := range names {
		if fs != nil && fs.Lookup(n) != nil && fs.Changed(n) {
			return true
		}
	}
	return false
}

// seedValue accepts pgbench's --random-seed forms: "time" (the clock) and
// "rand" (a random seed), and numbers.
type seedValue struct{ pflag.Value }

func (s *seedValue) Set(v string) error {
	switch strings.ToLower(v) {
	case "time":
		v = strconv.FormatUint(uint64(time.Now().UnixNano())>>1, 10)
	case "rand":
		v = "0" // the CLI picks a random seed for 0
	default:
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf(`expecting a whole number of 0 or more, "time" or "rand"`)
		}
	}
	return s.Value.Set(v)
}
