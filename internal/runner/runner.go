// Package runner drives a workload's workers against a target: the limits
// (time, events), the warm-up, the open-loop rate schedule, retries and
// reconnects, and the ticks that turn per-worker metrics into intervals.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbmark/dbmark/internal/errclass"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/series"
	"github.com/dbmark/dbmark/internal/workload"
)

// Config is how to run.
type Config struct {
	Threads        int
	Duration       time.Duration // 0: no time limit (then Events must be set)
	Events         int64         // 0: no event limit
	Warmup         time.Duration // run before the measured part, shown but not counted
	ReportInterval time.Duration // 0: no live lines; the series still ticks every second
	Rate           float64       // events/s over all threads; 0: closed loop
	MaxTries       int           // tries per event for retryable errors
	IgnoreErrors   []string      // error codes that are counted and skipped; "all" for every one
	Percentiles    []float64
	Seed           uint64
	// ReconnectFor bounds how long a worker keeps trying to reconnect.
	ReconnectFor time.Duration
	// VerboseErrors logs every error an event meets that does not end the
	// run (retried, failed after its tries, or ignored), as pgbench's
	// --verbose-errors does.
	VerboseErrors bool
	// SkipLate and CountFailed are the run plan's (workload.Plan).
	SkipLate    time.Duration
	CountFailed bool
	// AbortClient is the run plan's: a fatal error in an event ends its
	// client only.
	AbortClient bool
	// StallTimeout is how long a client may go without finishing its
	// event before the run ends as failed, naming it (0: never).
	StallTimeout time.Duration
	// SelfLimited says the load ends the run by itself (workers return
	// workload.ErrWorkerDone), so neither Duration nor Events is needed.
	SelfLimited bool
	// Checkpoints are times after the start at which OnCheckpoint is
	// given what happened since the checkpoint before (sysbench's
	// --report-checkpoints); with OnCheckpoint set, it is also given the
	// last span, at the run's end. In order.
	Checkpoints  []time.Duration
	OnCheckpoint func(Span)
	// Drain bounds how long the events under way at the time limit may
	// take to finish (0: 2 s); the last Span counts those it cut off
	// (sysbench's --forced-shutdown).
	Drain time.Duration
	// MaxPoints bounds the series: past it, neighbouring intervals are
	// merged (result.MergeIntervals), so a long run's memory stays flat.
	// 0: series.DefaultLimit.
	MaxPoints int
	// StartAt, when set, is the wall-clock instant the measured window
	// starts at (run --start-at): the warm-up lasts until then
	// (startat.go).
	StartAt time.Time
	// Watch, when set, is given the run's metrics before any client
	// starts: a live exporter reads what the ticker merged from it
	// (metrics.Registry.Snapshot), at its own pace, never a worker's.
	Watch func(*metrics.Registry)
	// Servers is how many servers the clients are spread over, client i
	// on server i mod Servers (workload.ServerOf); with more than one,
	// each server's figures are kept apart too (Outcome.Servers, each
	// point's ServersEventsPerS).
	Servers int
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Threads < 1:
		return fmt.Errorf("--threads %d: must be at least 1", c.Threads)
	case c.Threads > 100_000:
		return fmt.Errorf("--threads %d: too many (at most 100000)", c.Threads)
	case c.Duration < 0:
		return fmt.Errorf("--time %v: must not be negative", c.Duration)
	case c.Events < 0:
		return fmt.Errorf("--events %d: must not be negative", c.Events)
	case c.Duration == 0 && c.Events == 0 && !c.SelfLimited:
		return errors.New("no limit: give --time or --events (or both)")
	case c.Warmup < 0:
		return fmt.Errorf("--warmup %v: must not be negative", c.Warmup)
	case c.ReportInterval < 0:
		return fmt.Errorf("--report-interval %v: must not be negative", c.ReportInterval)
	case c.ReportInterval > 0 && c.ReportInterval < 10*time.Millisecond:
		return fmt.Errorf("--report-interval %v: too short (at least 10ms)", c.ReportInterval)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("--rate %v: must be a positive number of events per second, or 0 for no limit", c.Rate)
	case c.MaxTries < 1:
		return fmt.Errorf("--max-tries %d: must be at least 1", c.MaxTries)
	case c.StallTimeout < 0:
		return fmt.Errorf("--stall-timeout %v: must not be negative (0 turns the check off)", c.StallTimeout)
	}
	for _, code := range c.IgnoreErrors {
		if code = strings.TrimSpace(code); code != "" && !errorCode.MatchString(code) {
			return fmt.Errorf("--ignore-errors %q: not an error code (give a SQLSTATE such as 40001, a MySQL number such as 1213, a SQLite name such as SQLITE_BUSY or SQLITE_13, an errno name such as EIO, or all)", code)
		}
	}
	return nil
}

// errorCode matches the codes the engines classify errors into: "all", a
// SQLSTATE (5 letters and digits), a MySQL error number, a SQLite result
// code's name or number, an errno's name.
var errorCode = regexp.MustCompile(`^(all|[0-9A-Z]{5}|[0-9]{1,5}|SQLITE_[0-9A-Z_]+|E[0-9A-Z]+)$`)

// Sink receives intervals as the run goes. It must not block for long: it
// runs on the ticker, not on the workers.
type Sink func(point result.Interval, threads int)

// Outcome is what a run produced.
type Outcome struct {
	Status    result.Status
	Err       error // the error that ended a failed run
	StartedAt time.Time
	EndedAt   time.Time
	Summary   result.Summary
	Hists     []result.Histogram
	Series    []result.Interval
	// GoMaxProcs is the Go scheduler's processor count at the start of
	// the run, while its workers hold threads of their own (Load.Held).
	GoMaxProcs int
	// Stuck lists the clients that were still inside an event when the
	// run gave up waiting for them.
	Stuck []Stall
	// Servers are each server's part of the summary and histograms, when
	// the clients were spread over several (Config.Servers); the caller
	// names the servers.
	Servers []result.Server
}

// yieldEvery is how often a SyscallBound worker goes through the
// scheduler between its events. Its waits are system calls that keep its
// goroutine on its processor, so without a yield the goroutine would never
// be rescheduled. The runtime's monitor (sysmon) preempts a goroutine that
// has run for 10 ms without being rescheduled; when the goroutine is in a
// system call, it takes its processor away instead. Each time it takes one,
// the monitor goes back to waking every 20 µs, and a worker back from its
// system call must get a processor again. Yielding well within 10 ms lets
// the monitor sleep and keeps each worker on its own processor.
const yieldEvery = 5 * time.Millisecond

