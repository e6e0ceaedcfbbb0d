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
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/mux"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/series"
	"github.com/dbmark/dbmark/internal/target"
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
	// SkipLate and CountFailed are the workload's RunHints.
	SkipLate    time.Duration
	CountFailed bool
	// Jobs, when positive, serves the workers from this many threads,
	// each a loop waiting for all its workers' connections at once, as
	// pgbench's -j threads do, where the target's connections allow it
	// (target.Multiplexes); otherwise every worker is a goroutine.
	Jobs int
	// JobsDefault says Jobs was not the user's choice: a target whose
	// connections are better served each from its own thread
	// (target.LoopsByDefault) then gets a goroutine per worker.
	JobsDefault bool
	// Affinity says where loop threads run (none when empty).
	Affinity Affinity
	// Follow moves workers to the loop pinned to the CPU their server
	// process runs on (follower); only for a server on this machine, and
	// not with many more connections than cores.
	Follow bool
	// SelfLimited says the load ends the run by itself (workers return
	// workload.ErrWorkerDone), so neither Duration nor Events is needed.
	SelfLimited bool
	// MaxPoints bounds the series: past it, neighbouring intervals are
	// merged (result.MergeIntervals), so a long run's memory stays flat.
	// 0: series.DefaultLimit.
	MaxPoints int
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
	case c.Affinity != "" && c.Affinity != AffinitySpread && c.Affinity != AffinityNone && c.Affinity != AffinityFollow:
		return fmt.Errorf("--affinity %q: must be follow, spread or none", string(c.Affinity))
	}
	return nil
}

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
	// GoMaxProcs is the Go scheduler's processor count during the run.
	GoMaxProcs int
	// Loops is how many threads served the workers from loops (Config.Jobs
	// where the target allowed it); 0: a goroutine per worker.
	Loops int
	// LoopCPUs is the CPU each loop's thread was pinned to (nil: none).
	LoopCPUs []int
	// Following says workers followed their server processes between
	// loops (Config.Follow), and Moves how often one moved.
	Following bool
	Moves     int64
}

// Affinity is where loop threads run.
type Affinity string

const (
	// AffinitySpread pins each loop's thread to a CPU of its own, in turn
	// over the CPUs the process may use (as fio's cpus_allowed_policy=split).
	AffinitySpread Affinity = "spread"
	// AffinityNone leaves loop threads to the kernel's scheduler.
	AffinityNone Affinity = "none"
	// AffinityFollow pins as spread does, and with a server on this
	// machine (Config.Follow) moves each worker to the loop on its server
	// process's CPU (follower).
	AffinityFollow Affinity = "follow"
)

// loopCPUs returns the CPU for each of n loops under a, or nil when they
// are left to the kernel: not asked, or only one CPU to use.
func loopCPUs(a Affinity, n int) ([]int, error) {
	if (a != AffinitySpread && a != AffinityFollow) || n == 0 {
		return nil, nil
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading the CPUs the process may use: %w", err)
	}
	var allowed []int
	for c := 0; len(allowed) < set.Count(); c++ {
		if set.IsSet(c) {
			allowed = append(allowed, c)
		}
	}
	if len(allowed) < 2 {
		return nil, nil
	}
	// Start from the CPU this thread runs on: the kernel put the process
	// where there was room, so two runs at once on a big machine do not
	// both take the first CPUs.
	here := -1
	var cpu uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); errno == 0 {
		here = int(cpu)
	}
	return spreadFrom(allowed, here, n), nil
}

// spreadFrom gives n loops CPUs of allowed in turn, from here when it is
// one of them.
func spreadFrom(allowed []int, here, n int) []int {
	first := max(slices.Index(allowed, here), 0)
	cpus := make([]int, n)
	for j := range cpus {
		cpus[j] = allowed[(first+j)%len(allowed)]
	}
	return cpus
}

// LoopsAsked says the user asked for loops (a positive --jobs of their
// own), which every target that can serve them then gets.
func (c Config) LoopsAsked() bool { return c.Jobs > 0 && !c.JobsDefault }

// ErrInterrupted is returned when the run's context was cancelled from outside.
var ErrInterrupted = errors.New("interrupted")

