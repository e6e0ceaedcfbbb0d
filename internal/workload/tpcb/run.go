package tpcb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/tpcb/script"
)

// Plan declares pgbench's ways with the run's limits: -t is transactions
// per client (dbmark's --events is a total), 10 per client when neither
// -t nor -T is given, --max-tries 0 is no limit, -L skips transactions
// already late under -R, and failed or skipped ones count toward -t.
func (w *Workload) Plan(in workload.PlanInput) (workload.PlanAdjust, error) {
	o := &w.opt
	var adj workload.PlanAdjust
	if err := w.validateRun(w.fs, in); err != nil {
		return adj, err
	}
	perClient := changed(w.fs, "transactions")
	switch {
	case perClient && in.Given.Time:
		return adj, fmt.Errorf("specify either a number of transactions (-t) or a duration (-T), not both")
	case perClient && in.Given.Events:
		return adj, fmt.Errorf("specify either -t (transactions per client) or --events (in total), not both")
	case perClient && o.Transactions < 1:
		return adj, fmt.Errorf("-t %d: invalid number of transactions (at least 1 per client)", o.Transactions)
	case perClient:
		adj.PerClient = o.Transactions
	}
	adj.DefaultPerClient = 10 // pgbench's
	if in.MaxTries == 0 {
		// pgbench's --max-tries=0: no limit, allowed only when something
		// else ends a transaction's retries.
		if !in.Given.Time && o.LatencyLimitMS == 0 {
			return adj, fmt.Errorf("--max-tries 0 (unlimited) needs --latency-limit or a duration (-T)")
		}
		adj.UnlimitedTries = true
	}
	adj.SkipLate = time.Duration(o.LatencyLimitMS * float64(time.Millisecond))
	if o.AggregateInterval > 0 && in.Given.Time {
		if d := in.Time; d%(time.Duration(o.AggregateInterval)*time.Second) != 0 {
			return adj, fmt.Errorf("--aggregate-interval %d: the duration (-T %v) must be a multiple of it", o.AggregateInterval, d)
		}
	}
	adj.CountFailed = true
	// pgbench 15 ends only the client that meets an error it neither
	// retries nor ignores; --exit-on-abort (pgbench 16) ends them all.
	adj.AbortClient = !o.ExitOnAbort
	return adj, nil
}

func fsDuration(fs *pflag.FlagSet, name string) time.Duration {
	d, _ := time.ParseDuration(fs.Lookup(name).Value.String())
	return d
}

// initOptions are pgbench's options of -i (dbmark prepare tpcb), refused
// in a run as pgbench refuses them: long name, and short where it has one.
var initOptions = [][2]string{{"init-steps", "I"}, {"fillfactor", "F"}, {"foreign-keys", ""}, {"unlogged-tables", ""},
	{"partitions", ""}, {"partition-method", ""}, {"tablespace", ""}, {"index-tablespace", ""}}

// runOptions are pgbench's benchmarking options, refused by prepare as
// pgbench -i refuses them.
var runOptions = [][2]string{{"builtin", "b"}, {"file", "f"}, {"select-only", "S"}, {"skip-some-updates", "N"},
	{"client", "c"}, {"jobs", "j"}, {"transactions", "t"}, {"connect", "C"}, {"define", "D"}, {"latency-limit", "L"},
	{"protocol", "M"}, {"report-per-command", "r"}, {"log", "l"}, {"log-prefix", ""}, {"sampling-rate", ""},
	{"aggregate-interval", ""}, {"failures-detailed", ""}, {"exit-on-abort", ""}}

// givenOf names those of opts given on the command line, as -S/--select-only.
func givenOf(fs *pflag.FlagSet, opts [][2]string) []string {
	var out []string
	for _, o := range opts {
		if !changed(fs, o[0]) {
			continue
		}
		if o[1] != "" {
			out = append(out, "-"+o[1]+"/--"+o[0])
		} else {
			out = append(out, "--"+o[0])
		}
	}
	return out
}

