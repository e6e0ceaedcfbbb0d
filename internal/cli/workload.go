package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/buildinfo"
	"github.com/dbmark/dbmark/internal/dips"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/probe"
	"github.com/dbmark/dbmark/internal/promexport"
	"github.com/dbmark/dbmark/internal/report"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/saturation"
	"github.com/dbmark/dbmark/internal/secret"
	"github.com/dbmark/dbmark/internal/serverset"
	"github.com/dbmark/dbmark/internal/store"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/transport"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// seconds is a duration flag that also takes a plain number of seconds,
// as sysbench's --time=60 and pgbench's -T 60 do.
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }
func (s *seconds) Type() string   { return "duration" }
func (s *seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return errors.New("must not be negative")
		}
		*s = seconds(time.Duration(f * float64(time.Second)))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("not a duration (use 60, 60s, 5m or 1h30m)")
	}
	if d < 0 {
		return errors.New("must not be negative")
	}
	*s = seconds(d)
	return nil
}

// givenString is a string flag that remembers whether it was given.
type givenString struct {
	v     string
	given bool
}

func (g *givenString) String() string { return g.v }
func (g *givenString) Type() string   { return "string" }
func (g *givenString) Set(s string) error {
	g.v, g.given = s, true
	return nil
}

// runFlags are the options common to every workload.
type runFlags struct {
	target string
	// more are the further servers of a run on several (--target given
	// more than once): the clients spread over target and them.
	more         []string
	pgMode       givenString
	psMode       string
	transport    string
	stallTimeout seconds
	threads      int
	time         seconds
	events       int64
	warmup       seconds
	interval     seconds
	stamp        bool // live lines carry the Unix time
	histogram    bool // sysbench's latency histogram before the summary
	percentiles  []string
	seed         uint64
	rate         float64
	maxTries     int
	verboseErrs  bool
	ignoreErrors []string
	// sysbench 1.0's deprecated spellings of --threads, --time and --events.
	numThreads  int
	maxTime     seconds
	maxRequests int64
	jsonPath    string
	noStore     bool
	ctxFlags    contextFlags
	targetGiven bool // --target given to a workload with a target of its own
	// serverSet and restartCmd change the server's settings for the run
	// (internal/serverset).
	serverSet  serverset.Flag
	restartCmd string
	// restartRead says the workload reads --restart-cmd too (a query
	// suite's --cold), so that it is not refused without --server-set.
	restartRead bool
	// start is --start-at and --client-id (startat.go).
	start startFlags
	// metricsAddr serves the run's live metrics for Prometheus
	// (livemetrics.go).
	metricsAddr string
}

// targetFlag is --target for a workload with a target of its own: it
// remembers that one was given, so the run refuses it with one line. An
// empty one (--target=, "no database") is no target.
type targetFlag struct{ f *runFlags }

func (t *targetFlag) String() string { return "" }
func (t *targetFlag) Type() string   { return "string" }
func (t *targetFlag) Set(v string) error {
	t.f.targetGiven = t.f.targetGiven || v != ""
	return nil
}

// targetList is --target, given once, or once per server of a cluster
// (a Galera or NDB cluster's SQL nodes): the first given replaces
// $DBMARK_TARGET, the others are f.more.
type targetList struct {
	f   *runFlags
	set bool
}

func (t *targetList) String() string { return t.f.target }
func (t *targetList) Type() string   { return "string" }
func (t *targetList) Set(v string) error {
	if !t.set {
		t.f.target, t.f.more, t.set = v, nil, true
		return nil
	}
	t.f.more = append(t.f.more, v)
	return nil
}

// Args is every server given, for a command line written back.
func (t *targetList) Args() []string { return append([]string{t.f.target}, t.f.more...) }

// bindTarget binds where the load goes and the options every workload
// shares. A workload with a target of its own (file I/O's directory) gets
// no database option; --target is then refused by name (openTarget).
func (f *runFlags) bindTarget(fs *pflag.FlagSet, w workload.Spec) {
	if w.OwnTarget != nil {
		fs.Var(&targetFlag{f}, "target", "not taken: this workload works on its own target")
		_ = fs.MarkHidden("target")
	} else {
		f.target = os.Getenv("DBMARK_TARGET")
		fs.Var(&targetList{f: f}, "target", "where the load goes: postgres://..., mysql://..., sqlite:///path (default: an embedded SQLite database in the data directory; $DBMARK_TARGET); given again for each server of a cluster, the clients spread over them round-robin")
		f.pgMode.v = postgres.ModePrepared
		fs.Var(&f.pgMode, "pg-mode", "PostgreSQL protocol: simple, extended or prepared (pgbench's -M); --db-ps-mode disable makes it simple")
		fs.StringVar(&f.psMode, "db-ps-mode", "auto", "server-side prepared statements: auto or disable (as sysbench: plain text queries, on MySQL and PostgreSQL)")
		fs.StringVar(&f.transport, "transport", transport.Auto, "how connections to a server move their bytes: go (Go's network poller), poller (the same poller, raw reads and writes), blocking (each client's thread waits in poll(2)) or auto (blocking to a MySQL or MariaDB server on this machine for up to 8 clients a CPU and to PostgreSQL's unix socket for up to 4, poller otherwise), on PostgreSQL and MySQL")
	}
	fs.IntVar(&f.threads, "threads", 1, "number of worker threads, each with its own connection")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed; 0 picks one (the seed used is stored with the result)")
	fs.IntVar(&f.numThreads, "num-threads", 1, "deprecated alias for --threads (sysbench 1.0's)")
}