// Run drives the load until a limit is reached, ctx is cancelled or a fatal
// error occurs. It always returns an outcome with what was measured.
func Run(ctx context.Context, cfg Config, tg target.Target, load *workload.Load, sink Sink, log *slog.Logger) *Outcome {
	jobs := 0
	if cfg.Jobs > 0 && target.Multiplexes(tg) && (cfg.LoopsAsked() || target.LoopsByDefault(tg)) {
		jobs = min(cfg.Jobs, cfg.Threads)
	}
	// Threads that wait in raw system calls keep their processors, so
	// the rest of the program needs processors of its own: a loop waits
	// that way (mux.Loop.poll), and so do connections that hold their
	// processor. With fewer processors than such workers, a worker back
	// from a system call waits until the scheduler's monitor takes a
	// processor from one still blocked (it looks every 20 µs to 10 ms):
	// sequential O_DIRECT writes at 16 threads ran at 40% of fio's rate
	// that way.
	cpus, err := loopCPUs(cfg.Affinity, jobs)
	if err != nil {
		log.Warn("loop threads are left to the kernel", "err", err)
	}
	want := 0
	switch {
	case jobs > 0:
		want = jobs + 2
	case load.SyscallBound || target.HoldsProcessor(tg):
		want = cfg.Threads + 2
	}
	if prev := runtime.GOMAXPROCS(0); want > prev {
		runtime.GOMAXPROCS(want)
		defer runtime.GOMAXPROCS(prev)
	}
	gomaxprocs := runtime.GOMAXPROCS(0)
	defer collectSooner(gomaxprocs)()
	start := time.Now()
	reg := metrics.NewRegistry(load.Ops, start)
	r := &run{cfg: cfg, tg: tg, load: load, reg: reg, log: log, ignore: ignoreSet(cfg.IgnoreErrors)}
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
	if cfg.Duration > 0 {
		stopTimer := time.AfterFunc(cfg.Warmup+cfg.Duration, func() { stop(errTimeUp) })
		defer stopTimer.Stop()
		drainTimer := time.AfterFunc(cfg.Warmup+cfg.Duration+drainFor, func() { cancel(errTimeUp) })
		defer drainTimer.Stop()
	}
	warmupEnd := start.Add(cfg.Warmup)

	var wg sync.WaitGroup
	perWorker := splitEvents(cfg.Events, cfg.Threads)
	loops := make([]*mux.Loop, jobs)
	for j := range loops {
		loops[j] = new(mux.Loop)
		if cpus != nil {
			loops[j].Pin(cpus[j])
		}
	}
	// Not with many more connections than cores: each loop would hold a
	// waiting task for every worker, for answers that come late anyway.
	var fl *follower
	if cfg.Follow && !manyPerCPU(cfg.Threads) {
		fl = newFollower(sctx, loops, cfg.Threads)
	}
	work := func(ctx context.Context, id int) {
		events := int64(0)
		if id >= 0 {
			events = perWorker[id]
		}
		if err := r.serve(ctx, id, events, fl); err != nil {
			cancel(err)
		}
	}
	ownThread := locksThreads(target.HoldsProcessor(tg), cfg.Threads)
	if jobs == 0 {
		for i := 0; i < cfg.Threads; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ownThread {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				work(wctx, i)
			}()
		}
	}
	for j, first := 0, 0; j < jobs; j++ {
		// pgbench's split: job j serves a contiguous range of clients,
		// the first Threads%jobs of them one more.
		n := cfg.Threads / jobs
		if j < cfg.Threads%jobs {
			n++
		}
		l := loops[j]
		for id := first; id < first+n; id++ {
			l.Add(func(ctx context.Context) { work(ctx, id) })
		}
		if fl != nil {
			// Room for the workers that may come: every one could.
			for range cfg.Threads - n {
				l.Add(func(ctx context.Context) { work(ctx, -1) })
			}
		}
		first += n
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Run(wctx); err != nil {
				cancel(err)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		// A worker sent to a loop that had ended, or as the run stopped,
		// still has its connection to close and its log to end.
		for _, l := range loops {
			for _, v := range l.Undelivered() {
				v.(*worker).close()
			}
		}
		close(done)
	}()

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
	}
	// A tick exactly at the end of the warm-up starts the measured span there.
	var warmTimer <-chan time.Time
	if cfg.Warmup > 0 {
		t := time.NewTimer(cfg.Warmup)
		defer t.Stop()
		warmTimer = t.C
	}
