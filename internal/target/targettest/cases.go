package targettest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/target"
)

func (s *suite) redacted(t *testing.T) {
	tg := s.tg
	if strings.Contains(tg.Redacted(), ":secret@") {
		t.Errorf("Redacted() kept the password: %s", tg.Redacted())
	}
}

func (s *suite) insertSelectUpdate(t *testing.T) {
	ctx, c, d, table := context.Background(), s.c, s.d, s.table
	ins, err := c.Prepare(ctx, fmt.Sprintf("INSERT INTO %s (id, k, c) VALUES (%s, %s, %s)", table, d.Placeholder(1), d.Placeholder(2), d.Placeholder(3)))
	if err != nil {
		t.Fatalf("prepare insert: %v", err)
	}
	defer ins.Close()
	args := make([]target.Value, 3)
	for i := int64(1); i <= 10; i++ {
		args[0].SetInt(i)
		args[1].SetInt(i * 10)
		args[2].SetStr([]byte("it's row " + strconv.FormatInt(i, 10) + ` with \ and "`))
		n, err := ins.Run(ctx, args)
		if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
		if n != 1 {
			t.Fatalf("insert %d: %d rows affected, want 1", i, n)
		}
	}
	sel, err := c.Prepare(ctx, fmt.Sprintf("SELECT c FROM %s WHERE id BETWEEN %s AND %s", table, d.Placeholder(1), d.Placeholder(2)))
	if err != nil {
		t.Fatalf("prepare select: %v", err)
	}
	defer sel.Close()
	n, err := sel.Run(ctx, []target.Value{target.IntVal(3), target.IntVal(7)})
	if err != nil || n != 5 {
		t.Fatalf("select range: %d rows, %v; want 5 rows", n, err)
	}
	// The rows a SELECT returns, never a count of its own: the workloads
	// tell a read that found nothing by them.
	for _, q := range []struct {
		sql    string
		args   []int64
		want   int64
		reason string
	}{
		{"SELECT c FROM %s WHERE id BETWEEN %s AND %s", []int64{100, 200}, 0, "a range of missing ids"},
		{"SELECT c FROM %s WHERE id = %s", []int64{4}, 1, "a point select"},
		{"select c from %s where id = %s", []int64{-4}, 0, "a point select of a missing id, in lower case"},
		{"SELECT SUM(k) FROM %s WHERE id BETWEEN %s AND %s", []int64{100, 200}, 1, "an aggregate over no row"},
	} {
		ph := make([]any, 0, 3)
		ph = append(ph, table)
		args := make([]target.Value, len(q.args))
		for i, a := range q.args {
			ph = append(ph, d.Placeholder(i+1))
			args[i] = target.IntVal(a)
		}
		st, err := c.Prepare(ctx, fmt.Sprintf(q.sql, ph...))
		if err != nil {
			t.Fatalf("prepare %s: %v", q.reason, err)
		}
		n, err := st.Run(ctx, args)
		st.Close()
		if err != nil || n != q.want {
			t.Fatalf("%s: %d rows, %v; want %d", q.reason, n, err, q.want)
		}
	}
	// The same counts of text sent as Exec sends it.
	for _, q := range []struct {
		sql  string
		want int64
	}{
		{"SELECT c FROM %s WHERE id BETWEEN 3 AND 7 ORDER BY id", 5},
		{"select c from %s where id >= 100", 0},
		{"SELECT SUM(k) FROM %s WHERE id < 0", 1},
		{"UPDATE %s SET c='x' WHERE id BETWEEN 8 AND 9", 2},
	} {
		if n, err := c.ExecRows(ctx, fmt.Sprintf(q.sql, table)); err != nil || n != q.want {
			t.Fatalf("ExecRows %q: %d rows, %v; want %d", q.sql, n, err, q.want)
		}
	}
	upd, err := c.Prepare(ctx, fmt.Sprintf("UPDATE %s SET k=k+1 WHERE id=%s", table, d.Placeholder(1)))
	if err != nil {
		t.Fatalf("prepare update: %v", err)
	}
	defer upd.Close()
	if n, err := upd.Run(ctx, []target.Value{target.IntVal(4)}); err != nil || n != 1 {
		t.Fatalf("update: %d rows, %v; want 1", n, err)
	}
	v, ok, err := c.QueryRow(ctx, fmt.Sprintf("SELECT k FROM %s WHERE id=4", table))
	if err != nil || !ok || v != "41" {
		t.Fatalf("k after update = %q, %v, %v; want 41", v, ok, err)
	}
	v, _, err = c.QueryRow(ctx, fmt.Sprintf("SELECT c FROM %s WHERE id=2", table))
	if err != nil || v != `it's row 2 with \ and "` {
		t.Fatalf("string round trip = %q, %v", v, err)
	}
	if _, ok, err := c.QueryRow(ctx, fmt.Sprintf("SELECT c FROM %s WHERE id=-1", table)); err != nil || ok {
		t.Fatalf("QueryRow on no rows = %v, %v; want false, nil", ok, err)
	}
}

