// Package workload defines what a benchmark does. A workload declares
// everything it is and can do in one Spec: its meta, its flags, the load
// the runner drives and a Hooks struct of optional abilities (prepare,
// cleanup, checks, its peer tool's ways). Workloads register a Spec
// constructor in a Registry from the command's wiring.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/errclass"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
)

// Meta describes a workload.
type Meta struct {
	Name        string
	Description string
	// Version changes whenever the schema, data or statements change, so
	// results of different versions are not compared blindly.
	Version string
	// Headline is the metric that sums up a run ("tps", "qps") and Better
	// says which direction is good ("higher" or "lower").
	Headline string
	Better   string
	// FailedRunCode, when not 0, is the exit code of a run that failed
	// (an error it could not go on after), as the tool the workload
	// follows gives it: sysbench exits 1 where dbmark's default,
	// pgbench's, is 2.
	FailedRunCode int
}

// Spec is one workload: what it is, its options, the load it runs and
// its optional abilities, declared in one literal. A registered
// constructor returns a new Spec whose functions share one instance's
// options, so a command binds Flags and then calls the rest.
type Spec struct {
	Meta Meta
	// Flags binds the workload's options into its own state. Required.
	Flags func(fs *pflag.FlagSet)
	// Load builds what the runner drives; nil: the workload only prepares
	// and cleans up.
	Load func(ctx context.Context, env Env) (*Load, error)
	// PrepareOptions names the options that change what Prepare builds
	// (file I/O's --file-total-size, OLTP's --table-size): a sweep over
	// one of them prepares each cell afresh instead of reusing the data.
	PrepareOptions []string
	// OwnTarget, when set, is where the load goes in place of a database
	// (file I/O's directory): the command then takes no --target and no
	// database option. The target describes the place (Inspect); the
	// load's own Clients do the work.
	OwnTarget func(ctx context.Context) (target.Target, error)
	Hooks     Hooks
}

// Hooks are a workload's optional abilities: nil means it has not that
// ability and the command does without.
type Hooks struct {
	// Inform writes what the options ask for in place of the command
	// (pgbench's --show-script, -b list) and says whether it did; the
	// command then ends there, connecting to nothing.
	Inform func(w io.Writer) (bool, error)
	// PrepareInstead says the run command's options ask for a prepare in
	// its place (pgbench's -i): the command then prepares, as prepare
	// does, and runs nothing.
	PrepareInstead func() bool
	// Args takes the command's positional arguments (pgbench's database
	// name), which commands refuse for workloads without it.
	Args func(args []string) error
	// FillTarget returns raw (--target, perhaps empty) with what the
	// peer's own options say of the server filled in (pgbench's -h, -p,
	// -U and database name).
	FillTarget func(raw string) (string, error)
	// Validate checks the options before anything is touched.
	Validate func(t target.Target) error
	// Plan declares what the workload needs of the run's plan, from its
	// own options and the common ones as given (pgbench's -t per client,
	// iibench's thread count and --max-rows): NewPlan combines it with
	// the options. It checks what depends on both and changes nothing.
	Plan func(in PlanInput) (PlanAdjust, error)
	// DefaultIgnoreErrors names the error codes ignored on the target's
	// engine when the user gives no --ignore-errors, as sysbench's drivers
	// do (its pgsql driver ignores unique violations).
	DefaultIgnoreErrors func(d target.Dialect) []string
	// Prepare creates and loads what the workload needs.
	Prepare func(ctx context.Context, env Env) error
	// Cleanup removes what Prepare made.
	Cleanup func(ctx context.Context, env Env) error
	// Prewarm reads the prepared data into the server's caches
	// (sysbench's prewarm command).
	Prewarm func(ctx context.Context, env Env) error
	// Prepared reports whether Prepare has been run (and what is wrong
	// if not), so a run can refuse early or the embedded default prepare
	// on first use.
	Prepared func(ctx context.Context, env Env) error
	// Check verifies the data's consistency after runs (pgbench's TPC-B
	// balance invariants), for "dbmark check"; a finding wraps
	// ErrCheckFailed.
	Check func(ctx context.Context, env Env) error
	// LiveLine is the peer tool's form of a live line (pgbench's progress
	// lines under -P), written on standard error in place of dbmark's;
	// "" keeps dbmark's. at is the line's time, stamped with
	// --progress-timestamp. It is asked for on the ticker, after the
	// Load's Tick for the same interval.
	LiveLine func(p result.Interval, at time.Time, stamped bool) string
	// Annotate adds the workload's own figures to the result before it
	// is kept; Report writes its own lines after the summary.
	Annotate func(res *result.Result)
	Report   func(w io.Writer, res *result.Result)
	// AnnotateSweep adds notes to a sweep's summary along one numeric
	// axis: xs are the axis values in order, ys the headline's mean at
	// each (file I/O marks where the rate falls to a new plateau).
	AnnotateSweep func(axis string, xs, ys []float64) []string
}

