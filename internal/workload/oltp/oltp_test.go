package oltp_test

import (
	"context"
	"hash/fnv"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/runner"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/oltp"
	"github.com/dbmark/dbmark/internal/workload/sqlclient"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// recorder wraps a real target and keeps a log of every statement sent.
type recorder struct {
	target.Target
	mu    sync.Mutex
	kinds map[string]int // read, write, other
	hash  uint64
	h     interface {
		Write([]byte) (int, error)
		Sum64() uint64
	}
}

func newRecorder(t target.Target) *recorder {
	return &recorder{Target: t, kinds: map[string]int{}, h: fnv.New64a()}
}

func (r *recorder) note(sql string, args []target.Value) {
	r.mu.Lock()
	defer r.mu.Unlock()
	verb := strings.ToUpper(strings.Fields(sql)[0])
	switch verb {
	case "SELECT":
		r.kinds["read"]++
	case "INSERT", "UPDATE", "DELETE":
		r.kinds["write"]++
	case "ROLLBACK":
		return
	default:
		r.kinds["other"]++
	}
	r.h.Write([]byte(sql))
	for _, a := range args {
		if a.IsStr {
			r.h.Write(a.Str)
		} else {
			r.h.Write([]byte(strconv.FormatInt(a.Int, 10)))
		}
	}
}

func (r *recorder) Connect(ctx context.Context) (target.Conn, error) {
	c, err := r.Target.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recConn{Conn: c, r: r}, nil
}

type recConn struct {
	target.Conn
	r *recorder
}

func (c *recConn) Exec(ctx context.Context, sql string) error {
	c.r.note(sql, nil)
	return c.Conn.Exec(ctx, sql)
}

func (c *recConn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	s, err := c.Conn.Prepare(ctx, sql)
	if err != nil {
		return nil, err
	}
	return &recStmt{Stmt: s, sql: sql, r: c.r}, nil
}

type recStmt struct {
	target.Stmt
	sql string
	r   *recorder
}

func (s *recStmt) Run(ctx context.Context, args []target.Value) (int64, error) {
	s.r.note(s.sql, args)
	return s.Stmt.Run(ctx, args)
}

func prepared(t *testing.T, name string, tables int, size int64) (target.Target, workload.Env) {
	t.Helper()
	tg := sqlite.New(filepath.Join(t.TempDir(), "oltp.db"))
	env := workload.Env{Target: tg, Logger: quiet, Threads: 2, Seed: 7, Progress: io.Discard}
	w := oltp.New(name)
	w.Opts().Tables, w.Opts().TableSize = tables, size
	if err := w.Prepare(context.Background(), env); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if err := w.Prepared(context.Background(), env); err != nil {
		t.Fatalf("prepared check after prepare: %v", err)
	}
	return tg, env
}

func run(t *testing.T, name string, tg target.Target, env workload.Env, events int64, seed uint64) (*recorder, *runner.Outcome) {
	t.Helper()
	w := oltp.New(name)
	w.Opts().Tables, w.Opts().TableSize = 2, 1000
	if name == "select_random_points" || name == "select_random_ranges" {
		w.Opts().Tables = 1
	}
	rec := newRecorder(tg)
	env.Target, env.Seed, env.Threads = rec, seed, 1
	load, err := w.Load(context.Background(), env)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	cfg := runner.Config{Threads: 1, Events: events, MaxTries: 1, Percentiles: []float64{50}, Seed: seed}
	out := sqlclient.Run(context.Background(), cfg, rec, load, nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatalf("%s: status %s: %v", name, out.Status, out.Err)
	}
	return rec, out
}

// TestStatementsPerEvent checks sysbench 1.0's statement mix for every
// test with default options: what was sent, and what dbmark counted.
func TestStatementsPerEvent(t *testing.T) {
	want := map[string][3]int{ // read, write, other per event
		"oltp_read_only":        {14, 0, 2},
		"oltp_read_write":       {14, 4, 2},
		"oltp_write_only":       {0, 4, 2},
		"oltp_point_select":     {1, 0, 0},
		"oltp_insert":           {0, 1, 0},
		"oltp_delete":           {0, 1, 0},
		"oltp_update_index":     {0, 1, 0},
		"oltp_update_non_index": {0, 1, 0},
		"select_random_points":  {1, 0, 0},
		"select_random_ranges":  {1, 0, 0},
	}
	tg, env := prepared(t, "oltp_read_write", 2, 1000)
	const events = 25
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			rec, out := run(t, name, tg, env, events, 3)
			got := [3]int{rec.kinds["read"], rec.kinds["write"], rec.kinds["other"]}
			exp := [3]int{w[0] * events, w[1] * events, w[2] * events}
			if got != exp {
				t.Fatalf("sent r/w/o %v over %d events, want %v", got, events, exp)
			}
			// Counted like sysbench: a write that changed no row (a delete of
			// an id an earlier test removed) counts as other.
			q := out.Summary.Queries
			if int(q.Read) != exp[0] || int(q.Write+q.Other) != exp[1]+exp[2] || int(q.Write) > exp[1] || out.Summary.Events != events {
				t.Fatalf("counted r/w/o %d/%d/%d and %d events; want %v and %d", q.Read, q.Write, q.Other, out.Summary.Events, exp, events)
			}
		})
	}
}

