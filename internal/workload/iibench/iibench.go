// Package iibench is the insert benchmark (iiBench): inserters append rows
// with an auto-increment key to one table with up to three secondary
// indexes while query threads scan those indexes, and the insert rate is
// reported against the number of rows in the table.
package iibench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// Name is the workload's name; Version changes when the schema, data or
// statements change.
const (
	Name    = "iibench"
	Version = "1"
)

// Register adds iibench to r.
func Register(r *workload.Registry) {
	r.Register(Name, func() workload.Spec { return New().Spec() })
}

// Spec declares the workload: its inserters and query threads make the
// thread count, and --max-rows ends the run.
func (w *Workload) Spec() workload.Spec {
	return workload.Spec{
		Meta: w.Meta(), Flags: w.Flags, Load: w.Load,
		Hooks: workload.Hooks{Validate: w.Validate, Plan: w.Plan, Cleanup: w.Cleanup},
	}
}

// Index styles: the indexes of Tokutek's iiBench and of the newer insert
// benchmark (iibench.py since 2023), which indexes productid rather than
// price first and stores price as an integer.
const (
	StyleClassic = "classic"
	StyleNew     = "new"
)

// Options are the benchmark's options; the defaults are iibench.py's.
type Options struct {
	Table            string
	Inserters        int
	QueryThreads     int
	RowsPerInsert    int
	RowsPerCommit    int // 0: one statement per transaction
	InsertRate       float64
	MaxRows          Count
	SecondaryIndexes int
	IndexStyle       string
	SecondaryAtEnd   bool
	DeletePerInsert  bool
	Resume           bool
	Recreate         bool
	QueryAfterRows   Count
	RowsPerQuery     int
	ReportRows       Count
	Partitions       int
	RowsPerPartition Count
	CashRegisters    int
	Products         int
	Customers        int
	MaxPrice         int
	DataLengthMin    int
	DataLengthMax    int
	DataRandomPct    int
	MySQLEngine      string
}

// Workload is the insert benchmark.
type Workload struct{ opt Options }

// New returns iibench with its defaults.
func New() *Workload {
	return &Workload{opt: Options{
		Table: "purchases_index", Inserters: 1, RowsPerInsert: 1000, SecondaryIndexes: 3, IndexStyle: StyleClassic,
		RowsPerQuery: 10, CashRegisters: 1000, Products: 10000, Customers: 100000, MaxPrice: 500,
		DataLengthMin: 10, DataLengthMax: 10, DataRandomPct: 50, MySQLEngine: "innodb",
	}}
}

// Opts returns the options, for tests and callers that set them directly.
func (w *Workload) Opts() *Options { return &w.opt }

// Meta describes the workload.
func (w *Workload) Meta() workload.Meta {
	return workload.Meta{Name: Name, Description: "the insert benchmark (iiBench): insert rate as a table and its secondary indexes grow, with optional concurrent queries",
		Version: Version, Headline: "rows/s", Better: "higher"}
}