loop:
	for {
		select {
		case <-done:
			break loop
		case now := <-ticker.C:
			if warmTimer != nil && now.After(warmupEnd.Add(-tickEvery/10)) {
				// This tick is the end of the warm-up: a second one from
				// the timer an instant later would make an interval of
				// almost no time and a meaningless rate.
				warmTimer = nil
			}
			tick(now)
		case now := <-warmTimer:
			warmTimer = nil
			r.emit(reg.Tick(now, true), points, sink)
			ticker.Reset(tickEvery)
		}
	}
	end := time.Now()
	iv := reg.Tick(end, end.Before(warmupEnd))
	if iv.Totals.KindCount(metrics.Event) > 0 || iv.Seconds() > 0.05 {
		points.Add(r.point(iv))
	}

	out := &Outcome{StartedAt: start, EndedAt: end, Series: points.Points(), Status: result.StatusOK, GoMaxProcs: gomaxprocs, Loops: jobs, LoopCPUs: cpus}
	cause := context.Cause(wctx)
	switch {
	case ctx.Err() != nil:
		out.Status = result.StatusInterrupted
		out.Err = ErrInterrupted
	case cause != nil && !errors.Is(cause, errTimeUp) && !errors.Is(cause, context.Canceled):
		out.Status = result.StatusFailed
		out.Err = cause
	}
	r.summarize(out)
	if fl != nil {
		out.Following, out.Moves = true, fl.moves.Load()
	}
	if load.Close != nil {
		if err := load.Close(context.WithoutCancel(ctx)); err != nil {
			log.Warn("closing the load", "err", err)
		}
	}
	return out
}

var errTimeUp = errors.New("time limit reached")

// drainFor bounds how long the events under way at the time limit may
// take to finish. The C tools wait for them without a bound; a statement
// waiting on a lock would then hold the run.
const drainFor = 2 * time.Second

const mib = 1 << 20

