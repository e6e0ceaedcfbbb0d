package iibench_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbmark/dbmark/internal/result"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/target/sqlite"
	"github.com/dbmark/dbmark/internal/workload"
	"github.com/dbmark/dbmark/internal/workload/iibench"
)

// The schema, the indexes of both styles, the value ranges and an exact
// --max-rows split unevenly over three inserters.
func TestSchemaRangesAndExactMaxRows(t *testing.T) {
	for _, e := range engines(t) {
		for _, style := range []string{iibench.StyleClassic, iibench.StyleNew} {
			t.Run(e.name+"/"+style, func(t *testing.T) {
				table := "ii_schema_" + style
				drop(t, e.tg, table)
				b := newBench(t, table)
				o := b.w.Opts()
				o.IndexStyle, o.Inserters, o.MaxRows, o.RowsPerInsert = style, 3, 1001, 100
				o.DataLengthMin, o.DataLengthMax, o.DataRandomPct = 20, 30, 40
				out, res := b.run(t, e.tg)
				mustOK(t, out)

				want := map[string]string{
					"marketsegment": "price,customerid", "registersegment": "cashregisterid,price,customerid",
					"pdc": "price,dateandtime,customerid"}
				if style == iibench.StyleNew {
					want["marketsegment"], want["registersegment"] = "productid,customerid,price", "cashregisterid,customerid,price"
				}
				for ix, cols := range want {
					if got := indexColumns(t, e, table, table+"_"+ix); got != cols {
						t.Errorf("index %s: columns %q, want %q", ix, got, cols)
					}
				}
				if n := qInt(t, e.tg, "SELECT COUNT(*) FROM "+table); n != 1001 {
					t.Fatalf("%d rows, want exactly 1001", n)
				}
				if res.Rows == nil || res.Rows.Inserted != 1001 || res.Rows.TableRows != 1001 {
					t.Fatalf("result rows %+v, want 1001 inserted", res.Rows)
				}
				// Without dbstat, SQLite's sizes are TestSQLiteSizeIsTheTablesOwn's.
				if (e.name != "sqlite" || hasDBStat(t, e.tg)) && (res.Rows.DataBytes <= 0 || res.Rows.IndexBytes <= 0) {
					t.Errorf("sizes %d/%d: want the engine's figures", res.Rows.DataBytes, res.Rows.IndexBytes)
				}
				if n := qInt(t, e.tg, "SELECT MAX(transactionid) FROM "+table); n != 1001 {
					t.Errorf("max transactionid %d, want 1001", n)
				}
				maxPrice := "1004.99" // (500 + 99999) / 100
				if style == iibench.StyleNew {
					maxPrice = "499"
				}
				for _, c := range []struct{ sql, bound string }{
					{"MIN(cashregisterid) >= 0 AND MAX(cashregisterid) <= 999", ""},
					{"MIN(productid) >= 0 AND MAX(productid) <= 9999", ""},
					{"MIN(customerid) >= 0 AND MAX(customerid) <= 99999", ""},
					{"MIN(price) >= 0 AND MAX(price) <= " + maxPrice, ""},
					{"MIN(LENGTH(data)) >= 20 AND MAX(LENGTH(data)) <= 30", ""},
					{"COUNT(DISTINCT customerid) > 900", ""},
					{"MIN(dateandtime) IS NOT NULL", ""},
				} {
					if v := qInt(t, e.tg, "SELECT CASE WHEN "+c.sql+" THEN 1 ELSE 0 END FROM "+table); v != 1 {
						t.Errorf("values out of range: %s", c.sql)
					}
				}
				// 40% of 20..30 characters are random, the rest is 'a'.
				if v := q(t, e.tg, "SELECT data FROM "+table+" WHERE transactionid = 7"); !strings.HasPrefix(v, strings.Repeat("a", 12)) || strings.Count(v, "a") == len(v) {
					t.Errorf("padding %q: want a run of 'a' then random characters", v)
				}
			})
		}
	}
}

