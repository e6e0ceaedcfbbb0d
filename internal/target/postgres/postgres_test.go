package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/targettest"
)

func engine(envVar string, opts target.Options) targettest.Engine {
	return targettest.Engine{
		Open: func(t *testing.T) target.Target {
			raw := os.Getenv(envVar)
			if raw == "" {
				t.Skipf("%s is not set: no PostgreSQL server to test against (make test starts one)", envVar)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := postgres.Open(context.Background(), u, opts)
			if err != nil {
				t.Fatal(err)
			}
			return tg
		},
		SleepSQL:        func(s int) string { return fmt.Sprintf("SELECT pg_sleep(%d)", s) },
		UniqueViolation: "23505",
		BackendIDSQL:    "SELECT pg_backend_pid()",
		KillSQL:         func(id string) string { return "SELECT pg_terminate_backend(" + id + ")" },
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

func TestConformance(t *testing.T) {
	for _, mode := range []string{postgres.ModePrepared, postgres.ModeExtended, postgres.ModeSimple} {
		t.Run("tcp/"+mode, func(t *testing.T) { targettest.Run(t, engine("DBMARK_TEST_POSTGRES", target.Options{PGMode: mode})) })
	}
	t.Run("socket/prepared", func(t *testing.T) {
		targettest.Run(t, engine("DBMARK_TEST_POSTGRES_SOCKET", target.Options{PGMode: postgres.ModePrepared}))
	})
}

func TestOpenRejectsBadMode(t *testing.T) {
	u, _ := url.Parse("postgres://u@127.0.0.1/db")
	if _, err := postgres.Open(context.Background(), u, target.Options{PGMode: "turbo"}); err == nil {
		t.Fatal("mode turbo accepted")
	}
}