// Flags binds the options, with iibench.py's names where they have one.
func (w *Workload) Flags(fs *pflag.FlagSet) {
	o := &w.opt
	fs.StringVar(&o.Table, "table-name", o.Table, "name of the table")
	fs.IntVar(&o.Inserters, "inserters", o.Inserters, "insert threads (the thread count is --inserters plus --query-threads)")
	fs.IntVar(&o.QueryThreads, "query-threads", o.QueryThreads, "query threads running beside the inserters")
	fs.IntVar(&o.RowsPerInsert, "rows-per-insert", o.RowsPerInsert, "rows per INSERT statement")
	fs.IntVar(&o.RowsPerCommit, "rows-per-commit", o.RowsPerCommit, "rows per transaction, a multiple of --rows-per-insert (0: one statement per transaction, in autocommit)")
	fs.Float64Var(&o.InsertRate, "insert-rate", o.InsertRate, "cap on inserted rows per second over all inserters, as an open-loop schedule (0: no cap)")
	fs.Var(&o.MaxRows, "max-rows", "end the run when the table has had this many rows inserted, counting a resumed run's (exact; 0: no limit; 1e9 works)")
	fs.IntVar(&o.SecondaryIndexes, "secondary-indexes", o.SecondaryIndexes, "secondary indexes, 0 to 3")
	fs.StringVar(&o.IndexStyle, "index-style", o.IndexStyle, "index definitions: classic (Tokutek's iiBench) or new (the insert benchmark since 2023)")
	fs.BoolVar(&o.SecondaryAtEnd, "secondary-at-end", o.SecondaryAtEnd, "load without secondary indexes, then build them and time each build")
	fs.BoolVar(&o.DeletePerInsert, "delete-per-insert", o.DeletePerInsert, "delete as many of the oldest rows as each transaction inserts, keeping the table's size")
	fs.BoolVar(&o.Resume, "resume", o.Resume, "continue on the existing table from its highest transactionid")
	fs.BoolVar(&o.Recreate, "recreate", o.Recreate, "drop an existing table and start afresh")
	fs.Var(&o.QueryAfterRows, "query-after-rows", "query threads wait, uncounted, until the table holds this many rows")
	fs.IntVar(&o.RowsPerQuery, "rows-per-query", o.RowsPerQuery, "LIMIT of each query")
	fs.Var(&o.ReportRows, "report-rows", "add a point to the series keyed by rows every this many rows (0: none)")
	fs.IntVar(&o.Partitions, "partitions", o.Partitions, "range-partition the table on transactionid into this many partitions (MySQL/MariaDB and PostgreSQL)")
	fs.Var(&o.RowsPerPartition, "rows-per-partition", "rows per partition (default: --max-rows / --partitions)")
	fs.IntVar(&o.CashRegisters, "cashregisters", o.CashRegisters, "distinct cash registers")
	fs.IntVar(&o.Products, "products", o.Products, "distinct products")
	fs.IntVar(&o.Customers, "customers", o.Customers, "distinct customers")
	fs.IntVar(&o.MaxPrice, "max-price", o.MaxPrice, "price range")
	fs.IntVar(&o.DataLengthMin, "data-length-min", o.DataLengthMin, "shortest value of the data padding column")
	fs.IntVar(&o.DataLengthMax, "data-length-max", o.DataLengthMax, "longest value of the data padding column (at most 4000)")
	fs.IntVar(&o.DataRandomPct, "data-random-pct", o.DataRandomPct, "percentage of the padding that is random; the rest compresses well")
	fs.StringVar(&o.MySQLEngine, "mysql-storage-engine", o.MySQLEngine, "storage engine on MySQL/MariaDB")
}