// validateRun checks the run options that stand alone.
func (w *Workload) validateRun(fs *pflag.FlagSet, in workload.PlanInput) error {
	o := &w.opt
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if given := givenOf(fs, initOptions); len(given) > 0 {
		add("%s: options of the tables' initialization (pgbench -i), not of a run; give them to dbmark prepare tpcb", strings.Join(given, ", "))
	}
	if o.Jobs < 1 {
		add("-j %d: invalid number of threads (at least 1)", o.Jobs)
	}
	// pgbench refuses zeros that would mean "off": leave the option out.
	if d := fsDuration(fs, "report-interval"); changed(fs, "progress") && d < time.Second {
		add("-P/--progress %v: must be at least 1 second (leave it out for no progress lines)", d)
	}
	if in.Given.Rate && in.Rate <= 0 {
		add("-R/--rate %v: invalid rate limit (above 0 transactions per second; leave it out for no limit)", in.Rate)
	}
	if changed(fs, "latency-limit") && o.LatencyLimitMS <= 0 {
		add("-L/--latency-limit %v: invalid latency limit (above 0 ms; leave it out for no limit)", o.LatencyLimitMS)
	}
	if changed(fs, "sampling-rate") && o.SamplingRate <= 0 {
		add("--sampling-rate %v: invalid sampling rate (above 0 and at most 1)", o.SamplingRate)
	}
	if changed(fs, "progress-timestamp") && fsDuration(fs, "report-interval") == 0 {
		add("--progress-timestamp is allowed only under -P/--progress")
	}
	if o.LatencyLimitMS < 0 || math.IsNaN(o.LatencyLimitMS) {
		add("--latency-limit %v: must not be negative", o.LatencyLimitMS)
	}
	if o.SamplingRate < 0 || o.SamplingRate > 1 {
		add("--sampling-rate %v: must be above 0 and at most 1", o.SamplingRate)
	}
	if o.AggregateInterval < 0 {
		add("--aggregate-interval %d: must be a positive number of seconds", o.AggregateInterval)
	}
	if !o.Log {
		if o.AggregateInterval > 0 {
			add("--aggregate-interval is allowed only when logging transactions (-l)")
		}
		if o.SamplingRate > 0 {
			add("--sampling-rate is allowed only when logging transactions (-l)")
		}
		if changed(fs, "log-prefix") {
			add("--log-prefix is allowed only when logging transactions (-l)")
		}
	}
	if o.AggregateInterval > 0 && o.SamplingRate > 0 {
		add("--sampling-rate and --aggregate-interval cannot be used at the same time")
	}
	if in.MaxTries < 0 {
		add("--max-tries %d: must not be negative", in.MaxTries)
	}
	if o.Scale < 1 {
		add("--scale %d: must be at least 1", o.Scale)
	}
	if _, err := o.parseDefines(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	_, err := o.loadScripts()
	return err
}

func (w *Workload) usesBuiltin() bool {
	if len(w.opt.Scripts) == 0 {
		return true
	}
	for _, a := range w.opt.Scripts {
		if a.builtin {
			return true
		}
	}
	return false
}

// runState is what the workers of one run share.
type runState struct {
	w        *Workload
	env      workload.Env
	scripts  []*scriptEntry
	total    int64 // sum of the weights
	shared   *script.Shared
	scale    int64
	mode     string
	clients  int
	maxTries int
	rate     bool
	measured bool          // -R, -L or -P: pgbench times each transaction
	limit    time.Duration // -L
	log      *txLog
	check    *workload.ReadCheck // nil: no read must find a row
	stats    []clientStats       // by client id; each written by its client only
	dialect  target.Dialect
	prog     liveFigures // the last interval, for the progress line
	// ready is the longest time a client took to connect, in
	// nanoseconds: pgbench's initial connection time, the clients
	// connecting at once.
	ready atomic.Int64
}

// clientStats are one client's counters, per script.
type clientStats struct {
	txNo    int64
	scripts []scriptStats
	// cmdFailed and cmdRetried count, per script and command, the
	// transactions that failed in that command and the retries it caused
	// (pgbench's -r columns).
	cmdFailed, cmdRetried [][]int64
	connectNS             int64      // -C: time spent connecting, every transaction's
	live                  liveCounts // the same counts over all scripts, for progress lines
	_                     [64]byte   // keep clients' counters off each other's cache lines
}

type scriptStats struct {
	late, skipped                   int64
	serialization, deadlock, failed int64 // failed: other ignored errors
	retried, retries                int64
}

// Load prepares the run: the scripts, the scale (read from
// pgbench_branches when a builtin script runs, as pgbench does), pgbench's
// vacuum unless -n, and the -l log files.
func (w *Workload) Load(ctx context.Context, env workload.Env) (*workload.Load, error) {
	o := &w.opt
	scripts, err := o.loadScripts()
	if err != nil {
		return nil, err
	}
	vars, err := o.parseDefines()
	if err != nil {
		return nil, err
	}
	rs := &runState{w: w, env: env, scripts: scripts, scale: o.Scale, clients: env.Threads,
		limit: time.Duration(o.LatencyLimitMS * float64(time.Millisecond)), dialect: env.Target.Dialect()}
	rs.maxTries, rs.rate = env.Plan.MaxTries, env.Plan.Rate > 0
	rs.measured = rs.rate || rs.limit > 0
	if w.fs != nil {
		rs.measured = rs.measured || fsDuration(w.fs, "report-interval") > 0
		if _, ok := env.Target.(target.ProtocolTarget); ok {
			if f := w.fs.Lookup("pg-mode"); f != nil {
				rs.mode = f.Value.String()
			}
		}
	}
	if rs.mode == "" {
		rs.mode = "prepared" // the other engines' prepared statements
	}
	if err := rs.setup(ctx); err != nil {
		return nil, err
	}
	rs.shared = &script.Shared{Scale: rs.scale, RandomSeed: env.Seed, Clients: env.Threads, Vars: vars, Logger: env.Logger,
		Debug: locked(env.Progress), Stdout: locked(env.Stdout)} // where pgbench writes them: debug() on stderr, \shell's output on stdout
	if o.PgbenchForm && o.Debug {
		rs.shared.Trace = rs.shared.Debug
		all := make([]*script.Script, len(scripts))
		for i, e := range scripts {
			all[i] = e.s
		}
		rs.shared.NameStatements(all)
	}
	var ops []metrics.OpSpec
	for _, e := range scripts {
		e.op = metrics.Op(len(ops))
		ops = append(ops, metrics.OpSpec{Name: "script:" + e.name, Kind: metrics.Event})
		rs.total += e.weight
	}
	for _, e := range scripts {
		e.cmdOps = make([]metrics.Op, len(e.s.Commands))
		for i, c := range e.s.Commands {
			e.cmdOps[i] = -1
			if c.Kind == script.Meta && !o.ReportPerCommand {
				continue
			}
			e.cmdOps[i] = metrics.Op(len(ops))
			ops = append(ops, commandSpec(e.name, i, c))
		}
	}
	rs.check = rs.readCheck()
	rs.stats = make([]clientStats, env.Threads)
	for i := range rs.stats {
		st := &rs.stats[i]
		st.scripts = make([]scriptStats, len(scripts))
		st.cmdFailed, st.cmdRetried = make([][]int64, len(scripts)), make([][]int64, len(scripts))
		for j, e := range scripts {
			st.cmdFailed[j], st.cmdRetried[j] = make([]int64, len(e.s.Commands)), make([]int64, len(e.s.Commands))
		}
	}
	if o.Log {
		if rs.log, err = newTxLog(o, env.Threads, rs.rate, rs.maxTries); err != nil {
			return nil, err
		}
	}
	w.run = rs
	return &workload.Load{
		Ops: ops,
		NewWorker: func(ctx context.Context, s workload.Seat) (workload.Worker, error) {
			return rs.newWorker(ctx, s)
		},
		// Every worker is one of rs's.
		Observe: func(w workload.Worker, e workload.EventInfo) { w.(*worker).observe(e) },
		// observe counts a transaction committed at its first try only in
		// the log and as late.
		QuietCommits: rs.log == nil && rs.limit <= 0,
		Tick: func(iv metrics.Interval, p *result.Interval) {
			rs.tick(iv, p)
			if rs.check != nil {
				rs.check.Tick(iv, p)
			}
		},
		Finish: func(_ context.Context, res *result.Result) {
			if rs.check != nil {
				rs.check.Finish(res)
			}
		},
		Close: func(context.Context) error {
			if rs.log != nil {
				return rs.log.Close()
			}
			return nil
		},
	}, nil
}

// readCheck numbers the commands that must find a row (the builtins'
// read of an account), one operation each however many scripts share it,
// and counts them; nil when no script has one.
func (rs *runState) readCheck() *workload.ReadCheck {
	var names []string
	index := map[string]int{}
	for _, e := range rs.scripts {
		e.checks = make([]int, len(e.s.Commands))
		for i, c := range e.s.Commands {
			e.checks[i] = -1
			if !c.MustFind {
				continue
			}
			name := commandSpec(e.name, i, c).Name
			if _, ok := index[name]; !ok {
				index[name] = len(names)
				names = append(names, name)
			}
			e.checks[i] = index[name]
		}
	}
	if len(names) == 0 {
		return nil
	}
	return workload.NewReadCheck(rs.env.Threads, names, fmt.Sprintf(
		"re-run dbmark prepare tpcb -s %d to load every account again, or give a custom script the -s the tables were prepared with", rs.scale), false)
}

// commandSpec names a command's operation ("stmt:tpcb-like:6", 1-based
// command number, or "stmt:my.sql:lookup" when a comment above the
// statement names it) and counts SQL as a read, a write or another
// statement by its first word.
func commandSpec(script_ string, i int, c *script.Command) metrics.OpSpec {
	if c.Kind == script.Meta {
		return metrics.OpSpec{Name: fmt.Sprintf("meta:%s:%d", script_, i+1), Kind: metrics.Meta}
	}
	kind := metrics.Other
	word := strings.ToLower(strings.TrimLeft(c.Text, " \t\r\n("))
	if j := strings.IndexAny(word, " \t\r\n(;"); j >= 0 {
		word = word[:j]
	}
	switch word {
	case "select", "with", "values", "show", "table":
		kind = metrics.Read
	case "insert", "update", "delete", "merge", "copy", "replace":
		kind = metrics.Write
	}
	if c.Name != "" {
		return metrics.OpSpec{Name: "stmt:" + script_ + ":" + c.Name, Kind: kind}
	}
	return metrics.OpSpec{Name: fmt.Sprintf("stmt:%s:%d", script_, i+1), Kind: kind}
}

// setup reads the scale and vacuums as pgbench does before a run.
func (rs *runState) setup(ctx context.Context) error {
	o := &rs.w.opt
	builtin := false
	for _, e := range rs.scripts {
		builtin = builtin || e.builtin
	}
	if !builtin && o.NoVacuum {
		return nil
	}
	c, err := rs.env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if builtin {
		n, err := readScale(ctx, c)
		if err != nil {
			return err
		}
		if changed(rs.w.fs, "scale") && rs.env.Progress != nil {
			// pgbench's warning, whatever the -s given.
			fmt.Fprintf(rs.env.Progress, "warning: scale option ignored, using count from pgbench_branches table (%d)\n", n)
		}
		rs.scale = n
	}
	if o.NoVacuum {
		return nil
	}
	// pgbench's vacuum: its errors are reported and ignored.
	for _, s := range vacuumBeforeRun(rs.env.Target.Dialect(), o.VacuumAll) {
		if err := c.Exec(ctx, s); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rs.env.Logger.Warn("before the run (ignoring this error and continuing anyway)", "sql", s, "err", err)
		}
	}
	return nil
}

