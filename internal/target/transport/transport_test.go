package transport_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/nettest"

	"github.com/dbmark/dbmark/internal/target/transport"
)

// released names, in these tests, the blocking transport released to the
// poller (by a transport.Hold) before its first read.
const released = "blocking-released"

// wrap is transport.Wrap for the transports of these tests.
func wrap(name string, dial transport.DialFunc) transport.DialFunc {
	if name == released {
		return transport.Wrap(transport.Blocking, dial, transport.ReleasedHold())
	}
	return transport.Wrap(name, dial, nil)
}

// pipe connects a connection on transport name to a peer over network
// ("tcp" or "unix"): c1 is the dialed end, c2 the accepted one, on the
// same transport when both, Go's otherwise.
func pipe(t testing.TB, network, name string, both bool) (c1, c2 net.Conn, stop func(), err error) {
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, nil, nil, err
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	var d net.Dialer
	c1, err = wrap(name, d.DialContext)(context.Background(), network, ln.Addr().String())
	if err != nil {
		return nil, nil, nil, err
	}
	c2 = <-accepted
	if c2 == nil {
		c1.Close()
		return nil, nil, nil, errors.New("accept failed")
	}
	if both {
		accepted := func(context.Context, string, string) (net.Conn, error) { return c2, nil }
		if c2, err = wrap(name, accepted)(context.Background(), network, ""); err != nil {
			c1.Close()
			return nil, nil, nil, err
		}
	}
	return c1, c2, func() { c1.Close(); c2.Close() }, nil
}

// wrapped are the transports that wrap Go's connection.
var wrapped = []string{transport.Blocking, transport.Poller, released}

// TestConn is golang.org/x/net/nettest's conformance suite for a
// net.Conn, for each transport that wraps Go's connection, over TCP and
// a unix socket, with a Go connection and with one of its own at the
// other end.
func TestConn(t *testing.T) {
	for _, tr := range wrapped {
		for _, network := range []string{"tcp", "unix"} {
			for _, both := range []bool{false, true} {
				name := tr + "/" + network + "/go-peer"
				if both {
					name = tr + "/" + network + "/" + tr + "-peer"
				}
				t.Run(name, func(t *testing.T) {
					nettest.TestConn(t, func() (net.Conn, net.Conn, func(), error) { return pipe(t, network, tr, both) })
				})
			}
		}
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "auto", "go", "blocking", "poller"} {
		if err := transport.Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	err := transport.Check("epoll")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `--transport "epoll"`) {
		t.Errorf("Check(epoll) = %v, want one line naming the value", err)
	}
}

// TestLocal: a unix socket, a loopback address and localhost are this
// machine's servers (auto's blocking transport on MySQL); any other host
// is not, whatever its name says.
func TestLocal(t *testing.T) {
	for _, c := range []struct {
		network, addr string
		want          bool
	}{
		{"unix", "/run/mysqld/mysqld.sock", true},
		{"tcp", "127.0.0.1:3306", true},
		{"tcp", "127.0.0.2:3306", true},
		{"tcp", "[::1]:3306", true},
		{"tcp", "localhost:3306", true},
		{"tcp", "localhost", true},
		{"tcp", "192.0.2.10:3306", false},
		{"tcp", "[2001:db8::1]:3306", false},
		{"tcp", "db.example.com:3306", false},
		{"tcp", "localhost.example.com:3306", false},
	} {
		if got := transport.Local(c.network, c.addr); got != c.want {
			t.Errorf("Local(%q, %q) = %v, want %v", c.network, c.addr, got, c.want)
		}
	}
}

// TestFew: clients wait on threads of their own up to perCPU for each of
// the machine's processors and MaxHeld in all; an unknown count (0) is few.
func TestFew(t *testing.T) {
	n := runtime.NumCPU()
	for _, c := range []struct {
		clients, perCPU int
		want            bool
	}{
		{0, 4, true},
		{1, 4, true},
		{4 * n, 4, true},
		{4*n + 1, 4, false},
		{8 * n, 8, min(8*n, transport.MaxHeld) == 8*n},
		{transport.MaxHeld, 1 << 20, true},
		{transport.MaxHeld + 1, 1 << 20, false},
	} {
		if got := transport.Few(c.clients, c.perCPU); got != c.want {
			t.Errorf("Few(%d, %d) on %d processors = %v, want %v", c.clients, c.perCPU, n, got, c.want)
		}
	}
}

func TestWrapGoIsTheDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var d net.Dialer
	// Go's own connection for Go and Auto (the engine resolves Auto
	// before Wrap), a transport's own for the others.
	for name, own := range map[string]bool{transport.Go: false, "": false, transport.Auto: false, transport.Blocking: true, transport.Poller: true} {
		c, err := transport.Wrap(name, d.DialContext, nil)(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, goConn := c.(*net.TCPConn)
		_, blocking := c.(*transport.Conn)
		if goConn == own || blocking != (name == transport.Blocking) {
			t.Errorf("Wrap(%q) gave a %T", name, c)
		}
		c.Close()
	}
}