// Validate refuses impossible options before anything is touched.
func (w *Workload) Validate(t target.Target) error {
	o := &w.opt
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if !validIdent(o.Table) {
		add("--table-name %q: use letters, digits and _", o.Table)
	}
	if o.Inserters < 0 || o.Inserters > 10_000 {
		add("--inserters %d: must be between 0 and 10000", o.Inserters)
	}
	if o.QueryThreads < 0 || o.QueryThreads > 10_000 {
		add("--query-threads %d: must be between 0 and 10000", o.QueryThreads)
	}
	if o.Inserters+o.QueryThreads < 1 {
		add("no threads: give --inserters or --query-threads")
	}
	if o.RowsPerInsert < 1 || o.RowsPerInsert > 100_000 {
		add("--rows-per-insert %d: must be between 1 and 100000", o.RowsPerInsert)
	}
	if o.RowsPerCommit < 0 || o.RowsPerInsert > 0 && o.RowsPerCommit%o.RowsPerInsert != 0 {
		add("--rows-per-commit %d: must be a multiple of --rows-per-insert %d (or 0)", o.RowsPerCommit, o.RowsPerInsert)
	}
	if o.InsertRate < 0 || math.IsNaN(o.InsertRate) || math.IsInf(o.InsertRate, 0) {
		add("--insert-rate %v: must be a number of rows per second, or 0 for no cap", o.InsertRate)
	}
	if o.MaxRows > 0 && o.Inserters == 0 {
		add("--max-rows needs at least one inserter")
	}
	if o.SecondaryIndexes < 0 || o.SecondaryIndexes > 3 {
		add("--secondary-indexes %d: must be between 0 and 3", o.SecondaryIndexes)
	}
	if o.IndexStyle != StyleClassic && o.IndexStyle != StyleNew {
		add("--index-style %q: must be classic or new", o.IndexStyle)
	}
	if o.SecondaryAtEnd && o.SecondaryIndexes == 0 {
		add("--secondary-at-end with --secondary-indexes 0: there is no index to build")
	}
	if o.Resume && o.Recreate {
		add("--resume and --recreate: choose one")
	}
	if o.RowsPerQuery < 1 || o.RowsPerQuery > 1_000_000 {
		add("--rows-per-query %d: must be between 1 and 1000000", o.RowsPerQuery)
	}
	switch {
	case o.Partitions < 0 || o.Partitions > 8192:
		add("--partitions %d: must be between 0 and 8192", o.Partitions)
	case o.Partitions > 0 && t != nil && t.Dialect().Supports(target.Partitions) != nil:
		add("--partitions: %s has no table partitioning (use PostgreSQL or MySQL/MariaDB, or leave it out)", t.Dialect().Name())
	case o.Partitions > 0 && o.Resume:
		add("--partitions applies when the table is created; --resume continues the existing table as it is")
	case o.Partitions > 0 && o.RowsPerPartition == 0 && o.MaxRows == 0:
		add("--partitions %d: give --rows-per-partition, or --max-rows to divide", o.Partitions)
	case o.Partitions == 0 && o.RowsPerPartition > 0:
		add("--rows-per-partition needs --partitions")
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"cashregisters", o.CashRegisters}, {"products", o.Products}, {"customers", o.Customers}, {"max-price", o.MaxPrice}} {
		if c.v < 1 || c.v > math.MaxInt32 {
			add("--%s %d: must be between 1 and %d", c.name, c.v, math.MaxInt32)
		}
	}
	if o.DataLengthMin < 0 || o.DataLengthMax > 4000 || o.DataLengthMin > o.DataLengthMax {
		add("--data-length-min %d --data-length-max %d: need 0 <= min <= max <= 4000", o.DataLengthMin, o.DataLengthMax)
	}
	if o.DataRandomPct < 0 || o.DataRandomPct > 100 {
		add("--data-random-pct %d: must be between 0 and 100", o.DataRandomPct)
	}
	if !validIdent(o.MySQLEngine) {
		add("--mysql-storage-engine %q: not an engine name", o.MySQLEngine)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// Plan declares the run's clients, --inserters plus --query-threads (a
// different --threads is refused), and that --max-rows ends the run.
func (w *Workload) Plan(workload.PlanInput) (workload.PlanAdjust, error) {
	n := w.opt.Inserters + w.opt.QueryThreads
	if n < 1 {
		return workload.PlanAdjust{}, errors.New("no threads: give --inserters or --query-threads")
	}
	return workload.PlanAdjust{Clients: n, SelfLimited: w.opt.MaxRows > 0,
		ClientsFrom: fmt.Sprintf("--inserters %d plus --query-threads %d", w.opt.Inserters, w.opt.QueryThreads)}, nil
}

// Cleanup drops the table.
func (w *Workload) Cleanup(ctx context.Context, env workload.Env) error {
	if !validIdent(w.opt.Table) {
		return fmt.Errorf("--table-name %q: use letters, digits and _", w.opt.Table)
	}
	c, err := env.Target.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Exec(ctx, "DROP TABLE IF EXISTS "+w.opt.Table); err != nil {
		return fmt.Errorf("drop table %s: %w", w.opt.Table, err)
	}
	return nil
}

func validIdent(s string) bool {
	if s == "" || len(s) > 48 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// Count is a row count flag that also takes 1e9 and 1_000_000.
type Count int64

func (c *Count) String() string { return strconv.FormatInt(int64(*c), 10) }
func (c *Count) Type() string   { return "rows" }

// Set parses a whole, non-negative number of rows.
func (c *Count) Set(v string) error {
	f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
	if err != nil || f < 0 || f != math.Trunc(f) || f > 1e18 {
		return fmt.Errorf("%q is not a whole number of rows (use 1000000 or 1e6)", v)
	}
	*c = Count(f)
	return nil
}
