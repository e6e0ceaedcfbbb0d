package tpcb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dbmark/dbmark/internal/progress"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// allInitSteps are pgbench's -I step letters.
const allInitSteps = "dtgGvpf"

// defaultInitSteps is pgbench's default: drop, tables, client-side data,
// vacuum, primary keys.
const defaultInitSteps = "dtgvp"

// initSteps resolves -I with -n (no vacuum) and --foreign-keys, as pgbench
// does: -n removes v, --foreign-keys adds f when missing.
func (o *Options) initSteps() string {
	steps := strings.ReplaceAll(o.InitSteps, " ", "")
	if o.NoVacuum {
		steps = strings.ReplaceAll(steps, "v", "")
	}
	if o.ForeignKeys && !strings.Contains(steps, "f") {
		steps += "f"
	}
	return steps
}

func (o *Options) schema(d target.Dialect) *schema {
	return &schema{d: d, scale: o.Scale, fillfactor: o.Fillfactor, unlogged: o.Unlogged,
		partitions: o.Partitions, method: o.PartitionMethod, tablespace: o.Tablespace, indexTablespace: o.IndexTablespace}
}

// validateInit checks the init options against the engine.
func (o *Options) validateInit(d target.Dialect) []string {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	for _, c := range o.InitSteps {
		if c != ' ' && !strings.ContainsRune(allInitSteps, c) {
			add("--init-steps %q: unrecognized initialization step %q (allowed: %q)", o.InitSteps, c, allInitSteps)
		}
	}
	if o.Scale < 1 || o.Scale > 1_000_000_000 {
		add("--scale %d: must be between 1 and 1000000000", o.Scale)
	}
	if o.Fillfactor < 10 || o.Fillfactor > 100 {
		add("--fillfactor %d: must be between 10 and 100", o.Fillfactor)
	}
	if o.Partitions < 0 {
		add("--partitions %d: must not be negative", o.Partitions)
	}
	switch o.PartitionMethod {
	case "", "range", "hash":
	default:
		add("--partition-method %q: must be range or hash", o.PartitionMethod)
	}
	if o.PartitionMethod != "" && o.Partitions == 0 {
		add("--partition-method requires --partitions greater than zero")
	}
	steps := o.initSteps()
	if d.Supports(target.Tablespaces) != nil {
		for _, ts := range []struct{ flag, v string }{{"--tablespace", o.Tablespace}, {"--index-tablespace", o.IndexTablespace}} {
			if ts.v != "" {
				add("%s %q: tablespaces are PostgreSQL's; on %s leave it out", ts.flag, ts.v, d.Name())
			}
		}
	}
	lacks := func(f target.Feature, format string, a ...any) {
		if err := d.Supports(f); err != nil {
			add("%s: %v", fmt.Sprintf(format, a...), err)
		}
	}
	if o.Fillfactor != 100 {
		lacks(target.FillFactor, "--fillfactor %d", o.Fillfactor)
	}
	if o.Unlogged {
		lacks(target.Unlogged, "--unlogged-tables")
	}
	fks := strings.Contains(steps, "f")
	if o.Partitions > 0 {
		if d.Supports(target.Partitions) != nil {
			lacks(target.Partitions, "--partitions")
		} else if fks {
			lacks(target.ForeignKeysOnPartitions, "--foreign-keys with --partitions")
		}
	}
	if fks && d.Supports(target.AddedForeignKeys) != nil {
		add("--foreign-keys (init step f): %s cannot add a foreign key to an existing table", d.Name())
	}
	return errs
}