func (f *runFlags) bindRun(fs *pflag.FlagSet) {
	f.time = seconds(10 * time.Second)
	fs.Var(&f.time, "time", "time limit, after the warm-up (0: none; 60 means 60s)")
	fs.Int64Var(&f.events, "events", 0, "limit on the total number of events (0: none)")
	fs.Var(&f.warmup, "warmup", "warm-up before the measured part: shown, not counted")
	fs.Var(&f.interval, "report-interval", "print a live line this often (0: off)")
	fs.BoolVar(&f.stamp, "progress-timestamp", false, "live lines show the Unix time, to the millisecond, instead of the time since the start (as pgbench's)")
	workload.OnOffVar(fs, &f.histogram, "histogram", false, "print the latency histogram of the events before the summary, in sysbench's buckets and shape")
	fs.StringSliceVar(&f.percentiles, "percentiles", []string{"50", "95", "99", "99.9"}, "latency percentiles to report")
	fs.Float64Var(&f.rate, "rate", 0, "open loop: events per second over all threads (0: as fast as possible)")
	fs.IntVar(&f.maxTries, "max-tries", 10, "tries per transaction on a retryable error (serialization failure, deadlock, lock wait timeout, SQLITE_BUSY)")
	fs.BoolVar(&f.verboseErrs, "verbose-errors", false, "log each error a transaction meets that does not end the run (retried, failed after its tries, or ignored), with the client and try, as pgbench's")
	fs.StringSliceVar(&f.ignoreErrors, "ignore-errors", nil, "error codes (SQLSTATE, MySQL error numbers) to count and go on after, or all")
	f.stallTimeout = seconds(time.Minute)
	fs.Var(&f.stallTimeout, "stall-timeout", "end the run as failed when a client finishes nothing for this long, naming it and the statement it waits for (0: never)")
	fs.Var(&f.maxTime, "max-time", "deprecated alias for --time (sysbench 1.0's)")
	fs.Int64Var(&f.maxRequests, "max-requests", 0, "deprecated alias for --events (sysbench 1.0's)")
	fs.StringVar(&f.jsonPath, "json", "", "also write the result document to this file")
	fs.BoolVar(&f.noStore, "no-store", false, "do not save the result in the results store")
	f.ctxFlags.bind(fs)
	f.start.bind(fs)
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve the run's live metrics for Prometheus at http://ADDR/metrics (:9464; 127.0.0.1:0 picks a free port and prints it)")
}

// bindServer binds the options that change the server's settings for
// the run, on a workload that runs on a database.
func (f *runFlags) bindServer(fs *pflag.FlagSet, w workload.Spec) {
	if w.OwnTarget != nil {
		return
	}
	fs.Var(&f.serverSet, "server-set", "set a server setting for the run, in the engine's own words (SET GLOBAL, ALTER SYSTEM, PRAGMA per connection), read it back, and restore it after: NAME=VALUE; NAME=V1,V2 in a sweep (repeat for more settings)")
	fs.StringVar(&f.restartCmd, "restart-cmd", "", "the command that restarts the server (run with sh -c), for a --server-set that applies only at a restart; dbmark waits until the server answers")
}

// legacyNames are sysbench 1.0's deprecated spellings and the options
// they stand for, in the order sysbench warns of them.
var legacyNames = []struct{ old, now string }{{"num-threads", "threads"}, {"max-requests", "events"}, {"max-time", "time"}}

// warnLegacy gives sysbench's warning on out for each of sysbench 1.0's
// deprecated options that stands for the new one: given a value other
// than its default (legacyGiven). The plan applies them (workload.NewPlan).
func warnLegacy(fs *pflag.FlagSet, out io.Writer) {
	for _, l := range legacyNames {
		if legacyGiven(fs, l.old) {
			fmt.Fprintf(out, "WARNING: --%s is deprecated, use --%s instead\n", l.old, l.now)
		}
	}
}

// legacyGiven says whether a deprecated spelling was given a value other
// than its default, as sysbench counts one.
func legacyGiven(fs *pflag.FlagSet, name string) bool {
	fl := fs.Lookup(name)
	return fl != nil && fl.Changed && fl.Value.String() != fl.DefValue
}

// given says whether the option name was given under any of its names:
// a flag sharing its value is an alias (pgbench's -c for --threads).
func given(fs *pflag.FlagSet, name string) bool {
	fl := fs.Lookup(name)
	if fl == nil {
		return false
	}
	found := false
	fs.VisitAll(func(o *pflag.Flag) {
		found = found || o.Changed && sameValue(o, fl)
	})
	return found
}

// sameValue says whether flags a and b are names of one option: they
// share a value, each perhaps made an axis of a sweep (sweepable).
func sameValue(a, b *pflag.Flag) bool {
	of := func(v pflag.Value) pflag.Value {
		if ax, ok := v.(*axisValue); ok {
			return ax.Value
		}
		return v
	}
	return of(a.Value) == of(b.Value)
}

// planInput is the common options as parsed into fs and f, for the plan.
func (f *runFlags) planInput(fs *pflag.FlagSet, w workload.Spec) workload.PlanInput {
	return workload.PlanInput{
		Clients: f.threads, Time: time.Duration(f.time), Events: f.events, Warmup: time.Duration(f.warmup),
		Rate: f.rate, MaxTries: f.maxTries,
		NumThreads: f.numThreads, MaxTime: time.Duration(f.maxTime), MaxRequests: f.maxRequests,
		Given: workload.Given{
			Clients: given(fs, "threads"), Time: given(fs, "time"), Events: given(fs, "events"),
			Rate: given(fs, "rate"), MaxTries: given(fs, "max-tries"),
			NumThreads: legacyGiven(fs, "num-threads"), MaxTime: legacyGiven(fs, "max-time"), MaxRequests: legacyGiven(fs, "max-requests"),
		},
		OwnTarget: w.OwnTarget != nil,
	}
}