// vacuumBeforeRun is pgbench's vacuum before a run: vacuum branches and
// tellers, empty the history, and with -v vacuum and analyze accounts
// too. Engines without VACUUM only empty the history.
func vacuumBeforeRun(d target.Dialect, all bool) []string {
	out := append(d.Maintain("pgbench_branches", target.Vacuum), d.Maintain("pgbench_tellers", target.Vacuum)...)
	out = append(out, d.Truncate("pgbench_history")...)
	if all && len(d.Maintain("pgbench_accounts", target.Vacuum)) > 0 {
		out = append(out, d.Maintain("pgbench_accounts", target.Vacuum|target.Analyze)...)
	}
	return out
}

// lockedWriter lets the clients write to one writer, a line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// locked is w shared by the clients; nil stays nil (discarded).
func locked(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &lockedWriter{w: w}
}

// worker is one pgbench client on its connection.
type worker struct {
	rs   *runState
	id   int
	conn target.Conn
	swap *swapConn // -C: the connection the client sees, changed per transaction
	// txs is conn's TxStater, nil where it can tell no transaction
	// state, looked up once (without -C the connection stays).
	txs    target.TxStater
	h      *metrics.Handle
	client *script.Client
	choose script.Rand // picks the script, as pgbench's chooseScript
	sample script.Rand // --sampling-rate
	cur    int
	rec    recorder
	st     *clientStats
	// failedAt is the command the last failed try stopped at (-1: none).
	failedAt int
	tries    int // of the current transaction
}

