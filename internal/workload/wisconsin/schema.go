package wisconsin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/dbmark/dbmark/internal/progress"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// The relations. ONEKTUP, TENKTUP1 and TENKTUP2 are generated, each with
// its own permutation of unique1; BPRIME is TENKTUP2's first tenth, made
// by the prepare as the paper makes it before its joins.
const (
	oneKTup  = "onektup"
	tenKTup1 = "tenktup1"
	tenKTup2 = "tenktup2"
	bPrime   = "bprime"
)

// generated are the generated relations at scale n: ONEKTUP has a tenth
// of the rows, as 1,000 is of the paper's 10,000, so that every join
// keeps the paper's proportions at any scale.
func generated(n int64) []relation {
	return []relation{{oneKTup, n / 10, 1}, {tenKTup1, n, 2}, {tenKTup2, n, 3}}
}

// set is one copy of the four relations. The paper runs some queries on
// relations without indexes and the others after building a clustered
// index on unique2 and a non-clustered one on unique1; both copies are
// prepared, so every query runs on the copy it names, in any order, with
// no index built or dropped between queries.
type set struct {
	suffix  string
	indexed bool
}

var (
	indexed = set{suffix: "", indexed: true}
	noIndex = set{suffix: "_noindex"}
	sets    = []set{indexed, noIndex}
)

func (s set) table(rel string) string { return rel + s.suffix }

// metaTable records the scale and seed of the prepared data, from which
// the answers are computed; dataSet names the mark of an unfinished
// prepare.
const (
	metaTable = "wisconsin_meta"
	dataSet   = "wisconsin"
)

// tables are every table the prepare makes, the meta table last.
func tables() []string {
	var out []string
	for _, s := range sets {
		for _, r := range []string{bPrime, oneKTup, tenKTup1, tenKTup2} {
			out = append(out, s.table(r))
		}
	}
	return append(out, metaTable)
}

// layout is the paper's: keywords in upper case.
var layout = target.Layout{Upper: true}

// createTable is the CREATE TABLE of one relation: the paper's attributes,
// clustered on unique2 in the indexed copy (the primary key: InnoDB's and
// SQLite's table is that key's tree; PostgreSQL's heap is loaded in its
// order).
func createTable(d target.Dialect, name string, keyed bool, engine string) (string, error) {
	ddl, err := d.CreateTable(target.Table{Name: name, StorageEngine: engine, Layout: layout})
	if err != nil {
		return "", err
	}
	cols := make([]string, 0, len(columns)+1)
	for _, c := range columns {
		typ := "INTEGER"
		if strings.HasPrefix(c, "string") {
			typ = "CHAR(" + strconv.Itoa(strLen) + ")"
		}
		cols = append(cols, c+" "+typ+" NOT NULL")
	}
	if keyed {
		cols = append(cols, "PRIMARY KEY (unique2)")
	}
	return ddl.Head + " " + name + " (" + strings.Join(cols, ", ") + ")" + ddl.Tail, nil
}

// createIndex is the non-clustered index on unique1 of an indexed table.
func createIndex(table string) string {
	return "CREATE INDEX " + table + "_unique1 ON " + table + " (unique1)"
}

// fillBPrime makes BPRIME: the tuples of TENKTUP2 with unique2 below a
// tenth of the scale.
func fillBPrime(s set, n int64) string {
	return fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE unique2 < %d", s.table(bPrime), s.table(tenKTup2), n/10)
}

// Prepare creates both copies of the relations, loads them through each
// engine's bulk path (in parallel with --threads), makes BPRIME, builds
// the indexes of the indexed copy, vacuums where the engine needs it (so
// PostgreSQL's index-only scans see every page visible), refreshes the
// statistics and records the scale and seed.
func (w *Workload) Prepare(ctx context.Context, env workload.Env) error {
	if err := w.Validate(env.Target); err != nil {
		return err
	}
	d := env.Target.Dialect()
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	// Tables already there are another prepare's data: refused before
	// anything is marked or changed.
	for _, t := range tables() {
		if _, ok, err := c.QueryRow(ctx, d.TableExists(t)); err != nil {
			return fmt.Errorf("prepare %s: look for table %s: %w", Name, t, err)
		} else if ok {
			return fmt.Errorf("prepare %s: table %s exists from an earlier prepare: run dbmark cleanup %[1]s first", Name, t)
		}
	}
	if err := workload.MarkIncomplete(ctx, c, dataSet); err != nil {
		return fmt.Errorf("prepare %s: %w", Name, err)
	}
	if err := w.load(ctx, env, c); err != nil {
		return fmt.Errorf("prepare %s: %w (run dbmark cleanup %[1]s before preparing again)", Name, err)
	}
	if err := workload.MarkComplete(ctx, c, dataSet); err != nil {
		return fmt.Errorf("prepare %s: %w", Name, err)
	}
	return nil
}