// maxSyscallProcs bounds the processors a SyscallBound run asks for (128
// workers, transport.MaxHeld, and two): the collector's stop of the world
// visits every processor, and its pauses, which every client's latency
// shows, grow with them (some milliseconds at 256 workers).
const maxSyscallProcs = 130

// maxOpening bounds the clients opening their first connection at once.
// A thousand handshakes at once on a small machine outlast the server's
// own limit for one (MySQL's connect_timeout is 10 s), which then closes
// them; opened a few dozen at a time, each takes milliseconds. The clients
// all start together once every one is connected, so the order they
// connected in does not show in the run.
const maxOpening = 64

// ErrInterrupted is returned when the run's context was cancelled from outside.
var ErrInterrupted = errors.New("interrupted")

// Run drives the load until a limit is reached, ctx is cancelled or a fatal
// error occurs. It always returns an outcome with what was measured.
//
// The clients come from src (package sqlclient for a database, the load's
// own for file I/O): the runner knows of them only their workers, their
// sessions and the class of their errors.
func Run(ctx context.Context, cfg Config, src workload.Clients, load *workload.Load, sink Sink, log *slog.Logger) *Outcome {
	// Workers that wait in system calls on their own threads (file I/O,
	// a database connection on the blocking transport) keep the
	// goroutine's processor while they wait (Load.SyscallBound): they
	// need one each, and two to spare, or a worker back from the kernel
	// waits for one and the runtime hands processors between threads.
	procs, held := runtime.GOMAXPROCS(0), 0
	if want := min(cfg.Threads+2, maxSyscallProcs); load.SyscallBound && want > procs {
		held = want
		runtime.GOMAXPROCS(want)
		defer runtime.GOMAXPROCS(procs)
	}
	gomaxprocs := runtime.GOMAXPROCS(0)
	start := time.Now()
	reg := metrics.NewRegistry(load.Ops, start)
	reg.SetGroups(cfg.Servers)
	r := &run{start: start, base: start, cfg: cfg, src: src, load: load, reg: reg, log: log, ignore: ignoreSet(cfg.IgnoreErrors),
		opening: make(chan struct{}, maxOpening), procs: procs, heldProcs: held}
	r.holds.Store(true)
	rate := cfg.Rate
	if load.WorkerRate != nil {
		rate = 0
		for id := range cfg.Threads {
			rate += load.WorkerRate(id)
		}
	}
	r.lead = wakeLead(rate)
	if cfg.Watch != nil {
		cfg.Watch(reg)
	}
	if r.cfg.ReconnectFor == 0 {
		r.cfg.ReconnectFor = 10 * time.Second
	}

	// The workers' context ends on a fatal error, when the caller's
	// context ends, or drainFor after the time limit. At the limit the
	// stop context ends: no event starts after it, and those under way
	// finish and count, as sysbench's and pgbench's do, rather than being
	// cancelled halfway (a cancel request and a rollback per connection).
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sctx, stop := context.WithCancelCause(wctx)
	defer stop(nil)
	wctx = workload.WithStop(wctx, sctx)

	if r.tracksSpans() {
		reg.TrackSince()
	}
	done := r.startClients(wctx, cancel)
	points, end := r.measure(wctx, done, cancel, stop, sink)
	if r.tracksSpans() {
		r.checkpoint(end, true)
	}

	out := &Outcome{StartedAt: r.start, EndedAt: end, Series: points, Status: result.StatusOK, GoMaxProcs: gomaxprocs, Stuck: r.stuck}
	r.conclude(ctx, context.Cause(wctx), out)
	if load.Close != nil {
		if err := load.Close(context.WithoutCancel(ctx)); err != nil {
			log.Warn("closing the load", "err", err)
		}
	}
	return out
}

// startClients starts one goroutine per client, each with its own
// connection: N clients are N statements in flight. It returns once every
// client has connected and set up its worker, or the run ended first, and
// then starts the measured time (pgbench's "without initial connection
// time": a run's first second would otherwise count connections and
// prepares as time no event ran). done closes when every client returned.
func (r *run) startClients(wctx context.Context, cancel context.CancelCauseFunc) (done <-chan struct{}) {
	var wg, connected sync.WaitGroup
	perWorker := splitEvents(r.cfg.Events, r.cfg.Threads)
	r.clients = make([]client, r.cfg.Threads)
	begin := make(chan struct{})
	for i := range r.cfg.Threads {
		wg.Add(1)
		connected.Add(1)
		go func() {
			defer wg.Done()
			defer r.clients[i].finish()
			if err := r.serve(wctx, i, perWorker[i], connected.Done, begin); err != nil {
				cancel(err)
			}
		}()
	}
	all := make(chan struct{})
	go func() {
		wg.Wait()
		close(all)
	}()
	allConnected := make(chan struct{})
	go func() {
		connected.Wait()
		close(allConnected)
	}()
	select {
	case <-allConnected:
	case <-wctx.Done(): // a client could not connect, or the run was interrupted
	}
	r.start = time.Now()
	r.alignWarmup()
	r.reg.StartAt(r.start)
	r.cpuFrom = readCPU()
	close(begin)
	return all
}