func (s *suite) runRowKeepsTheLastRow(t *testing.T) {
	ctx, c, d, table := context.Background(), s.c, s.d, s.table
	st, err := c.Prepare(ctx, fmt.Sprintf("SELECT id, c, NULL AS n FROM %s WHERE id BETWEEN %s AND %s ORDER BY id", table, d.Placeholder(1), d.Placeholder(2)))
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer st.Close()
	rs, ok := st.(target.RowStmt)
	if !ok {
		t.Fatalf("%T does not implement target.RowStmt", st)
	}
	row, err := rs.RunRow(ctx, []target.Value{target.IntVal(3), target.IntVal(4)})
	if err != nil {
		t.Fatalf("RunRow: %v", err)
	}
	if row.Rows != 2 || len(row.Columns) != 3 || len(row.Values) != 3 {
		t.Fatalf("RunRow = %d rows, columns %q, %d values; want 2 rows, 3 columns", row.Rows, row.Columns, len(row.Values))
	}
	if !strings.EqualFold(row.Columns[0], "id") || !strings.EqualFold(row.Columns[1], "c") || !strings.EqualFold(row.Columns[2], "n") {
		t.Errorf("columns %q; want id, c, n", row.Columns)
	}
	if string(row.Values[0]) != "4" || string(row.Values[1]) != `it's row 4 with \ and "` || row.Values[2] != nil {
		t.Errorf("last row %q; want 4, the string, NULL (nil)", row.Values)
	}
	row, err = rs.RunRow(ctx, []target.Value{target.IntVal(-2), target.IntVal(-1)})
	if err != nil || row.Rows != 0 {
		t.Fatalf("RunRow on no rows = %d rows, %v; want 0", row.Rows, err)
	}
	upd, err := c.Prepare(ctx, fmt.Sprintf("UPDATE %s SET k=k+1 WHERE id=%s", table, d.Placeholder(1)))
	if err != nil {
		t.Fatalf("prepare update: %v", err)
	}
	defer upd.Close()
	row, err = upd.(target.RowStmt).RunRow(ctx, []target.Value{target.IntVal(5)})
	if err != nil || row.Rows != 1 || len(row.Columns) != 0 {
		t.Fatalf("RunRow(update) = %d rows, columns %q, %v; want 1 row affected and no columns", row.Rows, row.Columns, err)
	}
}