// Prepare is pgbench -i: the -I steps in order, timed, with a progress bar
// while generating data.
func (w *Workload) Prepare(ctx context.Context, env workload.Env) error {
	o := &w.opt
	if w.fs != nil && w.fs.Lookup("events") == nil { // the prepare command's flags, not a run's
		if given := givenOf(w.fs, runOptions); len(given) > 0 {
			return fmt.Errorf("%s: options of a run, not of the tables' initialization (pgbench -i); give them to dbmark run tpcb", strings.Join(given, ", "))
		}
	}
	if errs := o.validateInit(env.Target.Dialect()); len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	if o.PartitionMethod == "" && o.Partitions > 0 {
		o.PartitionMethod = "range"
	}
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	sc := o.schema(env.Target.Dialect())
	if err := workload.MarkIncomplete(ctx, c, dataSet); err != nil {
		return fmt.Errorf("prepare tpcb: %w", err)
	}
	start := time.Now()
	var timings []string
	for _, step := range o.initSteps() {
		t0 := time.Now()
		name, err := w.initStep(ctx, env, c, sc, step)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("prepare tpcb: %s: %w (the data is marked incomplete: prepare again)", name, err)
		}
		timings = append(timings, fmt.Sprintf("%s %.2f s", name, time.Since(t0).Seconds()))
	}
	if err := workload.MarkComplete(ctx, c, dataSet); err != nil {
		return fmt.Errorf("prepare tpcb: %w", err)
	}
	if env.Progress != nil {
		fmt.Fprintf(env.Progress, "done in %.2f s (%s).\n", time.Since(start).Seconds(), strings.Join(timings, ", "))
	}
	return nil
}

// initStep runs one -I step and returns its name as pgbench prints it.
func (w *Workload) initStep(ctx context.Context, env workload.Env, c target.Conn, sc *schema, step rune) (string, error) {
	say := func(s string) {
		if env.Progress != nil {
			fmt.Fprintln(env.Progress, s)
		}
	}
	switch step {
	case 'd':
		say("dropping old tables...")
		return "drop tables", execAll(ctx, c, sc.dropTables())
	case 't':
		say("creating tables...")
		stmts, err := sc.createTables()
		if err != nil {
			return "create tables", err
		}
		if len(stmts) > len(tables) { // the partitions are tables of their own
			say(fmt.Sprintf("creating %d partitions...", sc.partitions))
		}
		return "create tables", execAll(ctx, c, stmts)
	case 'g':
		say("generating data (client-side)...")
		return "client-side generate", w.generateClientSide(ctx, env, c, sc)
	case 'G':
		say("generating data (server-side)...")
		return "server-side generate", inTx(ctx, c, sc, func() error {
			return execAll(ctx, c, sc.serverSide())
		})
	case 'v':
		say("vacuuming...")
		return "vacuum", execAll(ctx, c, sc.vacuum())
	case 'p':
		say("creating primary keys...")
		stmts, err := sc.primaryKeyDDL()
		if err != nil {
			return "primary keys", err
		}
		return "primary keys", execAll(ctx, c, stmts)
	case 'f':
		say("creating foreign keys...")
		stmts, err := sc.foreignKeyDDL()
		if err != nil {
			return "foreign keys", err
		}
		return "foreign keys", execAll(ctx, c, stmts)
	}
	return string(step), fmt.Errorf("unrecognized initialization step %q", step)
}