// measure owns the run's clock from the start: the time limit, the
// warm-up, the ticks that make the series and the live lines, stalls, and
// clients that do not return. It returns the series and the run's end.
func (r *run) measure(wctx context.Context, done <-chan struct{}, cancel, stop context.CancelCauseFunc, sink Sink) ([]result.Interval, time.Time) {
	cfg, reg, start := r.cfg, r.reg, r.start
	if cfg.Duration > 0 {
		stopTimer := time.AfterFunc(cfg.Warmup+cfg.Duration, func() { stop(errTimeUp) })
		defer stopTimer.Stop()
		drainTimer := time.AfterFunc(cfg.Warmup+cfg.Duration+r.drain(), func() {
			r.noteCut(time.Now())
			cancel(errTimeUp)
		})
		defer drainTimer.Stop()
	}
	warmupEnd := start.Add(cfg.Warmup)

	tickEvery := cfg.ReportInterval
	if tickEvery == 0 {
		tickEvery = time.Second
	}
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()
	points := series.New(cfg.MaxPoints, result.MergeIntervals)
	tick := func(now time.Time) {
		warm := now.Before(warmupEnd.Add(tickEvery / 10))
		r.emit(reg.Tick(now, warm), points, sink)
		if warm { // the measured window now starts here
			r.cpuFrom = readCPU()
		}
	}
	// A tick exactly at the end of the warm-up starts the measured span there.
	var warmTimer <-chan time.Time
	if cfg.Warmup > 0 {
		t := time.NewTimer(cfg.Warmup)
		defer t.Stop()
		warmTimer = t.C
	}
	// A tick at the time limit closes the measured window: events that
	// finish after it (the drain) keep their latencies but stay out of
	// the rates, which they would dilute.
	var deadline <-chan time.Time
	deadlineAt := warmupEnd.Add(cfg.Duration)
	if cfg.Duration > 0 {
		t := time.NewTimer(cfg.Warmup + cfg.Duration)
		defer t.Stop()
		deadline = t.C
	}
	var closedAt time.Time
	closeWindow := func(now time.Time) {
		deadline = nil
		closedAt = now
		tick(now)
		r.window = snapshot(reg)
		r.cpuTo = readCPU()
	}
	// A client that does not return once the workers' context has ended
	// is waiting where no cancellation reaches: the run ends without it.
	var abandon <-chan time.Time
	ended := wctx.Done()
	ckpt, stopCkpt := r.nextCheckpoint(start)
	defer func() { stopCkpt() }()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-ckpt:
			r.checkpoint(time.Now(), false)
			stopCkpt()
			ckpt, stopCkpt = r.nextCheckpoint(time.Now())
		case <-ended:
			ended = nil
			t := time.NewTimer(abandonAfter)
			defer t.Stop()
			abandon = t.C
		case <-abandon:
			r.stuck = r.busy(time.Now(), 0)
			break loop
		case now := <-ticker.C:
			if st := r.busy(now, cfg.StallTimeout); cfg.StallTimeout > 0 && len(st) > 0 {
				cancel(&StallError{Stalls: st, Timeout: cfg.StallTimeout})
			}
			if warmTimer != nil && now.After(warmupEnd.Add(-tickEvery/10)) {
				// This tick is the end of the warm-up: a second one from
				// the timer an instant later would make an interval of
				// almost no time and a meaningless rate.
				warmTimer = nil
			}
			if deadline != nil && now.After(deadlineAt.Add(-tickEvery/10)) {
				closeWindow(now) // likewise at the time limit
				continue
			}
			tick(now)
		case now := <-deadline:
			closeWindow(now)
			ticker.Reset(tickEvery)
		case now := <-warmTimer:
			warmTimer = nil
			r.emit(reg.Tick(now, true), points, sink)
			r.cpuFrom = readCPU()
			ticker.Reset(tickEvery)
		}
	}
	end := time.Now()
	last := end // the end of the last point: the drain's, after a time limit
	if r.window != nil && len(r.stuck) == 0 {
		last = r.drainEnd(closedAt, end)
	}
	r.lastPoint(points, last, warmupEnd, tickEvery)
	if r.window == nil {
		r.cpuTo = readCPU()
	}
	return points.Points(), end
}

// drainEnd is when the drain after the window closed at closedAt ended:
// when the last event under way then ended (closedAt if none was), not
// when every client had closed its connection and returned by now. The
// clients' teardown, long on a loaded machine, is no time of the run's:
// counted, it would thin out the last point's rate into a dip.
func (r *run) drainEnd(closedAt, now time.Time) time.Time {
	clock := workload.ClockFrom(r.base)
	end := closedAt
	for i := range r.clients {
		if d := time.Duration(r.clients[i].lastEnd.Load()); d > 0 {
			if t := clock.Time(d); t.After(end) {
				end = t
			}
		}
	}
	if end.After(now) {
		return now
	}
	return end
}

// lastPoint adds what the clients did since the last tick to the series.
func (r *run) lastPoint(points *series.Bounded[result.Interval], end, warmupEnd time.Time, tickEvery time.Duration) {
	iv := r.reg.Tick(end, end.Before(warmupEnd))
	if iv.Totals.KindCount(metrics.Event) == 0 && iv.Seconds() <= 0.05 {
		return
	}
	if iv.Seconds() <= 0 {
		// Events that ended before the last tick but were recorded after
		// it (a client taken off its CPU between its clock read and its
		// record), and nothing since: they join the point before over
		// a microsecond, which adds their count to it; over no time
		// their rates would be infinite, and the merge's NaN.
		iv.End = iv.Start + time.Microsecond
	}
	// A last interval much shorter than a tick joins the one before
	// (result.MergeIntervals weighs each by its length): drawn on its
	// own, the few events of a drain look like a collapse.
	p := r.point(iv)
	if iv.Seconds() < tickEvery.Seconds()/2 {
		// Its percentiles are taken over the joined point's events
		// together (the merge keeps the worse of those and the
		// point's own): the few of a drain must not decide them.
		p.Latency = r.percentiles(r.reg.Recent())
		points.MergeLast(p)
	} else {
		points.Add(p)
	}
}

// conclude gives out its status from what ended the run (cause, the
// workers' context's), and its summary.
func (r *run) conclude(ctx context.Context, cause error, out *Outcome) {
	switch {
	case ctx.Err() != nil:
		out.Status = result.StatusInterrupted
		out.Err = ErrInterrupted
	case len(r.stuck) > 0 && (cause == nil || errors.Is(cause, errTimeUp)):
		// Never ok: a client's last event did not end.
		out.Status = result.StatusFailed
		out.Err = &StallError{Stalls: r.stuck}
	case len(r.aborted) > 0 && (cause == nil || errors.Is(cause, errTimeUp)):
		out.Status = result.StatusFailed
		out.Err = &AbortError{Clients: len(r.aborted), Of: r.cfg.Threads, First: r.aborted[0], All: r.aborted}
	case cause != nil && !errors.Is(cause, errTimeUp) && !errors.Is(cause, context.Canceled):
		out.Status = result.StatusFailed
		out.Err = cause
	}
	r.summarize(out)
	if out.Status == result.StatusOK && out.Summary.Events == 0 {
		// Nothing measured is no result: not a throughput of 0.
		out.Status = result.StatusFailed
		out.Err = noEvents(r.cfg, out.Summary)
	}
	if out.Status == result.StatusOK && len(out.Summary.Disconnects) > 0 {
		out.Status = result.StatusDegraded // see outage.go
	}
}

var errTimeUp = errors.New("time limit reached")

// drainFor bounds how long the events under way at the time limit may
// take to finish. The C tools wait for them without a bound; a statement
// waiting on a lock would then hold the run.
const drainFor = 2 * time.Second

const mib = 1 << 20

// bytes adds up what the operations of one kind moved (Load.OpBytes),
// with counts per operation of t (nil: t's own).
func (r *run) bytes(t *metrics.Totals, counts []int64, k metrics.Kind) int64 {
	if counts == nil {
		counts = opCounts(t)
	}
	var n int64
	for i, b := range r.load.OpBytes {
		if i < len(t.Ops) && t.Ops[i].Spec.Kind == k {
			n += counts[i] * b
		}
	}
	return n
}

