package target

import (
	"context"
	"net"

	"golang.org/x/sys/unix"

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
// nothing.
func (c *blockingConn) ReadWait(ctx context.Context, t *mux.Task, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, errno := rawIO(unix.SYS_RECVFROM, c.fd, b)
		switch errno {
		case 0:
			return c.result(n, nil, "read")
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if c.interrupted.Load() {
				return c.result(0, nil, "read")
			}
			if err := t.WaitFD(ctx, c.fd, false); err != nil {
				return 0, &net.OpError{Op: "read", Net: c.network, Err: err}
			}
			continue
		}
		return c.result(0, errno, "read")
	}
}

// WriteWait writes all of b, waiting in t while the socket's buffer is full.
func (c *blockingConn) WriteWait(ctx context.Context, t *mux.Task, b []byte) (int, error) {
	return c.writeAll(b, func() error {
		if c.interrupted.Load() {
			_, err := c.result(0, nil, "write")
			return err
		}
		if err := t.WaitFD(ctx, c.fd, true); err != nil {
			return &net.OpError{Op: "write", Net: c.network, Err: err}
		}
		return nil
	})
}

// DialTask opens a connection as DialBlocking does; when ctx belongs to a
// mux task, the connection's Read and Write wait in that task for as long
// as it lives. That suits drivers that read and write a net.Conn only
// from the goroutine that called them (go-sql-driver/mysql); a read from
// another goroutine fails (mux.ErrNotInTask) instead of suspending the task.
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