// workloadCmd builds "run", "prepare" or "cleanup" with one subcommand per
// registered workload, each with the workload's own flags.
func (a *App) workloadCmd(verb, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   verb + " WORKLOAD [flags]",
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return withCode(ExitUsage, fmt.Errorf("%s needs a workload: one of %s", verb, strings.Join(a.Workloads.Names(), ", ")))
			}
			return unknownWorkload(args[0], a.Workloads.Names())
		},
	}
	for _, name := range a.Workloads.Names() {
		w, _ := a.Workloads.New(name)
		m := w.Meta
		if verb == "prepare" && w.Hooks.Prepare == nil || verb == "cleanup" && w.Hooks.Cleanup == nil {
			continue
		}
		f := &runFlags{}
		sub := &cobra.Command{
			Use:   name,
			Short: m.Description,
			Args:  positional(w),
			RunE: func(cmd *cobra.Command, args []string) error {
				if versionAsked(cmd.Flags()) {
					return a.printVersion()
				}
				if err := takeArgs(w, args); err != nil {
					return err
				}
				if done, err := a.inform(w); done || err != nil {
					return err
				}
				warnLegacy(cmd.Flags(), a.Stdout)
				// A prepare loads with the clients --threads asks for.
				clients := f.planInput(cmd.Flags(), w).Resolved().Clients
				switch verb {
				case "prepare":
					return a.prepare(cmd.Context(), w, f, clients, false)
				case "cleanup":
					return a.cleanup(cmd.Context(), w, f, clients)
				}
				if w.Hooks.PrepareInstead != nil && w.Hooks.PrepareInstead() {
					if err := a.onlyPrepareOptions(cmd.NonInheritedFlags(), name); err != nil {
						return err
					}
					return a.prepare(cmd.Context(), w, f, clients, false)
				}
				if hasAxes(cmd.Flags()) {
					return a.runAsSweep(cmd.Context(), name, cmd.NonInheritedFlags())
				}
				return a.run(cmd.Context(), cmd, w, f)
			},
		}
		fs := sub.Flags()
		a.bindWorkload(fs, f, w, verb)
		if verb == "run" {
			sweepable(fs) // a list or a range makes the run a sweep
		}
		sub.SetFlagErrorFunc(a.flagError)
		cmd.AddCommand(sub)
	}
	return cmd
}

// onlyPrepareOptions refuses a run option given with a run that prepares
// in its place (pgbench's -i, which refuses them likewise): each option
// set in fs must be one prepare takes.
func (a *App) onlyPrepareOptions(fs *pflag.FlagSet, name string) error {
	w, _ := a.Workloads.New(name)
	prep := pflag.NewFlagSet("prepare", pflag.ContinueOnError)
	a.bindWorkload(prep, &runFlags{}, w, "prepare")
	var bad []string
	fs.VisitAll(func(f *pflag.Flag) { // a command's local flags keep Changed, not the set's record of it
		if !f.Changed || prep.Lookup(f.Name) != nil || f.Name == "initialize" {
			return
		}
		if f.Shorthand != "" {
			bad = append(bad, "-"+f.Shorthand) // pgbench's spelling (an alias's long name is hidden)
		} else {
			bad = append(bad, "--"+f.Name)
		}
	})
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return withCode(ExitUsage, fmt.Errorf("-i (initialize) prepares, as dbmark prepare %s does, and runs nothing: %s is an option of the run (leave out -i to run)", name, bad[0]))
	}
	return withCode(ExitUsage, fmt.Errorf("-i (initialize) prepares, as dbmark prepare %s does, and runs nothing: %s are options of the run (leave out -i to run)", name, strings.Join(bad, ", ")))
}

// bindWorkload binds what verb takes of workload w: where the load goes,
// the common options of a run, and the workload's own.
func (a *App) bindWorkload(fs *pflag.FlagSet, f *runFlags, w workload.Spec, verb string) {
	fs.SetNormalizeFunc(normalize)
	f.bindTarget(fs, w)
	if verb == "run" {
		f.bindRun(fs)
		f.bindServer(fs, w)
	}
	w.Flags(fs)
	f.restartRead = workload.FlagRead(fs, "restart-cmd")
	a.yieldShorthands(fs, w.Meta.Name)
}

// positional is what a workload's command takes after its flags: the
// arguments its Args hook takes (pgbench's database name), else nothing.
func positional(w workload.Spec) cobra.PositionalArgs {
	if w.Hooks.Args != nil {
		return cobra.ArbitraryArgs
	}
	return cobra.NoArgs
}

// takeArgs hands the workload its positional arguments.
func takeArgs(w workload.Spec, args []string) error {
	if w.Hooks.Args != nil {
		return withCode(ExitUsage, w.Hooks.Args(args))
	}
	return nil
}

// versionAsked says whether a workload's own --version flag (pgbench's
// -V) was given.
func versionAsked(fs *pflag.FlagSet) bool {
	f := fs.Lookup("version")
	return f != nil && f.Value.Type() == "bool" && f.Value.String() == "true"
}

// yieldShorthands lets a workload's flags take the shorthand of help or
// of a global flag (pgbench's -h host, -v vacuum-all): that flag is then
// bound to the command under its long name only (--help, --verbose).
func (a *App) yieldShorthands(fs *pflag.FlagSet, name string) {
	if fs.ShorthandLookup("h") != nil && fs.Lookup("help") == nil {
		fs.Bool("help", false, "help for "+name)
	}
	if a.global == nil {
		return
	}
	a.global.VisitAll(func(g *pflag.Flag) {
		if g.Shorthand == "" || fs.Lookup(g.Name) != nil || fs.ShorthandLookup(g.Shorthand) == nil {
			return
		}
		fs.Var(g.Value, g.Name, g.Usage)
		fs.Lookup(g.Name).NoOptDefVal = g.NoOptDefVal
	})
}