// window is the cumulative count of each operation, and the measured
// span, at the time limit.
type window struct {
	counts []int64
	span   time.Duration
	// servers are each server's counts (Config.Servers).
	servers [][]int64
}

func snapshot(reg *metrics.Registry) *window {
	tot, span := reg.Cumulative()
	w := &window{counts: opCounts(tot), span: span}
	for _, g := range reg.GroupCumulative() {
		w.servers = append(w.servers, opCounts(g))
	}
	return w
}

func opCounts(t *metrics.Totals) []int64 {
	out := make([]int64, len(t.Ops))
	for i, o := range t.Ops {
		out[i] = o.Count
	}
	return out
}

// kindCount adds up counts of t's operations of kind k.
func kindCount(t *metrics.Totals, counts []int64, k metrics.Kind) int64 {
	var n int64
	for i, o := range t.Ops {
		if o.Spec.Kind == k {
			n += counts[i]
		}
	}
	return n
}

func splitEvents(total int64, threads int) []int64 {
	out := make([]int64, threads)
	if total == 0 {
		return out // no limit
	}
	for i := range out {
		out[i] = total / int64(threads)
		if int64(i) < total%int64(threads) {
			out[i]++
		}
		if out[i] == 0 {
			out[i] = -1 // this worker has nothing to do
		}
	}
	return out
}

type run struct {
	abortMu sync.Mutex
	aborted []error // with Config.AbortClient: the fatal error of each client it ended, in order
	start   time.Time
	// base is the clients' clocks' (workload.ClockFrom): their readings,
	// and so the times in client, are on one scale.
	base    time.Time
	window  *window // the totals at the time limit; nil without one
	clients []client
	stuck   []Stall // clients abandoned at the end
	outages outages
	cfg     Config
	src     workload.Clients
	load    *workload.Load
	reg     *metrics.Registry
	log     *slog.Logger
	ignore  map[string]bool
	spans   spans // Config.Checkpoints
	// lead is how early the open loop's alarms wake (wakeLead).
	lead time.Duration
	// opening holds a place for each first connection being opened:
	// at most maxOpening at once.
	opening chan struct{}

	// cpuFrom and cpuTo are the process's CPU time at the measured
	// window's start (the warm-up's end) and end (the time limit, or the
	// run's end without one).
	cpuFrom, cpuTo cpuMark

	// procs is GOMAXPROCS before the run, heldProcs what it is while a
	// SyscallBound load's workers hold threads of their own (0: not
	// raised); holds is what GOMAXPROCS follows now, changed under
	// procsMu.
	procs, heldProcs int
	procsMu          sync.Mutex
	holds            atomic.Bool
}

// holding says whether a SyscallBound load's workers wait on threads of
// their own (Load.Held). The first to find that changed sets GOMAXPROCS
// to follow: the processors the run added for them given back when they
// are released, asked for again when they are held again.
func (r *run) holding() bool {
	held := r.load.Held == nil || r.load.Held()
	if held == r.holds.Load() {
		return held
	}
	r.procsMu.Lock()
	defer r.procsMu.Unlock()
	if held != r.holds.Load() && r.heldProcs > r.procs {
		if held {
			runtime.GOMAXPROCS(r.heldProcs)
		} else {
			runtime.GOMAXPROCS(r.procs)
		}
	}
	r.holds.Store(held)
	return held
}

func ignoreSet(codes []string) map[string]bool {
	m := map[string]bool{}
	for _, c := range codes {
		m[strings.TrimSpace(c)] = true
	}
	return m
}

func (r *run) ignored(code string) bool { return r.ignore["all"] || r.ignore[code] }

// FatalError is an error that ended the run.
type FatalError struct {
	Worker int
	Code   string // the error's code, when --ignore-errors could have let the run go on
	Err    error
}

func (e *FatalError) Error() string {
	if errclass.Full(e.Code) {
		// Not an error to ignore: every event after it fails alike.
		return fmt.Sprintf("worker %d: %v (code %s: the disk or the table is full; free space, or put --target on a filesystem with room)", e.Worker, e.Err, e.Code)
	}
	if e.Code != "" && e.Code != "client" {
		return fmt.Sprintf("worker %d: %v (code %s; add it to --ignore-errors to count it and go on)", e.Worker, e.Err, e.Code)
	}
	return fmt.Sprintf("worker %d: %v", e.Worker, e.Err)
}

func (e *FatalError) Unwrap() error { return e.Err }

// NoEventsError ends a run that measured no event, which is not ok
// however it ended: every event failed on an ignored error, or an open
// loop's rate scheduled none in the time.
type NoEventsError struct {
	Errors    int64              // the ignored errors counted instead
	Top       *result.ErrorCount // the most frequent of them
	Rate      float64
	Duration  time.Duration
	MeasuredS float64
}

func (e *NoEventsError) Error() string {
	switch {
	case e.Errors > 0:
		top := ""
		if e.Top != nil {
			top = fmt.Sprintf(", most of them %s (%d)", e.Top.Code, e.Top.Count)
		}
		return fmt.Sprintf("every event failed: %d errors%s and no event done: a run whose every event failed measures nothing", e.Errors, top)
	case e.Rate > 0 && e.Duration > 0:
		return fmt.Sprintf("no event was measured: --rate %g over --time %v schedules about %.2g events; raise --rate or --time", e.Rate, e.Duration, e.Rate*e.Duration.Seconds())
	}
	return fmt.Sprintf("no event was measured in %.1fs", e.MeasuredS)
}

func noEvents(cfg Config, s result.Summary) error {
	e := &NoEventsError{Errors: s.ErrorsTotal, Rate: cfg.Rate, Duration: cfg.Duration, MeasuredS: s.DurationS}
	for i := range s.Errors {
		if e.Top == nil || s.Errors[i].Count > e.Top.Count {
			e.Top = &s.Errors[i]
		}
	}
	return e
}

// AbortError ends a run in which fatal errors ended some clients
// (Config.AbortClient) while the others ran to the end.
type AbortError struct {
	Clients, Of int
	First       error
	All         []error // each aborted client's error, in the order they came
}

func (e *AbortError) Error() string {
	return fmt.Sprintf("%d of %d clients aborted, the others running on to the end: the figures are incomplete; the first: %v", e.Clients, e.Of, e.First)
}

func (e *AbortError) Unwrap() error { return e.First }

