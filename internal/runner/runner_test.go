package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// counterTable makes a SQLite database with one row to update.
func counterTable(t *testing.T, params string) target.Target {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.db")
	u := &url.URL{Scheme: "sqlite", Path: path, RawQuery: params}
	tg, err := sqlite.Open(context.Background(), u, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range []string{"CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", "INSERT INTO counter VALUES (1, 0)"} {
		if err := c.Exec(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	return tg
}

// script is a load whose every event runs the given statements in a
// transaction on the worker's own real connection.
func script(stmts func(n int64) []string) *workload.Load {
	var n atomic.Int64
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}, {Name: "stmt", Kind: metrics.Write}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			conn, h := seat.Conn, seat.H
			return &scriptWorker{conn: conn, h: h, stmts: stmts, n: &n}, nil
		},
	}
}

type scriptWorker struct {
	conn  target.Conn
	h     *metrics.Handle
	stmts func(n int64) []string
	n     *atomic.Int64
}

func (w *scriptWorker) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	for _, s := range w.stmts(w.n.Add(1)) {
		start := time.Now()
		if err := w.conn.Exec(ctx, s); err != nil {
			return 0, err
		}
		w.h.Record(1, time.Since(start))
	}
	return 0, nil
}

func (w *scriptWorker) Close() error { return nil }

func increment(int64) []string {
	return []string{"BEGIN IMMEDIATE", "UPDATE counter SET n = n + 1 WHERE id = 1", "COMMIT"}
}

func cfg() runner.Config {
	return runner.Config{Threads: 1, Duration: 0, MaxTries: 10, Percentiles: []float64{50, 99}, Seed: 1}
}

