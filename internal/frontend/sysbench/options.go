package sysbench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// kind is the type sysbench gives an option: it decides how the option
// is shown in help and how a value is checked.
type kind int

const (
	kInt kind = iota
	kSize
	kBool
	kString
	kList
	kDouble
	kFile
)

// option is one of sysbench's options, as its help lists it.
type option struct {
	name string // as sysbench spells it in help
	kind kind
	def  string // "" with hasDef false: no default shown
	desc string
	// noDef: help shows no "[default]" (sysbench's NULL default).
	noDef bool
}

// group is a block of options as sysbench's --help prints it.
type group struct {
	title string // "" for the untitled block
	opts  []option
}

// generalGroups are sysbench 1.0.20's general options, in its help's order.
var generalGroups = []group{
	{"General options:", []option{
		{name: "threads", kind: kInt, def: "1", desc: "number of threads to use"},
		{name: "events", kind: kInt, def: "0", desc: "limit for total number of events"},
		{name: "time", kind: kInt, def: "10", desc: "limit for total execution time in seconds"},
		{name: "forced-shutdown", kind: kString, def: "off", desc: "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable"},
		{name: "thread-stack-size", kind: kSize, def: "64K", desc: "size of stack per thread"},
		{name: "rate", kind: kInt, def: "0", desc: "average transactions rate. 0 for unlimited rate"},
		{name: "report-interval", kind: kInt, def: "0", desc: "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports"},
		{name: "report-checkpoints", kind: kList, def: "", desc: "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default."},
		{name: "debug", kind: kBool, def: "off", desc: "print more debugging info"},
		{name: "validate", kind: kBool, def: "off", desc: "perform validation checks where possible"},
		{name: "help", kind: kBool, def: "off", desc: "print help and exit"},
		{name: "version", kind: kBool, def: "off", desc: "print version and exit"},
		{name: "config-file", kind: kFile, noDef: true, desc: "File containing command line options"},
		{name: "tx-rate", kind: kInt, def: "0", desc: "deprecated alias for --rate"},
		{name: "max-requests", kind: kInt, def: "0", desc: "deprecated alias for --events"},
		{name: "max-time", kind: kInt, def: "0", desc: "deprecated alias for --time"},
		{name: "num-threads", kind: kInt, def: "1", desc: "deprecated alias for --threads"},
	}},
	{"Pseudo-Random Numbers Generator options:", []option{
		{name: "rand-type", kind: kString, def: "special", desc: "random numbers distribution {uniform,gaussian,special,pareto}"},
		{name: "rand-spec-iter", kind: kInt, def: "12", desc: "number of iterations used for numbers generation"},
		{name: "rand-spec-pct", kind: kInt, def: "1", desc: "percentage of values to be treated as 'special' (for special distribution)"},
		{name: "rand-spec-res", kind: kInt, def: "75", desc: "percentage of 'special' values to use (for special distribution)"},
		{name: "rand-seed", kind: kInt, def: "0", desc: "seed for random number generator. When 0, the current time is used as a RNG seed."},
		{name: "rand-pareto-h", kind: kDouble, def: "0.2", desc: "parameter h for pareto distribution"},
	}},
	{"Log options:", []option{
		{name: "verbosity", kind: kInt, def: "3", desc: "verbosity level {5 - debug, 0 - only critical messages}"},
	}},
	{"", []option{
		{name: "percentile", kind: kInt, def: "95", desc: "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations"},
		{name: "histogram", kind: kBool, def: "off", desc: "print latency histogram in report"},
	}},
	{"General database options:", []option{
		{name: "db-driver", kind: kString, def: "mysql", desc: "specifies database driver to use ('help' to get list of available drivers)"},
		{name: "db-ps-mode", kind: kString, def: "auto", desc: "prepared statements usage mode {auto, disable}"},
		{name: "db-debug", kind: kBool, def: "off", desc: "print database-specific debug information"},
	}},
}

// driverGroups are the options of sysbench's mysql and pgsql drivers.
var driverGroups = []group{
	{"mysql options:", []option{
		{name: "mysql-host", kind: kList, def: "localhost", desc: "MySQL server host"},
		{name: "mysql-port", kind: kList, def: "3306", desc: "MySQL server port"},
		{name: "mysql-socket", kind: kList, noDef: true, desc: "MySQL socket"},
		{name: "mysql-user", kind: kString, def: "sbtest", desc: "MySQL user"},
		{name: "mysql-password", kind: kString, def: "", desc: "MySQL password"},
		{name: "mysql-db", kind: kString, def: "sbtest", desc: "MySQL database name"},
		{name: "mysql-ssl", kind: kBool, def: "off", desc: "use SSL connections, if available in the client library"},
		{name: "mysql-ssl-cipher", kind: kString, def: "", desc: "use specific cipher for SSL connections"},
		{name: "mysql-compression", kind: kBool, def: "off", desc: "use compression, if available in the client library"},
		{name: "mysql-debug", kind: kBool, def: "off", desc: "trace all client library calls"},
		{name: "mysql-ignore-errors", kind: kList, def: "1213,1020,1205", desc: "list of errors to ignore, or \"all\""},
		{name: "mysql-dry-run", kind: kBool, def: "off", desc: "Dry run, pretend that all MySQL client API calls are successful without executing them"},
	}},
	{"pgsql options:", []option{
		{name: "pgsql-host", kind: kString, def: "localhost", desc: "PostgreSQL server host"},
		{name: "pgsql-port", kind: kInt, def: "5432", desc: "PostgreSQL server port"},
		{name: "pgsql-user", kind: kString, def: "sbtest", desc: "PostgreSQL user"},
		{name: "pgsql-password", kind: kString, def: "", desc: "PostgreSQL password"},
		{name: "pgsql-db", kind: kString, def: "sbtest", desc: "PostgreSQL database name"},
	}},
}

