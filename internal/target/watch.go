package target

import (
	"context"
	"net"
	"time"
)

// CancelWatch interrupts a connection when the context of its current
// caller ends. Drivers that watch a context per query pay for it on every
// statement (a goroutine hand-off or a registration on the shared run
// context); a worker passes the same context every time, so registering
// once per context and interrupting the socket directly costs nothing on
// the hot path.
type CancelWatch struct {
	ctx  context.Context
	stop func() bool
	// Interrupt is called once when the watched context ends.
	Interrupt func()
}

// Watch makes sure ctx is the context being watched and reports whether
// it is still live.
func (w *CancelWatch) Watch(ctx context.Context) error {
	if ctx != w.ctx {
		w.Stop()
		w.ctx = ctx
		if ctx.Done() != nil {
			w.stop = context.AfterFunc(ctx, w.Interrupt)
		}
	}
	return ctx.Err()
}

// Stop stops watching.
func (w *CancelWatch) Stop() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	w.ctx = nil
}

// InterruptConn returns an interrupt that fails every pending and future
// read and write on c, which unblocks a query waiting on the server.
func InterruptConn(c net.Conn) func() {
	return func() { _ = c.SetDeadline(time.Unix(1, 0)) }
}
