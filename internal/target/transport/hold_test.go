package transport_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target/targettest"
	"github.com/dbmark/dbmark/internal/target/transport"
)

// delayedEcho serves each connection by answering every byte it reads
// with the same byte, delay later.
func delayedEcho(t *testing.T, delay time.Duration) string {
	return targettest.Listen(t, func(c net.Conn) {
		defer c.Close()
		b := make([]byte, 1)
		for {
			if _, err := c.Read(b); err != nil {
				return
			}
			time.Sleep(delay)
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
		dial := transport.Wrap(transport.Blocking, (&net.Dialer{}).DialContext, hold)
		var wg sync.WaitGroup
		var conns []*transport.Conn
		for range clients {
			nc, err := dial(context.Background(), "tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			conn, ok := nc.(*transport.Conn)
			if !ok {
				t.Fatalf("the blocking transport gave a %T", nc)
			}
			conns = append(conns, conn)
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
		long, of, ok := hold.Released()
		switch {
		case c.release && (hold.Holding() || !ok || 4*long < of || of < 256):
			t.Errorf("replies %v late: holding %v, released %v with %d long waits of %d; want released, a quarter or more long", c.delay, hold.Holding(), ok, long, of)
		case !c.release && (!hold.Holding() || ok):
			t.Errorf("replies %v late: released (%d long waits of %d); want held", c.delay, long, of)
		}
	}
}

// TestNilHoldHolds: without a Hold (a named --transport blocking), the
// connections hold their threads however long the waits.
func TestNilHoldHolds(t *testing.T) {
	var h *transport.Hold
	if !h.Holding() {
		t.Fatal("a nil Hold released")
	}
	if _, _, ok := h.Released(); ok {
		t.Fatal("a nil Hold says it released")
	}
}
