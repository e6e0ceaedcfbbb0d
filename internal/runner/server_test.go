package runner_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// TestServerGoneEndsTheRunInBoundedTime closes a database to new
// connections and ends the workers' sessions: the workers try to reconnect
// for ReconnectFor, then the run fails with what it measured.
func TestServerGoneEndsTheRunInBoundedTime(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (make test starts the servers)")
	}
	ctx := context.Background()
	admin := open(t, raw)
	ac, err := admin.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	db := fmt.Sprintf("dbmark_gone_%d", time.Now().UnixNano()%1_000_000)
	if err := ac.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ac.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS true")
		_ = ac.Exec(ctx, "DROP DATABASE "+db+" WITH (FORCE)")
	}()
	u, _ := url.Parse(raw)
	u.Path = "/" + db
	tg := open(t, u.String())
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", "INSERT INTO counter VALUES (1, 0)"} {
		if err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()

	time.AfterFunc(500*time.Millisecond, func() {
		_ = ac.Exec(ctx, "ALTER DATABASE "+db+" ALLOW_CONNECTIONS false")
		_ = ac.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+db+"'")
	})
	cfg := runner.Config{Threads: 2, Duration: time.Minute, MaxTries: 1, Percentiles: []float64{50}, ReconnectFor: time.Second}
	start := time.Now()
	out := sqlclient.Run(ctx, cfg, tg, script(func(int64) []string {
		return []string{"BEGIN", "UPDATE counter SET n = n + 1 WHERE id = 1", "COMMIT"}
	}), nil, quiet)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the run took %v after the server went away", took)
	}
	if out.Status != result.StatusFailed || out.Err == nil {
		t.Fatalf("status %s (%v), want failed", out.Status, out.Err)
	}
	if out.Summary.Events == 0 || out.Summary.Reconnects == 0 {
		t.Fatalf("events %d reconnects %d: the partial result must keep both", out.Summary.Events, out.Summary.Reconnects)
	}
}

func open(t *testing.T, raw string) target.Target {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	opener := postgres.Open
	if u.Scheme == "mysql" {
		opener = mysql.Open
	}
	tg, err := opener(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

type workerFunc func(ctx context.Context) error

func (f workerFunc) Event(ctx context.Context, retry bool) (metrics.Op, error) { return 0, f(ctx) }
func (f workerFunc) Close() error                                              { return nil }