// inform prints what w's options ask for in place of the command (its
// Inform hook), and says whether it did.
func (a *App) inform(w workload.Spec) (bool, error) {
	if w.Hooks.Inform == nil {
		return false, nil
	}
	done, err := w.Hooks.Inform(a.Stdout)
	if err != nil {
		return false, withCode(ExitUsage, err)
	}
	return done, nil
}

// embeddedURL is the embedded database's target: bench.db in the data
// directory, which it makes when missing.
func embeddedURL() (string, error) {
	dir, err := store.DataDir()
	if err != nil {
		return "", fmt.Errorf("no --target and no data directory for the embedded database: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	return (&url.URL{Scheme: "sqlite", Path: filepath.Join(dir, "bench.db")}).String(), nil
}

// openTarget opens the workload's own target, --target, or the embedded
// default, for a run of clients connections (0: not known), which the
// engine's auto transport weighs, its connections judged by hold (nil: a
// Hold of its own; see openMore). It does not connect.
func (a *App) openTarget(ctx context.Context, w workload.Spec, f *runFlags, clients int, hold *transport.Hold) (target.Target, bool, error) {
	if w.OwnTarget != nil {
		if f.targetGiven {
			return nil, false, withCode(ExitUsage, fmt.Errorf("%s works on its own target, not a database: drop --target", w.Meta.Name))
		}
		tg, err := w.OwnTarget(ctx)
		if err != nil {
			return nil, false, withCode(ExitUsage, err)
		}
		return tg, false, nil
	}
	raw := f.target
	if w.Hooks.FillTarget != nil {
		var err error
		if raw, err = w.Hooks.FillTarget(raw); err != nil {
			return nil, false, withCode(ExitUsage, err)
		}
	}
	embedded := raw == ""
	if embedded {
		var err error
		if raw, err = embeddedURL(); err != nil {
			return nil, false, withCode(ExitUsage, err)
		}
	} else {
		u, err := embeddedURL()
		embedded = err == nil && raw == u
	}
	if f.psMode != "" && f.psMode != "auto" && f.psMode != "disable" { // "": not bound (sysinfo)
		return nil, false, withCode(ExitUsage, fmt.Errorf("--db-ps-mode %q: must be auto or disable", f.psMode))
	}
	// sysbench's --db-ps-mode=disable sends plain queries with the values
	// in their text on PostgreSQL too: the simple protocol, unless
	// --pg-mode asks for another. The mode set is the mode recorded.
	if f.psMode == "disable" && !f.pgMode.given {
		f.pgMode.v = postgres.ModeSimple
	}
	tg, err := a.Targets.Open(ctx, raw, a.targetOptions(f, clients, hold))
	if err != nil {
		return nil, false, withCode(ExitUsage, err)
	}
	return tg, embedded, nil
}

// targetOptions are the options every server of a run opens with; hold
// is the one the run's servers share (nil: each its own).
func (a *App) targetOptions(f *runFlags, clients int, hold *transport.Hold) target.Options {
	return target.Options{PGMode: f.pgMode.v, PSMode: f.psMode, Transport: f.transport, Clients: clients, Hold: hold, Logger: a.Logger, Notices: a.notices}
}

func (a *App) env(tg target.Target, f *runFlags, clients int) workload.Env {
	progress := a.Stderr
	if a.noProgress {
		progress = io.Discard
	}
	return workload.Env{Target: tg, Logger: a.Logger, Threads: clients, Seed: f.seed, Progress: progress, Stdout: a.Stdout, Interactive: a.Interactive}
}

func (a *App) validate(w workload.Spec, tg target.Target) error {
	if w.Hooks.Validate != nil {
		if err := w.Hooks.Validate(tg); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	return nil
}

func pickSeed(s uint64) uint64 {
	for s == 0 {
		s = rand.Uint64() >> 1 // fits in a signed 64-bit column too
	}
	return s
}

func (a *App) prepare(ctx context.Context, w workload.Spec, f *runFlags, clients int, quiet bool) error {
	where, err := a.setup(ctx, w, f, clients, "prepare", nil)
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(a.Stdout, "prepared %s on %s\n", w.Meta.Name, where)
	}
	return nil
}

func (a *App) cleanup(ctx context.Context, w workload.Spec, f *runFlags, clients int) error {
	where, err := a.setup(ctx, w, f, clients, "cleanup", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "cleaned up %s on %s\n", w.Meta.Name, where)
	return nil
}

// setup runs w's prepare, cleanup or prewarm on its target with clients
// connections, telling each step to steps (nil: none), and returns where
// it ran (redacted).
func (a *App) setup(ctx context.Context, w workload.Spec, f *runFlags, clients int, verb string, steps io.Writer) (string, error) {
	hook := map[string]func(context.Context, workload.Env) error{
		"prepare": w.Hooks.Prepare, "cleanup": w.Hooks.Cleanup, "prewarm": w.Hooks.Prewarm}[verb]
	if hook == nil {
		return "", withCode(ExitUsage, fmt.Errorf("%s cannot %s", w.Meta.Name, verb))
	}
	tg, _, err := a.openTarget(ctx, w, f, clients, nil)
	if err != nil {
		return "", err
	}
	defer tg.Close()
	// A cluster's data is shared: it is prepared, cleaned up and checked
	// through its first server; a prewarm fills each server's own cache.
	more, err := a.openMore(ctx, w, f, tg, clients, nil)
	if err != nil {
		return "", err
	}
	defer closeTargets(more)
	if verb != "prewarm" {
		more = nil
	}
	if verb != "cleanup" {
		if err := workload.CheckClients(clients); err != nil {
			return "", withCode(ExitUsage, err)
		}
		if err := a.validate(w, tg); err != nil {
			return "", err
		}
	}
	f.seed = pickSeed(f.seed)
	for _, t := range append([]target.Target{tg}, more...) {
		env := a.env(t, f, clients)
		env.Steps = steps
		if err := hook(ctx, env); err != nil {
			return "", setupError(ctx, err)
		}
	}
	return tg.Redacted(), nil
}

// setupError gives a failed setup its exit code: 130 when interrupted.
func setupError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return withCode(ExitInterrupted, errors.New("interrupted"))
	}
	return withCode(ExitUsage, err)
}

