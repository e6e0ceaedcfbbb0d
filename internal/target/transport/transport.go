// Package transport is how a client's connection to a server moves its
// bytes: Go's own network connection, which parks the goroutine in the
// runtime's network poller; the same with its reads and writes made as
// raw system calls (the poller transport); or a blocking one, whose
// goroutine waits in the kernel (poll(2)) on a thread of its own. The
// drivers dial through their documented hooks (pgconn's DialFunc,
// go-sql-driver/mysql's Config.DialFunc), and Wrap gives any of them;
// TLS is the driver's, from crypto/tls, on top.
package transport

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
)

// The names of the transports, as --transport takes them.
const (
	// Auto lets the engine choose (each engine's Open says how): the
	// blocking transport where bench/'s A/B found it ahead in every
	// round, the poller transport elsewhere (Go's where there is none);
	// its blocking connections move to the poller once the server holds
	// them long (Hold). The empty name is Auto too.
	Auto = "auto"
	// Go is Go's own connection: the goroutine waits in the network
	// poller and its thread runs other goroutines meanwhile.
	Go = "go"
	// Blocking waits in the kernel, in poll(2) on the socket and a wake-up
	// descriptor of the connection's own, holding its thread: N clients
	// waiting are N threads, and a reply wakes its client's thread
	// directly instead of the poller's and then the scheduler's.
	Blocking = "blocking"
	// Poller waits in Go's network poller as Go does, and makes its
	// reads and writes, which never block, as raw system calls the
	// runtime's scheduler is not told of (Linux only).
	Poller = "poller"
)

// Names are the transports, the default first.
var Names = []string{Auto, Go, Blocking, Poller}

// Check says whether name is a transport, in one line naming the choices
// when it is not. The empty name is the default.
func Check(name string) error {
	if name == "" || slices.Contains(Names, name) {
		return nil
	}
	return fmt.Errorf("--transport %q: must be auto (the engine's choice), go (the Go runtime's network poller), poller (the same poller, raw reads and writes) or blocking (a thread per connection, waiting in poll(2))", name)
}

// Polled is the transport whose goroutines wait in the network poller
// at the least cost: Poller where there is one, Go elsewhere.
func Polled() string {
	if linux {
		return Poller
	}
	return Go
}

// Held is the transport whose clients wait in the kernel on threads of
// their own: Blocking where there is one, Go elsewhere.
func Held() string {
	if linux {
		return Blocking
	}
	return Go
}

// MaxHeld is the most clients that wait on threads of their own: the
// runner gives each a processor up to this many (more processors lengthen
// the collector's pauses), and beyond it a wait is handed off again.
const MaxHeld = 128

// Few says whether a run's clients are few enough to wait on threads of
// their own: at most perCPU for each of the machine's processors, and at
// most MaxHeld. Zero (not known) is few. Beyond that, the threads contend
// for the processors, and the poller, whose threads serve several clients'
// replies a wake-up, costs less (bench/'s A/B on 2 processors: PostgreSQL
// over a unix socket from 16 clients, MariaDB from 32; the engines say
// their perCPU).
func Few(clients, perCPU int) bool {
	return clients <= min(perCPU*runtime.NumCPU(), MaxHeld)
}

// IsAuto says whether name leaves the choice to the engine.
func IsAuto(name string) bool { return name == "" || name == Auto }

// Local says whether a server dialed at network and addr (as a dialer
// takes them) is on this machine: a unix socket, or a loopback address
// or localhost over TCP. Such a server answers a short statement within
// microseconds, where waiting in the kernel on the client's own thread
// costs less than the poller's hand-offs; a remote one answers in a
// network round trip, which a blocking wait spends holding a processor
// until the runtime takes it back.
func Local(network, addr string) bool {
	if network == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DialFunc is the drivers' dialer signature (pgconn.DialFunc,
// go-sql-driver/mysql's Config.DialFunc).
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Wrap returns a dialer that dials with dial and hands back the
// transport name asks for: dial itself for Go, and for Blocking or
// Poller dial's connection turned into theirs. name must have passed
// Check, and Auto been resolved by the engine (Wrap takes it as Go).
// Blocking connections share hold, which may release them to the
// poller; a nil hold never does.
func Wrap(name string, dial DialFunc, hold *Hold) DialFunc {
	var wrap func(net.Conn) (net.Conn, error)
	switch name {
	case Blocking:
		wrap = func(nc net.Conn) (net.Conn, error) { return fromNet(nc, hold) }
	case Poller:
		wrap = pollerFromNet
	default:
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c, err := wrap(nc)
		if err != nil {
			return nil, fmt.Errorf("dial %s %s: %w", network, addr, err)
		}
		return c, nil
	}
}

// Describe is the words a result's driver line adds for the transport.
func Describe(name string) string {
	switch name {
	case Blocking:
		return "blocking transport"
	case Poller:
		return "poller transport"
	}
	return "Go transport"
}
