// Package workload defines what a benchmark does: a small required core
// (its name and flags) and optional capabilities found by type assertion
// (prepare, cleanup, the load the runner drives, a consistency check).
// Workloads register themselves in a Registry from the command's wiring.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/spf13/pflag"

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

// Workload is the required core.
type Workload interface {
	Meta() Meta
	// Flags binds the workload's options into its own struct.
	Flags(fs *pflag.FlagSet)
}

// Env is what a workload gets to work with.
type Env struct {
	Target  target.Target
	Logger  *slog.Logger
	Threads int
	Seed    uint64
	// Progress receives progress output (bars, notes) for a person; it may
	// be io.Discard. It is the command's standard error.
	Progress io.Writer
	// Stdout is the command's standard output, for what a peer tool
	// writes there (pgbench's \shell); nil discards it.
	Stdout io.Writer
	// Interactive says whether Progress is a terminal.
	Interactive bool
}

// Informer is a workload whose options can ask for information in place
// of the command (pgbench's --show-script, -b list). Inform writes it to w
// and says whether it did; the command then ends there, connecting to
// nothing.
type Informer interface {
	Inform(w io.Writer) (bool, error)
}

// Validator checks options before anything is touched.
type Validator interface {
	Validate(t target.Target) error
}

// Preparer creates and loads what the workload needs.
type Preparer interface {
	Prepare(ctx context.Context, env Env) error
}

// Cleaner removes what Prepare made.
type Cleaner interface {
	Cleanup(ctx context.Context, env Env) error
}

// PreparedChecker reports whether Prepare has been run (and with what
// problem if not), so a run can refuse early with a clear message, or the
// embedded default can prepare on first use.
type PreparedChecker interface {
	Prepared(ctx context.Context, env Env) error
}

// Loader builds the load the runner drives.
type Loader interface {
	Load(ctx context.Context, env Env) (*Load, error)
}

// Optioner reports every effective option, defaults included, for the result.
type Optioner interface {
	Options() map[string]string
}

// DefaultIgnorer names the error codes a workload ignores on an engine when
// the user gives no --ignore-errors, as sysbench's drivers do (its pgsql
// driver ignores unique violations, which concurrent DELETE/INSERT pairs
// provoke under READ COMMITTED).
type DefaultIgnorer interface {
	DefaultIgnoreErrors(d target.Dialect) []string
}

// Checker verifies the data's consistency after runs (pgbench's TPC-B
// balance invariants), for "dbmark check".
type Checker interface {
	Check(ctx context.Context, env Env) error
}

// PrepareOptions names the options that change what Prepare builds (file
// I/O's --file-total-size, OLTP's --table-size). A sweep over one of them
// prepares each cell afresh instead of reusing the prepared data.
type PrepareOptions interface {
	PrepareOptions() []string
}

// SweepAnnotator adds notes to a sweep's summary along one numeric axis:
// xs are the axis values in order, ys the headline metric's mean at each
// (file I/O marks the file sizes where the rate falls to a new plateau,
// the cache tiers of a cloud volume).
type SweepAnnotator interface {
	AnnotateSweep(axis string, xs, ys []float64) []string
}

// TargetProvider is a workload whose load does not go to a database URL
// but to a target of its own (file I/O's directory). The CLI uses it in
// place of --target; its Conns are whatever the workload's workers expect.
type TargetProvider interface {
	OwnTarget(ctx context.Context) (target.Target, error)
}

// Threader derives the thread count from the workload's own options
// (iibench's --inserters and --query-threads). set says whether --threads
// was given; a conflicting one is an error.
type Threader interface {
	Threads(given int, set bool) (int, error)
}

// SelfLimiter reports that the workload ends the run by itself (its
// workers return ErrWorkerDone, as iibench's inserters do at --max-rows),
// so no --time or --events is needed and the default --time does not apply.
type SelfLimiter interface {
	SelfLimited() bool
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
	// NewWorker sets up one worker on its own connection. It is called again
	// with a new connection after a reconnect.
	NewWorker func(ctx context.Context, id int, conn target.Conn, h *metrics.Handle) (Worker, error)
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
	// calls that return quickly (file I/O): the runner
	// then gives every worker a processor of the Go scheduler, so one back
	// from a system call never waits for the scheduler to take a processor
	// from a worker still blocked in one.
	SyscallBound bool
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

// Registry holds the known workloads.
type Registry struct {
	byName map[string]func() Workload
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]func() Workload{}} }

// Register adds a workload constructor under its name.
func (r *Registry) Register(name string, f func() Workload) {
	if _, dup := r.byName[name]; dup {
		panic(fmt.Sprintf("workload %q registered twice", name))
	}
	r.byName[name] = f
}

// New returns a fresh instance of the named workload.
func (r *Registry) New(name string) (Workload, bool) {
	f, ok := r.byName[name]
	if !ok {
		return nil, false
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