func counterValue(t *testing.T, tg target.Target) string {
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, _, err := c.QueryRow(context.Background(), "SELECT n FROM counter")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEventLimitIsExact(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Threads, c.Events = 3, 500
	out := sqlclient.Run(context.Background(), c, tg, script(increment), nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	if out.Summary.Events != 500 {
		t.Fatalf("events = %d, want 500", out.Summary.Events)
	}
	if got := counterValue(t, tg); got != "500" {
		t.Fatalf("counter = %s after 500 committed events", got)
	}
	if out.Summary.Queries.Write != 1500 {
		t.Fatalf("write queries = %d, want 1500", out.Summary.Queries.Write)
	}
	if out.Summary.Latency == nil || len(out.Summary.Latency.Percentiles) != 2 {
		t.Fatalf("latency summary missing: %+v", out.Summary.Latency)
	}
	if len(out.Hists) == 0 {
		t.Fatal("no encoded histograms")
	}
	h, err := out.Hists[0].Decode()
	if err != nil || h.TotalCount() == 0 {
		t.Fatalf("histogram does not decode: %v", err)
	}
}

// lockedCounter is a counter table without a busy wait, whose write lock
// the returned connection holds: a second writer fails at once with
// SQLITE_BUSY until it commits or rolls back.
func lockedCounter(t *testing.T) (target.Target, target.Conn) {
	t.Helper()
	tg := counterTable(t, "_busy_timeout=0")
	holder, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close() })
	if err := holder.Exec(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return tg, holder
}

func TestBusyIsRetriedAndCounted(t *testing.T) {
	tg, holder := lockedCounter(t)
	time.AfterFunc(300*time.Millisecond, func() { holder.Exec(context.Background(), "COMMIT") })
	c := cfg()
	c.Duration = 600 * time.Millisecond
	c.MaxTries = 3
	out := sqlclient.Run(context.Background(), c, tg, script(increment), nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	s := out.Summary
	var busy int64
	for _, e := range s.Errors {
		if e.Code == "SQLITE_BUSY" && e.Class == "retryable" {
			busy = e.Count
		}
	}
	if busy == 0 || s.Retries == 0 {
		t.Fatalf("busy errors %d, retries %d: want both > 0", busy, s.Retries)
	}
	// Each failed event used MaxTries tries, so 2 of every 3 errors were retried.
	if s.Retries > busy {
		t.Fatalf("retries %d > errors %d", s.Retries, busy)
	}
	// Committed in the window or in the drain after the time limit.
	if got := counterValue(t, tg); got != fmt.Sprint(s.Events+s.DrainEvents) {
		t.Fatalf("counter %s, committed events %d and %d after the limit: throughput must count commits only", got, s.Events, s.DrainEvents)
	}
	if s.Events == 0 {
		t.Fatal("no event committed after the lock was released")
	}
}

// TestVerboseErrorsTellEachTry: with VerboseErrors every retried and
// failed try is logged with its client and try, in pgbench's words.
func TestVerboseErrorsTellEachTry(t *testing.T) {
	tg, holder := lockedCounter(t)
	defer holder.Exec(context.Background(), "COMMIT")
	c := cfg()
	c.Events, c.MaxTries, c.VerboseErrors = 2, 3, true
	c.Duration = 0
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	done := make(chan *runner.Outcome)
	go func() { done <- sqlclient.Run(context.Background(), c, tg, script(increment), nil, log) }()
	time.Sleep(300 * time.Millisecond)
	holder.Exec(context.Background(), "COMMIT")
	out := <-done
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	got := buf.String()
	for _, want := range []string{
		`client 0 repeats the transaction after the error (try 1/3): `,
		`client 0 repeats the transaction after the error (try 2/3): `,
		`client 0 ends the failed transaction (try 3/3): `,
		"database is locked",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in the log:\n%s", want, got)
		}
	}
	// Without it, nothing is logged.
	buf.Reset()
	c.VerboseErrors = false
	tg2, holder2 := lockedCounter(t)
	defer holder2.Exec(context.Background(), "COMMIT")
	c.Events, c.Duration = 0, 200*time.Millisecond
	if out := sqlclient.Run(context.Background(), c, tg2, script(increment), nil, log); out.Summary.Retries == 0 {
		t.Fatalf("no retries without VerboseErrors: %+v", out.Summary)
	}
	if strings.Contains(buf.String(), "repeats the transaction") {
		t.Fatalf("logged without VerboseErrors:\n%s", buf.String())
	}
}

func TestFatalErrorEndsRunAndKeepsPartialResult(t *testing.T) {
	tg := counterTable(t, "")
	load := script(func(n int64) []string {
		if n > 50 {
			return []string{"UPDATE no_such_table SET x = 1"}
		}
		return increment(n)
	})
	c := cfg()
	c.Duration = 10 * time.Second
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
	if time.Since(start) > 5*time.Second {
		t.Fatal("a fatal error did not end the run")
	}
	if out.Status != result.StatusFailed || out.Err == nil {
		t.Fatalf("status %s err %v; want failed", out.Status, out.Err)
	}
	if out.Summary.Events != 50 {
		t.Fatalf("partial result has %d events, want 50", out.Summary.Events)
	}
}

func TestIgnoredErrorsAreCountedAndTheRunGoesOn(t *testing.T) {
	tg := counterTable(t, "")
	load := script(func(n int64) []string {
		if n%2 == 0 {
			return []string{"UPDATE no_such_table SET x = 1"}
		}
		return increment(n)
	})
	c := cfg()
	c.Events = 100
	c.IgnoreErrors = []string{"all"}
	out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	if out.Summary.ErrorsTotal == 0 || out.Summary.Events == 0 {
		t.Fatalf("errors %d events %d; want both > 0", out.Summary.ErrorsTotal, out.Summary.Events)
	}
	// Counted and gone on after: ignored, not fatal.
	for _, e := range out.Summary.Errors {
		if e.Class != "ignored" {
			t.Errorf("an ignored error is labelled %s (%s)", e.Class, e.Code)
		}
	}
}

// TestIgnoredErrorRestartsTheEvent: as sysbench does, an ignored error
// starts the event again with a new transaction, and the event's latency
// runs from its first start. The time spent before the error (here a slow
// query, on a server a lock wait) is then in a latency, and Little's law
// finds the client in flight; ended there, half the run went unseen.
func TestIgnoredErrorRestartsTheEvent(t *testing.T) {
	tg := counterTable(t, "")
	const slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c"
	load := script(func(n int64) []string {
		if n%2 == 1 {
			return []string{slow, "UPDATE no_such_table SET x = 1"}
		}
		return increment(n)
	})
	c := cfg()
	c.Duration = 1500 * time.Millisecond
	c.IgnoreErrors = []string{"all"}
	out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	s := out.Summary
	if s.ErrorsTotal == 0 || s.Events == 0 {
		t.Fatalf("errors %d events %d; want both > 0", s.ErrorsTotal, s.Events)
	}
	// Every committed event was restarted once: errors and events match
	// (the last restart may be cut off by the time limit).
	if d := s.ErrorsTotal - s.Events; d < 0 || d > 1 {
		t.Errorf("%d ignored errors for %d events: each event should have restarted once", s.ErrorsTotal, s.Events)
	}
	if s.Concurrency < 0.8 || len(s.Warnings) > 0 {
		t.Errorf("one client in flight %.2f of the run, warnings %q", s.Concurrency, s.Warnings)
	}
	if s.Retries != 0 {
		t.Errorf("a restart counted as %d retries", s.Retries)
	}
}

func TestInterruptKeepsWhatWasMeasured(t *testing.T) {
	tg := counterTable(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	c := cfg()
	c.Threads, c.Duration = 2, time.Minute
	start := time.Now()
	out := sqlclient.Run(ctx, c, tg, script(increment), nil, quiet)
	// Far from the minute's limit, with room for a loaded machine and the
	// race detector.
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("interrupt took %v", took)
	}
	if out.Status != result.StatusInterrupted {
		t.Fatalf("status %s, want interrupted", out.Status)
	}
	if out.Summary.Events == 0 || out.Summary.DurationS < 0.2 || out.Summary.DurationS > 1.5 {
		t.Fatalf("events %d over %.2fs; want the events of about 0.3s", out.Summary.Events, out.Summary.DurationS)
	}
}

// slowIncrement is a load whose every event waits for pause, as a long
// statement would, and then increments the counter: an event cancelled
// halfway leaves no trace in the table.
func slowIncrement(pause time.Duration) *workload.Load {
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			conn := seat.Conn
			return &slowWorker{conn: conn, pause: pause}, nil
		},
	}
}

