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
	return c.readSome(b, func() error { return c.waitTask(ctx, t, false) }, nil)
}

// WriteWait writes all of b, waiting in t while the socket's buffer is full.
func (c *blockingConn) WriteWait(ctx context.Context, t *mux.Task, b []byte) (int, error) {
	c.taskMu.Lock()
	c.taskWrites++ // a plain read still waiting must not take the answer
	c.taskMu.Unlock()
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

// DialTask opens a connection as DialBlocking does (and is DialBlocking
// outside a task); when ctx belongs to a mux task, the connection's Read
// and Write wait in that task for as long as it lives, so a driver's own
// reads (a handshake, a statement on the driver's path as with TLS) let
// the loop's other tasks run. That suits
// drivers that read and write a net.Conn only in the goroutine that
// called them (go-sql-driver/mysql), and only them: a read from another
// goroutine while the task is suspended fails (mux.ErrNotInTask), but
// one while the task runs would suspend the wrong goroutine.
func DialTask(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := DialBlocking(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	t := mux.From(ctx)
	if t == nil {
		return c, nil
	}
	return &taskBound{blockingConn: c.(*blockingConn), t: t}, nil
}

// taskBound is a blockingConn whose reads and writes wait in its task.
type taskBound struct {
	*blockingConn
	t *mux.Task
}

func (c *taskBound) Read(b []byte) (int, error) {
	return c.ReadWait(c.t.Context(), c.t, b)
}

func (c *taskBound) Write(b []byte) (int, error) {
	return c.WriteWait(c.t.Context(), c.t, b)
}