// Inserters and query threads record their own operations; query threads
// wait, uncounted, until --query-after-rows; the rows series is there.
func TestRolesQueryAfterRowsAndRowSeries(t *testing.T) {
	const table = "ii_roles"
	onEngines(t, table, func(t *testing.T, e engine, b *bench) {
		o := b.w.Opts()
		o.Inserters, o.QueryThreads, o.MaxRows, o.RowsPerInsert = 1, 2, 6000, 50
		o.QueryAfterRows, o.ReportRows, o.InsertRate = 2000, 1000, 12000
		b.cfg.ReportInterval = 20e6 // 20ms
		out, res := b.run(t, e.tg)
		mustOK(t, out)
		ops := map[string]int64{}
		for _, op := range out.Summary.Ops {
			ops[op.Name] = op.Count
		}
		if ops["insert_trx"] != 120 || ops["insert"] != 120 {
			t.Errorf("insert_trx %d, insert %d: want 120 transactions of one 50-row statement", ops["insert_trx"], ops["insert"])
		}
		for _, name := range []string{"query", "query_pk", "query_marketsegment", "query_registersegment", "query_pdc"} {
			if ops[name] == 0 {
				t.Errorf("no %s operations recorded", name)
			}
		}
		if ops["query"] != ops["query_pk"]+ops["query_marketsegment"]+ops["query_registersegment"]+ops["query_pdc"] {
			t.Errorf("query events %d do not add up to the shapes %v", ops["query"], ops)
		}
		// Every primary-key query found a row; the range scans of the
		// secondary indexes may find none and are not checked.
		if c := res.Summary.ReadCheck; c == nil || c.Checked != ops["query_pk"] || c.Missed != 0 || res.Status != result.StatusOK {
			t.Errorf("read check %+v, status %s: want the %d primary-key queries, none missed", c, res.Status, ops["query_pk"])
		}
		// A point whose interval ended below 2000 rows cannot hold a query.
		early := 0
		for _, p := range out.Series {
			rows, ok := p.Extra["rows"]
			if !ok {
				t.Fatalf("interval point without rows: %+v", p)
			}
			if rows < 2000 {
				early++
				if p.ReadsPerS > 0 {
					t.Errorf("queries ran at %v rows, before --query-after-rows 2000", rows)
				}
			}
		}
		if early == 0 {
			t.Errorf("no interval ended below 2000 rows: the test did not check the wait (series %d points)", len(out.Series))
		}
		// --insert-rate 12000 rows/s: 6000 rows cannot take much less than half a second.
		if d := out.EndedAt.Sub(out.StartedAt).Seconds(); d < 0.4 {
			t.Errorf("6000 rows at --insert-rate 12000 took %.2fs", d)
		}
		s := res.Rows.Series
		if len(s) < 3 || s[len(s)-1].Rows != 6000 {
			t.Fatalf("rows series %+v: want points up to 6000 rows", s)
		}
		for i, p := range s {
			if i > 0 && p.Rows <= s[i-1].Rows {
				t.Errorf("rows series not increasing at %d: %d after %d", i, p.Rows, s[i-1].Rows)
			}
			if p.CumInsertsPerS <= 0 || p.TableRows != p.Rows {
				t.Errorf("row point %+v: want a rate and the table's rows", p)
			}
		}
		if res.Summary.HeadlineUnit != "rows/s" || res.Summary.Headline <= 0 {
			t.Errorf("headline %v %s, want rows/s", res.Summary.Headline, res.Summary.HeadlineUnit)
		}
	})
}

// Rows deleted under the run (the whole table, again and again, from
// another connection) leave the primary-key queries nothing to find: the
// run fails and says how many found none.
func TestQueriesOfRowsDeletedUnderTheRun(t *testing.T) {
	const table = "ii_gone"
	onEngines(t, table, func(t *testing.T, e engine, b *bench) {
		o := b.w.Opts()
		o.Inserters, o.QueryThreads, o.RowsPerInsert, o.InsertRate = 1, 1, 10, 500
		b.cfg.Duration = 2 * time.Second
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, err := e.tg.Connect(ctx)
			if err != nil {
				return
			}
			defer c.Close()
			for ctx.Err() == nil {
				_ = c.Exec(ctx, "DELETE FROM "+table) // before the table exists, an error
				time.Sleep(2 * time.Millisecond)
			}
		}()
		_, res := b.run(t, e.tg)
		stop()
		<-done
		c := res.Summary.ReadCheck
		if c == nil || c.Checked == 0 || c.Missed*2 <= c.Checked || res.Status != result.StatusFailed {
			t.Fatalf("read check %+v, status %s: want most primary-key queries missed and the run failed", c, res.Status)
		}
		if !strings.Contains(res.Error, "query_pk") || !strings.Contains(res.Error, "--recreate") {
			t.Fatalf("error %q: want the queries that missed and the hint", res.Error)
		}
	})
}