type slowWorker struct {
	conn  target.Conn
	pause time.Duration
}

func (w *slowWorker) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	select {
	case <-time.After(w.pause):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return 0, w.conn.Exec(ctx, "UPDATE counter SET n = n + 1 WHERE id = 1")
}

func (w *slowWorker) Close() error { return nil }

func TestTimeLimitLetsEventsUnderWayFinish(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	// Events of 0.4 s: each worker starts its third at 0.8 s, before the
	// limit, and none after it.
	c.Threads, c.Duration = 2, time.Second
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, tg, slowIncrement(400*time.Millisecond), nil, quiet)
	took := time.Since(start)
	if out.Status != result.StatusOK || out.Err != nil {
		t.Fatalf("status %s, err %v", out.Status, out.Err)
	}
	// 4 end in the window (at 0.4 and 0.8 s) and count in the rates;
	// the 2 under way at the limit finish in the drain, counted apart.
	sm := out.Summary
	if sm.Events != 4 || sm.DrainEvents != 2 || counterValue(t, tg) != "6" {
		t.Fatalf("%d events in the window and %d in the drain, counter %s; want 4 and 2 of the 6 started before the limit", sm.Events, sm.DrainEvents, counterValue(t, tg))
	}
	if sm.DurationS < 0.95 || sm.DurationS > 1.1 || sm.DrainS < 0.1 || sm.DrainS > 0.5 {
		t.Fatalf("window %.3f s, drain %.3f s; want the 1 s limit and about 0.2 s", sm.DurationS, sm.DrainS)
	}
	if got := sm.EventsPerS; got < 3.5 || got > 4.2 {
		t.Fatalf("%.2f events/s; want the window's 4 over its 1 s, undiluted by the drain", got)
	}
	// The drain, much shorter than a tick, joins the last point instead
	// of being drawn as a collapse of its own.
	if n := len(out.Series); n != 1 || out.Series[0].DurationS < 1.1 {
		t.Fatalf("series %+v; want one point over the window and the drain", out.Series)
	}
	if took < 1100*time.Millisecond || took > 1900*time.Millisecond {
		t.Fatalf("run took %v; want about 1.2 s (its last events end then)", took)
	}
}

