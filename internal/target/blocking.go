package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DialBlocking opens a TCP or unix-socket connection whose reads and writes
// are plain blocking system calls, as a C client's are.
//
// Go's network poller makes every wait for the server a failed read, a park
// of the goroutine, an epoll wake-up and a second read; a benchmark client
// waits for the server after every statement, so that machinery is most of
// its CPU. A blocking read is one system call: the worker's thread sleeps
// in the kernel until the answer arrives. The runtime moves other
// goroutines off a thread blocked in a system call, so workers do not stall
// each other. The cost is one OS thread per connection, which is what the
// C tools use too.
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
	return &blockingConn{fd: fd, network: network, addr: addr}, nil
}

// blockingConn is a net.Conn over a blocking socket. Deadlines are not
// supported, except one in the past, which interrupts the connection for
// good (that is how cancellation reaches a blocked read).
type blockingConn struct {
	fd          int
	network     string
	addr        string
	closed      atomic.Bool
	interrupted atomic.Bool
	// mu orders Close and an interrupting SetDeadline: an interrupt that
	// fires (from a context's AfterFunc) just after Close must not shut
	// down the descriptor number, which a new connection may already reuse.
	mu sync.Mutex
}

var errInterrupted = errors.New("connection interrupted")

func (c *blockingConn) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, b)
		if err == syscall.EINTR {
			continue
		}
		return c.result(n, err, "read")
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	written := 0
	for written < len(b) {
		n, err := syscall.Write(c.fd, b[written:])
		if err == syscall.EINTR {
			continue
		}
		if n > 0 {
			written += n
		}
		if err != nil {
			_, err = c.result(0, err, "write")
			return written, err
		}
	}
	return written, nil
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
	// Wake any blocked reader before the descriptor goes away.
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return unix.Close(c.fd)
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
