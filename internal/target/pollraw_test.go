package target

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DialPoll's connection carries small and socket-buffer-sized messages both
// ways, a deadline in the past interrupts a pending read as a timeout, and
// a server that hangs up reads as io.EOF.
func TestPollConn(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			ctx := context.Background()
			c, err := DialPoll(ctx, network, listen(t, network, echo(0)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, ok := c.(*pollConn); !ok {
				t.Fatalf("DialPoll gave a %T, not its raw reader", c)
			}
			roundTrips(t, c)

			silent, err := DialPoll(ctx, network, listen(t, network, func(s net.Conn) { _, _ = io.Copy(io.Discard, s) }))
			if err != nil {
				t.Fatal(err)
			}
			defer silent.Close()
			errc := make(chan error, 1)
			go func() {
				_, err := silent.Read(make([]byte, 1))
				errc <- err
			}()
			time.Sleep(20 * time.Millisecond) // let the read park
			InterruptConn(silent)()
			var ne net.Error
			if err := <-errc; !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("interrupted read: %v, want a timeout error", err)
			}

			hangup, err := DialPoll(ctx, network, listen(t, network, func(net.Conn) {}))
			if err != nil {
				t.Fatal(err)
			}
			defer hangup.Close()
			if _, err := hangup.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("read after the server hung up: %v, want io.EOF", err)
			}
		})
	}
}

// TestPollConnConcurrentReads: net.Conn allows reads (and writes) from
// several goroutines at once, as pgconn does when it drains a connection
// it is closing; each gets its own bytes, none is lost or read twice.
func TestPollConnConcurrentReads(t *testing.T) {
	const total = 4 << 20
	c, err := DialPoll(context.Background(), "unix", listen(t, "unix", echo(0)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for range 4 { // writers: total bytes of ones
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(bytes.Repeat([]byte{1}, total/4)); err != nil {
				t.Error(err)
			}
		}()
	}
	var got atomic.Int64
	for range 4 { // readers: sum what comes back
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1000)
			for got.Load() < total {
				_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				n, err := c.Read(buf)
				for _, b := range buf[:n] {
					got.Add(int64(b))
				}
				var ne net.Error
				if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got.Load() != total {
		t.Fatalf("read back %d bytes' worth, want %d", got.Load(), total)
	}
}