func TestTimeLimitBoundsTheWaitForEventsUnderWay(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Duration = 500 * time.Millisecond
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, tg, slowIncrement(time.Minute), nil, quiet)
	took := time.Since(start)
	// No event ended: the run measured nothing, which is not ok.
	var none *runner.NoEventsError
	if out.Status != result.StatusFailed || !errors.As(out.Err, &none) || out.Summary.Events != 0 || counterValue(t, tg) != "0" {
		t.Fatalf("status %s (%v), %d events, counter %s; want failed for no event and the unfinished event cancelled", out.Status, out.Err, out.Summary.Events, counterValue(t, tg))
	}
	if took < 2*time.Second || took > 4*time.Second {
		t.Fatalf("run took %v; want the limit plus the 2 s the event under way may take", took)
	}
}

func TestNoRetryAfterTheTimeLimit(t *testing.T) {
	// Every try fails while the lock is held, for longer than the run.
	tg, holder := lockedCounter(t)
	defer holder.Exec(context.Background(), "ROLLBACK")
	c := cfg()
	c.Duration, c.MaxTries = 300*time.Millisecond, 1<<30
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, tg, script(increment), nil, quiet)
	took := time.Since(start)
	// Its tries failed before the limit (errors), but a transaction the
	// limit cut short counts no retries, as in pgbench: only one that
	// ended, committed or failed, does.
	// No event ended well: not ok.
	var none *runner.NoEventsError
	if out.Status != result.StatusFailed || !errors.As(out.Err, &none) || out.Summary.Events != 0 || out.Summary.ErrorsTotal == 0 || out.Summary.Retries != 0 {
		t.Fatalf("status %s (%v), %d events, %d errors, %d retries; want failed for no event, none committed, errors before the limit and no retries counted",
			out.Status, out.Err, out.Summary.Events, out.Summary.ErrorsTotal, out.Summary.Retries)
	}
	if took > time.Second {
		t.Fatalf("run took %v: the event under way went on retrying after the limit", took)
	}
}

func TestWarmupIsShownNotCounted(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Warmup, c.Duration, c.ReportInterval = 400*time.Millisecond, 600*time.Millisecond, 100*time.Millisecond
	var lines, warm int
	var durations []float64
	began := time.Now()
	out := sqlclient.Run(context.Background(), c, tg, script(increment), func(p result.Interval, _ int) {
		lines++
		if p.Warmup {
			warm++
		}
		durations = append(durations, p.DurationS)
	}, quiet)
	// A ticker drops the ticks a loaded machine misses: about 4 and 6
	// lines, fewer allowed, some of each required.
	if warm < 2 || lines-warm < 3 {
		t.Fatalf("%d lines, %d in warm-up; want about 4 and 6", lines, warm)
	}
	// The warm-up ends on a tick of the report interval: no interval of
	// almost no time may appear there (its rate would be meaningless).
	for i, d := range durations {
		if d < 0.05 {
			t.Fatalf("interval %d lasted %.4fs of a 0.1s report interval: %v", i, d, durations)
		}
	}
	// The measured span ends when the last worker's event does, which on
	// a loaded machine can be late; the 0.4 s of warm-up must be left out
	// of it whatever the end.
	wall := time.Since(began).Seconds()
	if d := out.Summary.DurationS; d < 0.55 || wall-d < 0.35 {
		t.Fatalf("measured duration %.3fs of a %.3fs run; want 0.6s or more, without the 0.4s warm-up", d, wall)
	}
	committed := counterValue(t, tg)
	if fmt.Sprint(out.Summary.Events) == committed {
		t.Fatalf("summary counts all %s events: the warm-up was counted", committed)
	}
}