// --resume continues from the highest transactionid and says so; a second
// run without it is refused rather than dropping the table.
func TestResume(t *testing.T) {
	const table = "ii_resume"
	onEngines(t, table, func(t *testing.T, e engine, b *bench) {
		b.w.Opts().MaxRows = 1000
		out, _ := b.run(t, e.tg)
		mustOK(t, out)

		again := newBench(t, table)
		again.w.Opts().Recreate = false
		again.w.Opts().MaxRows = 2500
		env := testEnv(e.tg)
		if _, err := again.w.Load(context.Background(), env); err == nil || !strings.Contains(err.Error(), "--resume") {
			t.Fatalf("a run on an existing table without --resume: %v, want a refusal naming --resume", err)
		}
		again.w.Opts().Resume = true
		out, res := again.run(t, e.tg)
		mustOK(t, out)
		if !res.Rows.Resumed || res.Rows.ResumedFrom != 1000 || res.Rows.Inserted != 1500 {
			t.Fatalf("rows %+v: want resumed from 1000 with 1500 inserted", res.Rows)
		}
		if n := qInt(t, e.tg, "SELECT COUNT(*) FROM "+table); n != 2500 {
			t.Errorf("%d rows, want 2500", n)
		}
		if n := qInt(t, e.tg, "SELECT MAX(transactionid) FROM "+table); n != 2500 {
			t.Errorf("max transactionid %d, want 2500", n)
		}
	})
}

// --delete-per-insert keeps the row count: each transaction deletes as many
// of the oldest rows as it inserts.
func TestDeletePerInsertKeepsTheCount(t *testing.T) {
	const table = "ii_delete"
	onEngines(t, table, func(t *testing.T, e engine, b *bench) {
		b.w.Opts().MaxRows = 1000
		out, _ := b.run(t, e.tg)
		mustOK(t, out)

		d := newBench(t, table)
		o := d.w.Opts()
		o.Recreate, o.Resume, o.DeletePerInsert = false, true, true
		o.MaxRows, o.RowsPerInsert, o.RowsPerCommit, o.Inserters = 3000, 50, 100, 2
		out, res := d.run(t, e.tg)
		mustOK(t, out)
		if n := qInt(t, e.tg, "SELECT COUNT(*) FROM "+table); n != 1000 {
			t.Errorf("%d rows after deleting per insert, want 1000", n)
		}
		if n := qInt(t, e.tg, "SELECT MIN(transactionid) FROM "+table); n != 2001 {
			t.Errorf("oldest transactionid %d, want 2001", n)
		}
		if res.Rows.Deleted != 2000 || res.Rows.TableRows != 1000 {
			t.Errorf("rows %+v: want 2000 deleted and 1000 in the table", res.Rows)
		}
	})
}

// --secondary-at-end loads without the indexes, then builds and times them.
func TestSecondaryAtEnd(t *testing.T) {
	const table = "ii_atend"
	onEngines(t, table, func(t *testing.T, e engine, b *bench) {
		b.w.Opts().MaxRows, b.w.Opts().SecondaryAtEnd = 3000, true
		out, res := b.run(t, e.tg)
		mustOK(t, out)
		builds := res.Rows.IndexBuilds
		if len(builds) != 3 {
			t.Fatalf("index builds %+v: want 3", builds)
		}
		for i, name := range []string{"marketsegment", "registersegment", "pdc"} {
			if builds[i].Name != table+"_"+name || builds[i].Error != "" || builds[i].Seconds <= 0 {
				t.Errorf("build %d: %+v, want %s_%s timed", i, builds[i], table, name)
			}
			if indexColumns(t, e, table, table+"_"+name) == "" {
				t.Errorf("index %s missing after the build", name)
			}
		}
	})
}

// Range partitions on transactionid: each holds its range of ids.
func TestPartitions(t *testing.T) {
	const table = "ii_parts"
	onEngines(t, table, func(t *testing.T, e engine, b *bench) {
		if e.name == "sqlite" {
			t.Skip("SQLite has no partitions")
		}
		o := b.w.Opts()
		o.MaxRows, o.Partitions, o.RowsPerPartition, o.Inserters = 2000, 4, 500, 2
		out, res := b.run(t, e.tg)
		mustOK(t, out)
		for i, want := range []int64{499, 500, 500, 501} {
			sql := fmt.Sprintf("SELECT COUNT(*) FROM %s_p%d", table, i)
			if e.name == "mariadb" {
				sql = fmt.Sprintf("SELECT COUNT(*) FROM %s PARTITION (p%d)", table, i)
			}
			if n := qInt(t, e.tg, sql); n != want {
				t.Errorf("partition p%d holds %d rows, want %d", i, n, want)
			}
		}
		if res.Rows.DataBytes <= 0 || res.Rows.IndexBytes <= 0 {
			t.Errorf("sizes %d/%d: want the partitions' sizes summed", res.Rows.DataBytes, res.Rows.IndexBytes)
		}
	})
}

