package targettest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
)

// The tests here hold dbmark's promise that N clients put N statements in
// flight: each client is a goroutine with a target.Conn of its own, as the
// runner's workers are. Every one of them is bounded in time; a client
// that hangs fails the test instead of stalling the suite.

// hangGrace is how long past its limit a test's body may run before it is
// declared hung: enough for a loaded machine to deliver a cancellation.
const hangGrace = 10 * time.Second

// within runs fn on a goroutine of its own with a context that ends after
// limit, and fails t if fn has not returned hangGrace after that. fn
// reports with t.Errorf (t.Fatal belongs on t's own goroutine; an
// engine's callback that calls it anyway ends only fn's goroutine, which
// within sees return); after fn returns, a failure ends the test.
func within(t *testing.T, limit time.Duration, what string, fn func(ctx context.Context)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	select {
	case <-done:
	case <-time.After(limit + hangGrace):
		t.Fatalf("%s: still running %v after its %v limit ended: hung", what, hangGrace, limit)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// connectN opens n connections; they are closed when the test ends.
func connectN(ctx context.Context, t *testing.T, tg target.Target, n int) ([]target.Conn, error) {
	conns := make([]target.Conn, n)
	for i := range conns {
		c, err := tg.Connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("connect %d of %d: %w", i+1, n, err)
		}
		conns[i] = c
		t.Cleanup(func() { c.Close() })
	}
	return conns, nil
}

// clientsWaitAtOnce: 8 clients each run a 0.2 s server-side sleep twice.
// Statements in flight at once end in about 0.4 s; one at a time would
// take 3.2 s. The limit leaves a loaded machine three times the ideal.
func clientsWaitAtOnce(t *testing.T, tg target.Target, e Engine) {
	if e.SleepComputes != "" {
		t.Skip(e.SleepComputes)
	}
	const clients, rounds, sleep, limit = 8, 2, 0.2, 1200 * time.Millisecond
	within(t, 30*time.Second, "8 clients sleeping on the server", func(ctx context.Context) {
		conns, err := connectN(ctx, t, tg, clients)
		if err != nil {
			t.Error(err)
			return
		}
		sql := e.SleepSQL(sleep)
		took := make([]time.Duration, clients)
		var wg sync.WaitGroup
		start := time.Now()
		for i, c := range conns {
			wg.Go(func() {
				for r := range rounds {
					if err := c.Exec(ctx, sql); err != nil {
						t.Errorf("client %d, round %d: %v", i, r, err)
						return
					}
				}
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		wall := time.Since(start)
		t.Logf("%d clients x %d sleeps of %vs: %v wall (ideal %v, one at a time %v); clients ended at %v",
			clients, rounds, sleep, wall.Round(time.Millisecond), time.Duration(rounds*sleep*float64(time.Second)),
			time.Duration(clients*rounds*sleep*float64(time.Second)), roundAll(took))
		if wall > limit {
			t.Errorf("%d clients x %d server sleeps of %vs took %v, want under %v: the clients' statements were not all in flight at once",
				clients, rounds, sleep, wall.Round(time.Millisecond), limit)
		}
	})
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// littlesLaw: in a closed loop, the mean number of statements in flight
// is the event rate times the mean latency (Little's law). With each
// latency timed by the client around its statement, 8 clients that each
// always have one statement in flight make it 8; time a client spends
// outside its statements (work left over from one statement and done
// before the next, a wait for a shared thread or socket between them)
// makes it fewer. Over a window of 2 s, a statement still running at its
// end counts up to the end only, so one slow statement at the end does
// not stretch the window for the others.
func littlesLaw(t *testing.T, tg target.Target) {
	const clients, run = 8, 2 * time.Second
	within(t, run+30*time.Second, "8 clients in a closed loop", func(ctx context.Context) {
		conns, err := connectN(ctx, t, tg, clients)
		if err != nil {
			t.Error(err)
			return
		}
		stmts := make([]target.Stmt, clients)
		for i, c := range conns {
			st, err := c.Prepare(ctx, "SELECT 1")
			if err != nil {
				t.Errorf("prepare: %v", err)
				return
			}
			defer st.Close()
			stmts[i] = st
		}
		events := make([]int64, clients)
		busy := make([]time.Duration, clients)
		var wg sync.WaitGroup
		start := time.Now()
		end := start.Add(run)
		for i, st := range stmts {
			wg.Go(func() {
				for {
					t0 := time.Now()
					if !t0.Before(end) {
						return
					}
					if _, err := st.Run(ctx, nil); err != nil {
						t.Errorf("client %d: %v", i, err)
						return
					}
					t1 := time.Now()
					if t1.After(end) {
						t1 = end
					}
					busy[i] += t1.Sub(t0)
					events[i]++
				}
			})
		}
		wg.Wait()
		var n int64
		var lat time.Duration
		for i := range clients {
			n += events[i]
			lat += busy[i]
		}
		if n == 0 {
			t.Errorf("no statement completed")
			return
		}
		rate := float64(n) / run.Seconds()
		mean := lat.Seconds() / float64(n)
		inFlight := rate * mean
		t.Logf("%d clients: %d events in %v, %.0f/s x mean latency %.3f ms = %.2f in flight (want %d +- 10%%); per client %v",
			clients, n, run, rate, mean*1000, inFlight, clients, events)
		if inFlight < 0.9*clients || inFlight > 1.1*clients {
			t.Errorf("events/s x mean latency = %.2f, want %d +- 10%%: the clients did not each keep a statement in flight", inFlight, clients)
		}
	})
}

// connOutlivesItsContexts: a connection used under a context that has
// since ended still works under a new one (the end of a context
// interrupts the statement it governs, not the connection's future).
func connOutlivesItsContexts(t *testing.T, tg target.Target) {
	within(t, 20*time.Second, "a connection after its context ended", func(ctx context.Context) {
		c, err := tg.Connect(ctx)
		if err != nil {
			t.Errorf("connect: %v", err)
			return
		}
		defer c.Close()
		first, cancel := context.WithCancel(ctx)
		defer cancel()
		if v, _, err := c.QueryRow(first, "SELECT 1"); err != nil || v != "1" {
			t.Errorf("SELECT 1 = %q, %v", v, err)
		}
		st, err := c.Prepare(first, "SELECT 3")
		if err != nil {
			t.Errorf("prepare SELECT 3: %v", err)
			return
		}
		defer st.Close()
		if n, err := st.Run(first, nil); err != nil || n != 1 {
			t.Errorf("prepared SELECT 3 = %d rows, %v", n, err)
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
		if v, _, err := c.QueryRow(ctx, "SELECT 2"); err != nil || v != "2" {
			t.Errorf("SELECT 2 under a new context, after the first one ended = %q, %v; want 2", v, err)
		}
		if n, err := st.Run(ctx, nil); err != nil || n != 1 {
			t.Errorf("the statement prepared under the first context, run under a new one = %d rows, %v; want 1", n, err)
		}
	})
}

// killedSession: the session of one connection ended by the server
// (KillSQL from another connection, as an administrator or the
// out-of-memory killer would) makes that connection's next statement fail
// as reconnect, promptly; a new connection then works.
func killedSession(t *testing.T, tg target.Target, e Engine) {
	within(t, 20*time.Second, "a killed session", func(ctx context.Context) {
		conns, err := connectN(ctx, t, tg, 2)
		if err != nil {
			t.Error(err)
			return
		}
		victim, admin := conns[0], conns[1]
		id, _, err := victim.QueryRow(ctx, e.BackendIDSQL)
		if err != nil {
			t.Errorf("%s: %v", e.BackendIDSQL, err)
			return
		}
		if err := admin.Exec(ctx, e.KillSQL(id)); err != nil {
			t.Errorf("%s: %v", e.KillSQL(id), err)
			return
		}
		time.Sleep(100 * time.Millisecond)
		_, _, err = victim.QueryRow(ctx, "SELECT 1")
		if err == nil {
			t.Errorf("query on a killed session succeeded")
			return
		}
		if info := tg.Classify(err); info.Class != target.Reconnect {
			t.Errorf("Classify(killed session) = %v %q (%v); want reconnect", info.Class, info.Code, err)
			return
		}
		fresh, err := tg.Connect(ctx)
		if err != nil {
			t.Errorf("connect after a session was killed: %v", err)
			return
		}
		defer fresh.Close()
		if v, _, err := fresh.QueryRow(ctx, "SELECT 1"); err != nil || v != "1" {
			t.Errorf("SELECT 1 on a new connection after a session was killed = %q, %v", v, err)
		}
	})
}

// noticeThenClose: the server sends a notice (or a first result) and then
// ends the session, by the statement itself or killed from another
// connection while it waits. The statement must fail as reconnect, and
// so must the next one on that connection; neither may hang.
func noticeThenClose(t *testing.T, tg target.Target, e Engine) {
	check := func(ctx context.Context, victim target.Conn, err error, what string) {
		if err == nil {
			t.Errorf("%s: the statement succeeded", what)
			return
		}
		if info := tg.Classify(err); info.Class != target.Reconnect {
			t.Errorf("%s: Classify = %v %q (%v); want reconnect", what, info.Class, info.Code, err)
		}
		_, _, err = victim.QueryRow(ctx, "SELECT 1")
		if err == nil {
			t.Errorf("%s: the next statement on the closed session succeeded", what)
		} else if info := tg.Classify(err); info.Class != target.Reconnect {
			t.Errorf("%s: the next statement: Classify = %v %q (%v); want reconnect", what, info.Class, info.Code, err)
		}
	}
	if e.NoticeThenCloseSQL != "" {
		t.Run("ByItself", func(t *testing.T) {
			within(t, 15*time.Second, "a notice then the session's end", func(ctx context.Context) {
				victim, err := tg.Connect(ctx)
				if err != nil {
					t.Errorf("connect: %v", err)
					return
				}
				defer victim.Close()
				check(ctx, victim, victim.Exec(ctx, e.NoticeThenCloseSQL), e.NoticeThenCloseSQL)
			})
		})
	}
	if e.NoticeThenSleepSQL != nil && e.KillSQL != nil {
		t.Run("KilledWhileWaiting", func(t *testing.T) {
			within(t, 15*time.Second, "a notice then the session killed", func(ctx context.Context) {
				conns, err := connectN(ctx, t, tg, 2)
				if err != nil {
					t.Error(err)
					return
				}
				victim, admin := conns[0], conns[1]
				id, _, err := victim.QueryRow(ctx, e.BackendIDSQL)
				if err != nil {
					t.Errorf("%s: %v", e.BackendIDSQL, err)
					return
				}
				killed := make(chan error, 1)
				time.AfterFunc(300*time.Millisecond, func() { killed <- admin.Exec(ctx, e.KillSQL(id)) })
				start := time.Now()
				sql := e.NoticeThenSleepSQL(5)
				err = victim.Exec(ctx, sql)
				if kerr := <-killed; kerr != nil {
					t.Errorf("%s: %v", e.KillSQL(id), kerr)
					return
				}
				if took := time.Since(start); took > 3*time.Second {
					t.Errorf("%s: the statement ended %v after it started, want soon after its session was killed at 0.3 s", sql, took.Round(time.Millisecond))
				}
				check(ctx, victim, err, sql)
			})
		})
	}
}

// serverRestart: 4 clients loop a statement on a server of the test's
// own, which is killed (PostgreSQL's immediate shutdown, SIGKILL for
// MariaDB) and started again 1 s later. Each client, on a reconnect-class
// error, reconnects with a bounded back-off and goes on; after the
// restart all 4 must make progress again, and all must end when told.
// How long the server stays down does not matter to what is checked: the
// killed server's connections are dead however soon it is back, so each
// client meets the loss on its next statement, and one that tries while
// the server is down is refused and backs off.
func serverRestart(t *testing.T, e Engine) {
	tg, srv := e.OwnServer(t)
	t.Cleanup(func() { tg.Close() })
	const (
		clients      = 4
		down         = time.Second
		reconnectFor = 30 * time.Second // a client gives up reconnecting after this
		progress     = 5                // statements each client must finish after the restart
	)
	sql := e.SleepSQL(0.005)
	var (
		done       [clients]atomic.Int64
		reconnects [clients]atomic.Int64
		lastErr    [clients]atomic.Value // string: the client's last error, for a failure message
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	runCtx, endRun := context.WithCancel(ctx)
	defer endRun()
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			errs[i] = restartClient(runCtx, tg, sql, reconnectFor, &done[i], &reconnects[i], &lastErr[i])
		})
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	state := func() string {
		var b strings.Builder
		for i := range clients {
			le, _ := lastErr[i].Load().(string)
			fmt.Fprintf(&b, "\n  client %d: %d statements, %d reconnects, last error: %s", i, done[i].Load(), reconnects[i].Load(), le)
		}
		return b.String()
	}
	// waitAll waits until every client has finished n[i] statements.
	waitAll := func(n [clients]int64, limit time.Duration) bool {
		deadline := time.Now().Add(limit)
		for time.Now().Before(deadline) {
			all := true
			for i := range clients {
				all = all && done[i].Load() >= n[i]
			}
			if all {
				return true
			}
			select {
			case <-returned:
				return false
			case <-time.After(20 * time.Millisecond):
			}
		}
		return false
	}
	// fail ends the clients and the test, waiting a bounded time for them.
	fail := func(format string, args ...any) {
		t.Helper()
		endRun()
		select {
		case <-returned:
		case <-time.After(hangGrace):
		}
		t.Fatalf(format+"%s", append(args, state())...)
	}

	if !waitAll([clients]int64{progress, progress, progress, progress}, 20*time.Second) {
		fail("the clients did not get going before the restart:")
	}
	if err := srv.Kill(); err != nil {
		fail("killing the server: %v", err)
	}
	time.Sleep(down)
	if err := srv.Start(); err != nil {
		fail("starting the server again: %v", err)
	}
	restarted := time.Now()
	var want [clients]int64
	for i := range clients {
		want[i] = done[i].Load() + progress
	}
	if !waitAll(want, reconnectFor) {
		fail("%v after the server came back, not every client finished %d more statements:", time.Since(restarted).Round(time.Millisecond), progress)
	}
	t.Logf("every client going again %v after the server came back", time.Since(restarted).Round(time.Millisecond))
	endRun()
	select {
	case <-returned:
	case <-time.After(hangGrace):
		t.Fatalf("clients still running %v after they were told to end: hung%s", hangGrace, state())
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	for i := range clients {
		if reconnects[i].Load() == 0 {
			t.Errorf("client %d never reconnected, though its server was killed", i)
		}
	}
	if t.Failed() {
		t.Log(state())
	}
}

// restartClient runs sql in a loop until ctx ends, counting statements in
// done. A reconnect-class error closes the connection and opens a new one
// (counted in reconnects), with a back-off from 50 ms to 1 s while the
// server refuses, for at most reconnectFor; any other error ends it.
func restartClient(ctx context.Context, tg target.Target, sql string, reconnectFor time.Duration, done, reconnects *atomic.Int64, lastErr *atomic.Value) error {
	var (
		c  target.Conn
		st target.Stmt
	)
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	var lostAt time.Time // zero while connected
	backoff := 50 * time.Millisecond
	drop := func(err error) {
		lastErr.Store(err.Error())
		if c != nil {
			c.Close()
			c, st = nil, nil
		}
		if lostAt.IsZero() {
			lostAt = time.Now()
		}
	}
	for ctx.Err() == nil {
		if c == nil {
			if !lostAt.IsZero() && time.Since(lostAt) > reconnectFor {
				return fmt.Errorf("could not reconnect for %v: %s", reconnectFor, lastErr.Load())
			}
			cc, err := tg.Connect(ctx)
			if err == nil {
				var s target.Stmt
				if s, err = cc.Prepare(ctx, sql); err == nil {
					c, st = cc, s
					if !lostAt.IsZero() {
						reconnects.Add(1)
					}
					lostAt, backoff = time.Time{}, 50*time.Millisecond
					continue
				}
				cc.Close()
			}
			if ctx.Err() != nil {
				return nil
			}
			// While the server is down or starting, connecting fails in
			// ways that are not all classed reconnect (refused, starting
			// up): any error is retried here, for a bounded time.
			drop(err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		_, err := st.Run(ctx, nil)
		if err == nil {
			done.Add(1)
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if info := tg.Classify(err); info.Class != target.Reconnect {
			return fmt.Errorf("a statement failed with a %v error (%s): %v; want reconnect while the server restarts", info.Class, info.Code, err)
		}
		drop(err)
	}
	return nil
}
