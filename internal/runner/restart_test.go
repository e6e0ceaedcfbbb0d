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
// time as degraded, with the reconnects counted, each client's outage
// named and the wait it lived through in the summary. A clean run on the
// same server before it stays ok. The TLS case runs on the server the
// plain one restarted, which is up again by then: one server an engine,
// as starting one takes seconds.
func TestServerRestartMidRun(t *testing.T) {
	pg, my := testsrv.Lazy(t, testsrv.Postgres), testsrv.Lazy(t, testsrv.MariaDB)
	for _, c := range []struct {
		name  string
		srv   func(testing.TB) *testsrv.Server
		open  target.Opener
		sleep string
		tls   bool
	}{
		{"postgres", pg, postgres.Open, "SELECT pg_sleep(0.005)", false},
		{"postgres-tls", pg, postgres.Open, "SELECT pg_sleep(0.005)", true},
		{"mariadb", my, mysql.Open, "SELECT SLEEP(0.005)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := c.srv(t)
			raw := srv.TCP
			if c.tls {
				raw = srv.TLS
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			tg, err := c.open(context.Background(), u, target.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			cleanRun(t, tg, c.sleep)
			restartMidRun(t, tg, srv, c.sleep)
		})
	}
}

// sleepLoad runs stmt as its event, calling ok after each that ended well.
func sleepLoad(stmt string, ok func(id int)) *workload.Load {
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			id, conn := seat.ID, seat.Conn
			return workerFunc(func(ctx context.Context) error {
				if err := conn.Exec(ctx, stmt); err != nil {
					return err
				}
				ok(id)
				return nil
			}), nil
		},
	}
}

// cleanRun is a short run that loses nothing: ok, with no outage.
func cleanRun(t *testing.T, tg target.Target, stmt string) {
	cfg := runner.Config{Threads: 2, Duration: time.Second, MaxTries: 1, Percentiles: []float64{50}}
	out := sqlclient.Run(context.Background(), cfg, tg, sleepLoad(stmt, func(int) {}), nil, quiet)
	if out.Status != result.StatusOK || out.Err != nil || len(out.Summary.Disconnects) > 0 || out.Summary.ReconnectWait != nil {
		t.Errorf("a clean run: status %s (%v), disconnects %+v, reconnect wait %+v; want ok and none",
			out.Status, out.Err, out.Summary.Disconnects, out.Summary.ReconnectWait)
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
	load := sleepLoad(stmt, func(id int) {
		mu.Lock()
		lastOK[id] = time.Now()
		mu.Unlock()
	})
	cfg := runner.Config{Threads: threads, Duration: duration, MaxTries: 1, Percentiles: []float64{50}, ReconnectFor: 20 * time.Second}

	restarted := make(chan time.Time, 1)
	restartErr := make(chan error, 1)
	var killing, killed time.Time
	time.AfterFunc(killAt, func() {
		killing = time.Now()
		if err := srv.Kill(); err != nil {
			restartErr <- err
			return
		}
		killed = time.Now() // read after restarted: no race
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
	if out.Status != result.StatusDegraded || out.Err != nil {
		t.Errorf("status %s (%v), want degraded: a server back within the reconnect time is no failure, but the run lost it", out.Status, out.Err)
	}
	checkOutages(t, out, threads, out.StartedAt, killing, killed, back)
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

// checkOutages checks that each of the threads clients has its outage in
// out, from about when the server was killed to about when it was back,
// and that the summary's reconnect wait covers it. A loaded machine
// delays a client's attempt and its reconnect: the bounds are loose.
func checkOutages(t *testing.T, out *runner.Outcome, threads int, start, killing, killed, back time.Time) {
	t.Helper()
	const slack = 1500 * time.Millisecond
	rel := func(tm time.Time) float64 { return tm.Sub(start).Seconds() }
	killedS, backS, outage := rel(killed), rel(back), back.Sub(killed).Seconds()
	s := out.Summary
	first := map[int]result.Disconnect{}
	last := map[int]result.Disconnect{}
	for _, d := range s.Disconnects {
		if _, ok := first[d.Client]; !ok {
			first[d.Client] = d
		}
		last[d.Client] = d
	}
	for id := range threads {
		f, ok := first[id]
		if !ok {
			t.Errorf("client %d: no outage recorded (%+v)", id, s.Disconnects)
			continue
		}
		l := last[id]
		if !l.Back {
			t.Errorf("client %d: its outage %+v never ended, but it went on after the restart", id, l)
			continue
		}
		// Its failed attempt began before the kill (in flight then) or
		// after it (then it failed at once), and before the restart.
		if f.StartS < rel(killing)-slack.Seconds() || f.StartS > backS {
			t.Errorf("client %d: outage from %.3f s, want between the kill at %.3f s and the restart at %.3f s", id, f.StartS, killedS, backS)
		}
		// Connected again after the server was back (it may answer a
		// moment before Start returns), and soon after on a loaded machine.
		if l.BackS < backS-slack.Seconds() || l.BackS > backS+5 {
			t.Errorf("client %d: back at %.3f s, want about when the server was, %.3f s", id, l.BackS, backS)
		}
		if d := l.BackS - f.StartS; d < outage-slack.Seconds() {
			t.Errorf("client %d: disconnected %.3f s, want about the %.3f s the server was down", id, d, outage)
		}
		if l.WaitS < l.DisconnectedS-0.001 {
			t.Errorf("client %d: waited %.3f s, less than its outage %+v", id, l.WaitS, l)
		}
	}
	if s.ReconnectWait == nil || s.ReconnectWait.MaxMS < (outage-slack.Seconds())*1000 {
		t.Errorf("reconnect wait %+v: its maximum must cover the %.3f s outage", s.ReconnectWait, outage)
	} else if s.LatencyWithReconnects == nil || s.LatencyWithReconnects.MaxMS < 0.99*s.ReconnectWait.MaxMS {
		t.Errorf("latency with reconnects %+v: its maximum must be the longest wait, %.1f ms", s.LatencyWithReconnects, s.ReconnectWait.MaxMS)
	}
	if s.Latency != nil && s.Latency.MaxMS >= 0.99*s.ReconnectWait.MaxMS {
		t.Errorf("the events' latency %.1f ms holds the wait: it must stay that of the events that ran", s.Latency.MaxMS)
	}
	t.Logf("killed %.3f s, back %.3f s; outages %+v; reconnect wait %+v", killedS, backS, s.Disconnects, s.ReconnectWait)
}