// abort ends one client on its fatal error, the others going on.
func (r *run) abort(err error) {
	r.abortMu.Lock()
	r.aborted = append(r.aborted, err)
	r.abortMu.Unlock()
	r.log.Error("client aborted; the other clients go on", "err", err)
}

// worker is one client: its connection, its workload's state and its
// counts.
type worker struct {
	id     int
	events int64 // 0: no limit
	done   int64
	h      *metrics.Handle
	sess   workload.Session
	w      workload.Worker
	sched  *schedule
	clock  *workload.Clock // shared with a worker that reads the time itself
	cl     *client
	out    *outage // since it lost its connection, until its next committed event
	// lo and hi bound the measured window on clock: the events' time
	// inside it is what Little's law sums.
	lo, hi time.Duration
	// lastEnd is when its last event ended, on clock.
	lastEnd time.Duration
}

// flew adds the part of an event from began to end (readings of wk's
// clock) that lies inside the measured window to the client's time in
// flight.
func (wk *worker) flew(began, end time.Duration) {
	if d := min(end, wk.hi) - max(began, wk.lo); d > 0 {
		wk.cl.flight.Add(int64(d))
	}
}

// newWorker connects worker id; nil when it has nothing to do or the run
// stopped while it connected.
func (r *run) newWorker(ctx context.Context, id int, events int64) (*worker, error) {
	if events < 0 {
		return nil, nil
	}
	cl := &r.clients[id]
	clock := workload.ClockFrom(r.base)
	wk := &worker{id: id, events: events, h: r.reg.NewHandleIn(workload.ServerOf(id, r.cfg.Servers)), clock: &clock, cl: cl}
	var err error
	wk.w, wk.sess, err = r.connect(ctx, wk, false)
	cl.end(wk.sess)
	if err != nil {
		if workload.Stop(ctx).Err() != nil {
			return nil, nil
		}
		return nil, &FatalError{Worker: id, Err: err}
	}
	return wk, nil
}

func (wk *worker) close() {
	if wk.w != nil {
		wk.w.Close()
	}
	if wk.sess != nil {
		wk.sess.Close()
	}
}

// serve runs worker id until it has done its events, the run stops, or a
// fatal error, which it returns.
// serve connects worker id, says so with connected, waits for begin,
// and runs the worker until it has done its events, the run stops, or a
// fatal error, which it returns.
func (r *run) serve(ctx context.Context, id int, events int64, connected func(), begin <-chan struct{}) error {
	wk, err := r.newWorker(ctx, id, events)
	connected()
	if wk == nil {
		return err
	}
	defer wk.close()
	select {
	case <-begin:
	case <-ctx.Done():
		return nil
	}
	rate := r.cfg.Rate / float64(r.cfg.Threads)
	if r.load.WorkerRate != nil {
		rate = r.load.WorkerRate(id)
	}
	if rate > 0 {
		wk.sched = newSchedule(rate, r.cfg.Seed, uint64(id), wk.clock.Of(r.start))
	}
	wk.lo, wk.hi = wk.clock.Of(r.start.Add(r.cfg.Warmup)), math.MaxInt64
	if r.cfg.Duration > 0 {
		wk.hi = wk.lo + r.cfg.Duration
	}
	err = r.runWorker(ctx, wk)
	wk.cl.lastEnd.Store(int64(wk.lastEnd))
	r.settle(wk, 0) // an outage the run ended in
	if err != nil && r.cfg.AbortClient && ctx.Err() == nil {
		r.abort(err)
		return nil
	}
	return err
}

// runWorker runs wk's events until it has done them all or the run stops.
// It returns a non-nil error only for a fatal error.
func (r *run) runWorker(ctx context.Context, wk *worker) error {
	// stop ends at the time limit (workload.WithStop): no event starts
	// after it.
	stop := workload.Stop(ctx)
	stopped := stop.Done() // a look at the channel is a fraction of stop.Err's cost
	var al alarm
	if wk.sched != nil {
		al = newAlarm(stop, r.lead)
		defer al.close()
	}
	yields := r.load.SyscallBound
	var yielded time.Duration // when the worker last went through the scheduler
	for wk.events == 0 || wk.done < wk.events {
		select {
		case <-stopped:
			return nil
		default:
		}
		// Times are readings of the client's clock (workload.Clock).
		var intended time.Duration
		if wk.sched != nil {
			intended = wk.sched.next()
			if r.cfg.SkipLate > 0 {
				if now := wk.clock.Read(); now-intended > r.cfg.SkipLate {
					r.observe(wk, workload.EventInfo{Status: workload.EventSkipped, Intended: intended, Began: now, End: now})
					if r.cfg.CountFailed {
						wk.done++
					}
					continue
				}
			}
			// A scheduled start is waited for until the time limit at most.
			if al.wait(stop, wk.clock.Time(intended)) != nil {
				return nil
			}
		}
		began := wk.clock.Read()
		if yields && began-yielded > yieldEvery {
			yielded = began
			if r.holding() {
				runtime.Gosched()
			}
		}
		if wk.sched == nil {
			intended = began
		}
		// The event is in flight from its intended start: a client that
		// is late to start it is as stuck as one waiting on the server.
		wk.cl.begin(intended)
		wk.clock.Now = began
		a := attempt{ok: true, tries: 1}
		var err error
		if a.op, err = wk.w.Event(ctx, false); err != nil {
			a = r.event(ctx, wk, began, a.op, err)
		}
		wk.cl.end(nil)
		if a.err != nil {
			if errors.Is(a.err, workload.ErrWorkerDone) {
				return nil
			}
			return a.err
		}
		if (a.ok || a.failed) && a.tries > 1 {
			// Retries count with the transaction that ended, committed or
			// failed, as pgbench counts them: one that the time limit cut
			// short counts neither.
			wk.h.AddRetries(a.tries - 1)
		}
		if !a.ok {
			// Failed after its tries, or interrupted: not committed, but
			// in flight all the same until it ended (a lost connection's
			// wait is an outage's, reported as such).
			end := wk.clock.Read()
			wk.lastEnd = end
			if !a.lost {
				wk.flew(began, end)
			}
			if a.failed {
				r.observe(wk, workload.EventInfo{Op: a.op, Status: workload.EventFailed, Code: a.code, Tries: a.tries, Intended: intended, Began: began, End: end})
				if r.cfg.CountFailed {
					wk.done++
				}
			}
			continue
		}
		// A worker that timed its last step left its end in the clock.
		end := wk.clock.Now
		if end <= began {
			end = wk.clock.Read()
		}
		if wk.out != nil {
			r.settle(wk, end)
		}
		took := end - began
		wk.lastEnd = end
		wk.cl.committed(took)
		if a.op == metrics.SelfRecorded {
			wk.cl.selfRecorded.Store(true)
			wk.done++
			continue
		}
		wk.flew(began, end)
		if wk.sched != nil {
			wk.h.RecordScheduled(a.op, end-intended, took, began-intended)
		} else {
			wk.h.Record(a.op, took)
		}
		if r.load.Observe != nil && (a.tries > 1 || !r.load.QuietCommits) {
			r.observe(wk, workload.EventInfo{Op: a.op, Tries: a.tries, Intended: intended, Began: began, End: end})
		}
		wk.done++
		if a.after != nil {
			return a.after // counted, and then the client cannot go on
		}
	}
	return nil
}

