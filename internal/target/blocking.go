package target

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/mux"
)

// DialBlocking opens a TCP or unix-socket connection that waits for the
// server the way a C client does: the worker's own thread sleeps in the
// kernel until the answer is there, one wake-up per answer.
//
// Go's network poller makes every wait for the server a failed read, a park
// of the goroutine, an epoll wake-up, often a hand-off between threads, and
// a second read; a benchmark client waits for the server after every
// statement, so that machinery was most of its CPU. Here a worker waits in
// ppoll and reads with recvfrom, both made as raw system calls (waitRaw, rawIO):
// the goroutine keeps its processor, so nothing in the scheduler moves. The
// cost is an OS thread and a processor per connection while it waits, which
// the runner provides (HoldsProcessor); the C tools use a thread per
// connection too.
func DialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	var (
		domain int
		sa     unix.Sockaddr
	)
	switch network {
	case "unix":
		domain, sa = unix.AF_UNIX, &unix.SockaddrUnix{Name: addr}
	case "tcp", "tcp4", "tcp6":
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("port %q: %w", port, err)
		}
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("no address for %s", host)
		}
		ip := ips[0].IP
		if ip4 := ip.To4(); ip4 != nil {
			s := &unix.SockaddrInet4{Port: p}
			copy(s.Addr[:], ip4)
			domain, sa = unix.AF_INET, s
		} else {
			s := &unix.SockaddrInet6{Port: p}
			copy(s.Addr[:], ip.To16())
			domain, sa = unix.AF_INET6, s
		}
	default:
		return nil, fmt.Errorf("network %q is not supported", network)
	}
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// A connect to a server that does not answer must still respect ctx.
	if dl, ok := ctx.Deadline(); ok {
		tv := unix.NsecToTimeval(time.Until(dl).Nanoseconds())
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	}
	stop := context.AfterFunc(ctx, func() { _ = unix.Shutdown(fd, unix.SHUT_RDWR) })
	err = unix.Connect(fd, sa)
	if err == unix.EINTR {
		err = awaitConnect(ctx, fd)
	}
	stop()
	if err != nil {
		unix.Close(fd)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", err)}
	}
	var zero unix.Timeval
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &zero)
	if domain != unix.AF_UNIX {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	c := &blockingConn{fd: fd, network: network, addr: addr, watch: mux.NewWatch(fd)}
	c.readFd.Fd, c.writeFd.Fd = int32(fd), int32(fd)
	return c, nil
}

// awaitConnect waits for a connect that a signal interrupted. With a send
// timeout set the kernel does not restart connect, whatever the handler's
// flags say; it goes on making the connection, and poll tells when it is
// made or has failed.
func awaitConnect(ctx context.Context, fd int) error {
	for {
		ms := -1
		if dl, ok := ctx.Deadline(); ok {
			ms = max(int(time.Until(dl).Milliseconds()), 0)
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return unix.ETIMEDOUT
		}
		soErr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return err
		}
		if soErr != 0 {
			return syscall.Errno(soErr)
		}
		return nil
	}
}

// lateAfter is how long an answer may take before the connection counts
// it as late (see late).
const lateAfter = 2 * time.Millisecond

// rawSignals bounds a wait in a system call that the Go scheduler does not
// see (waitRaw): after that many signals it goes on where the scheduler
// sees it. A stop of the world for a garbage collection signals a thread
// about every 100 µs until it stops; the scheduler's monitor signals a
// goroutine that has run 10 ms without a break about every 10 ms.
const rawSignals = 16

// blockingConn is a net.Conn over a socket that its one user waits on in
// its own thread. Deadlines are not supported, except one in the past,
// which interrupts the connection for good (that is how cancellation
// reaches a pending read).
type blockingConn struct {
	fd          int
	network     string
	addr        string
	closed      atomic.Bool
	interrupted atomic.Bool
	// The arguments of ppoll for reads and for writes, kept here so that
	// passing them to the kernel allocates nothing. A driver may write
	// while a goroutine of its own reads, so each direction has its own.
	readFd, writeFd unix.PollFd
	// watch is the socket's place in the epoll set of the loop whose task
	// uses the connection (TaskConn); only that task touches it.
	watch mux.Watch
	// late is how often answers come later than lateAfter (see lateScale).
	late int32
	// full says the last read filled the caller's buffer.
	full bool
	// mu orders Close and an interrupting SetDeadline: an interrupt that
	// fires (from a context's AfterFunc) just after Close must not shut
	// down the descriptor number, which a new connection may already reuse.
	mu sync.Mutex
	// ops counts the reads and writes in progress, plus opsClosed once
	// Close has run. The descriptor is closed when both hold: a driver's
	// helper goroutine still reading when its connection is closed must
	// not go on to read from, or write to, whatever connection the process
	// opens next under the same number.
	ops      atomic.Int64
	fdClosed atomic.Bool
	// taskMu orders a task's request (taskWrites, counted as it is sent)
	// against a plain read's look at the count and its recvfrom. A driver
	// sharing the socket with a task may leave a read of its own waiting
	// after its last answer: pgconn's background reader, started when a
	// write of pgconn's takes over 15 ms, reads on until an answer comes,
	// and would take the task's. A plain read begun before a task's
	// request ends at its answer without reading it, as a timeout, which
	// pgconn's reader drops.
	taskMu     sync.Mutex
	taskWrites uint64
}