// Runnable says whether the workload can be run (it has a Load).
func (s Spec) Runnable() bool { return s.Load != nil }

// Env is what a workload gets to work with.
type Env struct {
	Target target.Target
	Logger *slog.Logger
	// Threads is the number of clients: the plan's in a run, --threads
	// in a prepare.
	Threads int
	// Plan is the run's plan; zero outside a run.
	Plan Plan
	Seed uint64
	// Progress receives progress output (bars, notes) for a person; it may
	// be io.Discard. It is the command's standard error.
	Progress io.Writer
	// Stdout is the command's standard output, for what a peer tool
	// writes there (pgbench's \shell); nil discards it.
	Stdout io.Writer
	// Interactive says whether Progress is a terminal.
	Interactive bool
	// Steps, when set, is told each step of a prepare, cleanup or prewarm
	// in the words of the tool the workload follows (sysbench's "Creating
	// table 'sbtest1'..."), one line per write, for that tool's front end;
	// nil: the steps are not told. Loaders in parallel write to it.
	Steps io.Writer
}

// Step tells env's Steps one line, if it listens.
func (env Env) Step(format string, a ...any) {
	if env.Steps != nil {
		fmt.Fprintf(env.Steps, format+"\n", a...)
	}
}

// ErrWorkerDone is returned by Worker.Event when the worker has nothing
// more to do: the runner stops that worker without an error, and the run
// ends when every worker has stopped.
var ErrWorkerDone = errors.New("worker done")

// Load is what the workers run.
type Load struct {
	// Ops are the operations recorded: events (what tps counts) and
	// statements (what qps counts).
	Ops []metrics.OpSpec
	// OpBytes, when set, is what one operation of each of Ops moves (file
	// I/O's block size), so reads and writes are also reported in MiB/s.
	OpBytes []int64
	// LatencyOf are the operations whose latency stands beside the
	// headline, in the summary and the series (nil: every event
	// operation). A workload whose events are of several kinds, only some
	// of which make its headline, names those.
	LatencyOf []metrics.Op
	// NewWorker sets up one worker on its own database connection
	// (package sqlclient connects, rolls back and reconnects). It is
	// called again with a new connection after a reconnect.
	NewWorker func(ctx context.Context, s Seat) (Worker, error)
	// Clients, for a load that needs no database (file I/O), opens its
	// clients itself in place of NewWorker.
	Clients Clients
	// Observe, when set, is told on the worker's goroutine how each of
	// w's events ended (pgbench's per-transaction logs, its late and
	// skipped counts); w is what NewWorker returned.
	Observe func(w Worker, e EventInfo)
	// QuietCommits spares Observe the events committed at their first
	// try, for a load that counts nothing of them (pgbench's without its
	// log and latency limit): it saves a call an event.
	QuietCommits bool
	// Close releases shared state after the run.
	Close func(ctx context.Context) error
	// WorkerRate, when set, gives each worker its own open-loop rate in
	// events per second (0: closed loop) in place of its share of --rate,
	// so one role can be capped and another not (iibench's inserters and
	// query threads).
	WorkerRate func(id int) float64
	// Tick, when set, is called with every interval and its series point
	// so the workload can add figures of its own to the point's Extra. It
	// runs on the ticker: it must not block.
	Tick func(iv metrics.Interval, p *result.Interval)
	// Finish, when set, completes the result after the run, before it is
	// kept (figures only the workload knows, steps that follow the load).
	Finish func(ctx context.Context, res *result.Result)
	// SyscallBound says the workers spend their time blocked in system
	// calls that return quickly (file I/O; a database connection on the
	// blocking transport, set by package sqlclient): the runner then gives
	// every worker a processor of the Go scheduler, so one back from a
	// system call never waits for the scheduler to take a processor from a
	// worker still blocked in one, and has each worker yield between
	// events so that the runtime leaves it its processor.
	SyscallBound bool
	// Held, when set on a SyscallBound load, says whether the workers
	// wait in system calls on threads of their own for now: while false
	// (their connections were released to Go's network poller), the
	// runner gives back the processors it added and the workers do not
	// yield; true again, it asks for them again.
	Held func() bool
}

