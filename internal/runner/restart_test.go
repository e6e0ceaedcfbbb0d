package runner_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/testsrv"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// TestServerRestartMidRun kills the server under a run of 4 workers (a
// crash: PostgreSQL's immediate shutdown, SIGKILL for MariaDB) and starts
// it again 2 s later, on a server of the test's own. Every worker must
// reconnect and make progress after the restart, and the run must end on
// time as ok with the reconnects counted.
func TestServerRestartMidRun(t *testing.T) {
	for _, c := range []struct {
		name  string
		start testsrv.Starter
		open  target.Opener
		sleep string
	}{
		{"postgres", testsrv.Postgres, postgres.Open, "SELECT pg_sleep(0.005)"},
		{"mariadb", testsrv.MariaDB, mysql.Open, "SELECT SLEEP(0.005)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := testsrv.Start(t, c.start)
			u, err := url.Parse(srv.TCP)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := c.open(context.Background(), u, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			restartMidRun(t, tg, srv, c.sleep)
		})
	}
}

func restartMidRun(t *testing.T, tg target.Target, srv *testsrv.Server, stmt string) {
	const (
		threads  = 4
		duration = 9 * time.Second
		killAt   = 1500 * time.Millisecond
		down     = 2 * time.Second
	)
	var (
		mu     sync.Mutex
		lastOK = map[int]time.Time{} // worker -> when its last event ended well
	)
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			id, conn := seat.ID, seat.Conn
			return workerFunc(func(ctx context.Context) error {
				if err := conn.Exec(ctx, stmt); err != nil {
					return err
				}
				mu.Lock()
				lastOK[id] = time.Now()
				mu.Unlock()
				return nil
			}), nil
		},
	}
	cfg := runner.Config{Threads: threads, Duration: duration, MaxTries: 1, Percentiles: []float64{50}, ReconnectFor: 20 * time.Second}

	restarted := make(chan time.Time, 1)
	restartErr := make(chan error, 1)
	time.AfterFunc(killAt, func() {
		if err := srv.Kill(); err != nil {
			restartErr <- err
			return
		}
		time.Sleep(down)
		if err := srv.Start(); err != nil {
			restartErr <- err
			return
		}
		restarted <- time.Now()
	})
	done := make(chan *runner.Outcome, 1)
	start := time.Now()
	go func() { done <- sqlclient.Run(context.Background(), cfg, tg, load, nil, quiet) }()
	var out *runner.Outcome
	select {
	case out = <-done:
	case <-time.After(duration + 30*time.Second):
		t.Fatalf("the run was still going %v after it started, with a %v time limit: hung after the server restarted", time.Since(start).Round(time.Second), duration)
	}
	var back time.Time
	select {
	case back = <-restarted:
	case err := <-restartErr:
		t.Fatalf("restarting the server: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the server was not restarted")
	}
	if out.Status != result.StatusOK || out.Err != nil {
		t.Errorf("status %s (%v), want ok: a server back within the reconnect time is no failure", out.Status, out.Err)
	}
	if out.Summary.Reconnects < threads {
		t.Errorf("%d reconnects, want at least one per worker (%d)", out.Summary.Reconnects, threads)
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range threads {
		if !lastOK[id].After(back) {
			t.Errorf("worker %d: last event ended %v after the start, before the server came back at %v: it never went on",
				id, lastOK[id].Sub(start).Round(time.Millisecond), back.Sub(start).Round(time.Millisecond))
		}
	}
	t.Logf("%d events, %d reconnects, errors %v; the server was back %v after the start", out.Summary.Events, out.Summary.Reconnects, out.Summary.Errors, back.Sub(start).Round(time.Millisecond))
}
