package transport_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target/targettest"
	"github.com/dbmark/dbmark/internal/target/transport"
)

// delayedEcho serves each connection by answering every byte it reads
// with the same byte, delay later.
func delayedEcho(t *testing.T, delay time.Duration) string {
	return varyingEcho(t, func() time.Duration { return delay })
}

// varyingEcho is delayedEcho with each answer's delay asked of delay.
func varyingEcho(t *testing.T, delay func() time.Duration) string {
	return targettest.Listen(t, func(c net.Conn) {
		defer c.Close()
		b := make([]byte, 1)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
			time.Sleep(delay())
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	})
}

// roundTrips sends n bytes over c one at a time, each once the previous
// came back, and checks each comes back as sent.
func roundTrips(t *testing.T, c net.Conn, n int, stop func() bool) {
	t.Helper()
	b := make([]byte, 1)
	for i := range n {
		if stop != nil && stop() {
			return
		}
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Errorf("write %d: %v", i, err)
			return
		}
		if _, err := c.Read(b); err != nil || b[0] != byte(i) {
			t.Errorf("read %d: %v, %v", i, b[0], err)
			return
		}
	}
}

// heldConns dials n connections to addr on the blocking transport,
// sharing hold, closed when the test ends.
func heldConns(t *testing.T, addr string, hold *transport.Hold, n int) []*transport.Conn {
	t.Helper()
	dial := transport.Wrap(transport.Blocking, (&net.Dialer{}).DialContext, hold)
	var conns []*transport.Conn
	for range n {
		nc, err := dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		conn, ok := nc.(*transport.Conn)
		if !ok {
			t.Fatalf("the blocking transport gave a %T", nc)
		}
		conns = append(conns, conn)
	}
	return conns
}

// TestHoldReleasesLongWaits: blocking connections sharing a Hold, whose
// server answers each request 3 ms later, are released to the poller
// within a window of waits, and go on reading what the server sends; the
// Hold says why. Ones whose server answers at once stay held.
func TestHoldReleasesLongWaits(t *testing.T) {
	const clients = 4
	for _, c := range []struct {
		delay   time.Duration
		release bool
	}{{3 * time.Millisecond, true}, {0, false}} {
		addr := delayedEcho(t, c.delay)
		hold := new(transport.Hold)
		conns := heldConns(t, addr, hold, clients)
		var wg sync.WaitGroup
		for _, conn := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A window of waits, and some, then as many more once
				// released: reads after the release are the poller's.
				roundTrips(t, conn, 1000, func() bool { return !hold.Holding() })
				roundTrips(t, conn, 100, nil)
			}()
		}
		wg.Wait()
		// A held connection's socket is not the poller's: it would wake
		// the poller at every reply.
		for i, conn := range conns {
			if on := transport.OnPoller(conn); on != c.release {
				t.Errorf("replies %v late: connection %d on the poller: %v, want %v", c.delay, i, on, c.release)
			}
		}
		sw := hold.Switches()
		switch {
		case c.release && (hold.Holding() || len(sw) != 1 || !sw[0].Released || 4*sw[0].Long < sw[0].Of || sw[0].Of < 256):
			t.Errorf("replies %v late: holding %v, moves %+v; want released once, by a quarter or more long waits of a window", c.delay, hold.Holding(), sw)
		case !c.release && (!hold.Holding() || len(sw) != 0):
			t.Errorf("replies %v late: moves %+v; want held", c.delay, sw)
		}
	}
}

// TestHoldHoldsAgainWhenWaitsShorten: connections released while their
// server answered 3 ms late go back to their threads, off the poller,
// within a window once it answers at once, and read correctly across
// both moves; the Hold lists the two, each with its window.
func TestHoldHoldsAgainWhenWaitsShorten(t *testing.T) {
	const clients = 4
	var slow atomic.Bool
	slow.Store(true)
	addr := varyingEcho(t, func() time.Duration {
		if slow.Load() {
			return 3 * time.Millisecond
		}
		return 0
	})
	hold := new(transport.Hold)
	conns := heldConns(t, addr, hold, clients)
	phase := func(until func() bool) {
		var wg sync.WaitGroup
		for _, conn := range conns {
			wg.Go(func() {
				roundTrips(t, conn, 5000, until)
				roundTrips(t, conn, 50, nil) // some after the move
			})
		}
		wg.Wait()
	}
	phase(func() bool { return !hold.Holding() })
	if hold.Holding() {
		t.Fatal("replies 3 ms late: still held")
	}
	slow.Store(false)
	phase(hold.Holding)
	if !hold.Holding() {
		t.Fatal("replies at once after the release: not held again after 5,000 each")
	}
	// The next read or write of each takes its socket off the poller.
	for _, conn := range conns {
		roundTrips(t, conn, 2, nil)
	}
	for i, conn := range conns {
		if transport.OnPoller(conn) {
			t.Errorf("connection %d still on the poller after the move back", i)
		}
	}
	sw := hold.Switches()
	if len(sw) != 2 || !sw[0].Released || sw[1].Released || 4*sw[0].Long < sw[0].Of || 16*sw[1].Long >= sw[1].Of || !sw[1].At.After(sw[0].At) {
		t.Errorf("moves %+v; want a release by a quarter or more long waits, then a hold by under a sixteenth", sw)
	}
}

// TestNilHoldHolds: without a Hold (a named --transport blocking), the
// connections hold their threads however long the waits.
func TestNilHoldHolds(t *testing.T) {
	var h *transport.Hold
	if !h.Holding() {
		t.Fatal("a nil Hold released")
	}
	if sw := h.Switches(); sw != nil {
		t.Fatalf("a nil Hold says it moved: %+v", sw)
	}
}
