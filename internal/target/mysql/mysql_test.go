package mysql_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/targettest"
	"github.com/dbmark/dbmark/internal/testsrv"
)

// cell is one way of reaching the server the suite runs over.
type cell struct {
	env string                       // the shared server's URL (scripts/testenv.sh env)
	own func(*testsrv.Server) string // the same kind of URL on a private server
}

var (
	tcp    = cell{"DBMARK_TEST_MYSQL", func(s *testsrv.Server) string { return s.TCP }}
	socket = cell{"DBMARK_TEST_MYSQL_SOCKET", func(s *testsrv.Server) string { return s.Socket }}
	tls    = cell{"DBMARK_TEST_MYSQL_TLS", func(s *testsrv.Server) string { return s.TLS }}
)

func open(t *testing.T, raw string, opts target.Options, driverOnly bool) target.Target {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := mysql.Open(context.Background(), u, opts)
	if err != nil {
		t.Fatal(err)
	}
	if driverOnly {
		mysql.DriverOnly(tg)
	}
	return tg
}

// engine is the suite's engine for one cell; own gives the cell's tests
// that kill the server a private one.
func engine(c cell, opts target.Options, driverOnly bool, own func(testing.TB) *testsrv.Server) targettest.Engine {
	return targettest.Engine{
		Open: func(t *testing.T) target.Target {
			raw := os.Getenv(c.env)
			if raw == "" {
				t.Skipf("%s is not set: no MySQL server to test against (make test starts one)", c.env)
			}
			return open(t, raw, opts, driverOnly)
		},
		OwnServer: func(t *testing.T) (target.Target, *testsrv.Server) {
			s := own(t)
			return open(t, c.own(s), opts, driverOnly), s
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

// TestConformance runs the suite over TCP, the unix socket and TLS, with
// server-side prepared statements and without.
func TestConformance(t *testing.T) {
	own := testsrv.Lazy(t, testsrv.MariaDB)
	for _, mode := range []string{mysql.PSAuto, mysql.PSDisable} {
		t.Run("tcp/"+mode, func(t *testing.T) {
			targettest.Run(t, engine(tcp, target.Options{PSMode: mode}, false, own))
		})
		// The driver's own path, taken with TLS or compression.
		t.Run("tcp/"+mode+"/driver", func(t *testing.T) {
			targettest.Run(t, engine(tcp, target.Options{PSMode: mode}, true, own))
		})
		t.Run("tls/"+mode, func(t *testing.T) {
			targettest.Run(t, engine(tls, target.Options{PSMode: mode}, false, own))
		})
	}
	t.Run("socket/auto", func(t *testing.T) {
		targettest.Run(t, engine(socket, target.Options{PSMode: mysql.PSAuto}, false, own))
	})
	t.Run("tcp/auto/poll", func(t *testing.T) {
		targettest.Run(t, engine(tcp, target.Options{PSMode: mysql.PSAuto, NetIO: target.NetIOPoll}, false, own))
	})
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