// observe tells a load that wants to know how an event of wk ended.
func (r *run) observe(wk *worker, e workload.EventInfo) {
	if r.load.Observe != nil {
		e.Clock = wk.clock
		r.load.Observe(wk.w, e)
	}
}

// attempt is how one event ended after its tries.
type attempt struct {
	op     metrics.Op
	ok     bool   // committed
	failed bool   // given up after its tries
	code   string // the last error's code
	tries  int
	lost   bool  // the connection was lost (the client reconnected or gave up)
	err    error // fatal: ends the run
	after  error // fatal, once the committed event is counted
}

// event goes on with an event begun at began (a reading of wk's clock)
// whose first try returned op and err, not nil: it retries it as the
// error allows.
func (r *run) event(ctx context.Context, wk *worker, began time.Duration, op metrics.Op, err error) attempt {
	id, h := wk.id, wk.h
	restart := false
	for try := 1; ; try++ {
		// A lost connection's outage starts with the try that found it:
		// the first starts with the event, a retry reads the clock.
		tryStart := began
		if try > 1 || restart {
			tryStart = wk.clock.Read()
			// A retry repeats the event's values; a restart draws new ones.
			if op, err = wk.w.Event(ctx, !restart); err == nil {
				return attempt{op: op, ok: true, tries: try}
			}
			restart = false
		}
		if errors.Is(err, workload.ErrWorkerDone) {
			return attempt{err: err}
		}
		if ae := (*workload.AfterEventError)(nil); errors.As(err, &ae) {
			return attempt{op: op, ok: true, tries: try, after: &FatalError{Worker: id, Err: ae.Err}}
		}
		info := r.src.Classify(err)
		if info.Class == errclass.Canceled || ctx.Err() != nil {
			return attempt{}
		}
		class := info.Class.String()
		if info.Class == errclass.Fatal && r.ignored(info.Code) {
			class = "ignored" // counted and gone on after, so not fatal
		}
		h.Error(class, info.Code)
		switch info.Class {
		case errclass.Reconnect:
			if workload.Stop(ctx).Err() != nil {
				// Past the time limit: the worker is done with it.
				return attempt{lost: true}
			}
			h.Reconnect()
			r.lost(wk, tryStart)
			wk.w.Close()
			wk.sess.Close()
			wk.w, wk.sess = nil, nil
			nw, ns, err := r.connect(ctx, wk, true)
			if err != nil {
				if ctx.Err() != nil {
					return attempt{lost: true}
				}
				return attempt{err: &FatalError{Worker: id, Err: fmt.Errorf("lost the connection (%s) and could not reconnect for %v: %w", info.Code, r.cfg.ReconnectFor, err)}}
			}
			wk.w, wk.sess = nw, ns
			wk.cl.setSession(ns)
			wk.out.back = wk.clock.Read()
			return attempt{lost: true}
		case errclass.Retryable:
			wk.sess.Reset(ctx)
			if workload.Stop(ctx).Err() != nil {
				// Past the time limit no try starts, as in pgbench: the
				// event ends neither committed nor failed.
				return attempt{}
			}
			if try < r.cfg.MaxTries {
				r.tell(id, "repeats the transaction after the error", try, err)
				continue // its retries are counted when it ends (runWorker)
			}
			r.tell(id, "ends the failed transaction", try, err)
			return attempt{op: op, failed: true, code: info.Code, tries: try} // counted, not committed
		default:
			wk.sess.Reset(ctx)
			if r.ignored(info.Code) {
				// As sysbench restarts an event after an ignored error: a
				// new transaction, timed from the event's start, so that
				// the wait that ended in the error shows in a latency
				// (a lock wait before a unique violation can last a
				// deadlock timeout).
				if workload.Stop(ctx).Err() != nil {
					return attempt{}
				}
				r.tell(id, "starts a new transaction after an ignored error", try, err)
				restart, try = true, 0
				continue
			}
			return attempt{err: &FatalError{Worker: id, Code: info.Code, Err: err}}
		}
	}
}

// tell logs, with VerboseErrors, what worker id does after an error in
// its try, in pgbench's words (its clients are dbmark's workers).
func (r *run) tell(id int, what string, try int, err error) {
	if !r.cfg.VerboseErrors {
		return
	}
	tries := strconv.Itoa(try)
	if r.cfg.MaxTries < math.MaxInt32 { // pgbench's unlimited tries show no limit
		tries += "/" + strconv.Itoa(r.cfg.MaxTries)
	}
	r.log.Warn(fmt.Sprintf("client %d %s (try %s): %v", id, what, tries, err))
}