func (s *suite) nullArguments(t *testing.T) {
	ctx, c, d, table := context.Background(), s.c, s.d, s.table
	nt := table + "_null"
	mustExec(t, c, "DROP TABLE IF EXISTS "+nt)
	mustExec(t, c, fmt.Sprintf("CREATE TABLE %s (%s, s VARCHAR(20), i INTEGER)", nt, d.IntPK("id")))
	defer c.Exec(context.Background(), "DROP TABLE "+nt)
	ins, err := c.Prepare(ctx, fmt.Sprintf("INSERT INTO %s (id, s, i) VALUES (%s, %s, %s)", nt, d.Placeholder(1), d.Placeholder(2), d.Placeholder(3)))
	if err != nil {
		t.Fatalf("prepare insert: %v", err)
	}
	defer ins.Close()
	// A Value set to NULL after holding a string must not keep it; an
	// empty string (even a nil slice) is not NULL.
	v := target.StrVal([]byte("x"))
	v.SetNull()
	for _, args := range [][]target.Value{
		{target.IntVal(1), target.NullVal(), target.NullVal()},
		{target.IntVal(2), v, {Int: 7, IsNull: true}},
		{target.IntVal(3), target.StrVal(nil), target.IntVal(0)},
		{target.IntVal(4), target.StrVal([]byte("NULL")), target.IntVal(4)},
	} {
		if _, err := ins.Run(ctx, args); err != nil {
			t.Fatalf("insert %d: %v", args[0].Int, err)
		}
	}
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM " + nt + " WHERE s IS NULL AND i IS NULL": "2",
		"SELECT COUNT(*) FROM " + nt + " WHERE s = '' AND i = 0":        "1",
		"SELECT COUNT(*) FROM " + nt + " WHERE s = 'NULL'":              "1",
	} {
		if got, _, err := c.QueryRow(ctx, q); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %s", q, got, err, want)
		}
	}
	sel, err := c.Prepare(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE id = %s OR s = %s", nt, d.Placeholder(1), d.Placeholder(2)))
	if err != nil {
		t.Fatalf("prepare select: %v", err)
	}
	defer sel.Close()
	// NULL compares as unknown: only the id matches.
	row, err := sel.(target.RowStmt).RunRow(ctx, []target.Value{target.IntVal(4), target.NullVal()})
	if err != nil || row.Rows != 1 || string(row.Values[0]) != "1" {
		t.Fatalf("select with a NULL argument = %d rows %q, %v; want one row, 1", row.Rows, row.Values, err)
	}
}