// Worker runs events on one connection. It is used by one goroutine.
type Worker interface {
	// Event runs one event (one transaction) and returns the event
	// operation it was. On error the runner rolls back, classifies the error
	// and decides whether to retry the same event: Event must then repeat
	// the same statements with the same arguments when retry is true.
	// A worker with several requests in flight (queued I/O) records its
	// events itself, timed from submission, and returns metrics.SelfRecorded.
	Event(ctx context.Context, retry bool) (metrics.Op, error)
	// Close releases the worker's statements; the runner closes the connection.
	Close() error
}

// Seat is one client's place in a run, as NewWorker gets it.
type Seat struct {
	ID   int
	Conn target.Conn
	H    *metrics.Handle
	// Clock is the client's clock, shared with the runner (see Clock).
	Clock *Clock
	// Dialed is how long opening Conn took (0 where not known).
	Dialed time.Duration
}

// ServerOf is the server client talks to when a run's clients are spread
// over servers of them round-robin, as sysbench spreads its connections
// over --mysql-host's list: client i on server i mod servers.
func ServerOf(client, servers int) int {
	if servers < 2 {
		return 0
	}
	return client % servers
}

// Clients opens a run's clients and says what their errors mean. Package
// sqlclient opens them on a target's connections for the SQL workloads; a
// workload that needs no database (file I/O) opens its own. The runner
// knows no more of a client than this.
type Clients interface {
	// Open sets up client id: its worker and the session it runs on.
	Open(ctx context.Context, id int, h *metrics.Handle, clock *Clock) (Worker, Session, error)
	// Classify says what to do about an error a worker returned.
	Classify(err error) errclass.Info
}

// Session is what a client's worker runs on (a database connection, a
// set of open files), as the runner sees it.
type Session interface {
	// Reset ends what a failed try left open (a transaction) before the
	// next try; an error doing so is not the run's.
	Reset(ctx context.Context)
	// Waiting names what the session is running, "" when it cannot say:
	// the statement a stalled client waits for.
	Waiting() string
	// Close releases the session; it is safe to call twice.
	Close() error
}

// Registry holds the known workloads.
type Registry struct {
	byName map[string]func() Spec
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]func() Spec{}} }

// Register adds a workload constructor under its name.
func (r *Registry) Register(name string, f func() Spec) {
	if _, dup := r.byName[name]; dup {
		panic(fmt.Sprintf("workload %q registered twice", name))
	}
	r.byName[name] = f
}

// New returns a fresh instance of the named workload.
func (r *Registry) New(name string) (Spec, bool) {
	f, ok := r.byName[name]
	if !ok {
		return Spec{}, false
	}
	return f(), true
}

// Names lists the registered workloads in order.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// readsAnnotation marks a command's option that a workload reads as well
// (a query suite's --cold reads the run's --restart-cmd).
const readsAnnotation = "dbmark-workload-reads"

// ReadFlag returns the command's option name when the command has bound
// it already, marked as one the workload reads too; nil when it has not,
// and the workload binds its own.
func ReadFlag(fs *pflag.FlagSet, name string) *pflag.Flag {
	f := fs.Lookup(name)
	if f == nil {
		return nil
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[readsAnnotation] = []string{"yes"}
	return f
}

// FlagRead says whether the workload reads the command's option name
// (ReadFlag), so that the command does not refuse it as unused.
func FlagRead(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && len(f.Annotations[readsAnnotation]) > 0
}
