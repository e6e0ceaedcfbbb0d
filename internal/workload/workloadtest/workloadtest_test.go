package workloadtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/cli"
	"github.com/dbmark/dbmark/internal/metrics"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/oltp"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

// builtins are dbmark's own SQL workloads with small data for the suite.
func builtins() []workloadtest.Case {
	var cs []workloadtest.Case
	for _, n := range oltp.Names {
		// bulk_insert has a table per client: it prepares as many.
		cs = append(cs, workloadtest.Case{Workload: n, Prepare: []string{"--table-size", "200", "--threads", "2"}, Run: []string{"--table-size", "200"}})
	}
	return append(cs,
		workloadtest.Case{Workload: "tpcb", Prepare: []string{"--scale", "1"}},
		workloadtest.Case{Workload: "iibench", Run: []string{"--inserters", "1", "--query-threads", "1", "--max-rows", "2000", "--rows-per-insert", "100"}, SelfLimited: true},
		workloadtest.Case{Workload: "query", Prepare: []string{"--setup", "../query/testdata/setup.sql"},
			Run: []string{"--file", "../query/testdata/suite.sql", "--streams", "2", "--iterations", "2"}, SelfLimited: true},
		workloadtest.Case{Workload: "wisconsin", Prepare: []string{"--scale", "1000"}, Run: []string{"--scale", "1000", "--iterations", "1", "--streams", "2"}, SelfLimited: true},
	)
}

func TestBuiltinWorkloadsOnEveryEngine(t *testing.T) {
	for _, c := range builtins() {
		t.Run(c.Workload, func(t *testing.T) { workloadtest.Run(t, c) })
	}
}

// Every runnable workload that works on a database is in the suite: a new
// one cannot be registered without a case.
func TestEverySQLWorkloadHasACase(t *testing.T) {
	have := map[string]bool{}
	for _, c := range builtins() {
		have[c.Workload] = true
	}
	a := cli.NewApp(nil, nil, nil)
	for _, n := range a.Workloads.Names() {
		s, _ := a.Workloads.New(n)
		if s.Runnable() && s.OwnTarget == nil && !have[n] {
			t.Errorf("workload %s runs on a database but has no case in the workload suite", n)
		}
	}
}

// counter is a workload defined here and nowhere else: one table of one
// row that each event increments. It passes the suite with no edit
// outside this file: adding a workload is one package.
type counter struct{ start int }

func (w *counter) spec() workload.Spec {
	return workload.Spec{
		Meta:  workload.Meta{Name: "counter", Description: "increment one row", Version: "1", Headline: "tps", Better: "higher"},
		Flags: func(fs *pflag.FlagSet) { fs.IntVar(&w.start, "start", 0, "the row's first value") },
		Load:  w.load,
		Hooks: workload.Hooks{Prepare: w.prepare, Cleanup: w.cleanup, Prepared: w.prepared, Check: w.check},
	}
}

func exec(ctx context.Context, env workload.Env, sqls ...string) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, s := range sqls {
		if err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func (w *counter) prepare(ctx context.Context, env workload.Env) error {
	return exec(ctx, env, "CREATE TABLE counter (n INTEGER NOT NULL)", fmt.Sprintf("INSERT INTO counter VALUES (%d)", w.start))
}

func (w *counter) cleanup(ctx context.Context, env workload.Env) error {
	return exec(ctx, env, "DROP TABLE IF EXISTS counter")
}

func (w *counter) prepared(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, _, err := c.QueryRow(ctx, "SELECT n FROM counter"); err != nil {
		return fmt.Errorf("no counter table: run dbmark prepare counter (%w)", err)
	}
	return nil
}

// check finds the events of the run in the row.
func (w *counter) check(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	n, _, err := c.QueryRow(ctx, "SELECT n FROM counter")
	if err != nil {
		return err
	}
	if n != fmt.Sprint(w.start+40) {
		return fmt.Errorf("%w: the counter is %s, want %d", workload.ErrCheckFailed, n, w.start+40)
	}
	return nil
}

func (w *counter) load(ctx context.Context, env workload.Env) (*workload.Load, error) {
	return &workload.Load{
		Ops: []metrics.OpSpec{{Name: "increment", Kind: metrics.Event}},
		NewWorker: func(ctx context.Context, s workload.Seat) (workload.Worker, error) {
			st, err := s.Conn.Prepare(ctx, "UPDATE counter SET n = n + 1")
			if err != nil {
				return nil, err
			}
			return &incrementer{st: st}, nil
		},
	}, nil
}

type incrementer struct{ st target.Stmt }

func (w *incrementer) Event(ctx context.Context, _ bool) (metrics.Op, error) {
	_, err := w.st.Run(ctx, nil)
	return 0, err
}

func (w *incrementer) Close() error { return w.st.Close() }

var _ workload.Worker = (*incrementer)(nil)

func TestAWorkloadOfATestFilePasses(t *testing.T) {
	start := fmt.Sprint(time.Now().Nanosecond() % 1000)
	workloadtest.Run(t, workloadtest.Case{
		Workload: "counter",
		Register: func(r *workload.Registry) {
			r.Register("counter", func() workload.Spec { return (&counter{}).spec() })
		},
		Prepare: []string{"--start", start},
		Check:   []string{"--start", start},
	})
}