// verbose says whether errors are told in pgbench's words (the pgbench
// front end's --verbose-errors).
func (wk *worker) verbose() bool {
	o := &wk.rs.w.opt
	return o.PgbenchForm && o.VerboseErrors && wk.rs.env.Progress != nil
}

// gotError is pgbench's --verbose-errors line of a statement's error that
// the transaction may be tried again after (a serialization failure, a
// deadlock), with the server's message as libpq prints it.
func (wk *worker) gotError(err error) {
	if !wk.verbose() || wk.rs.env.Target.Classify(err).Class != target.Retryable {
		return
	}
	var ce *script.CommandError
	if !errors.As(err, &ce) || ce.Meta != "" {
		return
	}
	msg := err.Error() + "\n"
	var lp interface{ Libpq(query string) string }
	if errors.As(err, &lp) {
		msg = lp.Libpq(ce.SQL)
	}
	fmt.Fprintf(wk.rs.env.Progress, "pgbench: client %d got an error in command %d (SQL) of script %d; %s", wk.id, ce.Command, ce.Script, msg)
}

// tell is pgbench's --verbose-errors line of what the client does after
// a failed try.
func (wk *worker) tell(what string, try int) {
	if !wk.verbose() {
		return
	}
	tries := strconv.Itoa(try)
	if wk.rs.maxTries > 0 && wk.rs.maxTries < math.MaxInt32 {
		tries += "/" + strconv.Itoa(wk.rs.maxTries)
	}
	fmt.Fprintf(wk.rs.env.Progress, "pgbench: client %d %s (try %s)\n", wk.id, what, tries)
}

