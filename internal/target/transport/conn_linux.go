package transport

import (
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is a stream socket read and written by system calls made on the
// calling goroutine's thread, which waits for the socket in the kernel.
// It implements the whole of net.Conn: any method may be called from any
// goroutine at any time, Read and Write may run at once, Close and a
// deadline (set before or during a wait, in the past or the future,
// moved either way) end a wait promptly, and a wait that ends this way
// returns the errors Go's own connections return (net.ErrClosed,
// os.ErrDeadlineExceeded, in a *net.OpError).
//
// The socket stays in non-blocking mode: a read or a write never blocks;
// the waits are poll(2) calls on the socket and on one eventfd per
// direction, which Close and the deadline setters signal. One reader and
// one writer wait at a time (rmu, wmu), so each eventfd has one waiter,
// which drains it. No goroutine and no timer is started: a deadline is
// poll's timeout, and a waiting call holds nothing but its own thread.
type Conn struct {
	fd           int // the socket
	network      string
	laddr, raddr net.Addr

	// rd and wd are the read and write sides: the eventfd that wakes
	// their waiter, the deadline, and the poll set, used under rmu and
	// wmu.
	rd, wd side
	rmu    sync.Mutex
	wmu    sync.Mutex

	// mu orders Close with the deadline setters' signals: a signal is
	// never written to a closed (and perhaps reused) descriptor.
	mu     sync.Mutex
	closed atomic.Bool

	// readFirst: the last read filled the caller's buffer, so more is
	// likely waiting: read before polling. Otherwise a reply is unlikely
	// to have come yet and the read polls first, saving a read that
	// would only say EAGAIN. Used under rmu.
	readFirst bool

	// hold, when not nil, is shared with the target's other connections:
	// the reads' waits are tallied to it (tally, under rmu), and while it
	// has them released, reads and writes are the poller transport's,
	// through polled: a Go connection on the socket, made at the first
	// read or write after a release (under mu), its deadlines set with
	// this Conn's from then on. Not before: the poller would be woken by
	// every reply to a socket registered with it, which nothing waits for
	// there. So when the hold holds them again, the first read or write
	// that finds polled unused by the other direction closes it (unpoll),
	// which takes the socket off the poller. A call using polled holds
	// pmu's read lock; unpoll takes its write lock, or leaves polled to a
	// later call.
	hold   *Hold
	polled atomic.Pointer[pollerConn]
	pmu    sync.RWMutex
	tally  waitTally
}

// side is one direction's waiting state.
type side struct {
	wake int          // eventfd: Close and deadline changes signal it
	dl   atomic.Int64 // deadline on the monotonic clock (mono), 0: none
	// waiting is set while the side's caller may be in poll or about to
	// be: a deadline setter signals only then. The setter stores dl and
	// then loads waiting; the waiter stores waiting and then loads dl:
	// one of them sees the other's store.
	waiting atomic.Bool
	pfd     [2]unix.PollFd
}

// epoch is the origin of mono: time.Since reads the monotonic clock, so a
// deadline does not move when the wall clock is set.
var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// FromNet takes over nc's socket: a Conn on a duplicate of its
// descriptor, and nc closed. nc must be a *net.TCPConn or *net.UnixConn
// (any connection whose SyscallConn gives a stream socket).
func FromNet(nc net.Conn) (net.Conn, error) { return fromNet(nc, nil) }

// fromNet is FromNet, the Conn's reads tallied to hold when it is not
// nil.
func fromNet(nc net.Conn, hold *Hold) (net.Conn, error) {
	defer nc.Close()
	raw, err := rawConn(nc, "blocking transport")
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, fmt.Errorf("blocking transport: %w", err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("blocking transport: duplicate the socket: %w", dupErr)
	}
	// The duplicate shares the file's status flags; non-blocking is
	// what Go's socket has, and what this Conn needs, set to be sure.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("blocking transport: non-blocking mode: %w", err)
	}
	c := &Conn{fd: fd, network: nc.LocalAddr().Network(), laddr: nc.LocalAddr(), raddr: nc.RemoteAddr(), hold: hold}
	for _, s := range []*side{&c.rd, &c.wd} {
		s.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			c.closeFds()
			return nil, fmt.Errorf("blocking transport: eventfd: %w", err)
		}
	}
	c.rd.pfd = [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(c.rd.wake), Events: unix.POLLIN}}
	c.wd.pfd = [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}, {Fd: int32(c.wd.wake), Events: unix.POLLIN}}
	return c, nil
}

// rawConn is nc's socket as a syscall.RawConn; who names the transport
// in the error.
func rawConn(nc net.Conn, who string) (syscall.RawConn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%s: a %T has no socket", who, nc)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	return raw, nil
}

