// Package query times a suite of SQL queries: "dbmark run query --file
// queries.sql" runs each statement of a file --iterations times, on
// --streams connections at once, and records every run (its time, the
// rows and bytes it returned, its error), each query's cold, hot and
// median times and the suite's total time, its headline (lower is
// better). Rows are counted as they stream by (target.Conn.Query), never
// kept, so a query of any size runs in flat memory.
//
// Other workloads run fixed suites through the same machinery (the
// Wisconsin benchmark), with answers checked:
//
//	s := query.NewSuite()
//	spec := workload.Spec{
//		Meta:  workload.Meta{..., Headline: query.Headline, Better: "lower"},
//		Flags: func(fs *pflag.FlagSet) { s.Flags(fs); /* the workload's own */ },
//		Load: func(ctx context.Context, env workload.Env) (*workload.Load, error) {
//			return s.Load(ctx, env, []query.Query{
//				{Label: "Q1", SQL: "SELECT ...", Check: query.WantRows(100)},
//			})
//		},
//		Hooks: s.Hooks(), // Plan, Validate and Report; add Prepare, Cleanup...
//	}
//
// Suite.Flags binds --iterations, --streams, --only, --query-timeout,
// --explain, --cold and --restart-cmd; Hooks gives the Plan (the streams
// are the clients, and the run ends when every stream has run the whole
// suite, not at a --time limit), Validate and Report hooks. Load takes
// the queries, which may depend on the target's dialect. A query's Check
// judges each run's Answer (the rows returned, or affected, and the sum
// of the first column when it holds integers): an error fails that run
// as a wrong answer, recorded like a query's error. A run in which any
// query failed (an error, a timeout or a wrong answer) is kept with the
// status failed and an error naming those queries; every other query is
// still run and measured.
package query

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// Name is the workload's name; Version changes when what it measures or
// records changes.
const (
	Name    = "query"
	Version = "1"
	// Headline names the headline of a query suite: its total time.
	Headline = "suite seconds"
)

// Query is one statement of a suite.
type Query struct {
	// Label names the query in the summary, the CSV's columns and --only.
	Label string
	SQL   string
	// Line is where the statement starts in its file (0 for a suite not
	// read from a file).
	Line int
	// Check, when set, judges every run's answer: an error fails that run
	// as a wrong answer.
	Check func(Answer) error
}

// Answer is what one run of a query returned, counted as it streamed by.
type Answer struct {
	// Rows is the rows returned or, for a statement that returns none
	// (Returned false), the rows it affected.
	Rows     int64
	Returned bool
	// Bytes is the returned values' size as text.
	Bytes int64
	// Sum is the sum, wrapping in 64 bits, of the first column's non-NULL
	// values over the rows returned, valid (SumValid) when that column
	// holds integers (an integer type, or an exact numeric type whose
	// every value was whole; on SQLite, every value an integer).
	Sum      int64
	SumValid bool
}

func answerOf(t target.Tally) Answer {
	return Answer{Rows: t.Rows, Returned: t.Returned, Bytes: t.Bytes, Sum: t.Sum, SumValid: t.SumValid}
}

// WantRows is a Check that wants n rows returned (or affected).
func WantRows(n int64) func(Answer) error {
	return func(a Answer) error {
		if a.Rows != n {
			return fmt.Errorf("%d rows, want %d", a.Rows, n)
		}
		return nil
	}
}

// WantSum is a Check that wants n rows and the first column to sum to sum.
func WantSum(n, sum int64) func(Answer) error {
	return func(a Answer) error {
		switch {
		case a.Rows != n:
			return fmt.Errorf("%d rows, want %d", a.Rows, n)
		case !a.SumValid:
			return fmt.Errorf("the first column does not hold integers, so its sum (want %d) cannot be checked", sum)
		case a.Sum != sum:
			return fmt.Errorf("the first column sums to %d, want %d", a.Sum, sum)
		}
		return nil
	}
}

// Options are how a suite is run.
type Options struct {
	Iterations   int
	Streams      int
	Only         []string
	QueryTimeout time.Duration
	Explain      bool
	Cold         bool
	// RestartCmd is run by the shell before each cold iteration (with
	// Cold); the run waits until the server answers again.
	RestartCmd []string
}

// Suite runs queries as the query workload does; see the package's doc.
type Suite struct {
	opt Options
	// cold makes a query's next run cold; a field so tests can replace
	// what a root-only step does.
	cold coldSteps
	// restartFlag is the command's own --restart-cmd, when the suite
	// shares it.
	restartFlag *pflag.Flag
}

// NewSuite returns a suite with the defaults: 3 iterations, one stream.
func NewSuite() *Suite {
	return &Suite{opt: Options{Iterations: 3, Streams: 1}, cold: osCold{}}
}

// Opts returns the options, for callers that set them directly.
func (s *Suite) Opts() *Options { return &s.opt }