func execAll(ctx context.Context, c target.Conn, stmts []string) error {
	for _, s := range stmts {
		if err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// inTx runs fn after emptying the tables, within what the engine puts
// around a reload (one transaction, as pgbench does, where the engine
// can; foreign keys unchecked where truncating a referenced table is
// refused).
func inTx(ctx context.Context, c target.Conn, sc *schema, fn func() error) error {
	r := sc.d.Reload()
	if err := execAll(ctx, c, r.Before); err != nil {
		return err
	}
	err := execAll(ctx, c, sc.truncateTables())
	if err == nil {
		err = fn()
	}
	if err != nil {
		for _, s := range r.Abort {
			_ = c.Exec(context.WithoutCancel(ctx), s)
		}
		return err
	}
	return execAll(ctx, c, r.After)
}

// generateClientSide is pgbench's initGenerateDataClientSide: branches,
// tellers and accounts in that order (foreign keys may exist), through
// the engine's bulk path (COPY on PostgreSQL).
func (w *Workload) generateClientSide(ctx context.Context, env workload.Env, c target.Conn, sc *schema) error {
	n := sc.accountCount()
	var bar interface {
		Set(int64)
		Finish()
	}
	if w.opt.PgbenchForm {
		bar = &tuplesProgress{w: env.Progress, total: n, quiet: w.opt.Quiet, start: time.Now()}
	} else {
		bar = progress.New(env.Progress, env.Interactive, fmt.Sprintf("loading %d accounts", n), n)
	}
	err := inTx(ctx, c, sc, func() error {
		// Filler stays NULL in branches and tellers, as in pgbench.
		if _, err := c.BulkInsert(ctx, "pgbench_branches", []string{"bid", "bbalance"},
			&rows{n: branchesPerScale * sc.scale, per: 1, width: 2}); err != nil {
			return err
		}
		if _, err := c.BulkInsert(ctx, "pgbench_tellers", []string{"tid", "bid", "tbalance"},
			&rows{n: tellersPerScale * sc.scale, per: tellersPerScale, width: 3}); err != nil {
			return err
		}
		if _, err := c.BulkInsert(ctx, "pgbench_accounts", []string{"aid", "bid", "abalance", "filler"},
			&rows{ctx: ctx, n: n, per: accountsPerScale, width: 3, filler: true, progress: bar.Set}); err != nil {
			return err
		}
		return ctx.Err() // the rows stopped early: the load is not whole
	})
	if err == nil {
		bar.Finish()
	}
	return err
}

// rows generates pgbench's rows: id i, the branch (i-1)/per+1, balance 0
// and, for accounts, an empty filler (blank-padded by char(84)).
type rows struct {
	// ctx, when set, ends the rows early when it is done: not every
	// engine's bulk path stops on its own when the prepare is interrupted.
	ctx      context.Context
	n, i     int64
	per      int64
	width    int
	filler   bool
	progress func(int64)
}

var emptyFiller = []byte{}

func (r *rows) Next(dst []target.Value) bool {
	if r.ctx != nil && r.i%1024 == 0 && r.ctx.Err() != nil {
		return false
	}
	if r.i >= r.n {
		if r.progress != nil {
			r.progress(r.i)
		}
		return false
	}
	r.i++
	if r.progress != nil && r.i%100_000 == 0 {
		r.progress(r.i)
	}
	dst[0].SetInt(r.i)
	if r.width == 2 { // branches: bid, bbalance
		dst[1].SetInt(0)
		return true
	}
	dst[1].SetInt((r.i-1)/r.per + 1)
	dst[2].SetInt(0)
	if r.filler {
		dst[3].SetStr(emptyFiller)
	}
	return true
}

// withConn runs fn on a connection of its own.
func withConn(ctx context.Context, tg target.Target, fn func(c target.Conn) error) error {
	c, err := tg.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// Cleanup drops pgbench's tables.
func (w *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	return withConn(ctx, env.Target, func(c target.Conn) error {
		if err := execAll(ctx, c, w.opt.schema(env.Target.Dialect()).dropTables()); err != nil {
			return fmt.Errorf("cleanup tpcb: %w", err)
		}
		if err := workload.MarkComplete(ctx, c, dataSet); err != nil {
			return fmt.Errorf("cleanup tpcb: %w", err)
		}
		return nil
	})
}

// ErrNotPrepared says pgbench's tables are missing.
type ErrNotPrepared struct{ Err error }

func (e *ErrNotPrepared) Error() string {
	return fmt.Sprintf("pgbench_branches is missing or unreadable (%v): run \"dbmark prepare tpcb\" with the same --target first (pgbench -i)", e.Err)
}

func (e *ErrNotPrepared) Unwrap() error { return e.Err }

// readScale counts the branches, as pgbench does to learn the scale.
func readScale(ctx context.Context, c target.Conn) (int64, error) {
	v, _, err := c.QueryRow(ctx, "select count(*) from pgbench_branches")
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &ErrNotPrepared{Err: err}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("pgbench_branches has %q rows (an earlier prepare did not finish?): run \"dbmark prepare tpcb\" again", v)
	}
	return n, nil
}

// dataSet names pgbench's tables' mark of an unfinished prepare.
const dataSet = "pgbench"

// Prepared checks that pgbench's tables are there when a builtin script
// needs them. Custom scripts may use any tables, so they are not checked.
func (w *Workload) Prepared(ctx context.Context, env workload.Env) error {
	return withConn(ctx, env.Target, func(c target.Conn) error {
		// An unfinished prepare is refused whatever the script: custom
		// scripts mostly use pgbench's tables too.
		if err := workload.CheckComplete(ctx, c, dataSet, Name); err != nil {
			return err
		}
		if !w.usesBuiltin() {
			return nil
		}
		if _, err := readScale(ctx, c); err != nil {
			return err
		}
		if _, ok, err := c.QueryRow(ctx, "select aid from pgbench_accounts limit 1"); err != nil || !ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err == nil {
				err = errors.New("no rows")
			}
			return fmt.Errorf("pgbench_accounts is empty or unreadable (%v): run \"dbmark prepare tpcb\" again", err)
		}
		return nil
	})
}

// Check verifies TPC-B's consistency: the balances of all accounts, of all
// tellers and of all branches, and the sum of the history's deltas, are
// equal. A simple-update run changes accounts and history only, so after
// one the tellers and branches fall behind.
func (w *Workload) Check(ctx context.Context, env workload.Env) error {
	return withConn(ctx, env.Target, func(c target.Conn) error { return check(ctx, env, c) })
}

func check(ctx context.Context, env workload.Env, c target.Conn) error {
	if _, err := readScale(ctx, c); err != nil {
		return err
	}
	sums := []struct{ name, sql string }{
		{"accounts", "select coalesce(sum(abalance), 0) from pgbench_accounts"},
		{"tellers", "select coalesce(sum(tbalance), 0) from pgbench_tellers"},
		{"branches", "select coalesce(sum(bbalance), 0) from pgbench_branches"},
		{"history", "select coalesce(sum(delta), 0) from pgbench_history"},
	}
	vals := make([]int64, len(sums))
	var parts []string
	for i, s := range sums {
		v, _, err := c.QueryRow(ctx, s.sql)
		if err != nil {
			return fmt.Errorf("check tpcb: %s: %w", s.sql, err)
		}
		if vals[i], err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("check tpcb: %s returned %q", s.sql, v)
		}
		parts = append(parts, fmt.Sprintf("%s %d", s.name, vals[i]))
	}
	for i := 1; i < len(vals); i++ {
		if vals[i] != vals[0] {
			return &CheckError{Sums: strings.Join(parts, ", ")}
		}
	}
	if env.Progress != nil {
		fmt.Fprintf(env.Progress, "balances agree: %s\n", strings.Join(parts, ", "))
	}
	return nil
}