// TestLongRunSeriesStaysBounded runs 50 report intervals with room for 8
// points: the series must merge its intervals and still account for every
// event and every second, with the warm-up kept apart.
func TestLongRunSeriesStaysBounded(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Warmup, c.Duration, c.ReportInterval, c.MaxPoints = 100*time.Millisecond, time.Second, 10*time.Millisecond, 4
	lines := 0
	out := sqlclient.Run(context.Background(), c, tg, script(increment), func(result.Interval, int) { lines++ }, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	// About 110; a loaded machine's ticker drops ticks (9 in 0.6 s
	// under the race detector beside other tests), but a report thinned
	// to the series' points would have at most 5.
	if lines <= c.MaxPoints+1 {
		t.Fatalf("only %d live lines in 1.1 s at 10 ms: the live report must not be thinned", lines)
	}
	if n := len(out.Series); n > c.MaxPoints+1 {
		t.Fatalf("%d series points, limit %d (+1 being filled)", n, c.MaxPoints)
	}
	var events, secs float64
	warm := true
	for i, p := range out.Series {
		if p.Warmup && !warm {
			t.Fatalf("point %d is warm-up after a measured one: %+v", i, out.Series)
		}
		warm = p.Warmup
		if !p.Warmup {
			events += p.EventsPerS * p.DurationS
			secs += p.DurationS
		}
	}
	if got, want := int64(events+0.5), out.Summary.Events+out.Summary.DrainEvents; got != want {
		t.Errorf("the merged points hold %d events, the summary %d (window and drain)", got, want)
	}
	if want := out.Summary.DurationS + out.Summary.DrainS; secs < 0.95 || math.Abs(secs-want) > 0.05 {
		t.Errorf("the measured points cover %.3f s of a 1 s run measured over %.3f s", secs, want)
	}
}

func TestRateIsOpenLoop(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Threads, c.Rate, c.Duration = 2, 400, time.Second
	out := sqlclient.Run(context.Background(), c, tg, script(increment), nil, quiet)
	s := out.Summary
	if s.EventsPerS < 300 || s.EventsPerS > 500 {
		t.Fatalf("%.0f events/s at --rate 400", s.EventsPerS)
	}
	if s.Service == nil || s.ScheduleLag == nil || s.Latency == nil {
		t.Fatalf("open loop summary lacks service time or lag: %+v", s)
	}
	if s.Latency.MeanMS < s.Service.MeanMS {
		t.Fatalf("latency from the intended start (%.3f ms) below service time (%.3f ms)", s.Latency.MeanMS, s.Service.MeanMS)
	}
}

func TestCoordinatedOmissionIsVisible(t *testing.T) {
	// One stall of 300 ms at 200 events/s: a closed loop would record one
	// slow event; the open loop charges the stall to every event scheduled
	// during it, so the tail shows it.
	tg := counterTable(t, "")
	load := script(func(n int64) []string {
		if n == 20 {
			return []string{"WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < 3000000) SELECT COUNT(*) FROM r"}
		}
		return increment(n)
	})
	c := cfg()
	c.Rate, c.Duration = 200, 3*time.Second
	out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
	s := out.Summary
	p99, _ := s.Latency.Get(99)
	svc99, _ := s.Service.Get(99)
	if s.Latency.MaxMS < 100 {
		t.Skipf("the stall took only %.0f ms on this machine", s.Latency.MaxMS)
	}
	// The events scheduled during the stall must run before the end for
	// their latency to count: a stall that outlasts most of the run (a
	// busy machine) leaves too few of them.
	if svc99 > 1500 {
		t.Skipf("the stall took %.0f ms, half the run", svc99)
	}
	if p99 < 5*svc99 || p99 < 20 {
		t.Fatalf("p99 from intended start %.2f ms vs service p99 %.2f ms: the stall is hidden", p99, svc99)
	}
}

func TestValidate(t *testing.T) {
	bad := []runner.Config{
		{Threads: 0, Duration: time.Second, MaxTries: 1},
		{Threads: 1, MaxTries: 1},
		{Threads: 1, Duration: time.Second, MaxTries: 0},
		{Threads: 1, Duration: time.Second, MaxTries: 1, Rate: -5},
		{Threads: 1, Duration: time.Second, MaxTries: 1, ReportInterval: time.Microsecond},
	}
	for i, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
}

// A load whose workers block in raw system calls (file I/O) gets a
// scheduler processor per worker for the run, and the processor count is
// put back afterwards.
func TestSyscallBoundWorkersEachHaveAProcessor(t *testing.T) {
	tg := counterTable(t, "")
	before := runtime.GOMAXPROCS(0)
	c := cfg()
	c.Threads, c.Events = 6, 60
	load := script(increment)
	load.SyscallBound = true
	var during atomic.Int64
	inner := load.NewWorker
	load.NewWorker = func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
		during.Store(int64(runtime.GOMAXPROCS(0)))
		return inner(ctx, seat)
	}
	out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
	if out.Status != result.StatusOK || out.Summary.Events != 60 {
		t.Fatalf("run: %s %v, %d events", out.Status, out.Err, out.Summary.Events)
	}
	if want := max(before, c.Threads+2); during.Load() != int64(want) || out.GoMaxProcs != want {
		t.Fatalf("GOMAXPROCS during the run %d (outcome says %d), want %d", during.Load(), out.GoMaxProcs, want)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Fatalf("GOMAXPROCS %d after the run, want %d back", after, before)
	}
}

