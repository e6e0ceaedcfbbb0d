package iibench_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/mysql"
	"github.com/dbmark/dbmark/internal/target/postgres"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/iibench"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
	"github.com/dbmark/dbmark/internal/workload/workloadtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testDB is the database the PostgreSQL and MariaDB tests work in, created
// when missing so no other test's tables are touched.
const testDB = "dbmark_iibench"

type engine struct {
	name string
	tg   target.Target
}

// engines are the real engines to test on (workloadtest.Engines): SQLite
// always, PostgreSQL and MariaDB when the test servers' settings are in
// the environment (eval "$(scripts/testenv.sh env)"), each in testDB.
func engines(t *testing.T) []engine {
	t.Helper()
	reg := target.NewRegistry()
	postgres.Register(reg)
	mysql.Register(reg)
	sqlite.Register(reg)
	var out []engine
	for _, e := range workloadtest.Engines(t, testDB) {
		tg, err := reg.Open(context.Background(), e.URL, target.Options{Logger: quiet})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		t.Cleanup(func() { tg.Close() })
		out = append(out, engine{e.Name, tg})
	}
	return out
}

// onEngines runs fn in a subtest on each engine (engines), with a quick
// iibench on table (newBench), which is dropped when the subtest ends.
func onEngines(t *testing.T, table string, fn func(t *testing.T, e engine, b *bench)) {
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			drop(t, e.tg, table)
			fn(t, e, newBench(t, table))
		})
	}
}

// bench is one iibench run's setup, with small sizes.
type bench struct {
	w   *iibench.Workload
	cfg runner.Config
}

// newBench returns iibench on table with options for a quick run.
func newBench(t *testing.T, table string) *bench {
	w := iibench.New()
	o := w.Opts()
	o.Table = table
	o.RowsPerInsert = 100
	o.Recreate = true
	return &bench{w: w, cfg: runner.Config{MaxTries: 3, Percentiles: []float64{50, 99}, Seed: 42}}
}

// run drives the workload as the CLI does, and returns the outcome and
// the result the load finished.
func (b *bench) run(t *testing.T, tg target.Target) (*runner.Outcome, *result.Result) {
	t.Helper()
	ctx := context.Background()
	if err := b.w.Validate(tg); err != nil {
		t.Fatalf("validate: %v", err)
	}
	adj, err := b.w.Plan(workload.PlanInput{})
	if err != nil {
		t.Fatal(err)
	}
	n := adj.Clients
	cfg := b.cfg
	cfg.Threads = n
	cfg.SelfLimited = adj.SelfLimited
	if !cfg.SelfLimited && cfg.Duration == 0 {
		cfg.Duration = time.Second
	}
	env := workload.Env{Target: tg, Logger: quiet, Threads: n, Seed: cfg.Seed, Progress: io.Discard}
	load, err := b.w.Load(ctx, env)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	out := sqlclient.Run(ctx, cfg, tg, load, nil, quiet)
	res := &result.Result{Status: out.Status, Summary: out.Summary, Series: out.Series, Run: result.RunOptions{Percentiles: cfg.Percentiles}}
	load.Finish(ctx, res)
	return out, res
}

// mustOK fails unless the run ended well.
func mustOK(t *testing.T, out *runner.Outcome) {
	t.Helper()
	if out.Status != result.StatusOK {
		t.Fatalf("run %s: %v", out.Status, out.Err)
	}
}

// query runs a one-value query on tg, on a connection of its own.
func query(t *testing.T, tg target.Target, sql string) (string, error) {
	t.Helper()
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, _, err := c.QueryRow(ctx, sql)
	return v, err
}

// q runs a one-value query on tg, which must succeed.
func q(t *testing.T, tg target.Target, sql string) string {
	t.Helper()
	v, err := query(t, tg, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func qInt(t *testing.T, tg target.Target, sql string) int64 {
	t.Helper()
	v := q(t, tg, sql)
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s: %q is not a number", sql, v)
	}
	return int64(n)
}

// drop removes the table when the test ends.
func drop(t *testing.T, tg target.Target, table string) {
	t.Cleanup(func() {
		ctx := context.Background()
		if c, err := tg.Connect(ctx); err == nil {
			_ = c.Exec(ctx, "DROP TABLE IF EXISTS "+table)
			c.Close()
		}
	})
}

// indexColumns lists an index's columns in order, comma-separated.
func indexColumns(t *testing.T, e engine, table, name string) string {
	t.Helper()
	switch e.name {
	case "postgres":
		return q(t, e.tg, `SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM pg_index i
			CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
			WHERE i.indexrelid = '`+name+`'::regclass`)
	case "mariadb":
		return q(t, e.tg, `SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '`+table+`' AND INDEX_NAME = '`+name+`'`)
	default:
		return q(t, e.tg, `SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info('`+name+`') ORDER BY seqno)`)
	}
}

func testEnv(tg target.Target) workload.Env {
	return workload.Env{Target: tg, Logger: quiet, Threads: 1, Seed: 1, Progress: io.Discard}
}