// Impossible options are refused by Validate, before anything is touched.
func TestRefusals(t *testing.T) {
	tg := sqlite.New(t.TempDir() + "/never.db")
	cases := []struct {
		set  func(o *iibench.Options)
		want string
	}{
		{func(o *iibench.Options) { o.Partitions = 4; o.MaxRows = 100 }, "SQLite has no table partitioning"},
		{func(o *iibench.Options) { o.SecondaryIndexes = 4 }, "--secondary-indexes 4"},
		{func(o *iibench.Options) { o.RowsPerInsert = 0 }, "--rows-per-insert 0"},
		{func(o *iibench.Options) { o.RowsPerCommit = 150 }, "--rows-per-commit 150"},
		{func(o *iibench.Options) { o.Resume, o.Recreate = true, true }, "choose one"},
		{func(o *iibench.Options) { o.Inserters, o.QueryThreads = 0, 0 }, "no threads"},
		{func(o *iibench.Options) { o.IndexStyle = "fancy" }, "--index-style"},
		{func(o *iibench.Options) { o.RowsPerPartition = 10 }, "needs --partitions"},
		{func(o *iibench.Options) { o.DataLengthMax = 5000 }, "4000"},
		{func(o *iibench.Options) { o.Table = "x; DROP" }, "--table-name"},
	}
	for _, c := range cases {
		w := iibench.New()
		w.Opts().RowsPerInsert = 100
		c.set(w.Opts())
		err := w.Validate(tg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: want an error naming %q", err, c.want)
		}
	}
	w := iibench.New()
	w.Opts().Inserters, w.Opts().QueryThreads = 2, 3
	in := workload.PlanInput{Clients: 4, Time: time.Second, MaxTries: 1, Given: workload.Given{Clients: true}}
	if _, err := workload.NewPlan(in, w.Plan); err == nil || !strings.Contains(err.Error(), "--threads 4 conflicts") {
		t.Errorf("--threads 4 with 2+3 workers: %v", err)
	}
	in.Clients, in.Given.Clients = 1, false
	if p, err := workload.NewPlan(in, w.Plan); err != nil || p.Clients != 5 {
		t.Errorf("threads %d, %v: want 5", p.Clients, err)
	}
}

// A full database ends the run with a clear message and keeps what was
// inserted: SQLite's max_page_count makes the file "full" deterministically,
// with no privileges needed.
func TestFullDiskEndsTheRunWithThePartialResult(t *testing.T) {
	tg := &capped{Target: sqlite.New(t.TempDir() + "/full.db")}
	b := newBench(t, "ii_full")
	b.w.Opts().MaxRows = 1_000_000
	b.w.Opts().DataLengthMin, b.w.Opts().DataLengthMax = 200, 200
	out, res := b.run(t, tg)
	if out.Status != result.StatusFailed || out.Err == nil || !strings.Contains(out.Err.Error(), "full") {
		t.Fatalf("status %s, err %v: want a failed run saying the disk is full", out.Status, out.Err)
	}
	if strings.Contains(out.Err.Error(), "--ignore-errors") {
		t.Errorf("error %q suggests --ignore-errors for a full disk", out.Err)
	}
	if res.Rows == nil || res.Rows.Inserted == 0 || res.Rows.Inserted >= 1_000_000 {
		t.Fatalf("rows %+v: want the partial count", res.Rows)
	}
	if n := qInt(t, tg, "SELECT COUNT(*) FROM ii_full"); n != res.Rows.Inserted {
		t.Errorf("%d rows in the table, the result says %d", n, res.Rows.Inserted)
	}
}

// capped limits every connection's database to 100 pages.
type capped struct{ target.Target }

func (c *capped) Connect(ctx context.Context) (target.Conn, error) {
	conn, err := c.Target.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := conn.Exec(ctx, "PRAGMA max_page_count = 100"); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// hasDBStat says whether this build's SQLite has the dbstat table (the
// sqlite_dbstat build tag, as make builds it).
func hasDBStat(t *testing.T, tg target.Target) bool {
	t.Helper()
	_, err := query(t, tg, "SELECT COUNT(*) FROM dbstat")
	return err == nil
}

// On SQLite the table's size is its own, never the file's: another
// table in the same file is not counted.
func TestSQLiteSizeIsTheTablesOwn(t *testing.T) {
	tg := sqlite.New(t.TempDir() + "/sizes.db")
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE other (b BLOB)", "INSERT INTO other SELECT randomblob(1<<20) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4)"} {
		if err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	b := newBench(t, "ii_sizes")
	b.w.Opts().MaxRows = 1000
	out, res := b.run(t, tg)
	mustOK(t, out)
	switch {
	case hasDBStat(t, tg):
		if d := res.Rows.DataBytes; d <= 0 || d >= 1<<20 {
			t.Errorf("data size %d: want the 1000 rows' own, well under the 4 MiB of the other table", d)
		}
	case res.Rows.DataBytes != -1:
		t.Errorf("data size %d without dbstat in a file of two tables: want unknown (-1)", res.Rows.DataBytes)
	}
}
