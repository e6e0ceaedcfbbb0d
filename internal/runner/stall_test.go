package runner_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// stuckAfter is a load whose worker 0 waits for its context's end in its
// third event (or forever when deaf), and whose other workers go on.
func stuckAfter(deaf bool, release chan struct{}) *workload.Load {
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			id := seat.ID
			n := 0
			return workerFunc(func(ctx context.Context) error {
				n++
				if id == 0 && n == 3 {
					if deaf {
						<-release // where no cancellation reaches
						return nil
					}
					<-ctx.Done()
					return ctx.Err()
				}
				time.Sleep(time.Millisecond)
				return nil
			}), nil
		},
	}
}

// A client that finishes nothing for StallTimeout ends the run as failed,
// named, with what was measured kept.
func TestStalledClientFailsTheRun(t *testing.T) {
	c := cfg()
	c.Threads, c.Duration, c.StallTimeout = 3, time.Minute, 300*time.Millisecond
	c.ReportInterval = 50 * time.Millisecond
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, counterTable(t, ""), stuckAfter(false, nil), nil, quiet)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the run took %v with a stuck client", took)
	}
	var se *runner.StallError
	if out.Status != result.StatusFailed || !errors.As(out.Err, &se) {
		t.Fatalf("status %s (%v), want failed with a StallError", out.Status, out.Err)
	}
	if len(se.Stalls) != 1 || se.Stalls[0].Client != 0 || !strings.Contains(out.Err.Error(), "client 0 finished nothing for 300ms") {
		t.Fatalf("stalls %+v (%v), want client 0 alone", se.Stalls, out.Err)
	}
	if out.Summary.Events == 0 {
		t.Fatal("the other clients' events were lost")
	}
}

// A client that does not return when the run ends is abandoned and named,
// and the run is not ok, even with the stall check off.
func TestClientThatNeverReturnsIsNotOK(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := cfg()
	c.Threads, c.Duration = 2, 500*time.Millisecond
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, counterTable(t, ""), stuckAfter(true, release), nil, quiet)
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the run took %v", took)
	}
	if out.Status != result.StatusFailed || len(out.Stuck) != 1 || out.Stuck[0].Client != 0 {
		t.Fatalf("status %s (%v), stuck %+v; want failed, client 0 stuck", out.Status, out.Err, out.Stuck)
	}
	if !strings.Contains(out.Err.Error(), "client 0 did not return") {
		t.Fatalf("error %q does not name the client", out.Err)
	}
}

// The statement a stuck client waits for is named, from its connection.
func TestStalledClientNamesItsStatement(t *testing.T) {
	raw := os.Getenv("DBMARK_TEST_POSTGRES")
	if raw == "" {
		t.Skip("DBMARK_TEST_POSTGRES not set (make test starts the servers)")
	}
	c := cfg()
	c.Threads, c.Duration, c.StallTimeout = 2, time.Minute, 400*time.Millisecond
	c.ReportInterval = 50 * time.Millisecond
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			id, conn := seat.ID, seat.Conn
			return workerFunc(func(ctx context.Context) error {
				if id == 1 {
					return conn.Exec(ctx, "SELECT pg_sleep(30)")
				}
				return conn.Exec(ctx, "SELECT 1")
			}), nil
		},
	}
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, open(t, raw), load, nil, quiet)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the run took %v: the stuck statement was not cancelled", took)
	}
	var se *runner.StallError
	if !errors.As(out.Err, &se) || len(se.Stalls) != 1 || se.Stalls[0].Client != 1 || se.Stalls[0].Statement != "SELECT pg_sleep(30)" {
		t.Fatalf("%s: %v; want client 1 named with its statement", out.Status, out.Err)
	}
	if len(out.Stuck) != 0 {
		t.Fatalf("clients %+v did not return after the cancel", out.Stuck)
	}
}