const opsClosed = 1 << 40

// enter starts a read or write; false: the connection is closed.
func (c *blockingConn) enter() bool {
	if c.ops.Add(1) >= opsClosed {
		c.leave()
		return false
	}
	return true
}

// leave ends what enter started, closing the descriptor if Close ran
// meanwhile and this was the last call using it.
func (c *blockingConn) leave() {
	if c.ops.Add(-1) == opsClosed {
		c.closeFd()
	}
}

func (c *blockingConn) closeFd() error {
	if !c.fdClosed.CompareAndSwap(false, true) {
		return nil
	}
	return unix.Close(c.fd)
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.taskMu.Lock()
	began := c.taskWrites
	c.taskMu.Unlock()
	return c.readSome(b, c.waitReadable, func() (int, syscall.Errno, bool) {
		c.taskMu.Lock()
		defer c.taskMu.Unlock()
		if c.taskWrites != began {
			return 0, 0, false
		}
		n, errno := rawIO(unix.SYS_RECVFROM, c.fd, b)
		return n, errno, true
	})
}

// errOvertaken ends a plain read that a task's request overtook (taskMu).
type errOvertaken struct{}

func (errOvertaken) Error() string   { return "i/o timeout (a newer request took the connection over)" }
func (errOvertaken) Timeout() bool   { return true }
func (errOvertaken) Temporary() bool { return true }

// readSome reads once, calling wait first, as an answer is mostly not
// there yet when the driver asks for it; but when the last read filled
// the buffer, more is likely waiting. recv, when given, makes the read
// instead (Read's guard against a task's request); false: none was made.
func (c *blockingConn) readSome(b []byte, wait func() error, recv func() (int, syscall.Errno, bool)) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.leave()
	waitFirst := !c.full
	for {
		if waitFirst {
			if err := wait(); err != nil {
				return 0, err
			}
		}
		var (
			n     int
			errno syscall.Errno
			ok    = true
		)
		if recv == nil {
			n, errno = rawIO(unix.SYS_RECVFROM, c.fd, b)
		} else if n, errno, ok = recv(); !ok {
			return 0, &net.OpError{Op: "read", Net: c.network, Err: errOvertaken{}}
		}
		switch errno {
		case 0:
			c.full = n == len(b)
			return c.result(n, nil, "read")
		case unix.EINTR:
			waitFirst = false
		case unix.EAGAIN:
			waitFirst = true
		default:
			return c.result(0, errno, "read")
		}
	}
}

func (c *blockingConn) waitReadable() error {
	if errno := c.waitRead(); errno != 0 {
		_, err := c.result(0, errno, "read")
		return err
	}
	return nil
}

func (c *blockingConn) Write(b []byte) (int, error) {
	return c.writeAll(b, c.waitWritable)
}

// writeAll writes all of b, calling wait while the socket's buffer is
// full (the server is busy reading).
func (c *blockingConn) writeAll(b []byte, wait func() error) (int, error) {
	if !c.enter() {
		return 0, net.ErrClosed
	}
	defer c.leave()
	written := 0
	for written < len(b) {
		n, errno := rawIO(unix.SYS_SENDTO, c.fd, b[written:])
		switch errno {
		case 0:
			written += n
		case unix.EINTR:
		case unix.EAGAIN:
			if err := wait(); err != nil {
				return written, err
			}
		default:
			_, err := c.result(0, errno, "write")
			return written, err
		}
	}
	return written, nil
}

func (c *blockingConn) waitWritable() error {
	if errno := waitSys(&c.writeFd, unix.POLLOUT); errno != 0 {
		_, err := c.result(0, errno, "write")
		return err
	}
	return nil
}