// connect opens wk's session and worker, retrying for a while when it is
// a reconnect.
func (r *run) connect(ctx context.Context, wk *worker, again bool) (workload.Worker, workload.Session, error) {
	if !again {
		// A reconnect does not wait for a place: it would wait on
		// other clients, mid-run.
		select {
		case r.opening <- struct{}{}:
			defer func() { <-r.opening }()
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
	}
	deadline := time.Now().Add(r.cfg.ReconnectFor)
	backoff := 50 * time.Millisecond
	for {
		w, sess, err := r.src.Open(ctx, wk.id, wk.h, wk.clock)
		if err == nil {
			return w, sess, nil
		}
		if !again || ctx.Err() != nil || time.Now().After(deadline) {
			return nil, nil, err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
		backoff = min(backoff*2, time.Second)
	}
}

// schedule draws a worker's intended start times: a Poisson process at the
// worker's share of the rate, as pgbench -R does per client. Each worker
// owns its schedule, so the open loop needs no shared lock.
type schedule struct {
	rng   *rand.Rand
	mean  float64       // mean gap in ns
	nextT time.Duration // a reading of the worker's clock
}

func newSchedule(rate float64, seed, worker uint64, now time.Duration) *schedule {
	return &schedule{rng: rand.New(rand.NewPCG(seed, worker^0x5eed)), mean: 1e9 / rate, nextT: now}
}

func (s *schedule) next() time.Duration {
	s.nextT += time.Duration(s.rng.ExpFloat64() * s.mean)
	return s.nextT
}

// emit adds an interval to the series and shows it.
func (r *run) emit(iv metrics.Interval, points *series.Bounded[result.Interval], sink Sink) {
	p := r.point(iv)
	points.Add(p)
	if sink != nil && r.cfg.ReportInterval > 0 {
		sink(p, r.cfg.Threads)
	}
}

// point turns an interval into a series point.
func (r *run) point(iv metrics.Interval) result.Interval {
	secs := iv.Seconds()
	if secs <= 0 {
		secs = math.SmallestNonzeroFloat64
	}
	p := result.Interval{
		T:          iv.End.Seconds(),
		DurationS:  iv.Seconds(),
		Warmup:     iv.Warmup,
		EventsPerS: float64(iv.KindCount(metrics.Event)) / secs,
		ReadsPerS:  float64(iv.KindCount(metrics.Read)) / secs,
		WritesPerS: float64(iv.KindCount(metrics.Write)) / secs,
		OtherPerS:  float64(iv.KindCount(metrics.Other)) / secs,
		ErrorsPerS: float64(iv.ErrorCount("")) / secs,
		ReconnPerS: float64(iv.Reconnects) / secs,
	}
	p.ReadMiBPerS = float64(r.bytes(iv.Totals, nil, metrics.Read)) / mib / secs
	p.WriteMiBPerS = float64(r.bytes(iv.Totals, nil, metrics.Write)) / mib / secs
	if iv.Retries > 0 {
		p.RetriesPerS = float64(iv.Retries) / secs
	}
	p.Latency = r.percentiles(iv.Totals)
	for _, g := range iv.Groups {
		p.ServersEventsPerS = append(p.ServersEventsPerS, float64(g.KindCount(metrics.Event))/secs)
	}
	if iv.Lag != nil && iv.Lag.TotalCount() > 0 {
		p.LagMeanMS = iv.Lag.Mean() / 1e6
	}
	if r.load.Tick != nil {
		r.load.Tick(iv, &p)
	}
	return p
}

// percentiles are the headline operation's percentiles in tot; none when
// it has no events.
func (r *run) percentiles(tot *metrics.Totals) []result.Percentile {
	h := r.headHist(tot)
	if h.TotalCount() == 0 {
		return nil
	}
	ps := make([]result.Percentile, 0, len(r.cfg.Percentiles))
	for _, q := range r.cfg.Percentiles {
		ps = append(ps, result.Percentile{P: q, MS: float64(h.ValueAtQuantile(q)) / 1e6})
	}
	return ps
}

// summarize fills the outcome's summary and histograms from the cumulative totals.
func (r *run) summarize(out *Outcome) {
	tot, span := r.reg.Cumulative()
	counts := opCounts(tot)
	if w := r.window; w != nil && span > w.span {
		// The rates are the window's; the drain is reported apart.
		out.Summary.DrainS = (span - w.span).Seconds()
		out.Summary.DrainEvents = kindCount(tot, counts, metrics.Event) - kindCount(tot, w.counts, metrics.Event)
		span, counts = w.span, w.counts
	}
	secs := span.Seconds()
	per := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	s := &out.Summary
	s.DurationS = secs
	s.Events = kindCount(tot, counts, metrics.Event)
	s.EventsPerS = per(s.Events)
	s.Queries = result.QueryCounts{Read: kindCount(tot, counts, metrics.Read), Write: kindCount(tot, counts, metrics.Write), Other: kindCount(tot, counts, metrics.Other)}
	s.Queries.Total = s.Queries.Read + s.Queries.Write + s.Queries.Other
	s.QueriesPerS = per(s.Queries.Total)
	s.ReadMiBPerS = per(r.bytes(tot, counts, metrics.Read)) / mib
	s.WriteMiBPerS = per(r.bytes(tot, counts, metrics.Write)) / mib
	for _, k := range tot.ErrorKeys() {
		s.Errors = append(s.Errors, result.ErrorCount{Class: k.Class, Code: k.Code, Count: tot.Errors[k]})
		s.ErrorsTotal += tot.Errors[k]
	}
	s.Retries, s.Reconnects, s.Clamped = tot.Retries, tot.Reconnects, tot.Clamped
	s.Latency = result.LatencyOf(r.headHist(tot), r.cfg.Percentiles)
	r.outages.summarize(s, r.headHist(tot), r.cfg.Percentiles)
	for _, op := range r.load.LatencyOf {
		s.LatencyOps = append(s.LatencyOps, tot.Ops[op].Spec.Name)
	}
	if r.cfg.Rate > 0 {
		var svc *metrics.OpTotals
		for i := range tot.Ops {
			if tot.Ops[i].Spec.Kind == metrics.Event && tot.Ops[i].Service != nil {
				svc = &tot.Ops[i]
			}
		}
		if svc != nil {
			s.Service = result.LatencyOf(svc.Service, r.cfg.Percentiles)
		}
		s.ScheduleLag = result.LatencyOf(tot.Lag, r.cfg.Percentiles)
	}
	var hists []result.Histogram
	s.Ops, hists = r.ops(tot, counts, per)
	out.Hists = append(out.Hists, hists...)
	if tot.Lag != nil && tot.Lag.TotalCount() > 0 {
		if hh, err := result.EncodeHistogram("events", "lag", tot.Lag); err == nil {
			out.Hists = append(out.Hists, hh)
		}
	}
	r.concurrency(s, tot)
	r.rateReached(s)
	if r.cpuFrom.ok && r.cpuTo.ok {
		s.Client = result.NewClientCPU(r.cpuTo.user-r.cpuFrom.user, r.cpuTo.system-r.cpuFrom.system, secs, s.Events, runtime.NumCPU())
	}
	s.Fairness = fairness(r.clients)
	slices.SortStableFunc(s.Errors, func(a, b result.ErrorCount) int { return int(b.Count - a.Count) })
	r.servers(out, secs)
}

// ops are the summaries of tot's operations, counts[i] of operation i
// (per makes a rate of a count), and the histograms of those timed.
func (r *run) ops(tot *metrics.Totals, counts []int64, per func(int64) float64) ([]result.OpSummary, []result.Histogram) {
	var ops []result.OpSummary
	var hists []result.Histogram
	for i, o := range tot.Ops {
		os := result.OpSummary{Name: o.Spec.Name, Kind: o.Spec.Kind.String(), Count: counts[i], PerS: per(counts[i])}
		if i < len(r.load.OpBytes) {
			os.MiBPerS = per(counts[i]*r.load.OpBytes[i]) / mib
		}
		os.Latency = result.LatencyOf(o.Hist, r.cfg.Percentiles)
		os.Service = result.LatencyOf(o.Service, r.cfg.Percentiles)
		ops = append(ops, os)
		if o.Hist.TotalCount() == 0 { // none, or counted without times
			continue
		}
		if hh, err := result.EncodeHistogram(o.Spec.Name, "latency", o.Hist); err == nil {
			hists = append(hists, hh)
		}
		if o.Service != nil {
			if hh, err := result.EncodeHistogram(o.Spec.Name, "service", o.Service); err == nil {
				hists = append(hists, hh)
			}
		}
	}
	return ops, hists
}

// servers fills each server's part of the summary, over the summary's
// secs, when the clients were spread over several: the counts of the
// measured window (as the summary's), the latencies of every event.
func (r *run) servers(out *Outcome, secs float64) {
	groups := r.reg.GroupCumulative()
	per := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	for g, tot := range groups {
		counts := opCounts(tot)
		if w := r.window; w != nil && g < len(w.servers) {
			counts = w.servers[g]
		}
		sv := result.ServerSummary{Events: kindCount(tot, counts, metrics.Event)}
		clients := 0
		for id := range r.cfg.Threads {
			if workload.ServerOf(id, len(groups)) == g {
				clients++
			}
		}
		sv.EventsPerS = per(sv.Events)
		sv.Queries = result.QueryCounts{Read: kindCount(tot, counts, metrics.Read), Write: kindCount(tot, counts, metrics.Write), Other: kindCount(tot, counts, metrics.Other)}
		sv.Queries.Total = sv.Queries.Read + sv.Queries.Write + sv.Queries.Other
		sv.QueriesPerS = per(sv.Queries.Total)
		for _, k := range tot.ErrorKeys() {
			sv.Errors = append(sv.Errors, result.ErrorCount{Class: k.Class, Code: k.Code, Count: tot.Errors[k]})
			sv.ErrorsTotal += tot.Errors[k]
		}
		sv.Retries, sv.Reconnects = tot.Retries, tot.Reconnects
		head := r.headHist(tot)
		sv.Latency = result.LatencyOf(head, r.cfg.Percentiles)
		if h := tot.EventHist(); r.cfg.Rate == 0 && r.load.WorkerRate == nil && h.TotalCount() > 0 && secs > 0 {
			sv.Concurrency = r.inFlight(secs, h, func(id int) bool { return workload.ServerOf(id, len(groups)) == g })
		}
		var hists []result.Histogram
		sv.Ops, hists = r.ops(tot, counts, per)
		out.Servers = append(out.Servers, result.Server{Label: result.ServerLabel(g), Clients: clients, Summary: &sv, Histograms: hists})
	}
}

// concurrency fills in Little's law's count of events in flight for a
// closed loop, and warns when it is well below the number of clients:
// clients then wait somewhere their latency does not show, or take turns.
func (r *run) concurrency(s *result.Summary, tot *metrics.Totals) {
	if r.cfg.Rate > 0 || r.load.WorkerRate != nil {
		return // an open loop: the count in flight follows the rate
	}
	h := tot.EventHist()
	if h.TotalCount() == 0 || s.DurationS <= 0 {
		return
	}
	s.Concurrency = r.inFlight(s.DurationS, h, func(int) bool { return true })
	// With an event limit the last clients to finish run alone, and a
	// workload that ends itself may stop some clients early: only a run
	// that all clients spend working is held to the count.
	if r.cfg.Events > 0 || r.cfg.SelfLimited {
		return
	}
	if n := float64(r.cfg.Threads); s.Concurrency < lowConcurrency*n {
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"%d clients, but events/s x mean latency = %.2f (Little's law): clients spent %.0f%% of the run outside the events measured, waiting where no latency shows",
			r.cfg.Threads, s.Concurrency, 100*(1-s.Concurrency/n)))
	}
}

