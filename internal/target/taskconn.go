package target

import (
	"context"
	"net"

	"github.com/dbmark/dbmark/internal/mux"
)

// TaskConn is a connection that can wait for the server in a mux task
// (one thread's loop over its connections) instead of in its own wait.
// ReadWait and WriteWait are Read and Write for the task's own use; ctx
// ending interrupts them.
//
// Only connections outside Go's network poller qualify: the poller's
// epoll set would still hold the socket, and each answer would wake its
// waiting thread for nothing (that was a seventh of the client's CPU).
type TaskConn interface {
	ReadWait(ctx context.Context, t *mux.Task, b []byte) (int, error)
	WriteWait(ctx context.Context, t *mux.Task, b []byte) (int, error)
}

// ReadWait reads once what the server sent, waiting in t while there is
// nothing (first, like Read).
func (c *blockingConn) ReadWait(ctx context.Context, t *mux.Task, b []byte) (int, error) {
	return c.readSome(b, func() error { return c.waitTask(ctx, t, false) })
}

// WriteWait writes all of b, waiting in t while the socket's buffer is full.
func (c *blockingConn) WriteWait(ctx context.Context, t *mux.Task, b []byte) (int, error) {
	return c.writeAll(b, func() error { return c.waitTask(ctx, t, true) })
}

// waitTask suspends t until the socket can be read (or written), unless
// the connection was interrupted.
func (c *blockingConn) waitTask(ctx context.Context, t *mux.Task, write bool) error {
	op := "read"
	if write {
		op = "write"
	}
	if c.interrupted.Load() {
		_, err := c.result(0, nil, op)
		return err
	}
	if err := t.Wait(ctx, &c.watch, write); err != nil {
		return &net.OpError{Op: op, Net: c.network, Err: err}
	}
	return nil
}