// A SyscallBound load whose workers are released from their threads
// (Load.Held turns false) gets back the processors the run added for
// them, from the release on, and asks for them again when they are held
// again; one never released keeps them to the end.
func TestReleasedWorkersGiveBackTheirProcessors(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		name       string
		held       func(events int64) bool
		atEnd, mid func(want int) int64 // GOMAXPROCS in the last event, and at the 300th
	}{
		{"never released", func(int64) bool { return true }, func(w int) int64 { return int64(w) }, func(w int) int64 { return int64(w) }},
		{"released", func(n int64) bool { return n < 40 }, func(int) int64 { return int64(before) }, func(int) int64 { return int64(before) }},
		{"released, then held again", func(n int64) bool { return n < 40 || n >= 600 }, func(w int) int64 { return int64(w) }, func(int) int64 { return int64(before) }},
	} {
		cf := cfg()
		cf.Threads, cf.Duration = 4, 900*time.Millisecond
		var events atomic.Int64
		var last, mid atomic.Int64 // GOMAXPROCS in the last event, and in the 300th
		load := pausing(func(n int64) time.Duration {
			events.Store(n)
			p := int64(runtime.GOMAXPROCS(0))
			last.Store(p)
			if n == 300 {
				mid.Store(p)
			}
			return time.Millisecond
		})
		load.SyscallBound = true
		load.Held = func() bool { return c.held(events.Load()) }
		out := sqlclient.Run(context.Background(), cf, counterTable(t, ""), load, nil, quiet)
		if out.Status != result.StatusOK {
			t.Fatalf("%s: run: %s %v", c.name, out.Status, out.Err)
		}
		want := max(before, cf.Threads+2)
		if out.GoMaxProcs != want {
			t.Errorf("%s: GOMAXPROCS %d at the start, want %d", c.name, out.GoMaxProcs, want)
		}
		if n := events.Load(); n < 700 {
			t.Fatalf("%s: %d events in %v; the test needs 700", c.name, n, cf.Duration)
		}
		if got, w := mid.Load(), c.mid(want); got != w {
			t.Errorf("%s: GOMAXPROCS %d at the 300th event, want %d", c.name, got, w)
		}
		if got, w := last.Load(), c.atEnd(want); got != w {
			t.Errorf("%s: GOMAXPROCS %d at the last event, want %d", c.name, got, w)
		}
		if after := runtime.GOMAXPROCS(0); after != before {
			t.Fatalf("%s: GOMAXPROCS %d after the run, want %d back", c.name, after, before)
		}
	}
}

// eventFunc is a worker whose every event calls the function.
type eventFunc func()

func (f eventFunc) Event(context.Context, bool) (metrics.Op, error) { f(); return 0, nil }
func (eventFunc) Close() error                                      { return nil }

