package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/mux"
)

// listen starts a server on network that hands each accepted connection to
// serve, and returns the address to dial.
func listen(t *testing.T, network string, serve func(net.Conn)) string {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

func dial(t *testing.T, network, addr string) *blockingConn {
	t.Helper()
	nc, err := DialBlocking(context.Background(), network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc.(*blockingConn)
}

// echo answers each read with the same bytes, after delay.
func echo(delay time.Duration) func(net.Conn) {
	return func(c net.Conn) {
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			time.Sleep(delay)
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
	}
}

// roundTrips sends small messages, as statements are, and one far larger
// than a socket buffer, whose write waits for the server to read and whose
// reads fill the caller's buffer again and again, through an echo server.
func roundTrips(t *testing.T, c net.Conn) {
	t.Helper()
	for _, size := range []int{1, 100, 4096, 8 << 20} {
		msg := bytes.Repeat([]byte{byte(size)}, size)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Write(msg)
			errc <- err
		}()
		got := make([]byte, size)
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatalf("%d bytes: read: %v", size, err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("%d bytes: write: %v", size, err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("%d bytes: the echo differs", size)
		}
	}
}

func TestBlockingConnRoundTrips(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			roundTrips(t, dial(t, network, listen(t, network, echo(0))))
		})
	}
}

// A server that answers later than a raw wait may last is still heard; the
// connection learns to wait where the scheduler sees it, and to wait raw
// again once answers come quickly.
func TestBlockingConnSlowAnswers(t *testing.T) {
	var delay atomic.Int64
	delay.Store(int64(4 * lateAfter))
	c := dial(t, "unix", listen(t, "unix", func(s net.Conn) {
		buf := make([]byte, 1)
		for {
			if _, err := s.Read(buf); err != nil {
				return
			}
			time.Sleep(time.Duration(delay.Load()))
			if _, err := s.Write(buf); err != nil {
				return
			}
		}
	}))
	roundTrips := func(n int) {
		t.Helper()
		buf := make([]byte, 1)
		for i := 0; i < n; i++ {
			if _, err := c.Write([]byte{'x'}); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, buf); err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
		}
	}
	roundTrips(20)
	if c.late < lateForRaw {
		t.Fatalf("lateness %d/%d after 20 answers %v late: raw waits would go on", c.late, lateScale, 4*lateAfter)
	}
	// Prompt answers bring raw waits back within about ten of them; on a
	// loaded machine some still come late, so allow many more, but not for
	// ever.
	delay.Store(0)
	for i := 0; c.late >= lateForRaw; i++ {
		if i == 500 {
			t.Fatalf("lateness %d/%d after %d prompt answers: raw waits would stay off", c.late, lateScale, i)
		}
		roundTrips(1)
	}
}

// A read waiting for an answer must not hold up a garbage collection, which
// stops every goroutine: a wait the scheduler does not see is bounded. (An
// unbounded one stops everything, this test's timers too, so the failure is
// go test's -timeout.)
func TestBlockingConnPendingReadLetsTheCollectorRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the waiting read holds the only processor it can
	release := make(chan struct{})
	c := dial(t, "unix", listen(t, "unix", func(s net.Conn) {
		buf := make([]byte, 1)
		if _, err := s.Read(buf); err != nil {
			return
		}
		<-release
		_, _ = s.Write(buf)
	}))
	if _, err := c.Write([]byte{'x'}); err != nil {
		t.Fatal(err)
	}
	readDone := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(c, make([]byte, 1))
		readDone <- err
	}()
	gcDone := make(chan struct{})
	go func() {
		runtime.GC()
		close(gcDone)
	}()
	select {
	case <-gcDone:
	case err := <-readDone:
		t.Fatalf("the read ended before the server answered: %v", err)
	}
	close(release)
	if err := <-readDone; err != nil {
		t.Fatal(err)
	}
}

