package transport_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
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
	"github.com/dbmark/dbmark/internal/target/transport"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

type workerFunc func(ctx context.Context) error

func (f workerFunc) Event(ctx context.Context, _ bool) (metrics.Op, error) { return 0, f(ctx) }
func (f workerFunc) Close() error                                          { return nil }

// TestStallTimeoutEndsABlockedRead: a client whose statement waits on the
// server past --stall-timeout, on the blocking and the poller transports,
// ends the run as failed within seconds, named, and returns (its wait
// ended by the cancel), on PostgreSQL and MariaDB, over TCP and TLS.
func TestStallTimeoutEndsABlockedRead(t *testing.T) {
	engines := []struct {
		env   string
		open  target.Opener
		sleep string
	}{
		{"DBMARK_TEST_POSTGRES", postgres.Open, "SELECT pg_sleep(30)"},
		{"DBMARK_TEST_MYSQL", mysql.Open, "SELECT SLEEP(30)"},
	}
	for _, e := range engines {
		for _, env := range []string{e.env, e.env + "_TLS"} {
			for _, tr := range []string{transport.Blocking, transport.Poller} {
				t.Run(env+"/"+tr, func(t *testing.T) {
					raw := os.Getenv(env)
					if raw == "" {
						t.Skipf("%s is not set (make test starts the servers)", env)
					}
					u, err := url.Parse(raw)
					if err != nil {
						t.Fatal(err)
					}
					tg, err := e.open(context.Background(), u, target.Options{Transport: tr})
					if err != nil {
						t.Fatal(err)
					}
					defer tg.Close()
					cfg := runner.Config{Threads: 2, Duration: time.Minute, MaxTries: 1, Percentiles: []float64{50}, Seed: 1,
						StallTimeout: 400 * time.Millisecond, ReportInterval: 50 * time.Millisecond}
					load := &workload.Load{
						Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
						NewWorker: func(_ context.Context, seat workload.Seat) (workload.Worker, error) {
							id, conn := seat.ID, seat.Conn
							return workerFunc(func(ctx context.Context) error {
								if id == 1 {
									return conn.Exec(ctx, e.sleep)
								}
								return conn.Exec(ctx, "SELECT 1")
							}), nil
						},
					}
					start := time.Now()
					out := sqlclient.Run(context.Background(), cfg, tg, load, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
					if took := time.Since(start); took > 15*time.Second {
						t.Fatalf("the run took %v: the stuck statement was not interrupted", took)
					}
					var se *runner.StallError
					if out.Status != result.StatusFailed || !errors.As(out.Err, &se) || len(se.Stalls) != 1 || se.Stalls[0].Client != 1 {
						t.Fatalf("%s: %v; want failed, client 1 stalled", out.Status, out.Err)
					}
					if len(out.Stuck) != 0 {
						t.Fatalf("clients %+v did not return after the cancel", out.Stuck)
					}
				})
			}
		}
	}
}
