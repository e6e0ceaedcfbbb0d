package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/targettest"
	"github.com/dbmark/dbmark/internal/target/transport"
	"github.com/dbmark/dbmark/internal/testsrv"
)

var tcp, socket, tls = targettest.Cells("DBMARK_TEST_POSTGRES")

// own is the private server that the suite's ServerRestart kills and
// starts again: one for every cell of both conformance tests, which
// restart it in turn, as starting a server takes seconds.
var own = testsrv.NewShared(testsrv.Postgres)

func TestMain(m *testing.M) { own.Main(m) }

func open(t *testing.T, raw string, opts target.Options) target.Target {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := postgres.Open(context.Background(), u, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// engine is the suite's engine for one cell; private gives the cell's
// tests that kill the server a server of their own.
func engine(c targettest.Cell, opts target.Options, private func(testing.TB) *testsrv.Server) targettest.Engine {
	return targettest.Engine{
		LockWaiters: true,
		Open: func(t *testing.T) target.Target {
			return open(t, c.URL(t), opts)
		},
		OwnServer: func(t *testing.T) (target.Target, *testsrv.Server) {
			s := private(t)
			return open(t, c.Own(s), opts), s
		},
		SleepSQL:        func(s float64) string { return fmt.Sprintf("SELECT pg_sleep(%g)", s) },
		UniqueViolation: "23505",
		BackendIDSQL:    "SELECT pg_backend_pid()",
		KillSQL:         func(id string) string { return "SELECT pg_terminate_backend(" + id + ")" },
		// The notice reaches the client at once (the server flushes
		// notices), then the session ends with a FATAL error.
		NoticeThenCloseSQL: "DO $$ BEGIN RAISE NOTICE 'dbmark: closing'; PERFORM pg_terminate_backend(pg_backend_pid()); END $$",
		NoticeThenSleepSQL: func(s float64) string {
			return fmt.Sprintf("DO $$ BEGIN RAISE NOTICE 'dbmark: sleeping'; PERFORM pg_sleep(%g); END $$", s)
		},
		Conflict: func(ctx context.Context, t *testing.T, c1, c2 target.Conn, table string) error {
			// Two serializable transactions that each read what the other writes.
			for _, s := range []string{"BEGIN ISOLATION LEVEL SERIALIZABLE", "SELECT SUM(k) FROM " + table} {
				if err := c1.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
				if err := c2.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			if err := c1.Exec(ctx, "UPDATE "+table+" SET k=k+1 WHERE id=1"); err != nil {
				t.Fatal(err)
			}
			if err := c2.Exec(ctx, "UPDATE "+table+" SET k=k+1 WHERE id=2"); err != nil {
				t.Fatal(err)
			}
			if err := c1.Exec(ctx, "COMMIT"); err != nil {
				return err
			}
			err := c2.Exec(ctx, "COMMIT")
			_ = c2.Exec(ctx, "ROLLBACK")
			return err
		},
	}
}

// TestConformance runs the suite over TCP, the unix socket and TLS (as
// servers are packaged and hosted: ssl on), in every protocol mode, on
// the poller transport: the default's (auto's) choice over TCP and TLS,
// named on the socket, where the default is the blocking transport.
func TestConformance(t *testing.T) {
	for _, mode := range []string{postgres.ModePrepared, postgres.ModeExtended, postgres.ModeSimple} {
		t.Run("tcp/"+mode, func(t *testing.T) { targettest.Run(t, engine(tcp, target.Options{PGMode: mode}, own.Get)) })
		t.Run("tls/"+mode, func(t *testing.T) { targettest.Run(t, engine(tls, target.Options{PGMode: mode}, own.Get)) })
	}
	t.Run("socket/prepared", func(t *testing.T) {
		targettest.Run(t, engine(socket, target.Options{PGMode: postgres.ModePrepared, Transport: transport.Poller}, own.Get))
	})
	targettest.DriverSays(t, open(t, tcp.URL(t), target.Options{}), transport.Describe(transport.Poller)+" (auto)")
}

// TestConformanceReleased runs the suite over the unix socket on auto's
// blocking transport released to the poller, as a workload whose server
// holds each statement for milliseconds is, and held on their threads
// again by the suite's short waits (transport.Hold).
func TestConformanceReleased(t *testing.T) {
	targettest.RunEach(t, func(c targettest.Cell) targettest.Engine {
		return targettest.Releasing(engine(c, target.Options{PGMode: postgres.ModePrepared}, own.Get))
	}, transport.Describe(transport.Blocking)+" (auto)", socket)
}

// TestSharedHold: the servers of one run share a Hold
// (target.Options.Hold), so the release of one's connections is every
// one's.
func TestSharedHold(t *testing.T) {
	targettest.SharedRelease(t, engine(socket, target.Options{Hold: new(transport.Hold)}, own.Get))
}

// TestConformanceBlocking and TestConformanceGo run the suite over TCP,
// the unix socket and TLS on the other transports, and check that the
// result's driver line says which transport ran. The blocking transport
// is the default's choice over the socket.
func TestConformanceBlocking(t *testing.T) {
	opts := target.Options{Transport: transport.Blocking}
	targettest.RunEach(t, func(c targettest.Cell) targettest.Engine { return engine(c, opts, own.Get) },
		transport.Describe(transport.Blocking), tcp, socket, tls)
	targettest.DriverSays(t, open(t, socket.URL(t), target.Options{}), transport.Describe(transport.Blocking)+" (auto)")
}

// TestAutoTransport: the default takes the blocking transport, whose
// clients each need a processor (target.ThreadHolder), only when every
// host the URL names is a unix socket, and then only for up to 4 clients
// a processor; no connection is made.
func TestAutoTransport(t *testing.T) {
	few, many := 4*runtime.NumCPU(), 4*runtime.NumCPU()+1
	for clients, holds := range map[int]bool{0: true, 1: true, few: true, many: false} {
		tg := open(t, "postgres://u@/db?host=/run/postgresql", target.Options{Clients: clients})
		if got := tg.(target.ThreadHolder).HoldsThreads(); got != holds {
			t.Errorf("a socket, %d clients: holds threads %v, want %v", clients, got, holds)
		}
	}
	if got := open(t, "postgres://u@/db?host=/run/postgresql", target.Options{Clients: many, Transport: transport.Blocking}).(target.ThreadHolder).HoldsThreads(); !got {
		t.Errorf("%d clients with --transport blocking: does not hold threads", many)
	}
	for raw, holds := range map[string]bool{
		"postgres://u@/db?host=/run/postgresql":                      true,
		"postgres://u@/db?host=/run/postgresql,/tmp":                 true,
		"postgres://u@127.0.0.1:5432/db":                             false,
		"postgres://u@localhost/db":                                  false,
		"postgres://u@/db?host=/run/postgresql,db.example.com":       false,
		"postgres://u@db.example.com/db?host=/run/postgresql&port=1": true,
	} {
		tg := open(t, raw, target.Options{})
		if got := tg.(target.ThreadHolder).HoldsThreads(); got != holds {
			t.Errorf("%s: holds threads %v, want %v", raw, got, holds)
		}
		if got := open(t, raw, target.Options{Transport: transport.Poller}).(target.ThreadHolder).HoldsThreads(); got {
			t.Errorf("%s with --transport poller: holds threads", raw)
		}
	}
}

func TestConformanceGo(t *testing.T) {
	opts := target.Options{Transport: transport.Go}
	targettest.RunEach(t, func(c targettest.Cell) targettest.Engine { return engine(c, opts, own.Get) },
		transport.Describe(transport.Go), tcp, socket, tls)
}

func TestOpenRejectsBadMode(t *testing.T) {
	u, _ := url.Parse("postgres://u@127.0.0.1/db")
	if _, err := postgres.Open(context.Background(), u, target.Options{PGMode: "turbo"}); err == nil {
		t.Fatal("mode turbo accepted")
	}
	if _, err := postgres.Open(context.Background(), u, target.Options{Transport: "epoll"}); err == nil {
		t.Fatal("transport epoll accepted")
	}
}

// TestTLSIsInUse: the TLS cells' connections are encrypted, and with
// verify-full the server's certificate is checked against the test CA.
func TestTLSIsInUse(t *testing.T) {
	for _, env := range []string{"DBMARK_TEST_POSTGRES_TLS", "DBMARK_TEST_POSTGRES_TLS_VERIFY"} {
		t.Run(env, func(t *testing.T) {
			raw := os.Getenv(env)
			if raw == "" {
				t.Skipf("%s is not set (make test starts the servers)", env)
			}
			_, c := targettest.Dial(t, postgres.Open, raw, target.Options{})
			v, _, err := c.QueryRow(context.Background(), "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
			if err != nil || v != "true" {
				t.Fatalf("TLS in use = %q, %v; want true", v, err)
			}
		})
	}
}
