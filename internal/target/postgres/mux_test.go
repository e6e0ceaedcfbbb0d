package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/mux"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/postgres"
)

// TestStatementsInATaskWaitInItsLoop: two connections served by one
// thread's loop. One waits 300 ms for pg_sleep while the other runs 200
// statements; that the second finishes first shows a statement's wait
// hands the thread over instead of holding it. In every -M mode, over TCP
// and the socket. Then a statement waiting in a task ends soon after its
// context does.
func TestStatementsInATaskWaitInItsLoop(t *testing.T) {
	for _, env := range []string{"DBMARK_TEST_POSTGRES", "DBMARK_TEST_POSTGRES_SOCKET"} {
		raw := os.Getenv(env)
		if raw == "" {
			t.Skipf("%s is not set: no PostgreSQL server to test against (make test starts one)", env)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{postgres.ModeSimple, postgres.ModeExtended, postgres.ModePrepared} {
			t.Run(env+"/"+mode, func(t *testing.T) {
				tg, err := postgres.Open(context.Background(), u, target.Options{PGMode: mode})
				if err != nil {
					t.Fatal(err)
				}
				var order []string
				var l mux.Loop
				task := func(name string, fn func(ctx context.Context, c target.Conn) error) {
					inTask(t, &l, tg, func(ctx context.Context, c target.Conn) {
						if err := fn(ctx, c); err != nil {
							t.Errorf("%s: %v", name, err)
						}
						order = append(order, name)
					})
				}
				task("slow", func(ctx context.Context, c target.Conn) error {
					return c.Exec(ctx, "SELECT pg_sleep(0.3)")
				})
				task("fast", func(ctx context.Context, c target.Conn) error {
					st, err := c.Prepare(ctx, "SELECT $1::int + 1 AS n")
					if err != nil {
						return err
					}
					args := make([]target.Value, 1)
					for i := range 200 {
						args[0].SetInt(int64(i))
						row, err := st.(target.RowStmt).RunRow(ctx, args)
						if err != nil {
							return err
						}
						if got := string(row.Values[0]); got != strconv.Itoa(i+1) {
							return fmt.Errorf("%d + 1 = %s", i, got)
						}
					}
					return nil
				})
				if err := l.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				if len(order) != 2 || order[0] != "fast" {
					t.Fatalf("tasks ended in order %v, want fast before slow", order)
				}
			})
		}
	}

	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	u, _ := url.Parse(raw)
	tg, err := postgres.Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var l mux.Loop
	var took time.Duration
	var class target.Class
	inTask(t, &l, tg, func(ctx context.Context, c target.Conn) {
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err = c.Exec(ctx, "SELECT pg_sleep(30)")
		took = time.Since(start)
		class = tg.Classify(err).Class
	})
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if took > 2*time.Second || class != target.Canceled {
		t.Fatalf("a cancelled statement in a task ended after %v as %v, want soon, as canceled", took, class)
	}
}

// inTask adds a task to l that runs fn on a connection of its own.
func inTask(t *testing.T, l *mux.Loop, tg target.Target, fn func(ctx context.Context, c target.Conn)) {
	l.Add(func(ctx context.Context) {
		c, err := tg.Connect(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		fn(ctx, c)
	})
}
