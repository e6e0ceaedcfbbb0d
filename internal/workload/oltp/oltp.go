// Package oltp is the sysbench-compatible OLTP workload family: the same
// sbtestN schema, the same statements per event and the same options as
// sysbench 1.0's Lua OLTP tests, on every target.
package oltp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbmark/dbmark/internal/randgen"
	"github.com/dbmark/dbmark/internal/target"
	"github.com/dbmark/dbmark/internal/workload"
)

// Version changes when the schema, data or statements change.
const Version = "1"

// Names lists the tests, as sysbench names its Lua scripts.
var Names = []string{
	"oltp_read_only", "oltp_read_write", "oltp_write_only", "oltp_point_select",
	"oltp_insert", "oltp_delete", "oltp_update_index", "oltp_update_non_index",
	"select_random_points", "select_random_ranges", "bulk_insert",
}

var descriptions = map[string]string{
	"oltp_read_only":        "read-only transactions: point selects and range queries (sysbench oltp_read_only)",
	"oltp_read_write":       "read-write transactions: selects, updates, a delete and an insert (sysbench oltp_read_write)",
	"oltp_write_only":       "write-only transactions: updates, a delete and an insert (sysbench oltp_write_only)",
	"oltp_point_select":     "one primary-key lookup per event (sysbench oltp_point_select)",
	"oltp_insert":           "one INSERT per event (sysbench oltp_insert)",
	"oltp_delete":           "one DELETE by primary key per event (sysbench oltp_delete)",
	"oltp_update_index":     "one UPDATE of the indexed column per event (sysbench oltp_update_index)",
	"oltp_update_non_index": "one UPDATE of a non-indexed column per event (sysbench oltp_update_non_index)",
	"select_random_points":  "SELECT with an IN() list of random k values (sysbench select_random_points)",
	"select_random_ranges":  "SELECT count(k) over several BETWEEN ranges (sysbench select_random_ranges)",
	"bulk_insert":           "multi-row INSERTs, one row per event, one table per thread (sysbench bulk_insert)",
}

// Register adds every OLTP test to r.
func Register(r *workload.Registry) {
	for _, n := range Names {
		r.Register(n, func() workload.Spec { return New(n).Spec() })
	}
}

// Spec declares the test.
func (w *Workload) Spec() workload.Spec {
	return workload.Spec{
		Meta: w.Meta(), Flags: w.Flags, Load: w.Load,
		// What the tables are made of: a sweep over one of these
		// prepares each cell's tables afresh.
		PrepareOptions: []string{"tables", "table-size", "auto-inc", "secondary", "create-secondary",
			"mysql-storage-engine", "create-table-options"},
		Hooks: workload.Hooks{
			Validate: w.Validate, DefaultIgnoreErrors: w.DefaultIgnoreErrors,
			Prepare: w.Prepare, Cleanup: w.Cleanup, Prepared: w.Prepared, Prewarm: w.Prewarm,
		},
	}
}

// Options are sysbench's OLTP options with its defaults.
type Options struct {
	Tables             int
	TableSize          int64
	RangeSize          int64
	PointSelects       int
	SimpleRanges       int
	SumRanges          int
	OrderRanges        int
	DistinctRanges     int
	IndexUpdates       int
	NonIndexUpdates    int
	DeleteInserts      int
	RangeSelects       bool
	AutoInc            bool
	SkipTrx            bool
	Secondary          bool
	CreateSecondary    bool
	MySQLStorageEngine string
	CreateTableOptions string
	// AllowEmpty runs on loaded tables found empty rather than refuse them.
	AllowEmpty     bool
	RandomPoints   int
	NumberOfRanges int
	Delta          int64
	Rand           randgen.Dist
}

// Workload is one OLTP test.
type Workload struct {
	name string
	opt  Options
}