// inFlight is Little's law's count of events in flight over the measured
// window of secs, for the clients that in picks: the time they spent
// inside events within the window (committed or not), over its length.
// That is events/s x mean latency summed exactly: an event under way at
// either edge of the window, or through a stall there, counts with its
// part inside, not with its whole latency or not at all. When a worker
// timed its events itself (queued I/O), the runner has no such sum and
// the count is events/s x the mean of h, their latencies.
func (r *run) inFlight(secs float64, h *hdr.Histogram, in func(id int) bool) float64 {
	var ns int64
	for id := range r.clients {
		c := &r.clients[id]
		if c.selfRecorded.Load() {
			return float64(h.TotalCount()) / secs * h.Mean() / 1e9
		}
		if in(id) {
			ns += c.flight.Load()
		}
	}
	if r.cfg.Duration > 0 {
		secs = min(secs, r.cfg.Duration.Seconds())
	}
	return time.Duration(ns).Seconds() / secs
}

// lowConcurrency is the share of the clients that Little's law must find
// in flight before the summary warns.
const lowConcurrency = 0.9

// rateReached warns when an open loop's events came well short of the
// rate asked: the schedule then fell behind, and the latency from the
// intended start includes the backlog. Poisson arrivals vary, so the
// shortfall must also exceed three standard deviations of the count.
func (r *run) rateReached(s *result.Summary) {
	if r.cfg.Rate <= 0 || r.load.WorkerRate != nil || s.DurationS <= 0 {
		return
	}
	want := r.cfg.Rate * s.DurationS
	got := float64(s.Events)
	if got >= 0.95*want || want-got < 3*math.Sqrt(want) {
		return
	}
	s.Warnings = append(s.Warnings, fmt.Sprintf(
		"--rate %g/s was not reached: %.0f/s (%.0f%%); the schedule fell behind, so the latency from the intended start includes the backlog (see the schedule lag)",
		r.cfg.Rate, s.EventsPerS, 100*s.EventsPerS/r.cfg.Rate))
}

// headHist is the latency that goes with the headline: of the load's
// LatencyOf operations, or of every event operation.
func (r *run) headHist(t *metrics.Totals) *hdr.Histogram {
	if len(r.load.LatencyOf) == 0 {
		return t.EventHist()
	}
	if len(r.load.LatencyOf) == 1 {
		return t.Ops[r.load.LatencyOf[0]].Hist
	}
	h := metrics.NewHistogram()
	for _, op := range r.load.LatencyOf {
		h.Merge(t.Ops[op].Hist)
	}
	return h
}