func (c *Conn) closeFds() {
	for _, fd := range []int{c.fd, c.rd.wake, c.wd.wake} {
		if fd > 0 {
			unix.Close(fd)
		}
	}
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.network, Source: c.laddr, Addr: c.raddr, Err: err}
}

// Read reads what the socket has, waiting until it has something, the
// peer ends the stream (io.EOF), the read deadline passes or Close.
func (c *Conn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if len(p) == 0 {
		if c.closed.Load() {
			return 0, c.opError("read", net.ErrClosed)
		}
		return 0, nil
	}
	if pc, err := c.usePoller(); err != nil {
		return 0, c.opError("read", err)
	} else if pc != nil {
		defer c.pmu.RUnlock()
		began := mono()
		n, waited, err := pc.read(p)
		if waited && err == nil {
			c.tally.count(c.hold, time.Duration(mono()-began))
		}
		return n, err
	}
	poll := !c.readFirst
	for {
		if c.closed.Load() {
			return 0, c.opError("read", net.ErrClosed)
		}
		if poll {
			if err := c.waitRead(); err != nil {
				return 0, c.opError("read", err)
			}
		} else if dl := c.rd.dl.Load(); dl != 0 && mono() >= dl {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		n, err := unix.Read(c.fd, p)
		switch {
		case err == nil && n == 0:
			return 0, io.EOF
		case err == nil:
			c.readFirst = n == len(p)
			return n, nil
		case err == unix.EAGAIN:
			poll = true
		case err == unix.EINTR:
		default:
			return 0, c.opError("read", os.NewSyscallError("read", err))
		}
	}
}

// Write writes all of p, waiting for room as needed, unless the write
// deadline passes or Close comes first: it then says how much was
// written.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if pc, err := c.usePoller(); err != nil {
		return 0, c.opError("write", err)
	} else if pc != nil {
		// The poller's raw write: a system call the runtime is told of
		// would wake its monitor from the deep sleep the poller's waits
		// let it take.
		defer c.pmu.RUnlock()
		return pc.Write(p)
	}
	done := 0
	for {
		if c.closed.Load() {
			return done, c.opError("write", net.ErrClosed)
		}
		if dl := c.wd.dl.Load(); dl != 0 && mono() >= dl {
			return done, c.opError("write", os.ErrDeadlineExceeded)
		}
		if done == len(p) {
			return done, nil
		}
		n, err := unix.Write(c.fd, p[done:])
		if n > 0 {
			done += n
		}
		switch {
		case err == nil:
			if done == len(p) {
				return done, nil
			}
		case err == unix.EAGAIN:
			if err := c.wait(&c.wd); err != nil {
				return done, c.opError("write", err)
			}
		case err == unix.EINTR:
		default:
			return done, c.opError("write", os.NewSyscallError("write", err))
		}
	}
}

// waitRead is wait for the read side, timed and tallied to the hold
// when there is one.
func (c *Conn) waitRead() error {
	if c.hold == nil {
		return c.wait(&c.rd)
	}
	began := mono()
	err := c.wait(&c.rd)
	if err == nil {
		c.tally.count(c.hold, time.Duration(mono()-began))
	}
	return err
}

// wait blocks in poll until the socket is ready for s's direction, s's
// wake-up is signalled, or s's deadline passes. It returns nil when the
// caller should try its read or write (the socket is ready, or it was
// woken and the deadline and Close are to be checked again by trying),
// net.ErrClosed or os.ErrDeadlineExceeded.
func (c *Conn) wait(s *side) error {
	s.waiting.Store(true)
	defer s.waiting.Store(false)
	for {
		if c.closed.Load() {
			return net.ErrClosed
		}
		var ts *unix.Timespec
		if dl := s.dl.Load(); dl != 0 {
			left := dl - mono()
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			t := unix.NsecToTimespec(left)
			ts = &t
		}
		s.pfd[0].Revents, s.pfd[1].Revents = 0, 0
		n, err := unix.Ppoll(s.pfd[:], ts, nil)
		if err == unix.EINTR || n == 0 {
			continue // a signal, or the timeout: checked again above
		}
		if err != nil {
			return os.NewSyscallError("ppoll", err)
		}
		if s.pfd[1].Revents != 0 {
			drain(s.wake)
			continue // Close or a new deadline: checked again above
		}
		return nil // the socket is ready, or failed: the call says which
	}
}

var one = [8]byte{1}

func signal(fd int) { _, _ = unix.Write(fd, one[:]) }

func drain(fd int) {
	var b [8]byte
	_, _ = unix.Read(fd, b[:])
}