func (w *Workload) load(ctx context.Context, env workload.Env, c target.Conn) error {
	d, n := env.Target.Dialect(), w.opt.Scale
	for _, s := range sets {
		for _, r := range []string{oneKTup, tenKTup1, tenKTup2, bPrime} {
			sql, err := createTable(d, s.table(r), s.indexed, w.opt.MySQLEngine)
			if err != nil {
				return fmt.Errorf("create table %s: %w", s.table(r), err)
			}
			if err := c.Exec(ctx, sql); err != nil {
				return fmt.Errorf("create table %s: %w", s.table(r), err)
			}
		}
	}
	type job struct {
		rel   relation
		table string
	}
	var jobs []job
	var total int64
	for _, r := range generated(n) {
		for _, s := range sets {
			jobs = append(jobs, job{r, s.table(r.name)})
			total += r.rows
		}
	}
	bar := progress.New(env.Progress, env.Interactive, fmt.Sprintf("loading the Wisconsin relations at scale %d (two copies)", n), total)
	var loaded atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	loaders := max(1, min(env.Threads, len(jobs)))
	for l := range loaders {
		g.Go(func() error {
			lc := c
			if l > 0 {
				var err error
				if lc, err = env.Target.Connect(gctx); err != nil {
					return err
				}
				defer lc.Close()
			}
			for i := l; i < len(jobs); i += loaders {
				j := jobs[i]
				src := newRowSource(gctx, j.rel, env.Seed, func(k int64) { bar.Set(loaded.Add(k)) })
				if _, err := lc.BulkInsert(gctx, j.table, columns, src); err != nil {
					return fmt.Errorf("load %s: %w", j.table, err)
				}
				if err := gctx.Err(); err != nil {
					return err // the rows stopped early: the load is not whole
				}
				bar.Set(loaded.Add(src.pending))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	bar.Finish()
	var steps []string
	for _, s := range sets {
		steps = append(steps, fillBPrime(s, n))
	}
	for _, r := range []string{oneKTup, tenKTup1, tenKTup2, bPrime} {
		steps = append(steps, createIndex(indexed.table(r)))
	}
	for _, t := range tables()[:len(tables())-1] {
		steps = append(steps, d.Maintain(t, target.Vacuum|target.Analyze)...)
	}
	steps = append(steps,
		"CREATE TABLE "+metaTable+" (scale BIGINT NOT NULL, seed VARCHAR(24) NOT NULL, version VARCHAR(16) NOT NULL)",
		fmt.Sprintf("INSERT INTO %s VALUES (%d, '%d', '%s')", metaTable, n, env.Seed, Version))
	for _, sql := range steps {
		if err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// Cleanup drops every table the prepare made, and its mark.
func (w *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, sql := range env.Target.Dialect().DropTables(tables()...) {
		if err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("cleanup %s: %s: %w", Name, sql, err)
		}
	}
	if err := workload.MarkComplete(ctx, c, dataSet); err != nil {
		return fmt.Errorf("cleanup %s: %w", Name, err)
	}
	return nil
}

// Data is what a prepare made: the scale and seed from which every
// answer follows.
type Data struct {
	Scale int64
	Seed  uint64
}

// ErrNotPrepared says the relations are missing or were made by another
// version of the workload.
var ErrNotPrepared = errors.New("the Wisconsin relations are not prepared")

// ReadData reads what the prepare recorded.
func ReadData(ctx context.Context, c target.Conn) (Data, error) {
	v, ok, err := c.QueryRow(ctx, "SELECT version FROM "+metaTable)
	if err != nil || !ok {
		if ctx.Err() != nil {
			return Data{}, ctx.Err()
		}
		return Data{}, fmt.Errorf("%w: run dbmark prepare %s with the same --target first", ErrNotPrepared, Name)
	}
	if v != Version {
		return Data{}, fmt.Errorf("%w: they were prepared by version %s of the workload, this is version %s: run dbmark cleanup %s and prepare again",
			ErrNotPrepared, v, Version, Name)
	}
	scale, err := target.QueryInt(ctx, c, "SELECT scale FROM "+metaTable)
	if err != nil {
		return Data{}, fmt.Errorf("read the prepared scale: %w", err)
	}
	s, _, err := c.QueryRow(ctx, "SELECT seed FROM "+metaTable)
	if err != nil {
		return Data{}, fmt.Errorf("read the prepared seed: %w", err)
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Data{}, fmt.Errorf("read the prepared seed: %q is not a seed", s)
	}
	if err := checkScale(scale); err != nil {
		return Data{}, fmt.Errorf("%w: the recorded scale is out of range (%v): run dbmark cleanup %s and prepare again", ErrNotPrepared, err, Name)
	}
	return Data{Scale: scale, Seed: seed}, nil
}

// Prepared checks that the last prepare finished, at this --scale, and
// that every relation is there. Whether the relations still hold what
// was loaded is for the queries' checks to say.
func (w *Workload) Prepared(ctx context.Context, env workload.Env) error {
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := workload.CheckComplete(ctx, c, dataSet, Name); err != nil {
		return err
	}
	data, err := ReadData(ctx, c)
	if err != nil {
		return err
	}
	if data.Scale != w.opt.Scale {
		return fmt.Errorf("the Wisconsin relations were prepared with --scale %d, not %d: give --scale %[1]d, or clean up and prepare again", data.Scale, w.opt.Scale)
	}
	d := env.Target.Dialect()
	for _, t := range tables() {
		if _, ok, err := c.QueryRow(ctx, d.TableExists(t)); err != nil {
			return fmt.Errorf("look for table %s: %w", t, err)
		} else if !ok {
			return fmt.Errorf("%w: table %s is missing: run dbmark cleanup %s and prepare again", ErrNotPrepared, t, Name)
		}
	}
	return nil
}
