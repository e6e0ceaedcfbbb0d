package workload

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
)

// RunHints are settings a workload asks of the runner once its flags are
// parsed.
type RunHints struct {
	// SkipLate skips, under --rate, an event whose scheduled start is
	// already this far behind when its turn comes (pgbench's -L with -R);
	// 0 never skips.
	SkipLate time.Duration
	// CountFailed makes failed and skipped events count toward the event
	// limit, as pgbench's -t counts them.
	CountFailed bool
	// AbortClient makes a fatal error end only the client that met it:
	// the others go on to their limits and the run then ends failed, as
	// pgbench 15 lets its other clients finish. Without it such an error
	// ends the run.
	AbortClient bool
}

// AfterEventError is what Worker.Event returns when its event did its
// work and counts as committed, but the client cannot go on (pgbench's
// script that ends inside a transaction block): Err is then the client's
// fatal error.
type AfterEventError struct{ Err error }

func (e *AfterEventError) Error() string { return e.Err.Error() }
func (e *AfterEventError) Unwrap() error { return e.Err }

// RunAdjuster settles options that depend on each other after parsing
// (pgbench's -t is per client while --events is a total) and returns the
// runner settings the workload needs.
type RunAdjuster interface {
	AdjustRun(fs *pflag.FlagSet) (RunHints, error)
}

// EventStatus is how an event ended.
type EventStatus int

const (
	EventCommitted EventStatus = iota
	// EventFailed is an event given up on after its tries, or whose error
	// code is ignored.
	EventFailed
	// EventSkipped is an event not started because it was too late (RunHints.SkipLate).
	EventSkipped
)

// EventInfo is one event as the runner saw it.
type EventInfo struct {
	Op     metrics.Op // what Event returned, on failure too
	Status EventStatus
	Code   string // the error code of a failed event
	Tries  int
	// Intended is the scheduled start under --rate, else the actual start.
	Intended   time.Time
	Began, End time.Time
}

// EventObserver is a Worker told of each event's outcome (pgbench's
// per-transaction logs, its late and skipped counts).
type EventObserver interface {
	Observe(e EventInfo)
}

// Clock carries the last time a worker read the clock, so the runner need
// not read it again where an event starts and ends: that was two of five
// reads in a pgbench transaction, each one a cache miss in the kernel's
// clock page after the server ran. The runner sets Now to the event's
// start; a worker that times its steps leaves in it the end of its last
// step, or the zero time when it cannot say.
type Clock struct {
	Now  time.Time
	base time.Time
}

// NewClock returns a Clock whose Read counts from now.
func NewClock() Clock { return Clock{base: time.Now()} }

// Read returns the time from the monotonic clock alone. time.Now reads
// the wall clock too, a second call into the kernel's clock page that a
// latency does not need (44 against 30 ns a read). The time returned is
// the wall time at NewClock plus the monotonic time since: two of them
// subtract exactly, and they still print as dates. A zero Clock reads
// both clocks.
func (c *Clock) Read() time.Time {
	if c.base.IsZero() {
		return time.Now()
	}
	return c.base.Add(time.Since(c.base))
}

// ClockSharer is a Worker that shares its clock reads through c.
type ClockSharer interface {
	ShareClock(c *Clock)
}

// Reporter adds a workload's own figures to the result before it is kept,
// and its own lines after the summary.
type Reporter interface {
	Annotate(res *result.Result)
	Report(w io.Writer, res *result.Result)
}

// ErrCheckFailed marks a Checker's finding that the data is inconsistent,
// as opposed to a check that could not run.
var ErrCheckFailed = errors.New("consistency check failed")

type stopKey struct{}

// WithStop returns ctx carrying stop, whose end tells workers to start no
// new event: the run has reached its time limit, while the event under way
// may still finish (runner.Run).
func WithStop(ctx, stop context.Context) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// Stop is the context whose end means no new event is to start: the one
// WithStop put in ctx, or ctx itself.
func Stop(ctx context.Context) context.Context {
	if s, ok := ctx.Value(stopKey{}).(context.Context); ok {
		return s
	}
	return ctx
}

// TargetFiller is a workload that takes its target the way its peer tool
// does (pgbench's -h, -p, -U and a database name after the options).
// Args takes the command's positional arguments, which commands refuse
// for other workloads; FillTarget returns raw (--target, perhaps empty)
// with what those say filled in.
type TargetFiller interface {
	Args(args []string) error
	FillTarget(raw string) (string, error)
}

// LiveLiner is a workload whose live lines may take its peer tool's form
// in place of dbmark's (pgbench's progress lines, when asked for by the
// peer's option), written where the peer writes them: standard error.
// at is the time of the line, stamped --progress-timestamp; "" means
// dbmark's own line. The line is asked for on the ticker, after the
// Load's Tick for the same interval.
type LiveLiner interface {
	LiveLine(p result.Interval, at time.Time, stamped bool) string
}