// usePoller says which way a read or write goes: nil, on the socket on
// the caller's thread, while the hold holds the connections (taking the
// socket off the poller first, unpoll, when it was released before);
// otherwise the poller connection, with pmu read-locked until the call
// ends. A socket the other direction is using in the poller stays there
// for this call.
func (c *Conn) usePoller() (*pollerConn, error) {
	if c.hold.Holding() && (c.polled.Load() == nil || c.unpoll()) {
		return nil, nil
	}
	c.pmu.RLock()
	if c.hold.Holding() && c.polled.Load() == nil {
		c.pmu.RUnlock() // the other direction took it off meanwhile
		return nil, nil
	}
	pc, err := c.poller()
	if err != nil {
		c.pmu.RUnlock()
		return nil, err
	}
	return pc, nil
}

// unpoll closes the poller connection, which takes the socket off the
// poller, unless a call is using it; it says whether none is left.
func (c *Conn) unpoll() bool {
	if !c.pmu.TryLock() {
		return false
	}
	defer c.pmu.Unlock()
	c.mu.Lock()
	pc := c.polled.Swap(nil)
	c.mu.Unlock()
	if pc != nil {
		// Its descriptor is a duplicate: the socket stays open, and
		// Close (of the Go connection) removes it from the poller.
		_ = pc.Conn.Close()
	}
	return true
}

// poller is the Go connection the reads and writes released to the
// poller use (hold), made on the first call: on a duplicate of the
// socket, registered with Go's network poller, with this Conn's
// deadlines.
func (c *Conn) poller() (*pollerConn, error) {
	if pc := c.polled.Load(); pc != nil {
		return pc, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pc := c.polled.Load(); pc != nil {
		return pc, nil
	}
	if c.closed.Load() {
		return nil, net.ErrClosed
	}
	fd, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(fd), "socket")
	nc, err := net.FileConn(f) // a descriptor of its own
	f.Close()
	if err != nil {
		return nil, err
	}
	pc := &pollerConn{Conn: nc}
	if pc.rc, err = rawConn(nc, "poller transport"); err != nil {
		nc.Close()
		return nil, err
	}
	for _, s := range [2]*side{&c.rd, &c.wd} {
		if dl := s.dl.Load(); dl != 0 {
			if err := pc.setDeadline(s == &c.rd, time.Now().Add(time.Duration(dl-mono()))); err != nil {
				nc.Close()
				return nil, err
			}
		}
	}
	c.polled.Store(pc)
	return pc, nil
}

// Close closes the socket; a Read or Write waiting returns net.ErrClosed
// at once. The descriptors are closed once no call is using them.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed.Store(true)
	signal(c.rd.wake)
	signal(c.wd.wake)
	if pc := c.polled.Load(); pc != nil {
		pc.Conn.Close() // ends a read or write waiting in the poller
	}
	c.mu.Unlock()
	// A waiter wakes, sees closed and returns; then the descriptors are
	// no longer in use and cannot be reused under it.
	c.rmu.Lock()
	c.wmu.Lock()
	err := unix.Close(c.fd)
	unix.Close(c.rd.wake)
	unix.Close(c.wd.wake)
	c.wmu.Unlock()
	c.rmu.Unlock()
	if err != nil {
		return c.opError("close", os.NewSyscallError("close", err))
	}
	return nil
}

func (c *Conn) LocalAddr() net.Addr  { return c.laddr }
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

func (c *Conn) SetDeadline(t time.Time) error {
	return c.setDeadline(t, &c.rd, &c.wd)
}

func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(t, &c.rd, nil)
}

func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(t, &c.wd, nil)
}

// setDeadline sets the deadline of side a and, if not nil, b, and wakes
// their waiters, which then wait again with the new deadline or return.
func (c *Conn) setDeadline(t time.Time, a, b *side) error {
	dl := deadline(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return c.opError("set", net.ErrClosed)
	}
	for _, s := range [2]*side{a, b} {
		if s == nil {
			continue
		}
		s.dl.Store(dl)
		if s.waiting.Load() {
			signal(s.wake)
		}
		if pc := c.polled.Load(); pc != nil {
			// Reads and writes released to the poller wait under Go's
			// deadlines.
			if err := pc.setDeadline(s == &c.rd, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// deadline is t on mono's clock: 0 for the zero time (none), at least 1
// for a time in the past, and at most the largest int64 for one too far
// ahead to tell from never.
func deadline(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	// time.Until reads t's monotonic clock when it has one, and
	// saturates instead of overflowing.
	now, left := mono(), int64(time.Until(t))
	switch {
	case left > math.MaxInt64-now:
		return math.MaxInt64
	case now+left <= 0:
		return 1
	}
	return now + left
}