func (s *suite) pipeline(t *testing.T) {
	ctx, tg, c, d, table, e := context.Background(), s.tg, s.c, s.d, s.table, s.e
	pc, ok := c.(target.ProtocolConn)
	if !ok {
		t.Skip("the engine has one protocol and no pipeline")
	}
	row, err := pc.RunText(ctx, fmt.Appendf(nil, "SELECT 1 AS a; SELECT id AS b, c FROM %s WHERE id IN (2, 3) ORDER BY id", table))
	if err != nil || row.Rows != 2 || len(row.Columns) != 2 || row.Columns[0] != "b" || string(row.Values[0]) != "3" {
		t.Fatalf("RunText = %d rows, columns %q, values %q, %v; want the last result's last row: b = 3", row.Rows, row.Columns, row.Values, err)
	}
	pl, err := pc.StartPipeline(ctx)
	if pc.Protocol() == "simple" {
		if err == nil || !strings.Contains(err.Error(), "simple query protocol") {
			t.Fatalf("StartPipeline in the simple protocol = %v; want pgbench's refusal", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("StartPipeline: %v", err)
	}
	if err := pl.End(ctx); err != nil {
		t.Fatalf("empty pipeline: %v", err)
	}
	ins, err := c.Prepare(ctx, fmt.Sprintf("INSERT INTO %s (id, k, c) VALUES (%s, %s, 'pipelined')", table, d.Placeholder(1), d.Placeholder(2)))
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer ins.Close()
	count := func() string {
		t.Helper()
		v, _, err := c.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE c = 'pipelined'", table))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Two transactions (a sync between them) of reused arguments.
	if pl, err = pc.StartPipeline(ctx); err != nil {
		t.Fatal(err)
	}
	args := make([]target.Value, 2)
	for i := int64(100); i < 106; i++ {
		args[0].SetInt(i)
		args[1].SetInt(i)
		if err := pl.Queue(ins, args); err != nil {
			t.Fatal(err)
		}
		if i == 102 {
			if err := pl.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := pl.End(ctx); err != nil || count() != "6" {
		t.Fatalf("pipeline of 6 inserts: %v, %s rows; want 6", err, count())
	}
	// A duplicate key fails the third statement: the server skips the
	// rest of its transaction and rolls back the first two (one
	// implicit transaction, so one sync), then runs the next one.
	if pl, err = pc.StartPipeline(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{110, 111, 100, 112} {
		pl.Queue(ins, []target.Value{target.IntVal(id), target.IntVal(0)})
	}
	pl.Sync()
	pl.Queue(ins, []target.Value{target.IntVal(113), target.IntVal(0)})
	err = pl.End(ctx)
	var pe *target.PipelineError
	if !errors.As(err, &pe) || pe.Index != 2 {
		t.Fatalf("pipeline with a duplicate key: %v; want a PipelineError at statement 2", err)
	}
	if info := tg.Classify(err); info.Code != e.UniqueViolation {
		t.Errorf("Classify(pipeline error) = %v %q; want %q", info.Class, info.Code, e.UniqueViolation)
	}
	v, _, qerr := c.QueryRow(ctx, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE id BETWEEN 110 AND 113", table))
	if qerr != nil || v != "1" {
		t.Fatalf("rows 110..113 after the failed pipeline: %s, %v; want only 113", v, qerr)
	}
	mustExec(t, c, fmt.Sprintf("DELETE FROM %s WHERE id >= 100", table))
}

func (s *suite) transaction(t *testing.T) {
	ctx, c, d, table := context.Background(), s.c, s.d, s.table
	mustExec(t, c, d.Begin(true))
	mustExec(t, c, fmt.Sprintf("UPDATE %s SET k=0 WHERE id=1", table))
	mustExec(t, c, "ROLLBACK")
	v, _, err := c.QueryRow(ctx, fmt.Sprintf("SELECT k FROM %s WHERE id=1", table))
	if err != nil || v != "10" {
		t.Fatalf("k after rollback = %q, %v; want 10", v, err)
	}
	mustExec(t, c, d.Begin(true))
	mustExec(t, c, fmt.Sprintf("UPDATE %s SET k=11 WHERE id=1", table))
	mustExec(t, c, "COMMIT")
	v, _, _ = c.QueryRow(ctx, fmt.Sprintf("SELECT k FROM %s WHERE id=1", table))
	if v != "11" {
		t.Fatalf("k after commit = %q; want 11", v)
	}
}

func (s *suite) uniqueViolationIsFatal(t *testing.T) {
	ctx, tg, c, table, e := context.Background(), s.tg, s.c, s.table, s.e
	err := c.Exec(ctx, fmt.Sprintf("INSERT INTO %s (id, k, c) VALUES (1, 1, 'dup')", table))
	if err == nil {
		t.Fatal("duplicate key accepted")
	}
	info := tg.Classify(err)
	if info.Class != target.Fatal || info.Code != e.UniqueViolation {
		t.Fatalf("Classify(duplicate key) = %v %q; want fatal %q (error: %v)", info.Class, info.Code, e.UniqueViolation, err)
	}
	// The connection stays usable after a statement error.
	if _, _, err := c.QueryRow(ctx, "SELECT 1"); err != nil {
		t.Fatalf("connection unusable after an error: %v", err)
	}
}

func (s *suite) bulkInsert(t *testing.T) {
	ctx, c, d, table := context.Background(), s.c, s.d, s.table
	bulk := table + "_bulk"
	mustExec(t, c, "DROP TABLE IF EXISTS "+bulk)
	mustExec(t, c, fmt.Sprintf("CREATE TABLE %s (%s, k INTEGER NOT NULL, c VARCHAR(120) NOT NULL)", bulk, d.IntPK("id")))
	defer c.Exec(context.Background(), "DROP TABLE "+bulk)
	src := &counter{n: 25_000}
	n, err := c.BulkInsert(ctx, bulk, []string{"id", "k", "c"}, src)
	if err != nil || n != 25_000 {
		t.Fatalf("bulk insert: %d rows, %v; want 25000", n, err)
	}
	v, _, err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+bulk)
	if err != nil || v != "25000" {
		t.Fatalf("count after bulk insert = %q, %v", v, err)
	}
	v, _, _ = c.QueryRow(ctx, "SELECT c FROM "+bulk+" WHERE id=77")
	if v != "tab\there 'quoted' back\\slash 77" {
		t.Fatalf("bulk string round trip = %q", v)
	}
}

// deleteOne deletes one of three identical rows of a table without a
// key, then the others one at a time, then finds none.
func (s *suite) deleteOne(t *testing.T) {
	ctx, c, d, table := context.Background(), s.c, s.d, s.table+"_dup"
	mustExec(t, c, "DROP TABLE IF EXISTS "+table)
	mustExec(t, c, "CREATE TABLE "+table+" (k INTEGER NOT NULL, v INTEGER NOT NULL)")
	defer c.Exec(context.Background(), "DROP TABLE "+table)
	mustExec(t, c, "INSERT INTO "+table+" VALUES (1, 7), (2, 7), (2, 7), (2, 7)")
	st, err := c.Prepare(ctx, d.DeleteOne(table, "k = 2"))
	if err != nil {
		t.Fatalf("prepare %s: %v", d.DeleteOne(table, "k = 2"), err)
	}
	defer st.Close()
	for _, want := range []int64{1, 1, 1, 0} {
		if n, err := st.Run(ctx, nil); err != nil || n != want {
			t.Fatalf("delete one: %d rows, %v; want %d", n, err, want)
		}
	}
	if v, _, err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+table); err != nil || v != "1" {
		t.Fatalf("rows left = %q, %v; want the row of k = 1", v, err)
	}
}

func (s *suite) inspect(t *testing.T) {
	ctx, tg := context.Background(), s.tg
	eng, err := tg.Inspect(ctx)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if eng.Name == "" || eng.Version == "" || len(eng.Settings) < 5 {
		t.Fatalf("inspect: name %q version %q, %d settings", eng.Name, eng.Version, len(eng.Settings))
	}
}

func (s *suite) facts(t *testing.T) {
	ctx, tg := context.Background(), s.tg
	fc, ok := tg.(target.Facter)
	if !ok {
		t.Skip("the target reports no engine facts")
	}
	f, err := fc.Facts(ctx)
	if err != nil {
		t.Fatalf("facts: %v", err)
	}
	// The suite's table holds rows, so the data has a size; every
	// engine has a main cache and states its sizes.
	if f.CacheBytes == 0 || f.DataBytes == 0 || len(f.Sizes) < 3 {
		t.Fatalf("facts: cache %d, data %d, sizes %v", f.CacheBytes, f.DataBytes, f.Sizes)
	}
	for name, nd := range f.NonDefault {
		if nd.Value == nd.Default {
			t.Errorf("%s listed as changed but equals its default %q", name, nd.Default)
		}
	}
}

func (s *suite) counters(t *testing.T) {
	ctx, tg, c, table := context.Background(), s.tg, s.c, s.table
	cs, ok := tg.(target.CounterSource)
	if !ok {
		t.Skip("the target exposes no counters")
	}
	r, err := cs.OpenCounters(ctx)
	if err != nil {
		t.Fatalf("open counters: %v", err)
	}
	defer r.Close()
	first, err := r.ReadCounters(ctx)
	if err != nil || len(first) < 5 {
		t.Fatalf("counters: %d, %v", len(first), err)
	}
	// Work between two reads must move a cumulative counter.
	for range 20 {
		if _, _, err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+table); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]float64{}
	for _, x := range first {
		before[x.Name] = x.Value
	}
	// Servers publish their statistics with a delay (PostgreSQL
	// flushes a backend's at most once a second).
	moved := false
	for deadline := time.Now().Add(5 * time.Second); !moved && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		second, err := r.ReadCounters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range second {
			if !x.Gauge && x.Value > before[x.Name] {
				moved = true
			}
		}
	}
	if !moved {
		t.Fatalf("no cumulative counter moved after 20 queries: %v", first)
	}
}

// A session waiting on a row another transaction holds is counted in
// lock_waiters while it waits, and no longer once the holder commits.
func (s *suite) lockWaitersCounted(t *testing.T) {
	ctx := context.Background()
	mustExec(t, s.c, fmt.Sprintf("INSERT INTO %s (id, k, c) VALUES (424242, 1, 'held')", s.table))
	holder, err := s.tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := s.tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	r, err := s.tg.(target.CounterSource).OpenCounters(ctx)
	if err != nil {
		t.Fatalf("open counters: %v", err)
	}
	defer r.Close()
	waiters := func() float64 {
		t.Helper()
		cs, err := r.ReadCounters(ctx)
		if err != nil {
			t.Fatalf("read counters: %v", err)
		}
		for _, c := range cs {
			if c.Name == "lock_waiters" {
				if !c.Gauge {
					t.Fatalf("lock_waiters is not a gauge: %+v", c)
				}
				return c.Value
			}
		}
		t.Fatalf("no lock_waiters among the counters: %v", cs)
		return 0
	}
	// until polls the counter for up to 5 s: the servers show a wait
	// once the waiter's statement has reached the lock.
	until := func(want func(float64) bool) float64 {
		t.Helper()
		v := waiters()
		for deadline := time.Now().Add(5 * time.Second); !want(v) && time.Now().Before(deadline); v = waiters() {
			time.Sleep(50 * time.Millisecond)
		}
		return v
	}
	if v := until(func(v float64) bool { return v == 0 }); v != 0 {
		t.Fatalf("lock_waiters %g before any lock was taken", v)
	}
	update := fmt.Sprintf("UPDATE %s SET k = k + 1 WHERE id = 424242", s.table)
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, update)
	done := make(chan error, 1)
	go func() { done <- waiter.Exec(ctx, update) }()
	if v := until(func(v float64) bool { return v >= 1 }); v < 1 {
		t.Errorf("lock_waiters %g while a session waits on a row lock", v)
	}
	mustExec(t, holder, "COMMIT")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the waiting update: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting update did not end after the holder committed")
	}
	if v := until(func(v float64) bool { return v == 0 }); v != 0 {
		t.Errorf("lock_waiters %g after the holder committed, want 0", v)
	}
}

func (s *suite) cancelInterruptsWithinASecond(t *testing.T) {
	t.Run("Text", func(t *testing.T) {
		s.cancelWithinASecond(t, func(ctx context.Context, c target.Conn, sql string) error { return c.Exec(ctx, sql) })
	})
	// A script's SQL text in the simple protocol (pgbench's -M simple),
	// where the engine has more than one protocol.
	t.Run("ProtocolText", func(t *testing.T) {
		if _, ok := s.c.(target.ProtocolConn); !ok {
			t.Skip("the engine has one protocol")
		}
		s.cancelWithinASecond(t, func(ctx context.Context, c target.Conn, sql string) error {
			_, err := c.(target.ProtocolConn).RunText(ctx, []byte(sql))
			return err
		})
	})
	// A prepared statement's Run is the workloads' every statement, which
	// the engines may watch apart from the rest (target.Watch).
	t.Run("Prepared", func(t *testing.T) {
		s.cancelWithinASecond(t, func(ctx context.Context, c target.Conn, sql string) error {
			st, err := c.Prepare(ctx, sql)
			if err != nil {
				return fmt.Errorf("prepare: %w", err)
			}
			defer st.Close()
			_, err = st.Run(ctx, nil)
			return err
		})
	})
}

// cancelWithinASecond runs a 10 s sleep through run on a connection of
// its own and cancels its context at 0.2 s: run must return within
// 1.5 s an error classified as canceled.
func (s *suite) cancelWithinASecond(t *testing.T, run func(ctx context.Context, c target.Conn, sql string) error) {
	tg, e := s.tg, s.e
	within(t, 15*time.Second, "a cancelled statement", func(ctx context.Context) {
		cc, err := tg.Connect(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		defer cc.Close()
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err = run(cctx, cc, e.SleepSQL(10))
		if took := time.Since(start); took > 1500*time.Millisecond {
			t.Errorf("cancel took %v", took)
		}
		if err == nil {
			t.Error("cancelled statement returned no error")
		} else if info := tg.Classify(err); info.Class != target.Canceled {
			t.Errorf("Classify(cancelled) = %v %q (%v); want canceled", info.Class, info.Code, err)
		}
	})
}

func (s *suite) conflictIsRetryable(t *testing.T) {
	tg, table, e := s.tg, s.table, s.e
	within(t, 30*time.Second, "two conflicting transactions", func(ctx context.Context) {
		conns, err := connectN(ctx, t, tg, 2)
		if err != nil {
			t.Error(err)
			return
		}
		err = e.Conflict(ctx, t, conns[0], conns[1], table)
		if err == nil {
			t.Error("conflict produced no error")
		} else if info := tg.Classify(err); info.Class != target.Retryable {
			t.Errorf("Classify(conflict) = %v %q (%v); want retryable", info.Class, info.Code, err)
		}
	})
}

func (s *suite) classifyCanceledContext(t *testing.T) {
	tg := s.tg
	if info := tg.Classify(context.Canceled); info.Class != target.Canceled {
		t.Fatalf("Classify(context.Canceled) = %v", info.Class)
	}
	if info := tg.Classify(fmt.Errorf("wrapped: %w", context.Canceled)); info.Class != target.Canceled {
		t.Fatalf("Classify(wrapped cancel) = %v", info.Class)
	}
	if info := tg.Classify(errors.New("something else")); info.Class != target.Fatal {
		t.Fatalf("Classify(unknown) = %v", info.Class)
	}
}
