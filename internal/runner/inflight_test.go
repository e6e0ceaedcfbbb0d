package runner_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

// serverTargets are the private servers' URLs, over each transport the
// test environment gives.
func serverTargets(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, v := range []string{"DBMARK_TEST_POSTGRES", "DBMARK_TEST_POSTGRES_SOCKET", "DBMARK_TEST_POSTGRES_TLS", "DBMARK_TEST_MYSQL", "DBMARK_TEST_MYSQL_SOCKET", "DBMARK_TEST_MYSQL_TLS"} {
		if raw := os.Getenv(v); raw != "" {
			out[v] = raw
		}
	}
	if len(out) == 0 {
		t.Skip("no DBMARK_TEST_POSTGRES* or DBMARK_TEST_MYSQL* set (make test starts the servers)")
	}
	return out
}

func sleepSQL(raw string, secs float64) string {
	if len(raw) >= 5 && raw[:5] == "mysql" {
		return fmt.Sprintf("SELECT SLEEP(%g)", secs)
	}
	return fmt.Sprintf("SELECT pg_sleep(%g)", secs)
}

// statements is a load whose every event runs sql once.
func statements(sql string) *workload.Load {
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			conn := seat.Conn
			return workerFunc(func(ctx context.Context) error { return conn.Exec(ctx, sql) }), nil
		},
	}
}

// 8 clients each running a 0.2 s server-side sleep twice finish together:
// the server's waits overlap, on every engine and transport.
func TestServerWaitsOverlap(t *testing.T) {
	for name, raw := range serverTargets(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg()
			c.Threads, c.Events, c.MaxTries = 8, 16, 1
			out := sqlclient.Run(context.Background(), c, open(t, raw), statements(sleepSQL(raw, 0.2)), nil, quiet)
			if out.Status != result.StatusOK || out.Summary.Events != 16 {
				t.Fatalf("run: %s %v, %d events", out.Status, out.Err, out.Summary.Events)
			}
			// The measured window starts once every client has connected,
			// so handshakes on a loaded machine do not count. Together:
			// 0.4 s; one at a time: 3.2 s.
			if took := out.EndedAt.Sub(out.StartedAt); took > 1500*time.Millisecond {
				t.Fatalf("16 sleeps of 0.2 s on 8 clients took %v: the clients did not wait together", took)
			}
		})
	}
}

// In a closed loop, events/s x mean latency is the number of clients
// (Little's law), within 10%, and the summary says so without a warning.
func TestLittlesLawHolds(t *testing.T) {
	for name, raw := range serverTargets(t) {
		t.Run(name, func(t *testing.T) {
			c := cfg()
			c.Threads, c.Duration, c.Warmup, c.MaxTries = 8, 2*time.Second, 300*time.Millisecond, 1
			out := sqlclient.Run(context.Background(), c, open(t, raw), statements(sleepSQL(raw, 0.01)), nil, quiet)
			if out.Status != result.StatusOK || out.Summary.Events == 0 {
				t.Fatalf("run: %s %v", out.Status, out.Err)
			}
			if got := out.Summary.Concurrency; math.Abs(got-8)/8 > 0.10 {
				t.Fatalf("events/s x mean latency = %.2f for 8 clients", got)
			}
			if len(out.Summary.Warnings) != 0 {
				t.Fatalf("warnings %q on a run that kept 8 in flight", out.Summary.Warnings)
			}
		})
	}
}

// Clients that take turns outside their timed events are found out: the
// summary warns when Little's law counts well under the clients.
func TestTakingTurnsIsWarned(t *testing.T) {
	turn := make(chan struct{}, 1)
	turn <- struct{}{}
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			return &turnTaker{turn: turn}, nil
		},
		Observe: func(w workload.Worker, _ workload.EventInfo) { w.(*turnTaker).passTurn() },
	}
	c := cfg()
	c.Threads, c.Duration = 4, time.Second
	out := sqlclient.Run(context.Background(), c, counterTable(t, ""), load, nil, quiet)
	if out.Status != result.StatusOK || out.Summary.Events == 0 {
		t.Fatalf("run: %s %v", out.Status, out.Err)
	}
	if out.Summary.Concurrency > 2 || len(out.Summary.Warnings) != 1 {
		t.Fatalf("concurrency %.2f, warnings %q; want about 1 and a warning", out.Summary.Concurrency, out.Summary.Warnings)
	}
}

// turnTaker runs its events only while it holds the one turn, which it
// takes in its first event and then hands on and waits for again between
// events, where no latency is timed (Load.Observe).
type turnTaker struct {
	turn chan struct{}
	held bool
}

func (w *turnTaker) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	if !w.held {
		<-w.turn
		w.held = true
	}
	time.Sleep(2 * time.Millisecond)
	return 0, nil
}

func (w *turnTaker) passTurn() {
	w.turn <- struct{}{}
	<-w.turn
}

func (w *turnTaker) Close() error {
	if w.held {
		w.turn <- struct{}{}
	}
	return nil
}

// An open loop whose rate the clients cannot keep says so.
func TestRateNotReachedIsWarned(t *testing.T) {
	c := cfg()
	c.Threads, c.Duration, c.Rate = 2, time.Second, 1000
	out := sqlclient.Run(context.Background(), c, counterTable(t, ""), slowIncrement(20*time.Millisecond), nil, quiet)
	if out.Status != result.StatusOK || out.Summary.Events == 0 {
		t.Fatalf("run: %s %v", out.Status, out.Err)
	}
	if len(out.Summary.Warnings) != 1 || !strings.Contains(out.Summary.Warnings[0], "--rate 1000/s was not reached") {
		t.Fatalf("warnings %q at %.0f/s of 1000/s asked", out.Summary.Warnings, out.Summary.EventsPerS)
	}
	c.Rate = 20 // well within the clients' reach
	out = sqlclient.Run(context.Background(), c, counterTable(t, ""), slowIncrement(time.Millisecond), nil, quiet)
	if len(out.Summary.Warnings) != 0 {
		t.Fatalf("warnings %q at %.0f/s of 20/s asked", out.Summary.Warnings, out.Summary.EventsPerS)
	}
}

// Little's law counts the events' time inside the measured window only:
// an event under way when the warm-up ends, or when the time limit comes,
// counts with its part inside, not its whole latency. Each event here is
// 300 ms long, so on a 1 s window after a 250 ms warm-up the edges alone
// would add a fifth to events/s x mean latency (1.2 clients for 1).
func TestInFlightCountsTheWindowOnly(t *testing.T) {
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				time.Sleep(300 * time.Millisecond)
				return nil
			}), nil
		},
	}
	c := cfg()
	c.Duration, c.Warmup = time.Second, 250*time.Millisecond
	out := sqlclient.Run(context.Background(), c, counterTable(t, ""), load, nil, quiet)
	if out.Status != result.StatusOK || out.Summary.Events == 0 {
		t.Fatalf("run: %s %v", out.Status, out.Err)
	}
	// The client is never outside an event but for the runner's own
	// microseconds between them.
	if got := out.Summary.Concurrency; got < 0.97 || got > 1.01 {
		t.Fatalf("effective concurrency %.3f for one client always inside an event", got)
	}
}