// bytes adds up what the operations of one kind moved (Load.OpBytes).
func (r *run) bytes(t *metrics.Totals, k metrics.Kind) int64 {
	var n int64
	for i, b := range r.load.OpBytes {
		if i < len(t.Ops) && t.Ops[i].Spec.Kind == k {
			n += t.Ops[i].Count * b
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
	cfg    Config
	tg     target.Target
	load   *workload.Load
	reg    *metrics.Registry
	log    *slog.Logger
	ignore map[string]bool
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
	if e.Code != "" && e.Code != "client" {
		return fmt.Sprintf("worker %d: %v (code %s; add it to --ignore-errors to count it and go on)", e.Worker, e.Err, e.Code)
	}
	return fmt.Sprintf("worker %d: %v", e.Worker, e.Err)
}

func (e *FatalError) Unwrap() error { return e.Err }

// worker is one client: its connection, its workload's state and its
// counts. It outlives the task it runs in when it follows its server
// process to another loop (follower).
type worker struct {
	id     int
	events int64 // 0: no limit
	done   int64
	h      *metrics.Handle
	conn   target.Conn
	w      workload.Worker
	sched  *schedule
	clock  workload.Clock // shared with a worker that reads the time itself
	last   time.Time      // when its last event ended
	moves  moveState
}

// newWorker connects worker id; nil when it has nothing to do or the run
// stopped while it connected.
func (r *run) newWorker(ctx context.Context, id int, events int64) (*worker, error) {
	if events < 0 {
		return nil, nil
	}
	h := r.reg.NewHandle()
	conn, w, err := r.connect(ctx, id, h, false)
	if err != nil {
		if workload.Stop(ctx).Err() != nil {
			return nil, nil
		}
		return nil, &FatalError{Worker: id, Err: err}
	}
	wk := &worker{id: id, events: events, h: h, conn: conn, w: w, clock: workload.NewClock()}
	rate := r.cfg.Rate / float64(r.cfg.Threads)
	if r.load.WorkerRate != nil {
		rate = r.load.WorkerRate(id)
	}
	if rate > 0 {
		wk.sched = newSchedule(rate, r.cfg.Seed, uint64(id), time.Now())
	}
	return wk, nil
}

func (wk *worker) close() {
	if wk.w != nil {
		wk.w.Close()
	}
	if wk.conn != nil {
		wk.conn.Close()
	}
	wk.moves.close()
}

// serve runs worker id, and with a follower, the workers that come to
// this task's loop after it moved its own away. A task with no worker of
// its own (id < 0) starts by waiting for one.
func (r *run) serve(ctx context.Context, id int, events int64, fl *follower) error {
	var wk *worker
	if id >= 0 {
		var err error
		if wk, err = r.newWorker(ctx, id, events); wk == nil {
			fl.finished()
			return err
		}
	}
	for {
		if wk == nil {
			v, err := mux.From(ctx).Receive(fl.idle)
			if err != nil {
				return nil // every worker is done, or the run stopped
			}
			wk = v.(*worker)
		}
		to, err := r.runWorker(ctx, wk, fl)
		if to == nil || err != nil {
			wk.close()
			fl.finished()
			return err
		}
		to.Send(wk)
		wk = nil
	}
}

// runWorker runs wk's events until it has done them all, the run stops,
// or it should move to the loop it returns. It returns a non-nil error
// only for a fatal error.
func (r *run) runWorker(ctx context.Context, wk *worker, fl *follower) (*mux.Loop, error) {
	// stop ends at the time limit (workload.WithStop): no event starts
	// after it.
	stop := workload.Stop(ctx)
	// A scheduled start is waited for until the time limit at most.
	sleepCtx := ctx
	if wk.sched != nil {
		var cancel context.CancelFunc
		sleepCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(stop, cancel)()
	}
	for wk.events == 0 || wk.done < wk.events {
		if stop.Err() != nil {
			return nil, nil
		}
		if fl != nil && !wk.last.Before(wk.moves.next) {
			if to := fl.destination(ctx, wk); to != nil {
				return to, nil
			}
		}
		var intended time.Time
		if wk.sched != nil {
			intended = wk.sched.next()
			if r.cfg.SkipLate > 0 {
				if now := time.Now(); now.Sub(intended) > r.cfg.SkipLate {
					observe(wk.w, workload.EventInfo{Status: workload.EventSkipped, Intended: intended, Began: now, End: now})
					if r.cfg.CountFailed {
						wk.done++
					}
					continue
				}
			}
			if d := time.Until(intended); d > 0 {
				if mux.Sleep(sleepCtx, d) != nil {
					return nil, nil
				}
			}
		}
		began := wk.clock.Read()
		if wk.sched == nil {
			intended = began
		}
		cs, shared := wk.w.(workload.ClockSharer)
		if shared {
			wk.clock.Now = began
			cs.ShareClock(&wk.clock)
		}
		a := r.event(ctx, wk.id, wk.h, &wk.conn, &wk.w)
		if errors.Is(a.err, workload.ErrWorkerDone) {
			return nil, nil
		}
		if a.err != nil {
			return nil, a.err
		}
		if !a.ok {
			// Failed after its tries, ignored, or interrupted: not committed.
			if a.failed {
				wk.last = wk.clock.Read()
				observe(wk.w, workload.EventInfo{Op: a.op, Status: workload.EventFailed, Code: a.code, Tries: a.tries, Intended: intended, Began: began, End: wk.last})
				if r.cfg.CountFailed {
					wk.done++
				}
			}
			continue
		}
		end := wk.clock.Now
		if !shared || !end.After(began) {
			end = wk.clock.Read()
		}
		wk.last = end
		if a.op == metrics.SelfRecorded {
			wk.done++
			continue
		}
		if wk.sched != nil {
			wk.h.RecordScheduled(a.op, end.Sub(intended), end.Sub(began), began.Sub(intended))
		} else {
			wk.h.Record(a.op, end.Sub(began))
		}
		observe(wk.w, workload.EventInfo{Op: a.op, Tries: a.tries, Intended: intended, Began: began, End: end})
		wk.done++
	}
	return nil, nil
}

// observe tells a worker that wants to know how an event ended.
func observe(w workload.Worker, e workload.EventInfo) {
	if o, ok := w.(workload.EventObserver); ok {
		o.Observe(e)
	}
}

// attempt is how one event ended after its tries.
type attempt struct {
	op     metrics.Op
	ok     bool   // committed
	failed bool   // given up after its tries, or an ignored error
	code   string // the last error's code
	tries  int
	err    error // fatal: ends the run
}

// event runs one event with its retries.
func (r *run) event(ctx context.Context, id int, h *metrics.Handle, conn *target.Conn, w *workload.Worker) attempt {
	for try := 1; ; try++ {
		op, err := (*w).Event(ctx, try > 1)
		if err == nil {
			return attempt{op: op, ok: true, tries: try}
		}
		if errors.Is(err, workload.ErrWorkerDone) {
			return attempt{err: err}
		}
		info := r.tg.Classify(err)
		if info.Class == target.Canceled || ctx.Err() != nil {
			return attempt{}
		}
		h.Error(info.Class.String(), info.Code)
		switch info.Class {
		case target.Reconnect:
			if workload.Stop(ctx).Err() != nil {
				// Past the time limit: the worker is done with it.
				return attempt{}
			}
			h.Reconnect()
			(*w).Close()
			(*conn).Close()
			*w, *conn = nil, nil
			c, nw, err := r.connect(ctx, id, h, true)
			if err != nil {
				if ctx.Err() != nil {
					return attempt{}
				}
				return attempt{err: &FatalError{Worker: id, Err: fmt.Errorf("lost the connection (%s) and could not reconnect for %v: %w", info.Code, r.cfg.ReconnectFor, err)}}
			}
			*conn, *w = c, nw
			return attempt{}
		case target.Retryable:
			rollback(ctx, *conn)
			if workload.Stop(ctx).Err() != nil {
				// Past the time limit no try starts, as in pgbench: the
				// event ends neither committed nor failed.
				return attempt{}
			}
			if try < r.cfg.MaxTries {
				r.tell(id, "repeats the transaction after the error", try, err)
				h.Retry()
				continue
			}
			r.tell(id, "ends the failed transaction", try, err)
			return attempt{op: op, failed: true, code: info.Code, tries: try} // counted, not committed
		default:
			rollback(ctx, *conn)
			if r.ignored(info.Code) {
				r.tell(id, "ends the transaction after an ignored error", try, err)
				return attempt{op: op, failed: true, code: info.Code, tries: try}
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

func rollback(ctx context.Context, c target.Conn) {
	_ = c.Exec(ctx, "ROLLBACK") // nothing to roll back is not a problem
}

// connect opens a connection and a worker on it, retrying for a while when
// it is a reconnect.
func (r *run) connect(ctx context.Context, id int, h *metrics.Handle, again bool) (target.Conn, workload.Worker, error) {
	deadline := time.Now().Add(r.cfg.ReconnectFor)
	backoff := 50 * time.Millisecond
	for {
		c, err := r.tg.Connect(ctx)
		if err == nil {
			w, werr := r.load.NewWorker(ctx, id, c, h)
			if werr == nil {
				return c, w, nil
			}
			c.Close()
			err = werr
		}
		if !again || ctx.Err() != nil || time.Now().After(deadline) {
			return nil, nil, err
		}
		if err := mux.Sleep(ctx, backoff); err != nil {
			return nil, nil, err
		}
		backoff = min(backoff*2, time.Second)
	}
}

// locksThreads says whether each worker is locked to its OS thread. A
// connection that waits in its own thread keeps that thread: the scheduler
// otherwise moves the goroutine to another thread each time it preempts it
// (every 10 ms, as a raw wait counts as running), and the server's threads
// are then woken by ever other client threads, which the kernel cannot
// keep next to them. Not with many more connections than cores: their
// answers come late, so they wait where the scheduler sees them, which it
// does not preempt, so the lock keeps nothing there, and in soaks with 256
// connections it cost 7 to 20 MiB more (within the spread between runs of
// one build; bench/README.md).
func locksThreads(holdsProcessor bool, threads int) bool {
	return holdsProcessor && !manyPerCPU(threads)
}

// manyPerCPU says whether n connections or processors are many more than
// the cores: over fewPerCPU each.
func manyPerCPU(n int) bool { return n > fewPerCPU*runtime.NumCPU() }

// fewPerCPU is how many connections per core still lock their threads,
// and processors per core keep the collector's default target.
const fewPerCPU = 8

// collectSooner lowers the garbage collector's target (GOGC) to
// manyProcsGCPercent for a run on many more processors than cores, unless
// the user set GOGC, and returns what puts it back. Each processor caches
// spans of its own for the sizes it allocates, and goroutines waking on
// hundreds of processors leave megabytes of mostly empty spans between two
// collections. With 256 connections the live heap stayed near 20 MiB
// (buffers allocated per connection at the start) while the heap in use
// and the resident size grew, past 100 MiB in 10-minute runs. The events
// allocate next to nothing, so a collection every few seconds costs little.
func collectSooner(procs int) (restore func()) {
	if !manyPerCPU(procs) || os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(manyProcsGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

// manyProcsGCPercent is collectSooner's target: a collection when the heap
// has grown by a quarter since the last.
const manyProcsGCPercent = 25

// schedule draws a worker's intended start times: a Poisson process at the
// worker's share of the rate, as pgbench -R does per client. Each worker
// owns its schedule, so the open loop needs no shared lock.
type schedule struct {
	rng   *rand.Rand
	mean  float64 // mean gap in ns
	nextT time.Time
}

func newSchedule(rate float64, seed, worker uint64, now time.Time) *schedule {
	return &schedule{rng: rand.New(rand.NewPCG(seed, worker^0x5eed)), mean: 1e9 / rate, nextT: now}
}

func (s *schedule) next() time.Time {
	s.nextT = s.nextT.Add(time.Duration(s.rng.ExpFloat64() * s.mean))
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
	p.ReadMiBPerS = float64(r.bytes(iv.Totals, metrics.Read)) / mib / secs
	p.WriteMiBPerS = float64(r.bytes(iv.Totals, metrics.Write)) / mib / secs
	if iv.Retries > 0 {
		p.RetriesPerS = float64(iv.Retries) / secs
	}
	if h := iv.EventHist(); h.TotalCount() > 0 {
		for _, q := range r.cfg.Percentiles {
			p.Latency = append(p.Latency, result.Percentile{P: q, MS: float64(h.ValueAtQuantile(q)) / 1e6})
		}
	}
	if iv.Lag != nil && iv.Lag.TotalCount() > 0 {
		p.LagMeanMS = iv.Lag.Mean() / 1e6
	}
	if r.load.Tick != nil {
		r.load.Tick(iv, &p)
	}
	return p
}

// summarize fills the outcome's summary and histograms from the cumulative totals.
func (r *run) summarize(out *Outcome) {
	tot, span := r.reg.Cumulative()
	secs := span.Seconds()
	per := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	s := &out.Summary
	s.DurationS = secs
	s.Events = tot.KindCount(metrics.Event)
	s.EventsPerS = per(s.Events)
	s.Queries = result.QueryCounts{Read: tot.KindCount(metrics.Read), Write: tot.KindCount(metrics.Write), Other: tot.KindCount(metrics.Other)}
	s.Queries.Total = s.Queries.Read + s.Queries.Write + s.Queries.Other
	s.QueriesPerS = per(s.Queries.Total)
	s.ReadMiBPerS = per(r.bytes(tot, metrics.Read)) / mib
	s.WriteMiBPerS = per(r.bytes(tot, metrics.Write)) / mib
	for _, k := range tot.ErrorKeys() {
		s.Errors = append(s.Errors, result.ErrorCount{Class: k.Class, Code: k.Code, Count: tot.Errors[k]})
		s.ErrorsTotal += tot.Errors[k]
	}
	s.Retries, s.Reconnects, s.Clamped = tot.Retries, tot.Reconnects, tot.Clamped
	s.Latency = result.LatencyOf(tot.EventHist(), r.cfg.Percentiles)
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
	for i, o := range tot.Ops {
		os := result.OpSummary{Name: o.Spec.Name, Kind: o.Spec.Kind.String(), Count: o.Count, PerS: per(o.Count)}
		if i < len(r.load.OpBytes) {
			os.MiBPerS = per(o.Count*r.load.OpBytes[i]) / mib
		}
		os.Latency = result.LatencyOf(o.Hist, r.cfg.Percentiles)
		os.Service = result.LatencyOf(o.Service, r.cfg.Percentiles)
		s.Ops = append(s.Ops, os)
		if o.Hist.TotalCount() == 0 { // none, or counted without times
			continue
		}
		if hh, err := result.EncodeHistogram(o.Spec.Name, "latency", o.Hist); err == nil {
			out.Hists = append(out.Hists, hh)
		}
		if o.Service != nil {
			if hh, err := result.EncodeHistogram(o.Spec.Name, "service", o.Service); err == nil {
				out.Hists = append(out.Hists, hh)
			}
		}
	}
	if tot.Lag != nil && tot.Lag.TotalCount() > 0 {
		if hh, err := result.EncodeHistogram("events", "lag", tot.Lag); err == nil {
			out.Hists = append(out.Hists, hh)
		}
	}
	slices.SortStableFunc(s.Errors, func(a, b result.ErrorCount) int { return int(b.Count - a.Count) })
}