func (rs *runState) newWorker(ctx context.Context, s workload.Seat) (*worker, error) {
	id, conn, h := s.ID, s.Conn, s.H
	wk := &worker{rs: rs, id: id, conn: conn, h: h, st: &rs.stats[id], failedAt: -1}
	// Each client draws its script choices and log samples from streams
	// of its own, seeded as pgbench seeds a thread's, so no lock is shared.
	wk.choose, _, wk.sample = rs.shared.ThreadRandom(id)
	// The recorder shares its clock reads with the runner.
	wk.rec.h, wk.rec.timed, wk.rec.clock = h, rs.w.opt.ReportPerCommand, s.Clock
	if wk.rec.clock == nil {
		c := workload.NewClock()
		wk.rec.clock = &c
	}
	if rs.check != nil {
		wk.rec.found = rs.check.Client(id)
	}
	n := 0
	for _, e := range rs.scripts {
		n = max(n, len(e.cmdOps))
	}
	wk.rec.ran = make([]int64, n)
	var c target.Conn = conn
	if rs.w.opt.Connect {
		wk.swap, c = newSwapConn(conn)
	} else {
		wk.txs, _ = conn.(target.TxStater)
	}
	var err error
	if wk.client, err = script.NewClient(rs.shared, id, c, rs.dialect); err != nil {
		return nil, err
	}
	if rs.maxTries == 1 {
		wk.client.TriedOnce()
	}
	for d := int64(s.Dialed); ; {
		if old := rs.ready.Load(); old >= d || rs.ready.CompareAndSwap(old, d) {
			break
		}
	}
	return wk, nil
}

