package workload

import (
	"context"
	"errors"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
)

// AfterEventError is what Worker.Event returns when its event did its
// work and counts as committed, but the client cannot go on (pgbench's
// script that ends inside a transaction block): Err is then the client's
// fatal error.
type AfterEventError struct{ Err error }

func (e *AfterEventError) Error() string { return e.Err.Error() }
func (e *AfterEventError) Unwrap() error { return e.Err }

// EventStatus is how an event ended.
type EventStatus int

const (
	EventCommitted EventStatus = iota
	// EventFailed is an event given up on after its tries, or whose error
	// code is ignored.
	EventFailed
	// EventSkipped is an event not started because it was too late (PlanAdjust.SkipLate).
	EventSkipped
)

// EventInfo is one event as the runner saw it.
type EventInfo struct {
	Op     metrics.Op // what Event returned, on failure too
	Status EventStatus
	Code   string // the error code of a failed event
	Tries  int
	// Intended is the scheduled start under --rate, else the actual
	// start. The three are readings of Clock (Clock.Time gives their
	// time of day).
	Intended   time.Duration
	Began, End time.Duration
	Clock      *Clock
}

// Clock is a client's clock: readings are the monotonic time since the
// clock's base, as a time.Duration, so that timing a statement is a clock
// read and a subtraction (time.Time's arithmetic was a tenth of dbmark's
// own instructions a statement). Clocks made from the same base read on
// one scale.
//
// It also carries the last time a worker read it, so the runner need not
// read it again where an event starts and ends: that was two of five
// reads in a pgbench transaction, each one a cache miss in the kernel's
// clock page after the server ran. The runner sets Now to the event's
// start; a worker that times its steps leaves in it the end of its last
// step, or 0 when it cannot say.
type Clock struct {
	Now  time.Duration
	base time.Time
}

// NewClock returns a Clock whose readings count from now.
func NewClock() Clock { return Clock{base: time.Now()} }

// ClockFrom returns a Clock whose readings count from base, which must
// hold a monotonic reading (time.Now's).
func ClockFrom(base time.Time) Clock { return Clock{base: base} }

// Read returns the time since the clock's base, from the monotonic clock
// alone (time.Now reads the wall clock too, a second call into the
// kernel's clock page). A reading is never 0, which Now keeps for "not
// known".
func (c *Clock) Read() time.Duration { return max(time.Since(c.base), 1) }

// Time is reading d as a time of day: the clock's base plus d.
func (c *Clock) Time(d time.Duration) time.Time { return c.base.Add(d) }

// Of is t as a reading of the clock.
func (c *Clock) Of(t time.Time) time.Duration { return t.Sub(c.base) }

// ErrCheckFailed marks a Check hook's finding that the data is inconsistent,
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