// New returns the named test with sysbench's defaults.
func New(name string) *Workload {
	w := &Workload{name: name, opt: Options{
		Tables: 1, TableSize: 10000, RangeSize: 100, PointSelects: 10, SimpleRanges: 1, SumRanges: 1,
		OrderRanges: 1, DistinctRanges: 1, IndexUpdates: 1, NonIndexUpdates: 1, DeleteInserts: 1,
		RangeSelects: true, AutoInc: true, CreateSecondary: true, MySQLStorageEngine: "innodb",
		RandomPoints: 10, NumberOfRanges: 10, Delta: 5, Rand: randgen.DefaultDist(),
	}}
	if name == "oltp_point_select" {
		w.opt.PointSelects = 1 // sysbench's oltp_point_select runs one per event
	}
	return w
}

// Meta describes the test.
func (w *Workload) Meta() workload.Meta {
	headline := "tps"
	if w.name == "bulk_insert" {
		headline = "rows/s"
	}
	// A fatal error in a thread ends sysbench with 1.
	return workload.Meta{Name: w.name, Description: descriptions[w.name], Version: Version, Headline: headline, Better: "higher", FailedRunCode: 1}
}

// Opts returns the options, for tests and callers that set them directly.
func (w *Workload) Opts() *Options { return &w.opt }

// Flags binds sysbench's OLTP options.
func (w *Workload) Flags(fs *pflag.FlagSet) {
	o := &w.opt
	fs.IntVar(&o.Tables, "tables", o.Tables, "number of tables")
	fs.Int64Var(&o.TableSize, "table-size", o.TableSize, "number of rows per table")
	fs.Int64Var(&o.RangeSize, "range-size", o.RangeSize, "range size for range SELECT queries")
	fs.IntVar(&o.PointSelects, "point-selects", o.PointSelects, "number of point SELECT queries per transaction")
	fs.IntVar(&o.SimpleRanges, "simple-ranges", o.SimpleRanges, "number of simple range SELECT queries per transaction")
	fs.IntVar(&o.SumRanges, "sum-ranges", o.SumRanges, "number of SELECT SUM() queries per transaction")
	fs.IntVar(&o.OrderRanges, "order-ranges", o.OrderRanges, "number of SELECT ORDER BY queries per transaction")
	fs.IntVar(&o.DistinctRanges, "distinct-ranges", o.DistinctRanges, "number of SELECT DISTINCT queries per transaction")
	fs.IntVar(&o.IndexUpdates, "index-updates", o.IndexUpdates, "number of UPDATE index queries per transaction")
	fs.IntVar(&o.NonIndexUpdates, "non-index-updates", o.NonIndexUpdates, "number of UPDATE non-index queries per transaction")
	fs.IntVar(&o.DeleteInserts, "delete-inserts", o.DeleteInserts, "number of DELETE/INSERT pairs per transaction")
	// Booleans take sysbench's on and off (--skip_trx=on) as well as true and false.
	workload.OnOffVar(fs, &o.RangeSelects, "range-selects", o.RangeSelects, "enable the range SELECT queries")
	workload.OnOffVar(fs, &o.AutoInc, "auto-inc", o.AutoInc, "use an auto-increment primary key (client-generated IDs when off)")
	workload.OnOffVar(fs, &o.SkipTrx, "skip-trx", o.SkipTrx, "run every query in autocommit mode, without BEGIN/COMMIT")
	workload.OnOffVar(fs, &o.Secondary, "secondary", o.Secondary, "use a secondary index on id in place of the primary key")
	workload.OnOffVar(fs, &o.CreateSecondary, "create-secondary", o.CreateSecondary, "create the secondary index k_N on k")
	fs.StringVar(&o.MySQLStorageEngine, "mysql-storage-engine", o.MySQLStorageEngine, "storage engine on MySQL/MariaDB")
	fs.StringVar(&o.CreateTableOptions, "create-table-options", o.CreateTableOptions, "extra options appended to CREATE TABLE")
	workload.OnOffVar(fs, &o.AllowEmpty, "allow-empty", o.AllowEmpty, "run on tables found empty instead of refusing them (the statements then find no rows)")
	switch w.name {
	case "select_random_points":
		fs.IntVar(&o.RandomPoints, "random-points", o.RandomPoints, "number of random points in the IN() list")
	case "select_random_ranges":
		fs.IntVar(&o.NumberOfRanges, "number-of-ranges", o.NumberOfRanges, "number of BETWEEN ranges per SELECT")
		fs.Int64Var(&o.Delta, "delta", o.Delta, "size of the BETWEEN ranges")
	}
	fs.Var(&o.Rand.Kind, "rand-type", "random numbers distribution {uniform, gaussian, special, pareto, zipfian}")
	fs.IntVar(&o.Rand.SpecIter, "rand-spec-iter", o.Rand.SpecIter, "number of iterations for the gaussian and special distributions")
	fs.IntVar(&o.Rand.SpecPct, "rand-spec-pct", o.Rand.SpecPct, "percentage of values treated as hot by the special distribution")
	fs.IntVar(&o.Rand.SpecRes, "rand-spec-res", o.Rand.SpecRes, "percentage of draws that go to the hot values in the special distribution")
	fs.Float64Var(&o.Rand.ParetoH, "rand-pareto-h", o.Rand.ParetoH, "shape parameter of the Pareto distribution")
	fs.Float64Var(&o.Rand.ZipfianExp, "rand-zipfian-exp", o.Rand.ZipfianExp, "exponent of the Zipfian distribution")
}