func TestBlockingConnInterruptAndClose(t *testing.T) {
	silent := func(s net.Conn) { _, _ = io.Copy(io.Discard, s) }
	addr := listen(t, "unix", silent)

	c := dial(t, "unix", addr)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read start waiting
	InterruptConn(c)()
	err := <-errc
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("interrupted read: %v, want a timeout error", err)
	}
	if _, err := c.Write([]byte{'x'}); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("write after the interrupt: %v, want a timeout error", err)
	}

	c = dial(t, "unix", addr)
	go func() {
		_, err := c.Read(make([]byte, 1))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("a read pending on a closed connection returned no error")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Once closed, a connection never touches its descriptor's number again,
// which the process may have given to a new connection: reads and writes
// fail without reaching it. A read still in progress when Close runs
// keeps the descriptor open until it returns, so it cannot end up reading
// from the next connection either.
func TestBlockingConnClosedLeavesItsNumberAlone(t *testing.T) {
	silent := func(s net.Conn) { _, _ = io.Copy(io.Discard, s) }
	addr := listen(t, "unix", silent)

	c := dial(t, "unix", addr)
	inode := func() uint64 {
		var st unix.Stat_t
		if err := unix.Fstat(c.fd, &st); err != nil {
			return 0
		}
		return st.Ino
	}
	ours := inode()
	if !c.enter() { // a read in progress
		t.Fatal("enter on an open connection failed")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := inode(); got != ours {
		t.Fatalf("the descriptor was closed under a read in progress (inode %d, was %d)", got, ours)
	}
	c.leave()
	if got := inode(); got == ours {
		t.Fatal("the descriptor is still open after the last read left")
	}

	// Say the number went to a new connection.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	c.fd = pair[0]
	if _, err := unix.Write(pair[1], []byte("theirs")); err != nil {
		t.Fatal(err)
	}

	if n, err := c.Write([]byte{1, 0, 0, 0}); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on a closed connection: %d, %v; want net.ErrClosed", n, err)
	}
	if n, err := c.Read(make([]byte, 16)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed connection: %d, %v; want net.ErrClosed", n, err)
	}
	got := make([]byte, 16)
	if n, err := unix.Read(pair[1], got); err != unix.EAGAIN {
		t.Fatalf("the new owner of the number received %q (%v) from the closed connection", got[:max(n, 0)], err)
	}
	if n, err := unix.Read(pair[0], got); err != nil || string(got[:n]) != "theirs" {
		t.Fatalf("the new owner's data: %q, %v; want it untouched", got[:max(n, 0)], err)
	}
}

// A signal that lands while connect waits (with a deadline, the kernel does
// not restart it) does not fail the dial: the connection is still made.
func TestDialBlockingSurvivesASignal(t *testing.T) {
	// A listener whose accept queue is full drops new SYNs, so a connect
	// waits for the client's retry a second later.
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
	first, err := net.Dial("tcp", addr) // fills the queue
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1) // handled, so it interrupts rather than kills
	defer signal.Stop(sigs)
	tid := make(chan int)
	dialed := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := DialBlocking(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		dialed <- err
	}()
	id := <-tid
	time.Sleep(200 * time.Millisecond) // in connect by now
	if err := unix.Tgkill(unix.Getpid(), id, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	<-sigs
	// Make room: the retried SYN is accepted.
	nfd, _, err := unix.Accept(lfd)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(nfd)
	if err := <-dialed; err != nil {
		t.Fatalf("dial interrupted by a signal: %v", err)
	}
}

// A driver's read left waiting on the socket (pgconn's background reader)
// must not take the answers to a task's requests: each is woken by them,
// and each time the task reads the whole answer; the plain read ends
// having read nothing.
func TestTaskRequestsOvertakeAWaitingPlainRead(t *testing.T) {
	c := dial(t, "tcp", listen(t, "tcp", echo(0)))
	type read struct {
		n   int
		err error
	}
	plain := make(chan read, 1)
	go func() {
		n, err := c.Read(make([]byte, 64))
		plain <- read{n, err}
	}()
	for c.ops.Load() == 0 { // the plain read has begun
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // and waits for the socket

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const requests = 200
	var (
		done    int
		taskErr error
	)
	var l mux.Loop
	l.Add(func(ctx context.Context) {
		task := mux.From(ctx)
		buf := make([]byte, 64)
		for ; done < requests; done++ {
			if _, taskErr = c.WriteWait(ctx, task, []byte("ping")); taskErr != nil {
				return
			}
			var got []byte
			for len(got) < 4 {
				var n int
				if n, taskErr = c.ReadWait(ctx, task, buf); taskErr != nil {
					return
				}
				got = append(got, buf[:n]...)
			}
			if string(got) != "ping" {
				taskErr = fmt.Errorf("answer %q", got)
				return
			}
		}
	})
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if taskErr != nil {
		t.Fatalf("request %d of %d: %v", done+1, requests, taskErr)
	}
	c.Close() // wakes the plain read if no answer did
	select {
	case r := <-plain:
		if r.n != 0 {
			t.Fatalf("the plain read took %d bytes of an answer", r.n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the plain read still waits after Close")
	}
}