func (a *App) run(ctx context.Context, cmd *cobra.Command, w workload.Spec, f *runFlags) (err error) {
	mx, err := a.listenMetrics(f.metricsAddr)
	if err != nil {
		return err
	}
	defer a.closeMetrics(mx)
	servers, err := a.checkServerSet(ctx, w, f)
	if err != nil {
		return err
	}
	defer func() { err = restoreServerSet(ctx, servers, err) }()
	_, err = a.runOne(ctx, w, cmd.Flags(), f, runOpts{out: a.Stdout, servers: servers, metrics: mx})
	return err
}

// checkServerSet checks --server-set with the server before anything
// runs; nil when none is given.
func (a *App) checkServerSet(ctx context.Context, w workload.Spec, f *runFlags) (*serverset.Session, error) {
	if err := refuseServerSetOnCluster(f); err != nil {
		return nil, err
	}
	if f.serverSet.Empty() {
		if f.restartCmd != "" && !f.restartRead {
			return nil, withCode(ExitUsage, errors.New("--restart-cmd restarts the server for a --server-set that needs it: give that too, or drop it"))
		}
		return nil, nil
	}
	open := func(ctx context.Context) (target.Target, error) {
		tg, _, err := a.openTarget(ctx, w, f, 0, nil)
		return tg, err
	}
	s, err := serverset.Check(ctx, open, &f.serverSet, f.restartCmd, a.Stderr)
	if err != nil {
		return nil, setupError(ctx, err)
	}
	return s, nil
}

// restoreServerSet puts the server's settings back after the run or the
// sweep, whatever became of it, and adds a failure to do so to err.
func restoreServerSet(ctx context.Context, s *serverset.Session, err error) error {
	rerr := s.Restore(ctx)
	switch {
	case rerr == nil:
		return err
	case err == nil:
		return withCode(ExitRunFailed, rerr)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return withCode(ee.code, fmt.Errorf("%w; %w", err, rerr))
	}
	return fmt.Errorf("%w; %w", err, rerr)
}

// runOpts are what a caller adds to a run's options.
type runOpts struct {
	out   io.Writer        // the live lines, the summary and where the result went
	st    store.Store      // where to keep the result; nil opens --store unless --no-store
	sweep *result.SweepRef // the sweep cell the run belongs to
	fresh bool             // clean up and prepare before the run (a new value of a prepare option)
	// servers sets the server settings of the run (--server-set), checked
	// by the command before anything ran.
	servers *serverset.Session
	// repair prepares again when the data fails the workload's check: in a
	// sweep whose earlier runs found it prepared, a run can leave it
	// otherwise (file I/O's seqwr, cut short by its time limit, leaves its
	// files short).
	repair bool
	// front is a front end's part in the run (sysbench's, pgbench's); nil
	// for dbmark's own commands.
	front *frontEnd
	// metrics serves the run's live metrics (--metrics-addr); nil: none.
	metrics *promexport.Server
}