// pausing is a load whose events wait for pause(n), n counting from 1.
func pausing(pause func(n int64) time.Duration) *workload.Load {
	var n atomic.Int64
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			return workerFunc(func(ctx context.Context) error {
				time.Sleep(pause(n.Add(1)))
				return nil
			}), nil
		},
	}
}

// A drain that joins the last point joins its latencies too: the last
// point's percentiles are those of all its events, not the worst of the
// two parts, so one slow event finishing after the limit does not become
// the point's p50 and p99.
func TestDrainJoinsTheLastPointsPercentiles(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Duration = time.Second
	start := time.Now()
	out := sqlclient.Run(context.Background(), c, tg, pausing(func(n int64) time.Duration {
		if time.Since(start) > 900*time.Millisecond {
			return 300 * time.Millisecond // under way at the limit
		}
		return 2 * time.Millisecond
	}), nil, quiet)
	if out.Status != result.StatusOK || out.Summary.DrainEvents != 1 {
		t.Fatalf("status %s, %d drain events; want ok and the one slow event in the drain", out.Status, out.Summary.DrainEvents)
	}
	last := out.Series[len(out.Series)-1]
	for _, q := range last.Latency {
		if q.MS > 100 {
			t.Errorf("last point's p%g is %.1f ms: the one slow event of %d decided it", q.P, q.MS, int64(last.EventsPerS*last.DurationS))
		}
	}
}

// A run that measured no event is not ok: an open loop whose rate
// schedules none within the time, and a run whose every event failed on
// an ignored error. Each says why in one line.
func TestNoEventMeasuredIsNotOK(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Rate, c.Duration = 0.0001, time.Second
	out := sqlclient.Run(context.Background(), c, tg, script(increment), nil, quiet)
	if out.Status != result.StatusFailed || out.Summary.Events != 0 {
		t.Fatalf("--rate 0.0001 --time 1: status %s, %d events, err %v", out.Status, out.Summary.Events, out.Err)
	}
	if msg := fmt.Sprint(out.Err); !strings.Contains(msg, "--rate 0.0001") || !strings.Contains(msg, "--time 1s") || strings.Contains(msg, "\n") {
		t.Errorf("the reason names neither the rate nor the time, or is not one line: %q", msg)
	}

	c = cfg()
	c.Duration = 300 * time.Millisecond
	c.IgnoreErrors = []string{"all"}
	out = sqlclient.Run(context.Background(), c, tg, script(func(int64) []string { return []string{"UPDATE no_such_table SET x = 1"} }), nil, quiet)
	if out.Status != result.StatusFailed || out.Summary.ErrorsTotal == 0 {
		t.Fatalf("every event failed: status %s, %d errors, err %v", out.Status, out.Summary.ErrorsTotal, out.Err)
	}
	if msg := fmt.Sprint(out.Err); !strings.Contains(msg, "every event failed") || !strings.Contains(msg, fmt.Sprint(out.Summary.ErrorsTotal)) {
		t.Errorf("reason %q", msg)
	}
}

// --ignore-errors takes error codes the engines give, or all: a word that
// is none of them ignores nothing and is refused, with a hint.
func TestValidateIgnoreErrors(t *testing.T) {
	ok := runner.Config{Threads: 1, Duration: time.Second, MaxTries: 1}
	for _, codes := range [][]string{{"all"}, {"40001", "40P01"}, {"1213", "1020"}, {"SQLITE_BUSY", "SQLITE_13"}, {"EIO", "ENOSPC"}, {" 1062"}} {
		c := ok
		c.IgnoreErrors = codes
		if err := c.Validate(); err != nil {
			t.Errorf("%q refused: %v", codes, err)
		}
	}
	for _, code := range []string{"xyz", "ALL ", "sqlite_busy", "12345678", "deadlock"} {
		c := ok
		c.IgnoreErrors = []string{code}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "--ignore-errors") || !strings.Contains(err.Error(), "SQLITE_BUSY") {
			t.Errorf("%q: %v; want a refusal with a hint", code, err)
		}
	}
}