func TestOptionsChangeTheMix(t *testing.T) {
	tg, env := prepared(t, "oltp_read_write", 2, 1000)
	w := oltp.New("oltp_read_write")
	o := w.Opts()
	o.Tables, o.TableSize, o.PointSelects, o.RangeSelects, o.SkipTrx, o.DeleteInserts = 2, 1000, 3, false, true, 2
	rec := newRecorder(tg)
	env.Target, env.Threads = rec, 1
	load, err := w.Load(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	out := sqlclient.Run(context.Background(), runner.Config{Threads: 1, Events: 10, MaxTries: 1, Percentiles: []float64{50}}, rec, load, nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatal(out.Err)
	}
	// 3 point selects; index + non-index update + 2 x (delete + insert); no BEGIN/COMMIT.
	if rec.kinds["read"] != 30 || rec.kinds["write"] != 60 || rec.kinds["other"] != 0 {
		t.Fatalf("r/w/o %v", rec.kinds)
	}
}

func TestSameSeedSameKeys(t *testing.T) {
	tg, env := prepared(t, "oltp_read_write", 2, 1000)
	a, _ := run(t, "oltp_point_select", tg, env, 200, 42)
	b, _ := run(t, "oltp_point_select", tg, env, 200, 42)
	c, _ := run(t, "oltp_point_select", tg, env, 200, 43)
	if a.h.Sum64() != b.h.Sum64() {
		t.Fatal("the same seed gave different key sequences")
	}
	if a.h.Sum64() == c.h.Sum64() {
		t.Fatal("different seeds gave the same key sequence")
	}
}

func TestPrepareLoadsSysbenchSchema(t *testing.T) {
	tg, _ := prepared(t, "oltp_read_write", 3, 500)
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for n := 1; n <= 3; n++ {
		tbl := "sbtest" + strconv.Itoa(n)
		v, _, err := c.QueryRow(context.Background(), "SELECT COUNT(*) || ' ' || MIN(id) || ' ' || MAX(id) || ' ' || MAX(LENGTH(c)) || ' ' || MAX(LENGTH(pad)) FROM "+tbl)
		if err != nil || v != "500 1 500 119 59" {
			t.Fatalf("%s: count/min/max/len(c)/len(pad) = %q, %v", tbl, v, err)
		}
		v, _, err = c.QueryRow(context.Background(), "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='k_"+strconv.Itoa(n)+"'")
		if err != nil || v != "1" {
			t.Fatalf("index k_%d missing: %q %v", n, v, err)
		}
		v, _, _ = c.QueryRow(context.Background(), "SELECT MIN(k) >= 1 AND MAX(k) <= 500 FROM "+tbl)
		if v != "1" {
			t.Fatalf("%s: k outside [1, table-size]", tbl)
		}
	}
}

func TestNotPreparedIsAClearError(t *testing.T) {
	tg := sqlite.New(filepath.Join(t.TempDir(), "empty.db"))
	w := oltp.New("oltp_read_only")
	err := w.Prepared(context.Background(), workload.Env{Target: tg, Logger: quiet, Threads: 1})
	var np *oltp.ErrNotPrepared
	if err == nil || !strings.Contains(err.Error(), "sbtest1") || !asNotPrepared(err, &np) {
		t.Fatalf("Prepared on an empty database = %v", err)
	}
}

func asNotPrepared(err error, np **oltp.ErrNotPrepared) bool {
	e, ok := err.(*oltp.ErrNotPrepared)
	*np = e
	return ok
}

// runBulk prepares bulk_insert on a new SQLite file and runs events with 2 clients.
func runBulk(t *testing.T, events int64) (target.Target, *runner.Outcome) {
	t.Helper()
	tg := sqlite.New(filepath.Join(t.TempDir(), "bulk.db"))
	env := workload.Env{Target: tg, Logger: quiet, Threads: 2, Seed: 1, Progress: io.Discard}
	w := oltp.New("bulk_insert")
	if err := w.Prepare(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	load, err := w.Load(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	out := sqlclient.Run(context.Background(), runner.Config{Threads: 2, Events: events, MaxTries: 1, Percentiles: []float64{50}}, tg, load, nil, quiet)
	if out.Status != result.StatusOK {
		t.Fatal(out.Err)
	}
	return tg, out
}

func TestBulkInsertLoadsOneRowPerEvent(t *testing.T) {
	tg, out := runBulk(t, 100_000)
	c, _ := tg.Connect(context.Background())
	defer c.Close()
	a, _, _ := c.QueryRow(context.Background(), "SELECT COUNT(*) FROM sbtest1")
	b, _, _ := c.QueryRow(context.Background(), "SELECT COUNT(*) FROM sbtest2")
	if a != "50000" || b != "50000" {
		t.Fatalf("rows %s + %s, want 50000 each", a, b)
	}
	if out.Summary.Queries.Write == 0 || out.Summary.Queries.Write > 100 {
		t.Fatalf("%d INSERT statements for 100000 rows: want a few multi-row ones", out.Summary.Queries.Write)
	}
}

// TestBulkInsertCountsItsLastInsert runs bulk_insert for fewer rows than
// fill one multi-row INSERT: the INSERT each client sends at its end is a
// write, as sysbench counts it (2 clients, 2 writes), not "queries: 0".
func TestBulkInsertCountsItsLastInsert(t *testing.T) {
	_, out := runBulk(t, 100)
	if q := out.Summary.Queries; q.Write != 2 || q.Total != 2 {
		t.Fatalf("queries %+v for 100 rows in 2 tables: want the 2 INSERTs the clients send at their end", q)
	}
}

func TestValidateRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *oltp.Options)
	}{
		{"oltp_read_write", func(o *oltp.Options) { o.Tables = 0 }},
		{"oltp_read_write", func(o *oltp.Options) { o.TableSize = -1 }},
		{"oltp_read_write", func(o *oltp.Options) { o.PointSelects = -1 }},
		{"select_random_points", func(o *oltp.Options) { o.Tables = 2 }},
		{"oltp_read_write", func(o *oltp.Options) { o.Rand.SpecPct = 300 }},
		{"oltp_read_write", func(o *oltp.Options) { o.MySQLStorageEngine = "innodb; DROP TABLE x" }},
	} {
		w := oltp.New(tc.name)
		tc.set(w.Opts())
		if err := w.Validate(nil); err == nil {
			t.Errorf("%s: bad options accepted: %+v", tc.name, *w.Opts())
		}
	}
}
