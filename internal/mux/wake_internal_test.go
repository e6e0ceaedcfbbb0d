package mux

import (
	"context"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// A context's AfterFunc can wake a loop after it has ended. By then the
// loop's eventfd is closed and its number may belong to a new server
// connection; the late wake must write nothing there.
func TestLateWakeWritesNowhere(t *testing.T) {
	var l Loop
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The number is free now; say it went to a pipe, as it may go to a
	// new connection.
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	l.waker.fd = p[1]

	l.waker.wake()

	var buf [8]byte
	if n, err := unix.Read(p[0], buf[:]); err != unix.EAGAIN {
		t.Fatalf("a wake after the loop ended wrote %d bytes (%v) to the descriptor it had used", n, err)
	}
}

// A socket carried to another loop's task (Send) is watched by that loop
// alone once it waits there: the first loop's set would go on waking its
// thread for every answer.
func TestAMovedSocketLeavesTheFirstLoopsSet(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var a, b Loop
	w := NewWatch(fds[0])
	a.Add(func(ctx context.Context) {
		// Waits once in a's set, then hands the socket over.
		if _, err := unix.Write(fds[1], []byte{1}); err != nil {
			t.Error(err)
		}
		if err := From(ctx).Wait(ctx, &w, false); err != nil {
			t.Error(err)
		}
		b.Send(&w)
		// Stay until b is done, so that a's set is still open.
		if _, err := From(ctx).Receive(ctx); err != nil {
			t.Error(err)
		}
	})
	var inA, inB error
	b.Add(func(ctx context.Context) {
		v, err := From(ctx).Receive(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		mw := v.(*Watch)
		if err := From(ctx).Wait(ctx, mw, false); err != nil {
			t.Error(err)
		}
		// Deleting it again finds it in b's set alone.
		inA = unix.EpollCtl(a.set.fd, unix.EPOLL_CTL_DEL, mw.fd, nil)
		inB = unix.EpollCtl(b.set.fd, unix.EPOLL_CTL_DEL, mw.fd, nil)
		a.Send(true)
	})
	RunTogether(t, &a, &b)
	if inA != unix.ENOENT || inB != nil {
		t.Fatalf("after the move the socket was in the first loop's set: %v (want ENOENT), in the second's: %v (want there)", inA, inB)
	}
}

// RunTogether runs loops each on a goroutine of its own until all have
// returned (for the external tests too).
func RunTogether(t *testing.T, loops ...*Loop) {
	t.Helper()
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