// threads is the process's OS thread count.
func threads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}

// TestWaitsEndWithoutLeaks blocks reads on connections whose peer never
// answers and ends them every way a client's wait is ended (Close, a
// deadline in the past, one that expires, one moved later and then past,
// the drivers' SetDeadline), several rounds over: each read returns the
// right error, no earlier than it may, and the goroutines and threads do
// not grow from round to round.
func TestWaitsEndWithoutLeaks(t *testing.T) {
	for _, tr := range wrapped {
		t.Run(tr, func(t *testing.T) { waitsEndWithoutLeaks(t, tr) })
	}
}

func waitsEndWithoutLeaks(t *testing.T, tr string) {
	const clients = 8
	type way struct {
		name    string
		end     func(c net.Conn) // while the read waits
		want    error
		notLess time.Duration // the read may not end sooner
	}
	ways := []way{
		{"close", func(c net.Conn) { c.Close() }, net.ErrClosed, 0},
		{"past read deadline", func(c net.Conn) { c.SetReadDeadline(time.Unix(1, 0)) }, os.ErrDeadlineExceeded, 0},
		{"past deadline", func(c net.Conn) { c.SetDeadline(time.Now()) }, os.ErrDeadlineExceeded, 0},
		{"extended", func(c net.Conn) {
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		}, os.ErrDeadlineExceeded, 300 * time.Millisecond},
	}
	// check says whether a read that returned err, took after its way's
	// end was called, ended as w says.
	check := func(w way, err error, took time.Duration) {
		t.Helper()
		if !errors.Is(err, w.want) {
			t.Errorf("%s: read returned %v, want %v", w.name, err, w.want)
		}
		if took < w.notLess {
			t.Errorf("%s: read ended %v after the deadline was moved, before it (%v)", w.name, took, w.notLess)
		}
	}
	// round blocks clients reads at once, ends them all, and closes.
	round := func() {
		type end struct {
			i   int
			err error
			at  time.Time
		}
		var conns []net.Conn
		ended := make([]atomic.Pointer[time.Time], clients) // when each way's end was called
		results := make(chan end, clients)
		for i := range clients {
			c1, _, stop, err := pipe(t, []string{"tcp", "unix"}[i%2], tr, false)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			conns = append(conns, c1)
		}
		for i, c := range conns {
			w := ways[i%len(ways)]
			go func() {
				_, err := c.Read(make([]byte, 64))
				results <- end{i, err, time.Now()}
			}()
			time.AfterFunc(50*time.Millisecond, func() {
				now := time.Now()
				ended[i].Store(&now)
				w.end(c)
			})
		}
		timeout := time.After(20 * time.Second)
		for range clients {
			select {
			case r := <-results:
				w := ways[r.i%len(ways)]
				if at := ended[r.i].Load(); at == nil {
					t.Errorf("%s: read returned %v before anything ended it", w.name, r.err)
				} else {
					check(w, r.err, r.at.Sub(*at))
				}
			case <-timeout:
				t.Fatal("reads still wait 20 s on")
			}
		}
	}
	// Each read's own outcome is checked per way.
	for _, w := range ways {
		c1, c2, stop, err := pipe(t, "tcp", tr, false)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c1.Read(make([]byte, 64))
			done <- err
		}()
		time.Sleep(50 * time.Millisecond) // the read waits in poll by now, or soon
		start := time.Now()
		w.end(c1)
		select {
		case err := <-done:
			check(w, err, time.Since(start))
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the read still waits 20 s on", w.name)
		}
		if w.want != net.ErrClosed {
			// A deadline cleared, the connection reads again.
			c1.SetDeadline(time.Time{})
			b := make([]byte, 1)
			if _, err := c2.Write([]byte("x")); err != nil {
				t.Errorf("%s: the peer cannot write: %v", w.name, err)
			} else if _, err := c1.Read(b); err != nil || b[0] != 'x' {
				t.Errorf("%s: a read after the deadline was cleared: %q, %v", w.name, b, err)
			}
		}
		stop()
	}

	// Rounds of waits ended at once: threads and goroutines stay level.
	g0 := runtime.NumGoroutine()
	for range 2 {
		round()
	}
	settle := func() {
		for i := 0; i < 100 && runtime.NumGoroutine() > g0; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	settle()
	t1 := threads(t)
	for range 5 {
		round()
	}
	settle()
	if g := runtime.NumGoroutine(); g > g0 {
		t.Errorf("%d goroutines after the rounds, %d before", g, g0)
	}
	// Idle threads are kept by the runtime for reuse: a leak would add
	// about clients per round.
	if t2 := threads(t); t2 > t1+clients/2 {
		t.Errorf("%d OS threads after 5 more rounds of %d waits, %d before them", t2, clients, t1)
	}
}
