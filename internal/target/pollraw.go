package target

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
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
	return newPollConn(c, rc), nil
}

// pollConn keeps the net package's connection for closing, addresses and
// deadlines (the poller's waits honour them) and replaces its reads and
// writes. The functions handed to the raw connection, and what they read
// and write, live here: closures made per call would cost an allocation
// per read and per write.
type pollConn struct {
	net.Conn
	rc      syscall.RawConn
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool
	// A read and a write may run at once (pgconn reads in the background
	// while a long write is stuck), so each has its own state; two reads,
	// or two writes, take turns, as net.Conn allows them at once.
	rdMu, wrMu sync.Mutex
	rd, wr     rawOp
}

// rawOp is one read's or write's buffer, progress and error.
type rawOp struct {
	buf   []byte
	n     int
	errno syscall.Errno
}

func newPollConn(c net.Conn, rc syscall.RawConn) *pollConn {
	pc := &pollConn{Conn: c, rc: rc}
	pc.readFn, pc.writeFn = pc.readRaw, pc.writeRaw
	return pc
}

func (c *pollConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rdMu.Lock()
	c.rd = rawOp{buf: b}
	err := c.rc.Read(c.readFn)
	n, errno := c.rd.n, c.rd.errno
	c.rd.buf = nil
	c.rdMu.Unlock()
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

// readRaw reads once; it returns false to wait in the poller.
func (c *pollConn) readRaw(fd uintptr) bool {
	for {
		c.rd.n, c.rd.errno = rawIO(unix.SYS_RECVFROM, int(fd), c.rd.buf)
		if c.rd.errno != unix.EINTR {
			return c.rd.errno != unix.EAGAIN
		}
	}
}

func (c *pollConn) Write(b []byte) (int, error) {
	c.wrMu.Lock()
	c.wr = rawOp{buf: b}
	err := c.rc.Write(c.writeFn)
	written, errno := c.wr.n, c.wr.errno
	c.wr.buf = nil
	c.wrMu.Unlock()
	switch {
	case err != nil:
		return written, c.opError("write", err)
	case errno != 0 && errno != unix.EAGAIN:
		return written, c.opError("write", os.NewSyscallError("sendto", errno))
	}
	return written, nil
}

// writeRaw writes what it can; it returns false to wait in the poller
// when the socket's buffer is full.
func (c *pollConn) writeRaw(fd uintptr) bool {
	w := &c.wr
	for w.n < len(w.buf) {
		var n int
		n, w.errno = rawIO(unix.SYS_SENDTO, int(fd), w.buf[w.n:])
		switch w.errno {
		case 0:
			w.n += n
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			return true
		}
	}
	w.errno = 0
	return true
}

func (c *pollConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