// recorder times each command into its operation, or with -r off counts
// the statements without timing them, as pgbench times them only with -r;
// it shares the times it reads with the runner.
type recorder struct {
	h     *metrics.Handle
	ops   []metrics.Op
	timed bool    // -r
	ran   []int64 // untimed completions by command, added to h per transaction
	clock *workload.Clock
	// checks are the script's reads that must find a row (scriptEntry's),
	// counted in found.
	checks []int
	found  workload.Finder
}

func (r *recorder) Begin() time.Duration {
	if r.clock.Now != 0 {
		return r.clock.Now
	}
	return r.clock.Read()
}

// Now reads the shared clock.
func (r *recorder) Now() time.Duration { return r.clock.Read() }

func (r *recorder) Wants(i int) bool { return r.timed && r.ops[i] >= 0 }

func (r *recorder) Command(i int, end, d time.Duration) {
	if op := r.ops[i]; op >= 0 {
		if r.timed {
			r.h.Record(op, d)
		} else {
			r.ran[i]++
		}
	}
	r.clock.Now = end
}

func (r *recorder) Count(i int) { r.ran[i]++ }

func (r *recorder) Found(i int, ok bool) {
	if c := r.checks[i]; c >= 0 {
		r.found.Found(c, ok)
	}
}

// flush adds the transaction's untimed statements to the handle.
func (r *recorder) flush() {
	if !r.timed {
		r.h.AddCounts(r.ops, r.ran)
	}
}

// freshClock makes the next command read the clock itself: after a
// failure (a retry must not count the rollback in its first command) or a
// connection made for the transaction.
func (wk *worker) freshClock() { wk.rec.clock.Now = 0 }

// pick is pgbench's chooseScript: a weighted draw from the client's own
// random state.
func (wk *worker) pick() int {
	if len(wk.rs.scripts) == 1 {
		return 0
	}
	w := wk.choose.Int64Range(0, wk.rs.total-1)
	i := 0
	for {
		w -= wk.rs.scripts[i].weight
		i++
		if w < 0 {
			return i - 1
		}
	}
}

// Event runs one transaction: a script chosen by weight, run once. A
// retry runs the same script with the variables and random state it
// started with.

var _ workload.Worker = (*worker)(nil)