// Flags binds the options of running a suite.
func (s *Suite) Flags(fs *pflag.FlagSet) {
	o := &s.opt
	fs.IntVar(&o.Iterations, "iterations", o.Iterations, "runs of each query in a row: the first is its cold run, the fastest of the others its hot time")
	fs.IntVar(&o.Streams, "streams", o.Streams, "connections that each run the whole suite at once, each in its own seeded shuffled order (a throughput test)")
	fs.StringSliceVar(&o.Only, "only", o.Only, "run only the queries with these labels (comma-separated)")
	fs.DurationVar(&o.QueryTimeout, "query-timeout", o.QueryTimeout, "end a query that runs longer than this, on the server (statement_timeout, max_statement_time, SQLite's progress handler); 0: no limit")
	fs.BoolVar(&o.Explain, "explain", o.Explain, "keep each query's plan, as the engine explains it, with the result")
	fs.BoolVar(&o.Cold, "cold", o.Cold, "before each query's first iteration: sync and drop the OS page cache (needs root) and run --restart-cmd")
	// The run's own --restart-cmd (which --server-set uses too) where the
	// command has one; else a list of one, so that a command with a comma
	// is not taken for a sweep's list of values.
	if f := workload.ReadFlag(fs, "restart-cmd"); f != nil {
		s.restartFlag = f
		return
	}
	fs.StringArrayVar(&o.RestartCmd, "restart-cmd", o.RestartCmd, "with --cold, a shell command that restarts the server (the run waits until it answers)")
}

// restartCmd settles --restart-cmd from the run's own option when the
// suite shares it.
func (s *Suite) restartCmd() {
	if s.restartFlag != nil && s.restartFlag.Changed {
		s.opt.RestartCmd = []string{s.restartFlag.Value.String()}
	}
}

// Hooks are the suite's Plan, Validate and Report hooks, for a
// workload's Spec.
func (s *Suite) Hooks() workload.Hooks {
	return workload.Hooks{Plan: s.Plan, Validate: s.Validate, Report: s.Report}
}

// stallTimeout is --stall-timeout's default for a suite with no
// --query-timeout: none, as its queries may rightly run for hours.
const stallTimeout = -1

// Plan makes the streams the run's clients and has the run end when
// every stream has run its suite: --events, --rate and --warmup mean
// nothing to a suite and are refused.
func (s *Suite) Plan(in workload.PlanInput) (workload.PlanAdjust, error) {
	switch {
	case in.Given.Events:
		return workload.PlanAdjust{}, fmt.Errorf("--events: a query suite ends when every stream has run every query (--iterations sets how often each runs)")
	case in.Given.Rate:
		return workload.PlanAdjust{}, fmt.Errorf("--rate: a query suite runs its queries one after another in each stream (--streams sets how many at once)")
	case in.Warmup > 0:
		return workload.PlanAdjust{}, fmt.Errorf("--warmup: a query suite keeps every run; its first iteration is the cold one and --iterations gives the hot ones")
	}
	adj := workload.PlanAdjust{Clients: s.opt.Streams, ClientsFrom: fmt.Sprintf("--streams %d", s.opt.Streams), SelfLimited: true, StallTimeout: stallTimeout}
	if d := s.opt.QueryTimeout; d > 0 {
		// A query ends by its timeout; a client that does not is stuck.
		adj.StallTimeout = d + time.Minute
	}
	return adj, nil
}

// Validate checks the options before anything is touched.
func (s *Suite) Validate(t target.Target) error {
	s.restartCmd()
	o := &s.opt
	switch {
	case o.Iterations < 1:
		return fmt.Errorf("--iterations %d: must be at least 1", o.Iterations)
	case o.Streams < 1 || o.Streams > workload.MaxClients:
		return fmt.Errorf("--streams %d: must be between 1 and %d", o.Streams, workload.MaxClients)
	case o.QueryTimeout < 0:
		return fmt.Errorf("--query-timeout %v: must not be negative (0: no limit)", o.QueryTimeout)
	case len(o.RestartCmd) > 1:
		return fmt.Errorf("--restart-cmd given %d times: give one command (join several with &&)", len(o.RestartCmd))
	case len(o.RestartCmd) == 1 && !o.Cold:
		return fmt.Errorf("--restart-cmd restarts the server before cold runs: add --cold")
	case len(o.RestartCmd) == 1 && strings.TrimSpace(o.RestartCmd[0]) == "":
		return fmt.Errorf("--restart-cmd is empty: give the command that restarts the server")
	}
	for _, l := range o.Only {
		if strings.TrimSpace(l) == "" {
			return fmt.Errorf("--only has an empty label: give labels separated by commas")
		}
	}
	if o.Cold {
		return s.cold.check(t, o)
	}
	return nil
}

// Report writes each query's figures after the summary.
func (s *Suite) Report(w io.Writer, res *result.Result) {
	if res.Queries != nil {
		writeQueries(w, res.Queries)
	}
}

