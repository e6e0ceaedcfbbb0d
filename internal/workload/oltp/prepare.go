package oltp

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/dbmark/dbmark/internal/progress"
	"github.com/dbmark/dbmark/internal/randgen"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// The random strings of sysbench: 11-digit groups separated by dashes.
const (
	cTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	padTemplate = "###########-###########-###########-###########-###########"
)

func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// layout is sysbench's: upper case, "ENGINE = x".
var layout = target.Layout{Upper: true, Assign: " = "}

// createSQL is sysbench's CREATE TABLE in the engine's dialect. With
// --secondary the id is no primary key but has an index, declared here
// where the engine declares indexes in CREATE TABLE and built after the
// load elsewhere (secondaryIndex).
func (w *Workload) createSQL(d target.Dialect, n int) (string, error) {
	if w.name == "bulk_insert" {
		return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id))", tableName(n)), nil
	}
	id := "INTEGER NOT NULL"
	if w.opt.AutoInc {
		id, _ = d.AutoIncrement(false, false)
	}
	key := "PRIMARY KEY (id)"
	if w.opt.Secondary {
		key = d.InlineIndex("xid", "id")
	}
	ddl, err := d.CreateTable(target.Table{Name: tableName(n), StorageEngine: w.opt.MySQLStorageEngine, Layout: layout})
	if err != nil {
		return "", err
	}
	sql := fmt.Sprintf("%s %s (\n  id %s,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL", ddl.Head, tableName(n), id)
	if key != "" {
		sql += ",\n  " + key
	}
	sql += "\n)" + ddl.Tail
	if w.opt.CreateTableOptions != "" {
		sql += " " + w.opt.CreateTableOptions
	}
	return sql, nil
}

// secondaryIndex is the CREATE INDEX of --secondary's index on id, ""
// where createSQL declared it.
func (w *Workload) secondaryIndex(d target.Dialect, n int) string {
	if !w.opt.Secondary || d.InlineIndex("xid", "id") != "" {
		return ""
	}
	return fmt.Sprintf("CREATE INDEX xid_%d ON %s(id)", n, tableName(n))
}

// rowsToLoad is how many rows prepare puts in each table.
func (w *Workload) rowsToLoad() int64 {
	switch {
	case w.name == "bulk_insert":
		return 0
	case w.name == "oltp_insert" && !w.opt.AutoInc:
		return 0 // sysbench: client IDs from prepare could collide with unique() later
	}
	return w.opt.TableSize
}

