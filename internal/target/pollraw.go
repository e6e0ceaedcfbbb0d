package target

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// DialPoll opens a TCP or unix-socket connection that waits for the server
// in Go's network poller but reads and writes in raw system calls.
//
// A read through the net package enters the kernel as a system call the
// scheduler sees; when every goroutine had been waiting on the server, the
// scheduler's monitor is asleep, and entering that call wakes it: a futex
// wake-up and the monitor's own sleeps were a quarter of the client's CPU
// in multi-row INSERTs on MariaDB. recvfrom and sendto with MSG_DONTWAIT
// never block, so they need no scheduler bookkeeping; when there is
// nothing to read the goroutine parks in the poller as before.
func DialPoll(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("raw access to the socket: %w", err)
	}
	return &pollConn{Conn: c, rc: rc}, nil
}

// pollConn keeps the net package's connection for closing, addresses and
// deadlines (the poller's waits honour them) and replaces its reads and
// writes.
type pollConn struct {
	net.Conn
	rc syscall.RawConn
}

func (c *pollConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var (
		n     int
		errno syscall.Errno
	)
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, errno = rawIO(unix.SYS_RECVFROM, int(fd), b)
			if errno != unix.EINTR {
				return errno != unix.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("recvfrom", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *pollConn) Write(b []byte) (int, error) {
	written := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			var n int
			n, errno = rawIO(unix.SYS_SENDTO, int(fd), b[written:])
			switch errno {
			case 0:
				written += n
			case unix.EINTR:
			case unix.EAGAIN:
				return false // the socket's buffer is full: wait in the poller
			default:
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return written, c.opError("write", err)
	case errno != 0 && errno != unix.EAGAIN:
		return written, c.opError("write", os.NewSyscallError("sendto", errno))
	}
	return written, nil
}

func (c *pollConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