// oltpOptions are the options of sysbench's OLTP scripts (oltp_common.lua),
// spelled with underscores as the scripts declare them.
var oltpOptions = []option{
	{name: "table_size", kind: kInt, def: "10000", desc: "Number of rows per table"},
	{name: "range_size", kind: kInt, def: "100", desc: "Range size for range SELECT queries"},
	{name: "tables", kind: kInt, def: "1", desc: "Number of tables"},
	{name: "point_selects", kind: kInt, def: "10", desc: "Number of point SELECT queries per transaction"},
	{name: "simple_ranges", kind: kInt, def: "1", desc: "Number of simple range SELECT queries per transaction"},
	{name: "sum_ranges", kind: kInt, def: "1", desc: "Number of SELECT SUM() queries per transaction"},
	{name: "order_ranges", kind: kInt, def: "1", desc: "Number of SELECT ORDER BY queries per transaction"},
	{name: "distinct_ranges", kind: kInt, def: "1", desc: "Number of SELECT DISTINCT queries per transaction"},
	{name: "index_updates", kind: kInt, def: "1", desc: "Number of UPDATE index queries per transaction"},
	{name: "non_index_updates", kind: kInt, def: "1", desc: "Number of UPDATE non-index queries per transaction"},
	{name: "delete_inserts", kind: kInt, def: "1", desc: "Number of DELETE/INSERT combinations per transaction"},
	{name: "range_selects", kind: kBool, def: "on", desc: "Enable/disable all range SELECT queries"},
	{name: "auto_inc", kind: kBool, def: "on", desc: "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs"},
	{name: "skip_trx", kind: kBool, def: "off", desc: "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode"},
	{name: "secondary", kind: kBool, def: "off", desc: "Use a secondary index in place of the PRIMARY KEY"},
	{name: "create_secondary", kind: kBool, def: "on", desc: "Create a secondary index in addition to the PRIMARY KEY"},
	{name: "mysql_storage_engine", kind: kString, def: "innodb", desc: "Storage engine, if MySQL is used"},
	{name: "pgsql_variant", kind: kString, noDef: true, desc: "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0"},
}

// The select_random_* scripts' own options.
var (
	randomPointsOptions = []option{
		{name: "random_points", kind: kInt, def: "10", desc: "Number of random points in the IN() clause in generated SELECTs"},
	}
	randomRangesOptions = []option{
		{name: "number_of_ranges", kind: kInt, def: "10", desc: "Number of random BETWEEN ranges per SELECT"},
		{name: "delta", kind: kInt, def: "5", desc: "Size of BETWEEN ranges"},
	}
)

// fileioOptions are sysbench's fileio options, in its help's order.
var fileioOptions = []option{
	{name: "file-num", kind: kInt, def: "128", desc: "number of files to create"},
	{name: "file-block-size", kind: kInt, def: "16384", desc: "block size to use in all IO operations"},
	{name: "file-total-size", kind: kSize, def: "2G", desc: "total size of files to create"},
	{name: "file-test-mode", kind: kString, noDef: true, desc: "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}"},
	{name: "file-io-mode", kind: kString, def: "sync", desc: "file operations mode {sync,async,mmap}"},
	{name: "file-async-backlog", kind: kInt, def: "128", desc: "number of asynchronous operatons to queue per thread"},
	{name: "file-extra-flags", kind: kList, def: "", desc: "list of additional flags to use to open files {sync,dsync,direct}"},
	{name: "file-fsync-freq", kind: kInt, def: "100", desc: "do fsync() after this number of requests (0 - don't use fsync())"},
	{name: "file-fsync-all", kind: kBool, def: "off", desc: "do fsync() after each write operation"},
	{name: "file-fsync-end", kind: kBool, def: "on", desc: "do fsync() at the end of test"},
	{name: "file-fsync-mode", kind: kString, def: "fsync", desc: "which method to use for synchronization {fsync, fdatasync}"},
	{name: "file-merged-requests", kind: kInt, def: "0", desc: "merge at most this number of IO requests if possible (0 - don't merge)"},
	{name: "file-rw-ratio", kind: kDouble, def: "1.5", desc: "reads/writes ratio for combined test"},
}

// key is an option's name as sysbench compares names: a dash and an
// underscore are the same character.
func key(name string) string { return strings.ReplaceAll(name, "-", "_") }

// usage is the left column of an option in help: its name and its form.
func (o option) usage() string {
	switch o.kind {
	case kBool:
		return "--" + o.name + "[=on|off]"
	case kList:
		return "--" + o.name + "=[LIST,...]"
	case kSize:
		return "--" + o.name + "=SIZE"
	case kString:
		return "--" + o.name + "=STRING"
	case kFile:
		return "--" + o.name + "=FILENAME"
	}
	return "--" + o.name + "=N"
}

// printOptions writes opts as sysbench's help does: the usage column
// padded to the widest, the description and the default in brackets.
func printOptions(w io.Writer, opts []option) {
	width := 0
	for _, o := range opts {
		width = max(width, len(o.usage()))
	}
	for _, o := range opts {
		line := fmt.Sprintf("  %-*s %s", width, o.usage(), o.desc)
		if !o.noDef {
			line += " [" + o.def + "]"
		}
		fmt.Fprintln(w, line)
	}
}

// sortedByName is opts in the order sysbench lists a Lua script's options.
func sortedByName(opts []option) []option {
	out := slices.Clone(opts)
	slices.SortFunc(out, func(a, b option) int { return strings.Compare(a.name, b.name) })
	return out
}