// Prepare creates the tables and loads them in parallel, one table per
// loader as sysbench does, through each engine's bulk path; the secondary
// index is built after the load.
func (w *Workload) Prepare(ctx context.Context, env workload.Env) error {
	if err := w.Validate(env.Target); err != nil {
		return err
	}
	tables := w.tableCount(env.Threads)
	perTable := w.rowsToLoad()
	c0, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c0.Close()
	if w.name != "bulk_insert" { // bulk_insert's tables are created if missing
		// Tables already there are another prepare's data: refused before
		// anything is marked or changed.
		for n := 1; n <= tables; n++ {
			if _, _, err := c0.QueryRow(ctx, "SELECT COUNT(*) FROM "+tableName(n)+" WHERE 1 = 0"); err == nil {
				return fmt.Errorf("prepare %s: table %s exists from an earlier prepare: run cleanup first", w.name, tableName(n))
			}
		}
	}
	if err := workload.MarkIncomplete(ctx, c0, dataSet); err != nil {
		return fmt.Errorf("prepare %s: %w", w.name, err)
	}
	bar := progress.New(env.Progress, env.Interactive, fmt.Sprintf("loading %d table(s) of %d rows", tables, perTable), int64(tables)*perTable)
	var loaded atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	loaders := min(env.Threads, tables)
	if perTable == 0 {
		loaders = 1 // nothing to load: the tables are created in order, as sysbench's bulk_insert does
	}
	for l := 0; l < loaders; l++ {
		g.Go(func() error {
			c, err := env.Target.Connect(gctx)
			if err != nil {
				return err
			}
			defer c.Close()
			for n := l + 1; n <= tables; n += loaders {
				if err := w.prepareTable(gctx, env, c, n, perTable, func(d int64) { bar.Set(loaded.Add(d)) }); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("prepare %s: %w (run cleanup before preparing again)", w.name, err)
	}
	if err := workload.MarkComplete(ctx, c0, dataSet); err != nil {
		return fmt.Errorf("prepare %s: %w", w.name, err)
	}
	bar.Finish()
	return nil
}

// dataSet names the OLTP tables' mark of an unfinished prepare.
const dataSet = "sbtest"

func (w *Workload) prepareTable(ctx context.Context, env workload.Env, c target.Conn, n int, rows int64, progressed func(int64)) error {
	name := tableName(n)
	create, err := w.createSQL(env.Target.Dialect(), n)
	if err != nil {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	env.Step("Creating table '%s'...", name)
	if err := c.Exec(ctx, create); err != nil {
		if ctx.Err() == nil {
			return fmt.Errorf("create table %s: %w (if it exists from an earlier prepare, run cleanup first)", name, err)
		}
		return err
	}
	if rows > 0 {
		env.Step("Inserting %d records into '%s'", rows, name)
		src := &rowSource{
			ctx: ctx, w: w, n: rows, autoInc: w.opt.AutoInc,
			src:      randgen.New(env.Seed, uint64(n)),
			progress: progressed,
		}
		gen, err := randgen.NewGenerator(w.opt.Rand, 1, w.opt.TableSize)
		if err != nil {
			return err
		}
		src.k = gen
		cols := []string{"id", "k", "c", "pad"}
		if w.opt.AutoInc {
			cols = cols[1:]
		}
		if _, err := c.BulkInsert(ctx, name, cols, src); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err // the rows stopped early: the load is not whole
		}
		progressed(src.pending)
	}
	if w.name == "bulk_insert" {
		return nil
	}
	if ix := w.secondaryIndex(env.Target.Dialect(), n); ix != "" {
		if err := c.Exec(ctx, ix); err != nil {
			return fmt.Errorf("create index xid_%d: %w", n, err)
		}
	}
	if w.opt.CreateSecondary {
		env.Step("Creating a secondary index on '%s'...", name)
		if err := c.Exec(ctx, fmt.Sprintf("CREATE INDEX k_%d ON %s(k)", n, name)); err != nil {
			return fmt.Errorf("create index k_%d: %w", n, err)
		}
	}
	return nil
}

// rowSource generates sysbench's rows: k from the configured distribution
// over [1, table size], c and pad from the digit templates.
type rowSource struct {
	// ctx ends the rows early when it is done: not every engine's bulk
	// path stops on its own when the prepare is interrupted.
	ctx      context.Context
	w        *Workload
	n, i     int64
	autoInc  bool
	src      *randgen.Source
	k        *randgen.Generator
	c, pad   []byte
	pending  int64
	progress func(int64)
}

func (r *rowSource) Next(dst []target.Value) bool {
	if r.i >= r.n || r.i%1024 == 0 && r.ctx.Err() != nil {
		return false
	}
	r.i++
	if r.pending++; r.pending == 10_000 {
		r.progress(r.pending)
		r.pending = 0
	}
	k := r.k.Int(r.src)
	r.c = randgen.FillTemplate(r.c[:0], cTemplate, r.src)
	r.pad = randgen.FillTemplate(r.pad[:0], padTemplate, r.src)
	i := 0
	if !r.autoInc {
		dst[0].SetInt(r.i)
		i = 1
	}
	dst[i].SetInt(k)
	dst[i+1].SetStr(r.c)
	dst[i+2].SetStr(r.pad)
	return true
}

// Cleanup drops the tables.
func (w *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for n := 1; n <= w.tableCount(env.Threads); n++ {
		env.Step("Dropping table '%s'...", tableName(n))
		if err := c.Exec(ctx, "DROP TABLE IF EXISTS "+tableName(n)); err != nil {
			return fmt.Errorf("cleanup %s: drop table %s: %w", w.name, tableName(n), err)
		}
	}
	if err := workload.MarkComplete(ctx, c, dataSet); err != nil {
		return fmt.Errorf("cleanup %s: %w", w.name, err)
	}
	return nil
}

// ErrNotPrepared says the tables are missing.
type ErrNotPrepared struct {
	Table string
	Err   error
}

func (e *ErrNotPrepared) Error() string {
	return fmt.Sprintf("table %s is missing or unreadable (%v): run prepare with the same --target and --tables first", e.Table, e.Err)
}

func (e *ErrNotPrepared) Unwrap() error { return e.Err }

// ErrEmptyTable says a table that prepare loads has no rows.
type ErrEmptyTable struct{ Table, Workload string }

func (e *ErrEmptyTable) Error() string {
	return fmt.Sprintf("table %s is empty (an earlier prepare did not finish?): run dbmark cleanup %s and prepare it again, or give --allow-empty to run on it", e.Table, e.Workload)
}

// Prepared checks that the last prepare finished, that every table the
// run needs exists and, where prepare loads rows, is not empty; it warns
// when the tables are smaller than --table-size says.
func (w *Workload) Prepared(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := workload.CheckComplete(ctx, c, dataSet, w.name); err != nil {
		return err
	}
	for n := 1; n <= w.tableCount(env.Threads); n++ {
		v, _, err := c.QueryRow(ctx, "SELECT MAX(id) FROM "+tableName(n))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &ErrNotPrepared{Table: tableName(n), Err: err}
		}
		if w.rowsToLoad() == 0 {
			continue
		}
		if max, err := strconv.ParseInt(v, 10, 64); err == nil && max < w.opt.TableSize*9/10 {
			env.Logger.Warn("table is smaller than --table-size: lookups beyond its last id will find nothing",
				"table", tableName(n), "max_id", max, "table_size", w.opt.TableSize)
		} else if v == "" && w.opt.AllowEmpty {
			env.Logger.Warn("table is empty: the statements will find no rows", "table", tableName(n))
		} else if v == "" {
			return &ErrEmptyTable{Table: tableName(n), Workload: w.name}
		}
	}
	return nil
}

// Prewarm reads every table through its primary key and its secondary
// index, as sysbench's prewarm does, so they are in the server's caches.
// The tables are shared between env.Threads connections.
func (w *Workload) Prewarm(ctx context.Context, env workload.Env) error {
	tables := w.tableCount(env.Threads)
	g, gctx := errgroup.WithContext(ctx)
	for l := 0; l < min(env.Threads, tables); l++ {
		g.Go(func() error {
			c, err := env.Target.Connect(gctx)
			if err != nil {
				return err
			}
			defer c.Close()
			for n := l + 1; n <= tables; n += env.Threads {
				name := tableName(n)
				env.Step("Prewarming table %s", name)
				for _, q := range []string{
					fmt.Sprintf("SELECT AVG(id) FROM (SELECT id FROM %s ORDER BY id LIMIT %d) t", name, w.opt.TableSize),
					fmt.Sprintf("SELECT COUNT(*) FROM (SELECT k FROM %s ORDER BY k LIMIT %d) t", name, w.opt.TableSize),
				} {
					if _, _, err := c.QueryRow(gctx, q); err != nil {
						return fmt.Errorf("prewarm %s: %w", name, err)
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}
