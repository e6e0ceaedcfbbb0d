package mysql_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/targettest"
	"github.com/dbmark/dbmark/internal/target/transport"
	"github.com/dbmark/dbmark/internal/testsrv"
)

var tcp, socket, tls = targettest.Cells("DBMARK_TEST_MYSQL")

// own is the private server that the suite's ServerRestart kills and
// starts again: one for every cell of both conformance tests, which
// restart it in turn, as starting a server takes seconds.
var own = testsrv.NewShared(testsrv.MariaDB)

func TestMain(m *testing.M) { own.Main(m) }

// serverURL returns the test server's URL in envVar, or skips.
func serverURL(t *testing.T, envVar string) string {
	t.Helper()
	raw := os.Getenv(envVar)
	if raw == "" {
		t.Skipf("%s is not set: no MySQL server to test against (make test starts one)", envVar)
	}
	return raw
}

// open opens the target at raw.
func open(t *testing.T, raw string, opts target.Options) target.Target {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := mysql.Open(context.Background(), u, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// connect opens a connection to tg, closed when the test ends.
func connect(t *testing.T, tg target.Target) target.Conn {
	t.Helper()
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// engine is the suite's engine for one cell; private gives the cell's
// tests that kill the server a server of their own.
func engine(c targettest.Cell, opts target.Options, private func(testing.TB) *testsrv.Server) targettest.Engine {
	return targettest.Engine{
		LockWaiters: true,
		Open: func(t *testing.T) target.Target {
			tg := open(t, c.URL(t), opts)
			return tg
		},
		OwnServer: func(t *testing.T) (target.Target, *testsrv.Server) {
			s := private(t)
			return open(t, c.Own(s), opts), s
		},
		SleepSQL:        func(s float64) string { return fmt.Sprintf("SELECT SLEEP(%g)", s) },
		UniqueViolation: "1062",
		BackendIDSQL:    "SELECT CONNECTION_ID()",
		KillSQL:         func(id string) string { return "KILL " + id },
		// MariaDB has no asynchronous notices: a warning, then the session
		// kills itself (error 1927, and the server closes the connection).
		NoticeThenCloseSQL: "BEGIN NOT ATOMIC SIGNAL SQLSTATE '01000' SET MESSAGE_TEXT = 'dbmark: closing'; KILL CONNECTION_ID(); END",
		// A first result reaches the client, then the session waits.
		NoticeThenSleepSQL: func(s float64) string {
			return fmt.Sprintf("BEGIN NOT ATOMIC SIGNAL SQLSTATE '01000' SET MESSAGE_TEXT = 'dbmark: sleeping'; SELECT 1; SELECT SLEEP(%g); END", s)
		},
		Conflict: func(ctx context.Context, t *testing.T, c1, c2 target.Conn, table string) error {
			// Opposite lock order on two rows: InnoDB picks a deadlock victim.
			for _, s := range []string{"BEGIN", "UPDATE " + table + " SET k=k+1 WHERE id=1"} {
				if err := c1.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range []string{"BEGIN", "UPDATE " + table + " SET k=k+1 WHERE id=2"} {
				if err := c2.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			errc := make(chan error, 1)
			go func() { errc <- c1.Exec(ctx, "UPDATE "+table+" SET k=k+1 WHERE id=2") }()
			err2 := c2.Exec(ctx, "UPDATE "+table+" SET k=k+1 WHERE id=1")
			err1 := <-errc
			_ = c1.Exec(ctx, "ROLLBACK")
			_ = c2.Exec(ctx, "ROLLBACK")
			if err2 != nil {
				return err2
			}
			return err1
		},
	}
}

func withParam(raw, key, value string) string {
	u, _ := url.Parse(raw)
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// offersTLS says whether the server at raw has TLS on.
func offersTLS(t *testing.T, raw string) bool {
	t.Helper()
	c := connect(t, open(t, raw, target.Options{}))
	v, _, err := c.QueryRow(context.Background(), "SELECT @@have_ssl")
	if err != nil {
		t.Fatal(err)
	}
	return v == "YES"
}

// TestConformance runs the suite over TCP, the unix socket and TLS, with
// server-side prepared statements and without, on Go's transport (the
// default, auto, chooses the blocking one for these servers on this
// machine).
func TestConformance(t *testing.T) {
	for _, mode := range []string{mysql.PSAuto, mysql.PSDisable} {
		opts := target.Options{PSMode: mode, Transport: transport.Go}
		t.Run("tcp/"+mode, func(t *testing.T) { targettest.Run(t, engine(tcp, opts, own.Get)) })
		t.Run("socket/"+mode, func(t *testing.T) { targettest.Run(t, engine(socket, opts, own.Get)) })
		t.Run("tls/"+mode, func(t *testing.T) { targettest.Run(t, engine(tls, opts, own.Get)) })
	}
}

// TestConformanceBlocking runs the suite over TCP, the unix socket and
// TLS on the blocking transport, and checks that the result's driver line
// says which transport ran: the default (auto) is the blocking one for a
// server on this machine and up to 8 clients a processor; a transport
// that is none is refused.
func TestConformanceBlocking(t *testing.T) {
	opts := target.Options{Transport: transport.Blocking}
	targettest.RunEach(t, func(c targettest.Cell) targettest.Engine { return engine(c, opts, own.Get) },
		transport.Describe(transport.Blocking), tcp, socket, tls)
	for _, c := range []targettest.Cell{tcp, socket} {
		targettest.DriverSays(t, open(t, c.URL(t), target.Options{}), transport.Describe(transport.Blocking)+" (auto)")
	}
	targettest.DriverSays(t, open(t, tcp.URL(t), target.Options{Transport: transport.Go}), transport.Describe(transport.Go))
	// Beyond 8 clients a processor, auto's is the poller.
	targettest.DriverSays(t, open(t, tcp.URL(t), target.Options{Clients: 8*runtime.NumCPU() + 1}), transport.Describe(transport.Polled())+" (auto)")
	targettest.DriverSays(t, open(t, tcp.URL(t), target.Options{Clients: 8 * runtime.NumCPU()}), transport.Describe(transport.Blocking)+" (auto)")
	u, _ := url.Parse("mysql://u@127.0.0.1/db")
	if _, err := mysql.Open(context.Background(), u, target.Options{Transport: "epoll"}); err == nil {
		t.Fatal("transport epoll accepted")
	}
}

// TestConformanceReleased runs the suite over TCP and TLS on auto's
// blocking transport released to the poller, as a workload whose server
// holds each statement for milliseconds is, and held on their threads
// again by the suite's short waits (transport.Hold).
func TestConformanceReleased(t *testing.T) {
	targettest.RunEach(t, func(c targettest.Cell) targettest.Engine {
		return targettest.Releasing(engine(c, target.Options{}, own.Get))
	}, transport.Describe(transport.Blocking)+" (auto)", tcp, tls)
}

// TestSharedHold: the servers of one run share a Hold
// (target.Options.Hold), so the release of one's connections is every
// one's.
func TestSharedHold(t *testing.T) {
	targettest.SharedRelease(t, engine(tcp, target.Options{Hold: new(transport.Hold)}, own.Get))
}

// TestConformancePoller runs the suite over TCP, the unix socket and TLS
// on the poller transport (auto's for a server on another machine).
func TestConformancePoller(t *testing.T) {
	opts := target.Options{Transport: transport.Poller}
	targettest.RunEach(t, func(c targettest.Cell) targettest.Engine { return engine(c, opts, own.Get) },
		transport.Describe(transport.Poller), tcp, socket, tls)
}

// TestTLSParameters: tls=preferred connects whether or not the server
// offers TLS; tls=skip-verify encrypts when it does, and is refused with
// one clear line when it does not.
func TestTLSParameters(t *testing.T) {
	raw := serverURL(t, "DBMARK_TEST_MYSQL")
	has := offersTLS(t, raw)
	ctx := context.Background()
	cipher := func(c target.Conn) string {
		v, _, err := c.QueryRow(ctx, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c := connect(t, open(t, withParam(raw, "tls", "preferred"), target.Options{}))
	if got := cipher(c); (got != "") != has {
		t.Errorf("tls=preferred: cipher %q with the server's TLS %v", got, has)
	}
	tg := open(t, withParam(raw, "tls", "skip-verify"), target.Options{})
	c, err := tg.Connect(ctx)
	switch {
	case has && err != nil:
		t.Fatalf("tls=skip-verify: %v", err)
	case has:
		defer c.Close()
		if cipher(c) == "" {
			t.Error("tls=skip-verify: the connection is not encrypted")
		}
	case err == nil:
		c.Close()
		t.Fatal("tls=skip-verify connected to a server without TLS")
	case !strings.Contains(err.Error(), "does not offer TLS") || strings.Contains(err.Error(), "\n"):
		t.Errorf("tls=skip-verify without TLS on the server: %q; want one line saying it does not offer TLS", err)
	}
}

func TestOpenParsesSocketAndDefaults(t *testing.T) {
	u, _ := url.Parse("mysql://sb:secret@localhost/sbtest?socket=/run/mysqld/mysqld.sock")
	tg, err := mysql.Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Redacted(); got != "mysql://sb:xxxxx@localhost/sbtest?socket=%2Frun%2Fmysqld%2Fmysqld.sock" && got != "mysql://sb:xxxxx@localhost/sbtest?socket=/run/mysqld/mysqld.sock" {
		t.Fatalf("Redacted() = %q", got)
	}
	if _, err := mysql.Open(context.Background(), u, target.Options{PSMode: "sometimes"}); err == nil {
		t.Fatal("--db-ps-mode sometimes accepted")
	}
	u, _ = url.Parse("mysql://sb@127.0.0.1/sbtest?timeout=soon")
	if _, err := mysql.Open(context.Background(), u, target.Options{}); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("?timeout=soon: %v; want a bad URL naming the timeout", err)
	}
}

// TestTLSIsInUse: the TLS cell's connections are encrypted.
func TestTLSIsInUse(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_MYSQL_TLS")
	if raw == "" {
		t.Skip("DBMARK_TEST_MYSQL_TLS is not set (make test starts the servers)")
	}
	_, c := targettest.Dial(t, mysql.Open, raw, target.Options{})
	v, _, err := c.QueryRow(context.Background(), "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'")
	if err != nil || v == "" {
		t.Fatalf("TLS cipher = %q, %v; want one", v, err)
	}
}
