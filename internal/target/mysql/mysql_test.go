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
)

func engine(envVar string, opts target.Options, driverOnly bool) targettest.Engine {
	return targettest.Engine{
		Open: func(t *testing.T) target.Target {
			raw := os.Getenv(envVar)
			if raw == "" {
				t.Skipf("%s is not set: no MySQL server to test against (make test starts one)", envVar)
			}
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
		},
		SleepSQL:        func(s int) string { return fmt.Sprintf("SELECT SLEEP(%d)", s) },
		UniqueViolation: "1062",
		BackendIDSQL:    "SELECT CONNECTION_ID()",
		KillSQL:         func(id string) string { return "KILL " + id },
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

func TestConformance(t *testing.T) {
	for _, mode := range []string{mysql.PSAuto, mysql.PSDisable} {
		t.Run("tcp/"+mode, func(t *testing.T) {
			targettest.Run(t, engine("DBMARK_TEST_MYSQL", target.Options{PSMode: mode}, false))
		})
		// The driver's own path, taken with TLS or compression.
		t.Run("tcp/"+mode+"/driver", func(t *testing.T) {
			targettest.Run(t, engine("DBMARK_TEST_MYSQL", target.Options{PSMode: mode}, true))
		})
	}
	t.Run("socket/auto", func(t *testing.T) {
		targettest.Run(t, engine("DBMARK_TEST_MYSQL_SOCKET", target.Options{PSMode: mysql.PSAuto}, false))
	})
	t.Run("tcp/auto/poll", func(t *testing.T) {
		targettest.Run(t, engine("DBMARK_TEST_MYSQL", target.Options{PSMode: mysql.PSAuto, NetIO: target.NetIOPoll}, false))
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
