package target

import (
	"context"
	"sync/atomic"
)

// Watch ends a connection's statement when the context it runs under
// ends, as a driver's own context watching does, at the cost of one
// registration per context instead of one per statement.
//
// A client runs statement after statement under one context (the run's),
// and registering with it for each (context.AfterFunc, or a driver's
// watcher built on it) allocates, and takes the mutex of the context it
// is derived from, which every client of the run shares. A Watch registers
// once per context, and keeps the registration while the statements that
// follow run under the same context: when the context ends, the statement
// in flight, if any, is interrupted; between statements nothing is
// touched, so a connection outlives the contexts of its earlier
// statements. A Watch is used by its connection's goroutine alone
// (Begin, End, Release); only the registration's callback runs elsewhere.
type Watch struct {
	// Interrupt makes the statement in flight fail promptly: it closes
	// the connection or sets a deadline in the past. It may run on another
	// goroutine while the statement runs, and is called at most once per
	// registration.
	Interrupt func()
	// Restore, if set, undoes Interrupt for a connection that is still
	// usable (a deadline cleared); End calls it when an interrupt came.
	Restore func()

	ctx    context.Context
	done   <-chan struct{} // ctx.Done(), kept with the registration
	reg    *watchReg       // ctx's registration
	active *watchReg       // the statement in flight's, nil for a context that cannot end
}

// watchReg is one registration: what the callback and the connection's
// goroutine share. Its state moves by atomic operations alone, two a
// statement (a mutex taken at Begin and at End was four): the goroutine
// marks the statement in flight and takes the mark back; the callback
// claims a statement in flight, interrupts it and says it is done.
type watchReg struct {
	state atomic.Int32
	// interrupted is closed when the callback's Interrupt has returned.
	interrupted chan struct{}
	stop        func() bool
}

const (
	regIdle   int32 = iota // no statement in flight
	regBusy                // a statement under the context is in flight
	regFiring              // the context ended during it: Interrupt runs
)

// Begin starts a statement under ctx: it returns ctx's error if ctx has
// ended, and otherwise arranges for Interrupt to be called if ctx ends
// before End. Every Begin that returns nil must be followed by End.
func (w *Watch) Begin(ctx context.Context) error {
	w.active = nil
	if ctx != w.ctx || w.reg == nil {
		done := ctx.Done()
		if done == nil {
			return nil // a context that never ends: nothing to watch
		}
		w.Release()
		reg := &watchReg{interrupted: make(chan struct{})}
		interrupt := w.Interrupt
		reg.stop = context.AfterFunc(ctx, func() {
			if reg.state.CompareAndSwap(regBusy, regFiring) {
				interrupt()
				close(reg.interrupted)
			}
		})
		w.ctx, w.done, w.reg = ctx, done, reg
	}
	r := w.reg
	// Marked before the look at the channel: a context that ends after
	// the look runs the callback after the mark, and so interrupts the
	// statement. A look at the channel costs a fifth of ctx.Err's calls
	// through the run's contexts, once a statement.
	r.state.Store(regBusy)
	select {
	case <-w.done:
		if !r.state.CompareAndSwap(regBusy, regIdle) {
			w.active = r
			w.End() // the callback took the mark: undo its interrupt
		}
		return ctx.Err()
	default:
	}
	w.active = r
	return nil
}

// End ends the statement Begin started. It reports whether the context
// ended during it and interrupted it; Restore has then been called.
func (w *Watch) End() bool {
	r := w.active
	if r == nil {
		return false
	}
	w.active = nil
	if r.state.CompareAndSwap(regBusy, regIdle) {
		return false
	}
	<-r.interrupted
	// The registration is spent: the next Begin makes another.
	w.ctx, w.done, w.reg = nil, nil, nil
	if w.Restore != nil {
		w.Restore()
	}
	return true
}

// Release drops the registration; a connection calls it when it closes.
func (w *Watch) Release() {
	if w.reg != nil {
		w.reg.stop()
	}
	w.ctx, w.done, w.reg = nil, nil, nil
}