// CheckError says the balances disagree.
type CheckError struct{ Sums string }

// Unwrap makes a CheckError a workload.ErrCheckFailed.
func (e *CheckError) Unwrap() error { return workload.ErrCheckFailed }

func (e *CheckError) Error() string {
	return "the TPC-B balances disagree: " + e.Sums + " (they agree after tpcb-like runs on freshly prepared tables; simple-update leaves tellers and branches alone, and a run without -n empties the history first, as pgbench does)"
}

// tuplesProgress is pgbench -i's progress of the accounts' load, for the
// pgbench front end: "N of M tuples (P%) done (elapsed E s, remaining R s)"
// every 100000 rows, or with -q every 5 seconds.
type tuplesProgress struct {
	w            io.Writer
	total, shown int64
	quiet        bool
	start        time.Time
	next         float64 // -q: the elapsed seconds of the next line
}

func (p *tuplesProgress) Set(i int64) {
	if p.w == nil || i <= p.shown || i == 0 {
		return
	}
	elapsed := time.Since(p.start).Seconds()
	if p.quiet {
		if i%100 != 0 || elapsed < p.next {
			return
		}
		p.next = float64(int(elapsed/5)+1) * 5
	} else if i%100_000 != 0 {
		return
	}
	p.shown = i
	remaining := float64(p.total-i) * elapsed / float64(i)
	fmt.Fprintf(p.w, "%d of %d tuples (%d%%) done (elapsed %.2f s, remaining %.2f s)\n", i, p.total, i*100/p.total, elapsed, remaining)
}

func (p *tuplesProgress) Finish() {}