func (wk *worker) Event(ctx context.Context, retry bool) (metrics.Op, error) {
	if retry {
		if wk.failedAt >= 0 {
			wk.st.cmdRetried[wk.cur][wk.failedAt]++
		}
		wk.tell("repeats the transaction after the error", wk.tries)
		if wk.swap != nil && wk.swap.own {
			// The runner rolled back its own connection, not this one.
			_ = wk.swap.Exec(ctx, "ROLLBACK")
		}
		wk.client.Restore()
	} else {
		wk.tries = 0
		wk.cur = wk.pick()
		if wk.rs.w.opt.Connect {
			if err := wk.reconnect(ctx); err != nil {
				return wk.rs.scripts[wk.cur].op, err
			}
			wk.freshClock()
		}
	}
	e := wk.rs.scripts[wk.cur]
	wk.rec.ops, wk.rec.checks = e.cmdOps, e.checks
	wk.failedAt = -1
	wk.tries++
	err := wk.client.Run(ctx, e.s, &wk.rec)
	wk.rec.flush()
	if err != nil {
		wk.failedAt = wk.client.Command()
		wk.gotError(err)
		wk.freshClock()
		return e.op, err
	}
	if wk.txOpen() {
		// As pgbench: the transaction counts, and the client ends.
		return e.op, &workload.AfterEventError{Err: fmt.Errorf("client %d aborted: end of script reached without completing the last transaction (script %s)", wk.id, e.title)}
	}
	return e.op, nil
}

// txOpen says whether the script left a transaction block open, where the
// connection can tell (PostgreSQL).
func (wk *worker) txOpen() bool {
	if wk.swap == nil {
		return wk.txs != nil && wk.txs.InTransaction()
	}
	ts, ok := wk.swap.Conn.(target.TxStater)
	return ok && ts.InTransaction()
}

// reconnect is -C: a new connection for each transaction, its time part
// of the transaction's latency as in pgbench.
func (wk *worker) reconnect(ctx context.Context) error {
	start := time.Now()
	c, err := wk.rs.env.Target.Connect(ctx)
	wk.st.connectNS += int64(time.Since(start))
	if err != nil {
		return err
	}
	wk.client.Forget() // its statements go with the old connection
	wk.swap.set(c)
	return nil
}

// observe counts late, skipped, failed and retried transactions per
// script and writes the -l log.
func (wk *worker) observe(e workload.EventInfo) {
	if e.Status == workload.EventSkipped {
		wk.cur = wk.pick() // pgbench chooses the script before it skips
	} else {
		wk.cur = int(e.Op)
	}
	st := &wk.st.scripts[wk.cur]
	wk.st.txNo++
	switch e.Status {
	case workload.EventSkipped:
		st.skipped++
		wk.st.live.skipped.Add(1)
	case workload.EventFailed:
		wk.st.live.failed.Add(1)
		if e.Tries > 0 {
			wk.tell("ends the failed transaction", e.Tries)
		}
		if wk.failedAt >= 0 && wk.cur < len(wk.st.cmdFailed) {
			wk.st.cmdFailed[wk.cur][wk.failedAt]++
		}
		switch failureKind(e.Code) {
		case "serialization":
			st.serialization++
		case "deadlock":
			st.deadlock++
		default:
			st.failed++
		}
	default:
		if wk.rs.limit > 0 && e.End-e.Intended > wk.rs.limit {
			st.late++
		}
	}
	if e.Tries > 1 {
		st.retried++
		st.retries += int64(e.Tries - 1)
		wk.st.live.retried.Add(1)
		wk.st.live.retries.Add(int64(e.Tries - 1))
	}
	if l := wk.rs.log; l != nil {
		if r := wk.rs.w.opt.SamplingRate; r > 0 && wk.sample.Float64() > r {
			return
		}
		l.write(wk.id, wk.st.txNo, wk.cur, e, failureKind(e.Code), wk.rs.w.opt.FailuresDetailed)
	}
}

// failureKind names a failure as pgbench does: serialization or deadlock
// (by SQLSTATE, or MariaDB's deadlock and SQLite's busy codes).
func failureKind(code string) string {
	switch code {
	case "40001", "1020":
		return "serialization"
	case "40P01", "1213":
		return "deadlock"
	}
	return "failed"
}

// Close releases the client's statements and the connection of -C.
func (wk *worker) Close() error {
	err := wk.client.Close()
	if wk.swap != nil {
		wk.swap.release()
	}
	return err
}
