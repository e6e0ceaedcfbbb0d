package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// linux says the blocking and poller transports exist here.
const linux = true

// pollerConn is Go's own connection (nc) with its reads and writes made
// as raw system calls on its non-blocking socket: a call that would
// block says EAGAIN and the goroutine waits in Go's network poller, as
// on Go's connection (syscall.RawConn's Read and Write, which keep the
// connection's deadlines and Close). The runtime is not told of a raw
// call, and need not be, for it never blocks. Told, as Go's own read
// and write tell it, the first call after every processor went idle
// wakes the runtime's monitor thread (sysmon) from its deep sleep, to
// poll every 20 µs until all are idle again: in a client waiting on its
// server most of the time, that is two thread wake-ups a statement.
//
// Everything but Read and Write is nc's: Close, the addresses and the
// deadlines, which the waits here honour.
type pollerConn struct {
	net.Conn
	rc syscall.RawConn
}

// pollerFromNet turns Go's connection nc (a *net.TCPConn or
// *net.UnixConn) into a pollerConn.
func pollerFromNet(nc net.Conn) (net.Conn, error) {
	rc, err := rawConn(nc, "poller transport")
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &pollerConn{Conn: nc, rc: rc}, nil
}

// setDeadline sets the read deadline, or the write one.
func (c *pollerConn) setDeadline(read bool, t time.Time) error {
	if read {
		return c.SetReadDeadline(t)
	}
	return c.SetWriteDeadline(t)
}

func (c *pollerConn) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		// RawConn's errors name their operation "raw-read" or
		// "raw-write"; callers expect a connection's own.
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Read reads what the socket has, waiting in the poller until it has
// something, the peer ends the stream (io.EOF), the read deadline
// passes or Close.
func (c *pollerConn) Read(p []byte) (int, error) {
	n, _, err := c.read(p)
	return n, err
}

// read is Read, and whether it waited in the poller.
func (c *pollerConn) read(p []byte) (n int, waited bool, err error) {
	if len(p) == 0 {
		// RawConn.Read's wait would check Close and the deadline,
		// then wait for a byte it would not read.
		n, err = c.Conn.Read(p)
		return n, false, err
	}
	var errno syscall.Errno
	err = c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				waited = true
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, waited, c.opError("read", err)
	case errno != 0:
		return 0, waited, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, waited, io.EOF
	}
	return n, waited, nil
}

// Write writes all of p, waiting in the poller for room as needed,
// unless the write deadline passes or Close comes first: it then says
// how much was written.
func (c *pollerConn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Write(p)
	}
	done := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, c.opError("write", err)
	case errno != 0:
		return done, c.opError("write", os.NewSyscallError("write", errno))
	}
	return done, nil
}