// runOne does one run of w with the options parsed into fs and f, keeps
// its result and returns it (nil if the run did not start) with an error
// that carries the exit code.
func (a *App) runOne(ctx context.Context, w workload.Spec, fs *pflag.FlagSet, f *runFlags, o runOpts) (*result.Result, error) {
	cfg, plan, err := runConfig(w, fs, f)
	if err == nil {
		err = f.start.resolve(time.Now(), o.sweep != nil)
	}
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if o.front != nil && o.front.tune != nil {
		o.front.tune(&cfg)
	}
	if !w.Runnable() {
		return nil, withCode(ExitUsage, fmt.Errorf("workload %s cannot be run", w.Meta.Name))
	}
	// The servers' connections move between their threads and the poller
	// together, as the runner that follows them does (transport.Hold).
	hold := new(transport.Hold)
	tg, embedded, err := a.openTarget(ctx, w, f, cfg.Threads, hold)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	more, err := a.openMore(ctx, w, f, tg, cfg.Threads, hold)
	if err != nil {
		return nil, err
	}
	defer closeTargets(more)
	cfg.Servers = 1 + len(more)
	if err := a.validate(w, tg); err != nil {
		return nil, err
	}
	var serverSet []result.ServerSetting
	if o.servers != nil {
		wants, err := f.serverSet.Run()
		if err != nil {
			return nil, withCode(ExitUsage, err)
		}
		if serverSet, err = o.servers.Apply(ctx, tg, wants); err != nil {
			return nil, setupError(ctx, err)
		}
	}
	if w.Hooks.DefaultIgnoreErrors != nil && !fs.Changed("ignore-errors") {
		cfg.IgnoreErrors = w.Hooks.DefaultIgnoreErrors(tg.Dialect())
	}
	// Open the store before the run: a run whose result cannot be kept is
	// not worth starting.
	st := o.st
	if st == nil && !f.noStore {
		if st, err = store.Open(ctx, a.storeDSN, a.Logger); err != nil {
			return nil, setupError(ctx, fmt.Errorf("%w (use --store to choose another, or --no-store)", err))
		}
		defer st.Close()
	}
	// A run killed while writing the store's fallback file (keep) left
	// its temporary file in the data directory.
	if st != nil {
		if dir, err := store.DataDir(); err == nil {
			result.RemoveStaleTemps(dir, func(name string) bool {
				return strings.HasPrefix(name, "unsaved-") && strings.HasSuffix(name, ".json")
			})
		}
	}
	f.seed = pickSeed(f.seed)
	cfg.Seed = f.seed
	env := a.env(tg, f, plan.Clients)
	env.Plan = plan

	eng, err := tg.Inspect(ctx)
	if err != nil {
		return nil, setupError(ctx, err)
	}
	if err := a.ready(ctx, w, env, embedded, o); err != nil {
		return nil, setupError(ctx, err)
	}
	load, err := w.Load(ctx, env)
	if err != nil {
		return nil, setupError(ctx, err)
	}
	clients, err := sqlclient.For(tg, load, more...)
	if err != nil {
		return nil, setupError(ctx, err)
	}

	res := a.newResult(w, tg, eng, fs, cfg, plan)
	res.Sweep = o.sweep
	res.Target.ServerSet = serverSet
	for _, set := range serverSet {
		res.Workload.Options[result.ServerOption(set.Name)] = set.Set
	}
	if err := a.addContext(ctx, res, tg, &f.ctxFlags); err != nil {
		return nil, err
	}
	if res.Servers, err = a.servers(ctx, res.Target, more); err != nil {
		return nil, setupError(ctx, err)
	}
	every := f.ctxFlags.interval(fs, cfg.ReportInterval)
	// Sampled at the live lines' ticks, a line's counters are its own.
	driven := cfg.ReportInterval > 0 && every == cfg.ReportInterval
	smp := a.startSampler(ctx, tg, more, every, driven, f.ctxFlags.root)
	if cfg.ReportInterval > 0 && o.front == nil {
		on := ""
		if len(more) > 0 {
			on = fmt.Sprintf(" (%d servers, the threads spread over them)", 1+len(more))
		}
		fmt.Fprintf(o.out, "Running %s on %s %s%s with %d thread(s), seed %d\n\n", w.Meta.Name, eng.Name, eng.Version, on, cfg.Threads, cfg.Seed)
	}
	liveOut, peerLine := o.out, w.Hooks.LiveLine
	var ownLine func(result.Interval, int) string
	if o.front != nil && o.front.live != nil {
		liveOut, peerLine, ownLine = o.front.liveOut, nil, o.front.live
	}
	live := startLive(liveOut, a.Stderr, peerLine, smp, driven, f.ctxFlags.show, f.stamp, cfg.ReportInterval)
	live.own = ownLine
	f.start.ready(ctx, tg, &cfg, time.Duration(f.warmup), o.out, a.Stderr)
	if o.front != nil && o.front.started != nil {
		o.front.started()
	}
	cfg.Watch = o.watch(res, f, cfg.Threads, smp)
	out := runner.Run(ctx, cfg, clients, load, live.sink, a.Logger)
	live.stop()
	fill(res, out)
	noteHolds(res, out.StartedAt, append([]target.Target{tg}, more...))
	addServers(res.Servers, out.Servers)
	f.start.record(res, time.Duration(f.warmup))
	if c := res.Summary.Client; c != nil {
		d := tg.Dialect()
		c.Judge(isServer(tg) && isLocal(tg), d != nil && d.Embedded())
	}
	if smp != nil {
		res.Counters = smp.Stop(out.StartedAt, out.EndedAt)
	}
	if load.Finish != nil {
		load.Finish(ctx, res)
	}
	if w.Hooks.Annotate != nil {
		w.Hooks.Annotate(res)
	}
	res.Summary.Dips = dips.Find(res)
	res.Summary.Saturated = saturation.Find(res)
	res.Summary.Warnings = append(res.Summary.Warnings, probe.DuringRun(res.Counters)...)

	return res, a.conclude(ctx, w, res, out, st, f, o)
}

// runConfig computes the run's clients and limits once (the runner, the
// workload and the result take them from here) and the runner's settings.
func runConfig(w workload.Spec, fs *pflag.FlagSet, f *runFlags) (runner.Config, workload.Plan, error) {
	ps, err := metrics.ParsePercentiles(f.percentiles)
	if err != nil {
		return runner.Config{}, workload.Plan{}, fmt.Errorf("--percentiles: %w", err)
	}
	// A result that cannot be written is not worth measuring.
	if f.jsonPath != "" {
		if err := result.CheckWritable(f.jsonPath); err != nil {
			return runner.Config{}, workload.Plan{}, fmt.Errorf("--json %s: %w", f.jsonPath, err)
		}
	}
	plan, err := workload.NewPlan(f.planInput(fs, w), w.Hooks.Plan)
	if err != nil {
		return runner.Config{}, workload.Plan{}, err
	}
	cfg := runner.Config{
		Threads: plan.Clients, Duration: plan.Time, Events: plan.Events, Warmup: plan.Warmup,
		ReportInterval: time.Duration(f.interval), Rate: plan.Rate, MaxTries: plan.MaxTries, VerboseErrors: f.verboseErrs,
		IgnoreErrors: f.ignoreErrors, Percentiles: ps, SkipLate: plan.SkipLate, CountFailed: plan.CountFailed,
		AbortClient: plan.AbortClient, SelfLimited: plan.SelfLimited,
		StallTimeout: time.Duration(f.stallTimeout),
	}
	if plan.StallTimeout != 0 && !fs.Changed("stall-timeout") {
		cfg.StallTimeout = max(plan.StallTimeout, 0)
	}
	return cfg, plan, cfg.Validate()
}