// Workload is "dbmark run query": a suite read from a file, with a
// setup file that prepare runs and a teardown file that cleanup runs.
type Workload struct {
	*Suite
	file, setup, teardown string
}

// New returns the query workload with its defaults.
func New() *Workload { return &Workload{Suite: NewSuite()} }

// Register adds the query workload to r.
func Register(r *workload.Registry) {
	r.Register(Name, func() workload.Spec { return New().Spec() })
}

// Spec declares the workload.
func (w *Workload) Spec() workload.Spec {
	h := w.Hooks()
	h.Validate = w.Validate
	h.Prepare, h.Cleanup = w.Prepare, w.Cleanup
	return workload.Spec{
		Meta: workload.Meta{Name: Name, Version: Version, Headline: Headline, Better: "lower",
			Description: "time a file of SQL queries: cold, hot and median per query, the suite's total and geometric mean"},
		Flags: w.Flags,
		Load:  w.Load,
		Hooks: h,
	}
}

// Flags binds the suite's options and the files.
func (w *Workload) Flags(fs *pflag.FlagSet) {
	w.Suite.Flags(fs)
	fs.StringVar(&w.file, "file", "", "the file of queries to time: statements ending with ; at the end of a line, each labelled by a -- or # comment line just above it (required to run)")
	fs.StringVar(&w.setup, "setup", "", "with prepare: a file of statements to run once (create and load tables)")
	fs.StringVar(&w.teardown, "teardown", "", "with cleanup: a file of statements to run once (drop tables)")
}

// Validate checks the suite's options and reads the query file, so that
// a missing file, a file without statements or an unknown --only label is
// refused before anything runs. It also serves prepare and cleanup,
// which need no --file.
func (w *Workload) Validate(t target.Target) error {
	if err := w.Suite.Validate(t); err != nil {
		return err
	}
	for _, f := range []struct{ flag, path string }{{"setup", w.setup}, {"teardown", w.teardown}} {
		if f.path != "" {
			if _, err := readFile(f.flag, f.path); err != nil {
				return err
			}
		}
	}
	if w.file == "" {
		return nil
	}
	qs, err := readFile("file", w.file)
	if err != nil {
		return err
	}
	_, err = w.only(qs)
	return err
}

// readFile reads and parses the file of option flag.
func readFile(flag, path string) ([]Query, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, path, unwrapPath(err))
	}
	qs, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("--%s %s: no statement in the file (each ends with ; at the end of a line)", flag, path)
	}
	return qs, nil
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Load reads the file and runs its queries.
func (w *Workload) Load(ctx context.Context, env workload.Env) (*workload.Load, error) {
	if w.file == "" {
		return nil, fmt.Errorf("--file is required: the file of queries to time")
	}
	qs, err := readFile("file", w.file)
	if err != nil {
		return nil, err
	}
	return w.Suite.Load(ctx, env, qs)
}

// Prepare runs the --setup file's statements in order.
func (w *Workload) Prepare(ctx context.Context, env workload.Env) error {
	return runFile(ctx, env, "setup", w.setup)
}

// Cleanup runs the --teardown file's statements in order.
func (w *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	return runFile(ctx, env, "teardown", w.teardown)
}

// runFile runs each statement of the file of option flag, stopping at
// the first error; no file is nothing to do.
func runFile(ctx context.Context, env workload.Env, flag, path string) error {
	if path == "" {
		return nil
	}
	qs, err := readFile(flag, path)
	if err != nil {
		return err
	}
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range qs {
		if _, err := c.Query(ctx, q.SQL, target.QueryOptions{}); err != nil {
			return fmt.Errorf("--%s %s: the statement at line %d (%s): %w", flag, path, q.Line, q.Label, err)
		}
	}
	return nil
}

// only is the queries --only keeps, in their order; a label no query has
// is refused.
func (s *Suite) only(qs []Query) ([]Query, error) {
	if len(s.opt.Only) == 0 {
		return qs, nil
	}
	keep := map[string]bool{}
	for _, l := range s.opt.Only {
		keep[strings.TrimSpace(l)] = true
	}
	var out []Query
	for _, q := range qs {
		if keep[q.Label] {
			out = append(out, q)
			delete(keep, q.Label)
		}
	}
	if len(keep) > 0 {
		var missing, have []string
		for _, l := range s.opt.Only {
			if keep[strings.TrimSpace(l)] {
				missing = append(missing, strings.TrimSpace(l))
			}
		}
		for _, q := range qs {
			have = append(have, q.Label)
		}
		if len(have) > 20 {
			have = append(have[:20], fmt.Sprintf("and %d more", len(have)-20))
		}
		return nil, fmt.Errorf("--only %s: no query has that label (the labels are %s)", strings.Join(missing, ","), strings.Join(have, ", "))
	}
	return out, nil
}