// waitRead waits until the socket has something to read (or is closed).
//
// It waits in ppoll rather than in a blocking read because a read sleeping
// on a unix socket is also woken each time the server consumes what was
// written (the socket's write space), about once a statement; poll is
// woken only for the events it asked for. It first waits in a system call
// the scheduler does not see (waitRaw): the goroutine keeps its processor
// and nothing in the scheduler moves, so an answer costs one wake-up, as in
// a C client. A wait the scheduler sees costs a hand-off of the processor;
// but a raw wait cannot let a garbage collection or the scheduler's monitor
// have the goroutine until it ends. Hence the bound, and the plain wait
// from the start while many answers take longer than lateAfter (many more
// connections than the server has cores, or lock waits).
func (c *blockingConn) waitRead() syscall.Errno {
	began := time.Now()
	var errno syscall.Errno
	if c.late < lateForRaw {
		var done bool
		if errno, done = c.waitRaw(); !done {
			errno = waitSys(&c.readFd, unix.POLLIN)
		}
	} else {
		errno = waitSys(&c.readFd, unix.POLLIN)
	}
	if time.Since(began) < lateAfter {
		c.late -= c.late / 8
	} else {
		c.late += (lateScale - c.late) / 8
	}
	return errno
}

// late is a moving average of how often an answer takes longer than
// lateAfter (lateScale: always). Raw waits are used while fewer than a
// quarter of the answers come late.
const (
	lateScale  = 1 << 16
	lateForRaw = lateScale / 4
)

// waitRaw waits for something to read in a raw system call; false: it gave
// up after rawSignals signals. It sets no time limit, as a C client sets
// none: a limit arms a timer in the kernel on every wait, which on a
// virtual machine cost about 2 µs of client CPU per statement
// (bench/README.md). Nor does it call anything between the system calls: a
// call is where the goroutine yields to a pending request of the runtime,
// and yielding before the answer came made read-write transactions on
// MariaDB 8 to 25% slower (the runtime asks a goroutine that has run 10 ms
// to yield; it does so after the answer). It needs a processor per
// connection (HoldsProcessor) so that no goroutine waits for one held by a
// waiting connection.
func (c *blockingConn) waitRaw() (syscall.Errno, bool) {
	c.readFd = unix.PollFd{Fd: int32(c.fd), Events: unix.POLLIN}
	for signals := 0; signals < rawSignals; signals++ {
		_, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&c.readFd)), 1, 0, 0, 0, 0)
		if errno != unix.EINTR {
			return errno, true
		}
	}
	return 0, false
}

// waitSys waits in ppoll, without a bound, where the scheduler sees it.
func waitSys(pfd *unix.PollFd, events int16) syscall.Errno {
	for {
		pfd.Events, pfd.Revents = events, 0
		_, _, errno := syscall.Syscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(pfd)), 1, 0, 0, 0, 0)
		if errno != unix.EINTR {
			return errno
		}
	}
}

// rawIO is one recvfrom or sendto that does not block, in a raw system
// call: there is nothing for the scheduler to do about it.
func rawIO(trap uintptr, fd int, b []byte) (int, syscall.Errno) {
	r, _, errno := unix.RawSyscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MSG_DONTWAIT, 0, 0)
	return int(r), errno
}

func (c *blockingConn) result(n int, err error, op string) (int, error) {
	if c.interrupted.Load() {
		return max(n, 0), &net.OpError{Op: op, Net: c.network, Err: errTimeout{}}
	}
	if err != nil {
		if c.closed.Load() {
			return 0, net.ErrClosed
		}
		return 0, &net.OpError{Op: op, Net: c.network, Err: os.NewSyscallError(op, err)}
	}
	if n == 0 && op == "read" {
		return 0, io.EOF
	}
	return n, nil
}

// errTimeout reports an interrupted connection the way a passed deadline
// is reported, so drivers treat it alike.
type errTimeout struct{}

func (errTimeout) Error() string   { return "i/o timeout (connection interrupted)" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }

func (c *blockingConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Swap(true) {
		return nil
	}
	// Wake any blocked reader; the descriptor goes when it has left.
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	if c.ops.Add(opsClosed) == opsClosed {
		return c.closeFd()
	}
	return nil
}

func (c *blockingConn) LocalAddr() net.Addr  { return addr{c.network, ""} }
func (c *blockingConn) RemoteAddr() net.Addr { return addr{c.network, c.addr} }

func (c *blockingConn) SetDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed.Load() {
			return nil
		}
		c.interrupted.Store(true)
		return unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
	return nil
}
func (c *blockingConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }

type addr struct{ network, s string }

func (a addr) Network() string { return a.network }
func (a addr) String() string  { return a.s }