// ready makes the workload's data ready for the run: made afresh for a
// sweep cell that asks (o.fresh), checked, and prepared again where the
// data is dbmark's own (the embedded database) or a sweep's (o.repair).
func (a *App) ready(ctx context.Context, w workload.Spec, env workload.Env, embedded bool, o runOpts) error {
	if o.fresh {
		if err := a.reprepare(ctx, w, env); err != nil {
			return err
		}
	}
	if w.Hooks.Prepared == nil {
		return nil
	}
	err := w.Hooks.Prepared(ctx, env)
	if err == nil {
		return nil
	}
	if !(embedded || o.repair) || w.Hooks.Prepare == nil || ctx.Err() != nil {
		return fmt.Errorf("%s: %w", w.Meta.Name, err)
	}
	what := "preparing the embedded database"
	if !embedded {
		what = "preparing again for this sweep"
	}
	a.Logger.Info(what, "workload", w.Meta.Name, "target", env.Target.Redacted(), "because", err)
	// The embedded database is dbmark's own: tables left by a run with
	// other options are dropped rather than refused. In a sweep, data an
	// earlier run changed is made again.
	return a.reprepare(ctx, w, env)
}

// conclude keeps res, prints its summary and gives the run's outcome its
// error and exit code.
func (a *App) conclude(ctx context.Context, w workload.Spec, res *result.Result, out *runner.Outcome, st store.Store, f *runFlags, o runOpts) error {
	// From here on nothing may stop the result from being kept.
	saveCtx := context.WithoutCancel(ctx)
	own := o.out // dbmark's own lines
	if o.front != nil {
		own = o.front.ownOut()
	}
	// summary prints the run's report: dbmark's, or a front end's in its
	// place (dbmark's going to the front end's own stream when it asks).
	summary := func() {
		if o.front != nil && !o.front.summary {
			o.front.report(res)
			return
		}
		if f.histogram {
			a.histogram(own, res)
		}
		report.Summary(own, res)
		switch {
		case o.front != nil:
			o.front.report(res)
		case w.Hooks.Report != nil:
			w.Hooks.Report(o.out, res)
		}
	}
	if err := a.keep(saveCtx, own, res, st, f.jsonPath); err != nil {
		// What was measured is shown even when it could not be kept.
		summary()
		return withCode(ExitRunFailed, err)
	}
	summary()
	// The result's status: the runner's, or a workload's verdict on what
	// it measured (most reads that must find rows found none, a query
	// suite's failed queries).
	switch res.Status {
	case result.StatusInterrupted:
		return withCode(ExitInterrupted, errors.New("interrupted: "+keptNote(st, f.jsonPath)))
	case result.StatusFailed:
		code := ExitRunFailed
		if c := w.Meta.FailedRunCode; c != 0 {
			code = c
		}
		if out.Err != nil && out.Status == result.StatusFailed {
			return withCode(code, fmt.Errorf("run failed: %w (%s)", out.Err, keptNote(st, f.jsonPath)))
		}
		return withCode(code, fmt.Errorf("run failed: %s (%s)", res.Error, keptNote(st, f.jsonPath)))
	}
	return nil
}

// histogram prints the latency histogram of res's events (sysbench's
// --histogram), from the histogram the result keeps.
func (a *App) histogram(out io.Writer, res *result.Result) {
	event := ""
	for _, o := range res.Summary.Ops {
		if o.Kind == metrics.Event.String() {
			event = o.Name
		}
	}
	for _, hh := range res.Histograms {
		if hh.Op != event || hh.Kind != "latency" {
			continue
		}
		h, err := hh.Decode()
		if err != nil {
			a.Logger.Warn("cannot print the histogram", "err", err)
			return
		}
		report.Histogram(out, h)
		return
	}
	fmt.Fprintln(out, "Latency histogram (values are in milliseconds): no events")
}

// reprepare drops what w prepared, if it can, and prepares it again.
func (a *App) reprepare(ctx context.Context, w workload.Spec, env workload.Env) error {
	if w.Hooks.Cleanup != nil {
		if err := w.Hooks.Cleanup(ctx, env); err != nil {
			return err
		}
	}
	if w.Hooks.Prepare != nil {
		return w.Hooks.Prepare(ctx, env)
	}
	return nil
}

// keep writes the result to --json and the store. If the store refuses it,
// the document goes to a file in the data directory so nothing is lost.
func (a *App) keep(ctx context.Context, out io.Writer, res *result.Result, st store.Store, jsonPath string) error {
	var errs []error
	kept := st == nil && jsonPath == "" // --no-store without --json: nothing to keep
	if jsonPath != "" {
		if err := result.WriteFile(jsonPath, res); err != nil {
			errs = append(errs, err)
		} else {
			kept = true
		}
	}
	if st != nil {
		id, err := st.Save(ctx, res)
		if err == nil {
			fmt.Fprintf(out, "result %d saved (%s)\n", id, res.ID)
			return joinLine(errs)
		}
		errs = append(errs, err)
		if dir, derr := store.DataDir(); derr == nil {
			path := filepath.Join(dir, "unsaved-"+res.ID+".json")
			if werr := result.WriteFile(path, res); werr == nil {
				a.Logger.Warn("the store refused the result; it was written to a file instead", "path", path)
				kept = true
			} else {
				errs = append(errs, werr)
			}
		}
	}
	if !kept {
		errs = append(errs, errors.New("the result could not be kept anywhere and is lost (free some space, or give --json a file on another disk); its summary follows"))
	}
	return joinLine(errs)
}