// TestFairness checks sysbench's "Threads fairness" figures: with an event
// limit split exactly between the clients, each committed its share, and
// the time inside events adds up to the clients' mean times their count.
func TestFairness(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Threads, c.Events = 4, 400
	out := sqlclient.Run(context.Background(), c, tg, script(increment), nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("status %s: %v", out.Status, out.Err)
	}
	f := out.Summary.Fairness
	if f == nil {
		t.Fatal("no fairness in the summary")
	}
	if f.EventsMean != 100 || f.EventsStdDev != 0 {
		t.Errorf("events per client %.4f/%.2f, want 100/0 (400 events split exactly over 4)", f.EventsMean, f.EventsStdDev)
	}
	if f.BusyS <= 0 || math.Abs(f.BusyS-4*f.BusyMeanS) > 1e-9 {
		t.Errorf("time in events %.6fs, mean per client %.6fs: the sum should be 4 means", f.BusyS, f.BusyMeanS)
	}
	// Every event's latency is inside its client's busy time.
	sum := out.Summary.Latency.MeanMS * float64(out.Summary.Events) / 1000
	if math.Abs(sum-f.BusyS) > 0.05*f.BusyS+0.01 {
		t.Errorf("time in events %.4fs, but %d events of mean %.4fms make %.4fs", f.BusyS, out.Summary.Events, out.Summary.Latency.MeanMS, sum)
	}
}

// slowClose is a worker of instant events whose Close takes a while, as
// a connection's teardown can on a loaded machine.
type slowClose struct{ wait time.Duration }

func (w slowClose) Event(ctx context.Context, retry bool) (metrics.Op, error) { return 0, nil }
func (w slowClose) Close() error                                              { time.Sleep(w.wait); return nil }

// The drain ends with the last event under way at the time limit, not
// when the clients have closed their connections: the teardown is no time
// of the run's, and joined to the last point it would thin its rate out
// into a dip (an open loop has no event under way to show for it).
func TestDrainEndsWithTheLastEvent(t *testing.T) {
	load := &workload.Load{
		Ops: []metrics.OpSpec{{Name: "txn", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
			return slowClose{wait: 600 * time.Millisecond}, nil
		},
	}
	c := cfg()
	c.Rate, c.Duration = 300, time.Second
	out := sqlclient.Run(context.Background(), c, counterTable(t, ""), load, nil, quiet)
	if out.Status != result.StatusOK || out.Summary.Events == 0 {
		t.Fatalf("run: %s %v", out.Status, out.Err)
	}
	if d := out.Summary.DrainS; d > 0.1 {
		t.Errorf("a drain of %.3f s after instant events: the clients' teardown counted", d)
	}
	// 300 a second, Poisson: 300 ± 17 in the run's one point.
	last := out.Series[len(out.Series)-1]
	if last.EventsPerS < 225 || last.DurationS > 1.1 {
		t.Errorf("last point %.0f events/s over %.3f s at a rate of 300", last.EventsPerS, last.DurationS)
	}
}

// Many clients open their first connections a few dozen at a time, not
// all at once (a thousand handshakes at once outlast a server's limit for
// one), yet in parallel, and all of them run.
func TestFirstConnectionsOpenAFewDozenAtATime(t *testing.T) {
	tg := counterTable(t, "")
	c := cfg()
	c.Threads, c.Events = 200, 200
	load := script(increment)
	var opening, most atomic.Int64
	inner := load.NewWorker
	load.NewWorker = func(ctx context.Context, seat workload.Seat) (workload.Worker, error) {
		n := opening.Add(1)
		defer opening.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		return inner(ctx, seat)
	}
	out := sqlclient.Run(context.Background(), c, tg, load, nil, quiet)
	if out.Status != result.StatusOK || out.Summary.Events != 200 {
		t.Fatalf("run: %s %v, %d events", out.Status, out.Err, out.Summary.Events)
	}
	if m := most.Load(); m > 64 || m < 2 {
		t.Fatalf("%d clients opened their connections at once; want 2 to 64", m)
	}
}