// Validate checks the options before anything is touched.
func (w *Workload) Validate(t target.Target) error {
	o := &w.opt
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if o.Tables < 1 || o.Tables > 100_000 {
		add("--tables %d: must be between 1 and 100000", o.Tables)
	}
	if o.TableSize < 1 || o.TableSize > 2_000_000_000 {
		add("--table-size %d: must be between 1 and 2000000000", o.TableSize)
	}
	if o.RangeSize < 1 {
		add("--range-size %d: must be at least 1", o.RangeSize)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"point-selects", o.PointSelects}, {"simple-ranges", o.SimpleRanges}, {"sum-ranges", o.SumRanges},
		{"order-ranges", o.OrderRanges}, {"distinct-ranges", o.DistinctRanges}, {"index-updates", o.IndexUpdates},
		{"non-index-updates", o.NonIndexUpdates}, {"delete-inserts", o.DeleteInserts}} {
		if c.v < 0 || c.v > 10_000 {
			add("--%s %d: must be between 0 and 10000", c.name, c.v)
		}
	}
	if (w.name == "select_random_points" || w.name == "select_random_ranges") && o.Tables != 1 {
		add("%s does not support --tables > 1 (as in sysbench)", w.name)
	}
	if o.RandomPoints < 1 || o.RandomPoints > 10_000 {
		add("--random-points %d: must be between 1 and 10000", o.RandomPoints)
	}
	if o.NumberOfRanges < 1 || o.NumberOfRanges > 10_000 {
		add("--number-of-ranges %d: must be between 1 and 10000", o.NumberOfRanges)
	}
	if o.Delta < 0 {
		add("--delta %d: must not be negative", o.Delta)
	}
	if err := o.Rand.Validate(); err != nil {
		add("%v", err)
	}
	if !validIdent(o.MySQLStorageEngine) {
		add("--mysql-storage-engine %q: not an engine name", o.MySQLStorageEngine)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func validIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// tableCount is how many sbtest tables the test uses: one per thread for
// bulk_insert, --tables otherwise.
func (w *Workload) tableCount(threads int) int {
	if w.name == "bulk_insert" {
		return threads
	}
	return w.opt.Tables
}

// DefaultIgnoreErrors is sysbench's behaviour: what its driver for the
// engine ignores and dbmark does not retry.
func (w *Workload) DefaultIgnoreErrors(d target.Dialect) []string {
	return d.DefaultIgnoredErrors()
}