// joinLine joins errs into one error of one line, each still found by
// errors.Is and errors.As.
func joinLine(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	args := make([]any, len(errs))
	for i, e := range errs {
		args[i] = e
	}
	return fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; "), args...)
}

// newResult starts the result document with everything known before the run.
func (a *App) newResult(w workload.Spec, tg target.Target, eng target.Engine, fs *pflag.FlagSet, cfg runner.Config, plan workload.Plan) *result.Result {
	m := w.Meta
	bi := buildinfo.Get()
	opts := map[string]string{}
	fs.VisitAll(func(fl *pflag.Flag) {
		switch {
		case result.ClassOf(fl.Name) == result.OutputOption: // how dbmark was asked and where it wrote, not the run
			return
		case fl.Name == "num-threads", fl.Name == "max-time", fl.Name == "max-requests":
			return // spellings of threads, time and events, recorded under those names
		}
		opts[fl.Name] = fl.Value.String()
	})
	// The clients and limits as the plan made them, under every name of
	// their options: a workload that ends the run itself (iibench's
	// --max-rows) leaves --time's default unused, pgbench's -t makes
	// --events.
	for name, v := range map[string]string{"threads": strconv.Itoa(plan.Clients), "time": plan.Time.String(),
		"events": strconv.FormatInt(plan.Events, 10), "max-tries": strconv.Itoa(plan.MaxTries)} {
		if fl := fs.Lookup(name); fl != nil {
			fs.VisitAll(func(o *pflag.Flag) {
				if _, ok := opts[o.Name]; ok && sameValue(o, fl) {
					opts[o.Name] = v
				}
			})
		}
	}
	return &result.Result{
		SchemaVersion: result.SchemaVersion,
		ID:            uuid.NewString(),
		Tool:          result.Tool{Name: "dbmark", Version: bi.Version, Revision: bi.Revision, Go: bi.Go},
		Command:       redactArgs(append([]string{"dbmark"}, a.Args...)),
		Workload:      result.Workload{Name: m.Name, Version: m.Version, Headline: m.Headline, Better: m.Better, Options: opts},
		Target: result.Target{Kind: tg.Kind(), URL: tg.Redacted(), Engine: eng.Name, Version: eng.Version,
			Driver: eng.Driver, DataDir: eng.DataDir, Settings: eng.Settings},
		Seed: cfg.Seed,
		Run: result.RunOptions{Threads: cfg.Threads, DurationS: cfg.Duration.Seconds(), Events: cfg.Events,
			WarmupS: cfg.Warmup.Seconds(), ReportInterval: cfg.ReportInterval.Seconds(), Rate: cfg.Rate,
			MaxTries: cfg.MaxTries, IgnoreErrors: cfg.IgnoreErrors, Percentiles: cfg.Percentiles},
		Plan: &result.Plan{Clients: plan.Clients, Connections: plan.Connections, Events: plan.Events,
			PerClient: plan.PerClient, TimeS: plan.Time.Seconds(), WarmupS: plan.Warmup.Seconds(), Rate: plan.Rate,
			MaxTries: plan.MaxTries, SelfLimited: plan.SelfLimited, SkipLateS: plan.SkipLate.Seconds(),
			CountFailed: plan.CountFailed, AbortClient: plan.AbortClient},
	}
}

// fill adds what the run measured.
func fill(res *result.Result, out *runner.Outcome) {
	res.StartedAt, res.EndedAt = out.StartedAt.UTC(), out.EndedAt.UTC()
	res.Status = out.Status
	if out.Err != nil && out.Status == result.StatusFailed {
		res.Error = out.Err.Error()
	}
	res.Summary = out.Summary
	res.Summary.Headline = out.Summary.EventsPerS
	res.Summary.HeadlineUnit = res.Workload.Headline
	res.Histograms = out.Hists
	res.Series = out.Series
	if res.Environment != nil && out.GoMaxProcs > 0 {
		res.Environment.GoMaxProcs = out.GoMaxProcs
	}
}

// noteHolds adds to the driver line each move of the run's connections
// from their threads to the poller and back (transport.Hold): when, from
// the start, and why; after maxNotedHolds of them, how many more. The
// servers of a run share their Hold: the first that moved tells.
func noteHolds(res *result.Result, start time.Time, tgs []target.Target) {
	var sw []transport.Switch
	for _, t := range tgs {
		if h, ok := t.(target.ThreadHolder); ok && len(sw) == 0 {
			sw = h.HoldSwitches()
		}
	}
	for i, s := range sw {
		if i == maxNotedHolds {
			res.Target.Driver += fmt.Sprintf(", and %d more such moves", len(sw)-i)
			return
		}
		way := "released to the poller transport"
		if !s.Released {
			way = "back on their threads"
		}
		res.Target.Driver += fmt.Sprintf(", %s at %.1f s (%d of %d waits on the server took %d ms or longer)",
			way, max(s.At.Sub(start), 0).Seconds(), s.Long, s.Of, transport.LongWait.Milliseconds())
	}
}

// maxNotedHolds is how many moves of the connections the driver line
// spells out.
const maxNotedHolds = 4

// redactArgs masks the secrets of a command line by the secret policy:
// options that carry one, URLs and DSNs, NAME=VALUE and keys in any value.
func redactArgs(args []string) []string { return secret.Args(args) }
