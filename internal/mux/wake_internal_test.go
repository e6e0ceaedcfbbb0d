package mux

import (
	"context"
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
